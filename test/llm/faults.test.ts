/**
 * Injected faults at the adapter level, through the real SDKs: each must end the attempt with the
 * documented failure code in a terminal finish (never a throw, never a hang), in a grammar-valid
 * stream, after exactly one HTTP request (SDK retries are off; the loop's policy retries).
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { LlmAdapter } from '../../src/llm/adapter.js';
import { AnthropicAdapter } from '../../src/llm/anthropic.js';
import { DeepSeekAdapter } from '../../src/llm/deepseek.js';
import { checkStream } from '../../src/llm/grammar.js';
import { normalizeStream } from '../../src/llm/runtime.js';
import type { StreamChunk } from '../../src/model/stream.js';
import { startFakeProvider, type FakeProvider, type FakeResponse } from '../support/fake-provider.js';
import { FAULT_CODES, FAULT_NAMES, anthropicStream, chatStream, fault, type Flavor } from '../support/faults.js';
import { request, runAttempt } from '../support/llm-run.js';
import { describeShared, sharedPath } from '../support/shared.js';

/**
 * The idle timeout where a stall is what is tested (the stall never ends, so only the timeout can
 * end the attempt, however loaded the machine is). Everywhere else the attempt must not time out,
 * and a loaded machine can leave a healthy stream's bytes waiting longer than 250 ms, so those
 * tests get `PATIENT_MS`: idleness is not what they check.
 */
const IDLE_MS = 250;
const PATIENT_MS = 30_000;
/** Keep-alive test: each silence is a quarter of this, their sum one and a half times it. */
const KEEPALIVE_IDLE_MS = 3000;
const STALLS: ReadonlySet<string> = new Set(['stall-mid-stream', 'stall-before-headers']);
let server: FakeProvider | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(...script: FakeResponse[]): Promise<FakeProvider> {
  server = await startFakeProvider({ script });
  return server;
}

function adapterFor(flavor: Flavor, url: string, idleMs = PATIENT_MS): LlmAdapter {
  return flavor === 'openai'
    ? new DeepSeekAdapter({ apiKey: 'sk-test', baseUrl: url, streamIdleTimeoutMs: idleMs })
    : new AnthropicAdapter({ apiKey: 'sk-ant-test', baseUrl: url, streamIdleTimeoutMs: idleMs });
}

const model = (flavor: Flavor): string => (flavor === 'openai' ? 'deepseek-v4-flash' : 'claude-haiku-4-5');
const provider = (flavor: Flavor): string => (flavor === 'openai' ? 'deepseek' : 'anthropic');

async function attempt(flavor: Flavor, ...script: FakeResponse[]) {
  return attemptWith(PATIENT_MS, flavor, ...script);
}

async function attemptWith(idleMs: number, flavor: Flavor, ...script: FakeResponse[]) {
  const s = await serve(...script);
  const result = await runAttempt(adapterFor(flavor, s.url, idleMs), request(provider(flavor), model(flavor)));
  return { ...result, requests: s.requests };
}

const failureOf = (chunk: StreamChunk | undefined) =>
  chunk?.type === 'finish' && (chunk.reason.kind === 'error' || chunk.reason.kind === 'aborted') ? chunk.reason.failure : undefined;

