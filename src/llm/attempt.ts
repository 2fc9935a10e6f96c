/**
 * How an attempt that did not end in an HTTP error status stopped: caller abort, idle stall, a
 * socket cut before or after the response started, unparseable stream data. Shared by the SDK
 * adapters, which only differ in their HTTP error classes.
 */
import type { FinishReason } from '../model/stream.js';
import { LlmError, errorChain, type LlmFailure } from '../model/failure.js';
import { isNetworkError } from './failures.js';
import type { AttemptWatchdog } from './watchdog.js';

export function abortedFailure(signal: AbortSignal | undefined): LlmFailure {
  const reason: unknown = signal?.reason;
  const why = reason === undefined ? '' : `: ${reason instanceof Error ? reason.message : String(reason)}`;
  return { code: 'ABORTED', message: `request aborted by the caller${why}` };
}

export function interruptionReason(watchdog: AttemptWatchdog, signal: AbortSignal | undefined): FinishReason {
  if (watchdog.interruption === 'aborted') return { kind: 'aborted', failure: abortedFailure(signal) };
  return {
    kind: 'error',
    failure: { code: 'TIMEOUT', message: `stream idle: no data from the provider for ${watchdog.idleTimeoutMs} ms (streamIdleTimeoutMs)` },
  };
}

/** Failures that are not an SDK HTTP error, shared by both SDK adapters. */
export function nonHttpFailure(provider: string, e: unknown, watchdog: AttemptWatchdog): LlmFailure {
  if (e instanceof LlmError) return e.failure;
  // The SDKs parse each SSE data line with JSON.parse and let the SyntaxError escape.
  if (e instanceof SyntaxError) return { code: 'MALFORMED_RESPONSE', message: `${provider}: unparseable stream data: ${e.message}` };
  if (isNetworkError(e)) {
    return watchdog.responseStarted
      ? { code: 'STREAM_CLOSED', message: `${provider}: connection dropped mid-stream: ${errorChain(e)}` }
      : { code: 'TRANSPORT', message: `${provider}: connection failed: ${errorChain(e)}` };
  }
  return { code: 'UNKNOWN', message: `${provider}: ${errorChain(e)}` };
}

/**
 * The SDK an adapter runs on, imported by its first request (and started early by the adapter's
 * constructor) instead of with the module: the SDKs are hundreds of modules that `dsh log …`,
 * `dsh sessions` or a run on another provider never need. One import per process.
 */
export function lazySdk<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => (loading ??= load());
}

/** The finish of an attempt whose SDK could not be loaded (a broken installation). */
export function sdkUnavailable(provider: string, e: unknown): FinishReason {
  return { kind: 'error', failure: { code: 'UNKNOWN', message: `${provider}: the SDK could not be loaded: ${errorChain(e)}` } };
}
