/**
 * Every recorded Anthropic Messages stream in SOURCES.md through the Anthropic adapter and the real
 * `@anthropic-ai/sdk`: exact blocks (thinking with its signature in replayState), usage with cache
 * fields and the final message_delta's input count, stop reasons including refusal and a tool call
 * cut by max_tokens.
 */
import { afterEach, expect, it } from 'vitest';
import { AnthropicAdapter } from '../../src/llm/anthropic.js';
import type { FinishReason } from '../../src/model/stream.js';
import type { TokenUsage } from '../../src/model/usage.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { assistantFrom, request, runAttempt, userMessage, type AttemptResult } from '../support/llm-run.js';
import { loadRecordedStream, readAnthropicFixture, type AnthropicFixtureReading } from '../support/recorded.js';
import { describeShared } from '../support/shared.js';

function expectedUsage(u: AnthropicFixtureReading['usage']): TokenUsage {
  const usage: TokenUsage = { inputTokens: u.input_tokens ?? 0, outputTokens: u.output_tokens ?? 0 };
  if (u.cache_read_input_tokens !== undefined) usage.cacheReadTokens = u.cache_read_input_tokens;
  if (u.cache_creation_input_tokens !== undefined) usage.cacheWriteTokens = u.cache_creation_input_tokens;
  return usage;
}

function expectedFinish(reading: AnthropicFixtureReading): FinishReason['kind'] {
  const tools = reading.blocks.some((b) => b.type === 'tool-call');
  switch (reading.stopReason) {
    case 'end_turn':
      return tools ? 'tool-calls' : 'stop';
    case 'tool_use':
      return 'tool-calls';
    case 'max_tokens':
      return 'max-tokens';
    default:
      return 'error';
  }
}