for (const flavor of ['openai', 'anthropic'] as const) {
  describe(`named faults (${flavor} wire)`, () => {
    for (const name of FAULT_NAMES) {
      it(`${name} → ${FAULT_CODES[name] ?? 'a normal stop'}`, async () => {
        const r = await attemptWith(STALLS.has(name) ? IDLE_MS : PATIENT_MS, flavor, fault(name, flavor));
        expect(r.requests).toHaveLength(1);
        const code = FAULT_CODES[name];
        if (code === undefined) {
          expect(r.finish.reason).toEqual({ kind: 'stop' });
          expect(r.blocks).toEqual([{ type: 'text', text: 'Hello, world' }]);
        } else {
          expect(r.finish.reason.kind).toBe('error');
          expect(failureOf(r.finish)?.code).toBe(code);
        }
      });
    }

    it('rate limit carries the status and the provider-requested delay', async () => {
      const r = await attempt(flavor, fault('rate-limit', flavor));
      expect(failureOf(r.finish)).toMatchObject({ code: 'RATE_LIMIT', status: 429, providerRetryAfterMs: 7000 });
    });

    it('retry-after-ms wins over retry-after', async () => {
      const r = await attempt(flavor, { ...fault('server-503', flavor), headers: { 'retry-after-ms': '1500', 'retry-after': '30' } });
      expect(failureOf(r.finish)).toMatchObject({ code: 'SERVER', status: 503, providerRetryAfterMs: 1500 });
    });

    it('a reset mid-stream keeps the deltas that arrived and closes no block', async () => {
      const r = await attempt(flavor, fault('reset-mid-stream', flavor, { text: ['one ', 'two ', 'three ', 'four ', 'five'] }));
      expect(failureOf(r.finish)?.code).toBe('STREAM_CLOSED');
      expect(r.deltas.get(0)).toMatch(/^one /);
      expect(r.chunks.some((c) => c.type === 'block-end')).toBe(false);
    });

    it('a stall before any headers times out too', async () => {
      const r = await attemptWith(IDLE_MS, flavor, fault('stall-before-headers', flavor));
      expect(failureOf(r.finish)).toMatchObject({ code: 'TIMEOUT', message: expect.stringContaining(`${IDLE_MS} ms`) });
    });

    it('keep-alive comments alone keep a slow stream alive (idleness is measured on bytes)', async () => {
      const parts = flavor === 'openai' ? chatStream({ text: ['slow'] }) : anthropicStream({ text: ['slow'] });
      // Each silence between keep-alives is shorter than the idle timeout; their sum is longer.
      const pause = Math.floor(KEEPALIVE_IDLE_MS / 4);
      const trickle = Array.from({ length: 6 }, () => [{ pauseMs: pause }, { comment: 'keep-alive' }]).flat();
      const r = await attemptWith(KEEPALIVE_IDLE_MS, flavor, { sse: [parts[0]!, ...trickle, ...parts.slice(1)] });
      expect(r.finish.reason).toEqual({ kind: 'stop' });
      expect(r.blocks).toEqual([{ type: 'text', text: 'slow' }]);
    });

    it('a stream that ends without a finish reason is STREAM_CLOSED', async () => {
      const full = flavor === 'openai' ? chatStream({ text: ['cut'] }) : anthropicStream({ text: ['cut'] });
      // Drop the finish (and [DONE] / message_delta+message_stop): a clean EOF in the middle of the answer.
      const r = await attempt(flavor, { sse: full.slice(0, flavor === 'openai' ? -2 : -2) });
      expect(failureOf(r.finish)?.code).toBe('STREAM_CLOSED');
    });

    it('an error event inside a 200 stream maps by its type (overload → SERVER)', async () => {
      const head = (flavor === 'openai' ? chatStream({ text: ['a', 'b'] }) : anthropicStream({ text: ['a', 'b'] })).slice(0, 2);
      const error =
        flavor === 'openai'
          ? { data: JSON.stringify({ error: { message: 'Overloaded', type: 'server_error' } }) }
          : { event: 'error', data: JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }) };
      const r = await attempt(flavor, { sse: [...head, error] });
      expect(failureOf(r.finish)).toMatchObject({ code: 'SERVER', message: expect.stringContaining('Overloaded') });
    });

    it('401, 402, 403 and 404 map to AUTH, QUOTA, AUTH, INVALID_REQUEST', async () => {
      const codes: Record<number, string> = { 401: 'AUTH', 402: 'QUOTA', 403: 'AUTH', 404: 'INVALID_REQUEST' };
      for (const [status, code] of Object.entries(codes)) {
        const r = await attempt(flavor, { status: Number(status), body: { error: { message: `status ${status}` } } });
        expect(failureOf(r.finish)).toMatchObject({ code, status: Number(status) });
        await server?.close();
      }
    });

    it('a 401 whose body quotes the API key (as some gateways do) does not carry the key into the failure', async () => {
      const key = flavor === 'openai' ? 'sk-test' : 'sk-ant-test';
      const s = await serve({
        status: 401,
        body: { error: { message: `Incorrect API key provided: Bearer ${key}-0123456789. Check it.` } },
      });
      const long = `${key}-0123456789`;
      const adapter =
        flavor === 'openai'
          ? new DeepSeekAdapter({ apiKey: long, baseUrl: s.url, streamIdleTimeoutMs: PATIENT_MS })
          : new AnthropicAdapter({ apiKey: long, baseUrl: s.url, streamIdleTimeoutMs: PATIENT_MS });
      const r = await runAttempt(adapter, request(provider(flavor), model(flavor)));
      const f = failureOf(r.finish)!;
      expect(f.code).toBe('AUTH');
      expect(f.message).toContain('Incorrect API key provided: Bearer [REDACTED]. Check it.');
      expect(JSON.stringify(r)).not.toContain(long);
    });

    it('a connection refused before any response is TRANSPORT', async () => {
      const s = await startFakeProvider({ script: [] });
      const url = s.url;
      await s.close();
      const r = await runAttempt(adapterFor(flavor, url), request(provider(flavor), model(flavor)));
      expect(failureOf(r.finish)?.code).toBe('TRANSPORT');
    });

    it('the caller aborting mid-stream yields an aborted finish', async () => {
      const s = await serve(fault('stall-mid-stream', flavor, { text: ['partial ', 'answer'] }));
      const ac = new AbortController();
      const chunks: StreamChunk[] = [];
      // A long idle timeout: only the abort can end this attempt.
      const slow =
        flavor === 'openai'
          ? new DeepSeekAdapter({ apiKey: 'k', baseUrl: s.url, streamIdleTimeoutMs: 60_000 })
          : new AnthropicAdapter({ apiKey: 'k', baseUrl: s.url, streamIdleTimeoutMs: 60_000 });
      for await (const c of normalizeStream(slow, request(provider(flavor), model(flavor), { signal: ac.signal }))) {
        chunks.push(c);
        if (c.type === 'text-delta') ac.abort(new Error('user interrupt'));
      }
      checkStream(chunks);
      expect(chunks[chunks.length - 1]).toMatchObject({ type: 'finish', reason: { kind: 'aborted', failure: { code: 'ABORTED' } } });
    });

    it('an already-aborted signal sends nothing', async () => {
      const s = await serve(fault('keep-alive', flavor));
      const ac = new AbortController();
      ac.abort();
      const r = await runAttempt(adapterFor(flavor, s.url), request(provider(flavor), model(flavor), { signal: ac.signal }));
      expect(r.finish.reason.kind).toBe('aborted');
      expect(s.requests).toHaveLength(0);
    });
  });
}

