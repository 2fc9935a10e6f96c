/**
 * The single failure path for one provider attempt. Whatever an adapter does (ends with an in-band
 * error finish, throws, forgets the finish, breaks the stream grammar, keeps talking after finish),
 * `normalizeStream` yields a grammar-valid stream that ends with exactly one `finish`. The loop
 * therefore only ever inspects the finish chunk.
 */
import type { LlmAdapter } from './adapter.js';
import type { GenerateRequest } from '../model/request.js';
import type { FinishChunk, FinishReason, StreamChunk } from '../model/stream.js';
import { LlmError, errorChain } from '../model/failure.js';
import { abortedFailure } from './attempt.js';
import { StreamGrammar, StreamGrammarError, type StreamGrammarOptions } from './grammar.js';

export async function* normalizeStream(
  adapter: LlmAdapter,
  request: GenerateRequest,
  grammarOptions?: StreamGrammarOptions,
): AsyncGenerator<StreamChunk, void, undefined> {
  const grammar = new StreamGrammar(grammarOptions);
  let iterator: AsyncIterator<StreamChunk> | undefined;
  try {
    try {
      iterator = adapter.stream(request)[Symbol.asyncIterator]();
    } catch (e) {
      yield { type: 'finish', reason: failureReason(e, request.signal) };
      return;
    }
    for (;;) {
      let next: IteratorResult<StreamChunk>;
      try {
        next = await iterator.next();
      } catch (e) {
        yield { type: 'finish', reason: failureReason(e, request.signal) };
        return;
      }
      if (next.done) break;
      const chunk = next.value;
      try {
        grammar.push(chunk);
      } catch (e) {
        if (!(e instanceof StreamGrammarError)) throw e;
        yield {
          type: 'finish',
          reason: { kind: 'error', failure: { code: 'MALFORMED_RESPONSE', message: `adapter broke the stream contract: ${e.message}` } },
        };
        return;
      }
      yield chunk;
      if (chunk.type === 'finish') return;
    }
    yield missingFinish(request.signal);
  } finally {
    // Lets the adapter release its request and timers whether it finished, failed, or the consumer
    // stopped reading early; on an exhausted generator this is a no-op.
    await iterator?.return?.()?.catch(() => undefined);
  }
}

/** Collect a whole normalised attempt; for tests and non-streaming callers. */
export async function collectStream(adapter: LlmAdapter, request: GenerateRequest): Promise<StreamChunk[]> {
  const out: StreamChunk[] = [];
  for await (const c of normalizeStream(adapter, request)) out.push(c);
  return out;
}

function failureReason(e: unknown, signal: AbortSignal | undefined): FinishReason {
  if (signal?.aborted) return { kind: 'aborted', failure: abortedFailure(signal) };
  if (e instanceof LlmError) {
    return e.failure.code === 'ABORTED' ? { kind: 'aborted', failure: e.failure } : { kind: 'error', failure: e.failure };
  }
  return { kind: 'error', failure: { code: 'UNKNOWN', message: `adapter threw: ${errorChain(e)}` } };
}

function missingFinish(signal: AbortSignal | undefined): FinishChunk {
  if (signal?.aborted) return { type: 'finish', reason: { kind: 'aborted', failure: abortedFailure(signal) } };
  return {
    type: 'finish',
    reason: { kind: 'error', failure: { code: 'STREAM_CLOSED', message: 'adapter stream ended without a finish chunk' } },
  };
}
