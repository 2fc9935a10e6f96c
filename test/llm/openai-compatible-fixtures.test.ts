/**
 * Every recorded OpenAI-compatible chat-completions stream in SOURCES.md (OpenAI, an Azure router,
 * a relay, xAI, Claude behind a compatible endpoint, Alibaba, Groq) through the generic adapter and
 * the real `openai` SDK. The Responses-API fixtures are out of scope (no Responses adapter).
 */
import { afterEach, expect, it } from 'vitest';
import { ChatCompletionsAdapter } from '../../src/llm/openai-compatible.js';
import { expectedChatFinish, expectedChatUsage } from '../support/chat-expect.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { request, runAttempt, type AttemptResult } from '../support/llm-run.js';
import { loadRecordedStream, readChatFixture } from '../support/recorded.js';
import { describeShared } from '../support/shared.js';

const args = (r: AttemptResult, i: number): unknown => {
  const b = r.blocks[i];
  return b?.type === 'tool-call' ? JSON.parse(b.arguments) : undefined;
};

const FIXTURES: { file: string; check: (r: AttemptResult) => void }[] = [
  {
    // Two parallel calls with fragmented arguments, `obfuscation` fields, usage after finish with a different model name.
    file: 'ai4j/APIResponse.md.openai-function-call-stream.sse',
    check: (r) => {
      expect(r.blocks.map((b) => (b.type === 'tool-call' ? b.name : b.type))).toEqual(['get_current_weather', 'get_history_weather']);
      expect(args(r, 0)).toEqual({ format: 'celsius', location: '北京' });
      expect(args(r, 1)).toEqual({ format: 'celsius', location: '洛阳' });
      expect(r.usage).toEqual({ inputTokens: 172, outputTokens: 57, cacheReadTokens: 0, reasoningTokens: 0 });
    },
  },
  {
    file: 'openai-node/ChatCompletionStream.test.ts.snap.stream-works-1.sse',
    check: (r) => {
      expect(r.blocks).toEqual([{ type: 'text', text: '{"city":"San Francisco","units":"c"}' }]);
      expect(r.usage).toEqual({ inputTokens: 17, outputTokens: 10 });
    },
  },
  {
    // A refusal is surfaced as the assistant's text, finish stop (docs/providers.md).
    file: 'openai-node/ChatCompletionStream.test.ts.snap.stream-emits-refusal-logprobs-events-1.sse',
    check: (r) => {
      expect(r.blocks).toEqual([{ type: 'text', text: "I'm very sorry, but I can't assist with that request." }]);
      expect(r.finish.reason).toEqual({ kind: 'stop' });
    },
  },
  {
    // First chunk has `choices: []` + prompt_filter_results and empty id/model.
    file: 'vercel-ai-openai/azure-model-router.1.chunks.txt',
    check: (r) => {
      expect(r.blocks).toEqual([{ type: 'text', text: 'Capital of Denmark.' }]);
      expect(r.usage).toEqual({ inputTokens: 15, outputTokens: 78, cacheReadTokens: 0, reasoningTokens: 64 });
    },
  },
  {
    // xAI: reasoning counted outside completion_tokens (total 560 = 307 + 26 + 227); a whole call in one delta.
    file: 'vercel-ai-openai-compatible/xai-tool-call.chunks.txt',
    check: (r) => {
      expect(r.blocks.map((b) => b.type)).toEqual(['reasoning', 'tool-call']);
      expect(r.blocks[1]).toEqual({ type: 'tool-call', id: 'call_79382389', name: 'weather', arguments: '{"location":"San Francisco"}' });
      expect(r.usage).toEqual({ inputTokens: 1, outputTokens: 253, cacheReadTokens: 306, reasoningTokens: 227 });
    },
  },
  {
    // The first tool index is 1, its arguments start with empty fragments; no usage at all.
    file: 'vercel-ai-openai-compatible/anthropic-fallback-tool-call.sse',
    check: (r) => {
      expect(r.blocks).toEqual([
        { type: 'text', text: 'Reading it.' },
        { type: 'tool-call', id: 'toolu_sanitized', name: 'read_file', arguments: '{"path": "a.txt"}' },
      ]);
      expect(r.usage).toBeUndefined();
      expect(r.chunks.some((c) => c.type === 'usage')).toBe(false);
    },
  },
  {
    // Continuations repeat `"id":""` and `"type":"function"`; they must not start new calls.
    file: 'vercel-ai-alibaba/alibaba-tool-call.chunks.txt',
    check: (r) => {
      expect(r.blocks).toEqual([
        { type: 'tool-call', id: 'call_eee11723464a4b9eb8cee71d', name: 'weather', arguments: '{"location": "San Francisco"}' },
      ]);
      expect(r.usage).toEqual({ inputTokens: 295, outputTokens: 22, cacheReadTokens: 0 });
    },
  },
  {
    // Usage both in x_groq.usage and the finish chunk's top-level usage.
    file: 'vercel-ai-groq/groq-tool-call.chunks.txt',
    check: (r) => {
      expect(r.blocks).toEqual([{ type: 'tool-call', id: 'tk85n1k4m', name: 'weather', arguments: '{}' }]);
      expect(r.usage).toEqual({ inputTokens: 210, outputTokens: 15 });
    },
  },
];

let server: FakeProvider | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describeShared('OpenAI-compatible adapter on recorded chat-completions streams', () => {
  for (const { file, check } of FIXTURES) {
    for (const sliceBytes of [undefined, 7]) {
      it(`${file}${sliceBytes ? ' (7-byte slices)' : ''}`, async () => {
        const recorded = loadRecordedStream(file, 'openai');
        const reading = readChatFixture(recorded.payloads);
        server = await startFakeProvider({ script: [{ sse: recorded.parts, ...(sliceBytes ? { sliceBytes } : {}) }] });
        const adapter = new ChatCompletionsAdapter({ provider: 'gateway', baseUrl: `${server.url}/v1`, apiKey: 'gw-key' });

        const r = await runAttempt(adapter, request('gateway', 'some-model'));

        expect(r.blocks).toEqual(reading.blocks);
        expect(r.finish.reason.kind).toBe(expectedChatFinish(reading.finishReason, reading.blocks));
        expect(r.usage).toEqual(expectedChatUsage(reading.usage));
        r.blocks.forEach((b, i) => expect(r.deltas.get(i)).toBe(b.type === 'tool-call' ? b.arguments : 'text' in b ? b.text : ''));
        check(r);

        const sent = server.requests[0]!;
        expect(sent.path).toBe('/v1/chat/completions');
        expect(sent.headers['authorization']).toBe('Bearer gw-key');
        expect(sent.headers['user-agent']).toMatch(/^dsh\//);
        // Not DeepSeek: no harness headers, no thinking toggle, no reasoning passback field.
        expect(sent.headers['x-deepseek-harness-session-id']).toBeUndefined();
        expect(sent.body).not.toHaveProperty('thinking');
      });
    }
  }
});