describe('chat-completions finish reasons that are failures', () => {
  it.each([
    ['content_filter', 'CONTENT_FILTER'],
    ['insufficient_system_resource', 'SERVER'],
    ['something_new', 'UNKNOWN'],
  ])('finish_reason %s → %s, after closing the blocks and reporting usage', async (reason, code) => {
    const r = await attempt('openai', { sse: chatStream({ text: ['partial'], finish: reason }) });
    expect(failureOf(r.finish)?.code).toBe(code);
    expect(r.blocks).toEqual([{ type: 'text', text: 'partial' }]);
    expect(r.usage).toBeDefined();
  });

  it('a stop finish on a tool-call turn is a tool-calls finish (some local servers say stop)', async () => {
    const r = await attempt('openai', { sse: chatStream({ toolCalls: [{ id: 'c1', name: 'ls', args: ['{}'] }], finish: 'stop' }) });
    expect(r.finish.reason).toEqual({ kind: 'tool-calls' });
  });
});

describeShared('recorded error bodies', () => {
  const body = (file: string): unknown => JSON.parse(readFileSync(sharedPath('fixtures', 'real', file), 'utf8'));

  it('OpenAI insufficient_quota on a 429 is QUOTA, not RATE_LIMIT', async () => {
    const r = await attempt('openai', { status: 429, body: body('vercel-ai-openai-responses/openai-error.1.json') });
    expect(failureOf(r.finish)).toMatchObject({
      code: 'QUOTA',
      status: 429,
      message: expect.stringContaining('exceeded your current quota'),
    });
  });

  it("OpenAI's legacy-parameter 400 is INVALID_REQUEST (not a context overflow)", async () => {
    const r = await attempt('openai', { status: 400, body: body('vercel-ai-openai/reasoning-model-legacy-parameter-error.json') });
    expect(failureOf(r.finish)).toMatchObject({
      code: 'INVALID_REQUEST',
      status: 400,
      message: expect.stringContaining('max_completion_tokens'),
    });
  });

  it("DeepSeek's unknown-model body is INVALID_REQUEST with DeepSeek's message", async () => {
    const r = await attempt('openai', { status: 400, body: body('neurouter-deepseek/api_test.go.mockChatCompletionError.json') });
    expect(failureOf(r.finish)).toMatchObject({ code: 'INVALID_REQUEST', message: 'deepseek HTTP 400: Model Not Exist' });
  });
});
