import { describe, expect, it } from 'vitest';
import type { LlmAdapter } from '../../src/llm/adapter.js';
import { checkStream } from '../../src/llm/grammar.js';
import { collectStream, normalizeStream } from '../../src/llm/runtime.js';
import { LlmError } from '../../src/model/failure.js';
import type { GenerateRequest } from '../../src/model/request.js';
import type { StreamChunk } from '../../src/model/stream.js';

const req = (extra: Partial<GenerateRequest> = {}): GenerateRequest => ({ provider: 'fake', model: 'm', messages: [], ...extra });

function adapter(stream: (r: GenerateRequest) => AsyncIterable<StreamChunk>): LlmAdapter {
  return { providers: ['fake'], stream };
}

const textBlock: StreamChunk[] = [
  { type: 'block-start', index: 0, blockType: 'text' },
  { type: 'text-delta', index: 0, text: 'hi' },
  { type: 'block-end', index: 0, block: { type: 'text', text: 'hi' } },
];

describe('normalizeStream', () => {
  it('passes a well-formed attempt through unchanged', async () => {
    const chunks: StreamChunk[] = [...textBlock, { type: 'finish', reason: { kind: 'stop' } }];
    const out = await collectStream(
      adapter(async function* () {
        yield* chunks;
      }),
      req(),
    );
    expect(out).toEqual(chunks);
  });

  it('turns a thrown LlmError into an error finish carrying its failure', async () => {
    const failure = { code: 'RATE_LIMIT', message: 'slow down', status: 429, providerRetryAfterMs: 1000 };
    const out = await collectStream(
      adapter(async function* () {
        yield textBlock[0]!;
        throw new LlmError(failure);
      }),
      req(),
    );
    checkStream(out);
    expect(out[out.length - 1]).toEqual({ type: 'finish', reason: { kind: 'error', failure } });
  });

  it('turns any other throw (even a synchronous one from stream()) into an UNKNOWN error finish', async () => {
    const out = await collectStream(
      {
        providers: ['fake'],
        stream: () => {
          throw new TypeError('boom');
        },
      },
      req(),
    );
    expect(out).toEqual([{ type: 'finish', reason: { kind: 'error', failure: { code: 'UNKNOWN', message: 'adapter threw: boom' } } }]);
  });

  it('reports a throw after the caller aborted as an aborted finish', async () => {
    const ac = new AbortController();
    const out = await collectStream(
      adapter(async function* () {
        yield textBlock[0]!;
        ac.abort(new Error('user pressed Esc'));
        throw new Error('socket closed');
      }),
      req({ signal: ac.signal }),
    );
    checkStream(out);
    expect(out[out.length - 1]).toMatchObject({ type: 'finish', reason: { kind: 'aborted', failure: { code: 'ABORTED' } } });
    expect(JSON.stringify(out[out.length - 1])).toContain('user pressed Esc');
  });

  it('adds a STREAM_CLOSED finish when the adapter forgets one', async () => {
    const out = await collectStream(
      adapter(async function* () {
        yield* textBlock;
      }),
      req(),
    );
    checkStream(out);
    expect(out[out.length - 1]).toMatchObject({ reason: { kind: 'error', failure: { code: 'STREAM_CLOSED' } } });
  });

  it('stops at the first finish and closes the adapter', async () => {
    let closed = false;
    let yieldedAfterFinish = false;
    const out = await collectStream(
      adapter(async function* () {
        try {
          yield { type: 'finish', reason: { kind: 'stop' } } as StreamChunk;
          yieldedAfterFinish = true;
          yield { type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } } as StreamChunk;
        } finally {
          closed = true;
        }
      }),
      req(),
    );
    expect(out).toHaveLength(1);
    expect(yieldedAfterFinish).toBe(false);
    expect(closed).toBe(true);
  });

  it('ends a grammar-breaking attempt with MALFORMED_RESPONSE, keeping what was valid', async () => {
    const out = await collectStream(
      adapter(async function* () {
        yield textBlock[0]!;
        yield { type: 'reasoning-delta', index: 0, text: 'wrong kind' };
        yield { type: 'finish', reason: { kind: 'stop' } };
      }),
      req(),
    );
    checkStream(out);
    expect(out).toHaveLength(2);
    expect(out[1]).toMatchObject({
      reason: { kind: 'error', failure: { code: 'MALFORMED_RESPONSE', message: expect.stringContaining('DELTA_TYPE_MISMATCH') } },
    });
  });

  it('closes the adapter when the consumer stops reading early', async () => {
    let closed = false;
    const gen = normalizeStream(
      adapter(async function* () {
        try {
          yield* textBlock;
          yield { type: 'finish', reason: { kind: 'stop' } };
        } finally {
          closed = true;
        }
      }),
      req(),
    );
    for await (const c of gen) if (c.type === 'block-start') break;
    expect(closed).toBe(true);
  });
});