const FIXTURES: { file: string; check: (r: AttemptResult) => void }[] = [
  {
    file: 'vercel-ai-anthropic/anthropic-text.chunks.txt',
    check: (r) => {
      expect(r.blocks).toEqual([
        {
          type: 'text',
          text: "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?",
        },
      ]);
      expect(r.usage).toEqual({ inputTokens: 12, outputTokens: 30, cacheReadTokens: 0, cacheWriteTokens: 0 });
    },
  },
  {
    file: 'vercel-ai-anthropic/anthropic-tool-no-args.chunks.txt',
    check: (r) =>
      expect(r.blocks[1]).toEqual({ type: 'tool-call', id: 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP', name: 'updateIssueList', arguments: '{}' }),
  },
  {
    file: 'vercel-ai-anthropic/anthropic-clear-thinking.1.chunks.txt',
    check: (r) => {
      expect(r.blocks).toEqual([
        { type: 'reasoning', text: 'The previous result was 925. Now I need to divide that by 5.\n\n925 ÷ 5 = 185' },
        { type: 'text', text: '925 ÷ 5 = 185' },
      ]);
      expect(r.finish.replayState?.blocks).toEqual([
        { type: 'reasoning', signature: expect.stringMatching(/^EvQBCkYICxgCKkAxhD4N/) },
        { type: 'text' },
      ]);
      expect(r.finish.replayState?.response).toMatchObject({ id: 'msg_01Y6V41gqPaKWEw7iPouH7iW', model: 'claude-sonnet-4-5-20250929' });
    },
  },
  {
    // input_tokens is 43 at message_start and 61 in the final message_delta: the final count wins.
    file: 'vercel-ai-anthropic/anthropic-message-delta-input-tokens.chunks.txt',
    check: (r) => {
      expect(r.blocks).toEqual([{ type: 'text', text: 'pong' }]);
      expect(r.usage).toEqual({ inputTokens: 61, outputTokens: 2 });
    },
  },
  {
    file: 'vercel-ai-anthropic/anthropic-refusal.chunks.txt',
    check: (r) => {
      expect(r.blocks).toEqual([]);
      expect(r.finish.reason).toMatchObject({ kind: 'error', failure: { code: 'REFUSAL', message: expect.stringContaining('cyber') } });
      expect(r.usage).toEqual({ inputTokens: 18, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 });
    },
  },
  {
    file: 'anthropic-sdk-typescript/basic_response.txt',
    check: (r) => {
      expect(r.blocks).toEqual([{ type: 'text', text: 'Hello there!' }]);
      // This recording reports no cache fields at all: none are invented.
      expect(r.usage).toEqual({ inputTokens: 11, outputTokens: 6 });
    },
  },
  {
    file: 'anthropic-sdk-typescript/tool_use_response.txt',
    check: (r) =>
      expect(r.blocks[1]).toEqual({
        type: 'tool-call',
        id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn',
        name: 'get_weather',
        arguments: '{"location": "Paris"}',
      }),
  },
  {
    // The tool_use block never gets content_block_stop; a max-tokens finish still closes it (partial raw JSON).
    file: 'anthropic-sdk-typescript/incomplete_partial_json_response.txt',
    check: (r) => {
      const call = r.blocks[1];
      expect(call).toMatchObject({ type: 'tool-call', name: 'make_file' });
      expect(call?.type === 'tool-call' && call.arguments.endsWith('\n"Filing taxes')).toBe(true);
      expect(r.finish.reason).toEqual({ kind: 'max-tokens' });
    },
  },
];

let server: FakeProvider | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describeShared('Anthropic adapter on recorded Messages streams', () => {
  for (const { file, check } of FIXTURES) {
    for (const sliceBytes of [undefined, 7]) {
      it(`${file}${sliceBytes ? ' (7-byte slices)' : ''}`, async () => {
        const recorded = loadRecordedStream(file, 'anthropic');
        const reading = readAnthropicFixture(recorded.payloads);
        server = await startFakeProvider({ script: [{ sse: recorded.parts, ...(sliceBytes ? { sliceBytes } : {}) }] });
        const adapter = new AnthropicAdapter({ apiKey: 'sk-ant-test', baseUrl: server.url });

        const r = await runAttempt(adapter, request('anthropic', 'claude-haiku-4-5'));

        expect(r.blocks).toEqual(reading.blocks);
        expect(r.finish.reason.kind).toBe(expectedFinish(reading));
        expect(r.usage).toEqual(expectedUsage(reading.usage));
        r.blocks.forEach((b, i) => {
          // Tool blocks may assemble `{}` from an empty stream; text and reasoning are exactly their deltas.
          if (b.type !== 'tool-call') expect(r.deltas.get(i) ?? '').toBe('text' in b ? b.text : '');
        });
        const signed = reading.signatures.some((s) => s !== undefined);
        expect(r.finish.replayState?.blocks ?? []).toEqual(
          signed
            ? reading.blocks.map((b, i) => ({ type: b.type, ...(reading.signatures[i] ? { signature: reading.signatures[i] } : {}) }))
            : [],
        );
        check(r);

        const sent = server.requests[0]!;
        expect(sent.path).toBe('/v1/messages');
        // SDK 1.x sends the key as a bearer token; older ones used x-api-key.
        expect(sent.headers['x-api-key'] ?? sent.headers['authorization']?.replace(/^Bearer /, '')).toBe('sk-ant-test');
        expect(sent.headers['anthropic-version']).toBeDefined();
        expect(sent.headers['user-agent']).toMatch(/^dsh\//);
        expect(sent.body).toMatchObject({ model: 'claude-haiku-4-5', stream: true, max_tokens: 32_000 });
      });
    }
  }

  it('round trip: a streamed thinking block is replayed with its signature on the next request', async () => {
    const recorded = loadRecordedStream('vercel-ai-anthropic/anthropic-clear-thinking.1.chunks.txt', 'anthropic');
    const reading = readAnthropicFixture(recorded.payloads);
    server = await startFakeProvider({ script: [{ sse: recorded.parts }, { sse: recorded.parts }] });
    const adapter = new AnthropicAdapter({ apiKey: 'k', baseUrl: server.url });
    const first = await runAttempt(adapter, request('anthropic', 'claude-haiku-4-5'));

    const history = [userMessage('Hello!'), assistantFrom(first, 'anthropic', 'claude-haiku-4-5'), userMessage('and now?')];
    await runAttempt(adapter, request('anthropic', 'claude-haiku-4-5', { messages: history }));

    const sent = server.requests[1]!.body as { messages: { role: string; content: unknown[] }[] };
    expect(sent.messages[1]).toEqual({
      role: 'assistant',
      content: [
        {
          type: 'thinking',
          thinking: reading.blocks[0]!.type === 'reasoning' ? reading.blocks[0]!.text : '',
          signature: reading.signatures[0],
        },
        { type: 'text', text: '925 ÷ 5 = 185' },
      ],
    });
  });
});
