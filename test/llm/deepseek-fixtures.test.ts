/**
 * Every recorded DeepSeek streaming fixture (SOURCES.md), replayed through a local server to the
 * real `openai` SDK inside the DeepSeek adapter: exact blocks, usage and finish, a grammar-valid
 * stream, and the request dsh sends. Each stream is replayed whole and cut into 7-byte slices
 * (lines and UTF-8 sequences split across reads).
 */
import { afterEach, expect, it } from 'vitest';
import { DeepSeekAdapter } from '../../src/llm/deepseek.js';
import type { ToolResultMessage } from '../../src/model/message.js';
import { expectedChatFinish, expectedChatUsage } from '../support/chat-expect.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { assistantFrom, request, runAttempt, userMessage, type AttemptResult } from '../support/llm-run.js';
import { loadRecordedStream, readChatFixture } from '../support/recorded.js';
import { describeShared } from '../support/shared.js';

const FIXTURES: { file: string; model: string; check?: (r: AttemptResult) => void }[] = [
  {
    file: 'vercel-ai-deepseek/deepseek-text.chunks.txt',
    model: 'deepseek-chat',
    check: (r) => {
      expect(r.blocks).toHaveLength(1);
      expect(r.blocks[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/^## \*\*Holiday Name:\*\* Starlight Remembrance/) });
      expect(r.usage).toEqual({ inputTokens: 13, outputTokens: 400, cacheReadTokens: 0 });
    },
  },
  {
    file: 'vercel-ai-deepseek/deepseek-reasoning.chunks.txt',
    model: 'deepseek-reasoner',
    check: (r) => {
      expect(r.blocks.map((b) => b.type)).toEqual(['reasoning', 'text']);
      expect(r.blocks[1]).toEqual({ type: 'text', text: 'The word "strawberry" contains three "r"s.' });
      expect(r.usage).toEqual({ inputTokens: 18, outputTokens: 219, cacheReadTokens: 0, reasoningTokens: 205 });
    },
  },
  {
    file: 'vercel-ai-deepseek/deepseek-tool-call.chunks.txt',
    model: 'deepseek-reasoner',
    check: (r) => {
      expect(r.blocks.map((b) => b.type)).toEqual(['reasoning', 'tool-call']);
      const call = r.blocks[1];
      expect(call).toMatchObject({ type: 'tool-call', id: 'call_00_ioIn7yN9p1ZOMNpDLwd4MgAF', name: 'weather' });
      expect(JSON.parse(call?.type === 'tool-call' ? call.arguments : '')).toEqual({ location: 'San Francisco' });
      expect(r.usage).toEqual({ inputTokens: 19, outputTokens: 83, cacheReadTokens: 320, reasoningTokens: 39 });
    },
  },
  {
    file: 'vercel-ai-deepseek/deepseek-v4-sampling-live.chunks.txt',
    model: 'deepseek-v4-flash',
    check: (r) => expect(r.blocks).toEqual([{ type: 'reasoning', text: 'We need to respond with OK.' }]),
  },
  {
    file: 'vercel-ai-deepseek/issue-19381-thinking-reasoning.chunks.txt',
    model: 'deepseek-v4-pro',
    check: (r) => expect(r.blocks).toEqual([{ type: 'reasoning', text: 'We need' }]),
  },
  {
    file: 'vercel-ai-deepseek/deepseek-system-fingerprint.chunks.txt',
    model: 'deepseek-v4-flash',
    check: (r) => {
      expect(r.blocks).toEqual([{ type: 'text', text: 'OK' }]);
      expect(r.usage).toEqual({ inputTokens: 9, outputTokens: 1, cacheReadTokens: 0 });
    },
  },
  {
    file: 'vercel-ai-deepseek/issue-19789-live-usage.chunks.txt',
    model: 'deepseek-v4-flash',
    check: (r) => {
      expect(r.blocks).toEqual([{ type: 'text', text: 'sanitized' }]);
      expect(r.usage).toEqual({ inputTokens: 88, outputTokens: 4, cacheReadTokens: 0, reasoningTokens: 4 });
    },
  },
  {
    file: 'neurouter-deepseek/api_test.go.mockChatCompletionStreamWithToolResp.sse',
    model: 'deepseek-chat',
    check: (r) => {
      expect(r.blocks[0]).toEqual({ type: 'text', text: "I'll check the current weather in Tokyo for you." });
      expect(r.blocks[1]).toMatchObject({ type: 'tool-call', name: 'get_weather' });
      expect(JSON.parse(r.blocks[1]?.type === 'tool-call' ? r.blocks[1].arguments : '')).toEqual({ location: 'Tokyo' });
      expect(r.usage).toEqual({ inputTokens: 33, outputTokens: 25, cacheReadTokens: 128 });
    },
  },
  {
    file: 'neurouter-deepseek/api_test.go.mockChatCompletionStreamResp.sse',
    model: 'deepseek-reasoner',
    check: (r) => {
      expect(r.blocks.map((b) => b.type)).toEqual(['reasoning', 'text']);
      // prompt_cache_hit_tokens (1) is DeepSeek's own cache count; it wins over cached_tokens (0).
      expect(r.usage).toEqual({ inputTokens: 5, outputTokens: 169, cacheReadTokens: 1, reasoningTokens: 117 });
    },
  },
];

let server: FakeProvider | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describeShared('DeepSeek adapter on recorded DeepSeek streams', () => {
  for (const { file, model, check } of FIXTURES) {
    for (const sliceBytes of [undefined, 7]) {
      it(`${file}${sliceBytes ? ' (7-byte slices)' : ''}`, async () => {
        const recorded = loadRecordedStream(file, 'openai');
        const reading = readChatFixture(recorded.payloads);
        server = await startFakeProvider({ script: [{ sse: recorded.parts, ...(sliceBytes ? { sliceBytes } : {}) }] });
        const adapter = new DeepSeekAdapter({ apiKey: 'sk-test', baseUrl: server.url });

        const r = await runAttempt(adapter, request('deepseek', model, { sessionId: 'session-42' }));

        expect(r.blocks).toEqual(reading.blocks);
        expect(r.finish.reason.kind).toBe(expectedChatFinish(reading.finishReason, reading.blocks));
        expect(r.usage).toEqual(expectedChatUsage(reading.usage));
        // The response's own id and model (first non-empty ones of the payloads), read here from the
        // recorded payloads, are kept in the finish chunk for gen_ai.response.id / .model.
        const firstOf = (k: string): string | undefined =>
          recorded.payloads
            .map((p) => (p as Record<string, unknown> | null)?.[k])
            .find((v): v is string => typeof v === 'string' && v !== '');
        const expectedResponse = {
          ...(firstOf('id') !== undefined ? { id: firstOf('id') } : {}),
          ...(firstOf('model') !== undefined ? { model: firstOf('model') } : {}),
        };
        if (r.finish.reason.kind !== 'error' && Object.keys(expectedResponse).length > 0) {
          expect(r.finish.replayState).toEqual({ response: { api: 'chat-completions', provider: 'deepseek', ...expectedResponse } });
        } else expect(r.finish.replayState).toBeUndefined();
        // Streamed deltas add up to the assembled blocks.
        r.blocks.forEach((b, i) => expect(r.deltas.get(i)).toBe(b.type === 'tool-call' ? b.arguments : 'text' in b ? b.text : ''));
        check?.(r);

        expect(server.requests).toHaveLength(1);
        const sent = server.requests[0]!;
        expect(sent.path).toBe('/chat/completions');
        expect(sent.headers['authorization']).toBe('Bearer sk-test');
        expect(sent.headers['user-agent']).toMatch(/^dsh\/\d+\.\d+\.\d+/);
        expect(sent.headers['x-deepseek-harness-session-id']).toBe('session-42');
        expect(sent.body).toMatchObject({ model, stream: true, stream_options: { include_usage: true } });
      });
    }
  }

  it('opens a tool-call block with a first delta that carries the name, as dsh logs it', async () => {
    const recorded = loadRecordedStream('vercel-ai-deepseek/deepseek-tool-call.chunks.txt', 'openai');
    server = await startFakeProvider({ script: [{ sse: recorded.parts }] });
    const r = await runAttempt(new DeepSeekAdapter({ apiKey: 'k', baseUrl: server.url }), request('deepseek', 'deepseek-reasoner'));
    const toolDeltas = r.chunks.filter((c) => c.type === 'tool-call-delta');
    expect(toolDeltas[0]).toMatchObject({ index: 1, id: 'call_00_ioIn7yN9p1ZOMNpDLwd4MgAF', name: 'weather', argumentsDelta: '' });
    expect(toolDeltas.slice(1).every((d) => d.type === 'tool-call-delta' && d.name === undefined)).toBe(true);
    // Order: all block-ends, then usage, then finish.
    const kinds = r.chunks.map((c) => c.type);
    expect(kinds.slice(-4)).toEqual(['block-end', 'block-end', 'usage', 'finish']);
  });

  it('round trip: a streamed tool-call turn goes back with its reasoning_content and the tool result', async () => {
    const recorded = loadRecordedStream('vercel-ai-deepseek/deepseek-tool-call.chunks.txt', 'openai');
    const reading = readChatFixture(recorded.payloads);
    server = await startFakeProvider({ script: [{ sse: recorded.parts }, { sse: recorded.parts }] });
    const adapter = new DeepSeekAdapter({ apiKey: 'k', baseUrl: server.url });
    const first = await runAttempt(adapter, request('deepseek', 'deepseek-reasoner'));
    const call = first.blocks[1]!;
    if (call.type !== 'tool-call') throw new Error('expected a tool call');

    const result: ToolResultMessage = {
      id: 'r1',
      role: 'user',
      content: [{ type: 'tool-result', toolCallId: call.id, content: [{ type: 'text', text: '18°C' }] }],
      source: { kind: 'tool', callId: call.id },
    };
    const history = [userMessage('Hello!'), assistantFrom(first, 'deepseek', 'deepseek-reasoner'), result];
    await runAttempt(adapter, request('deepseek', 'deepseek-reasoner', { messages: history }));

    const sent = server.requests[1]!.body as { messages: Record<string, unknown>[] };
    const reasoning = reading.blocks[0]!.type === 'reasoning' ? reading.blocks[0]!.text : '';
    expect(sent.messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: null,
        reasoning_content: reasoning,
        tool_calls: [{ id: call.id, type: 'function', function: { name: 'weather', arguments: call.arguments } }],
      },
      { role: 'tool', tool_call_id: call.id, content: '18°C' },
    ]);
  });
});
