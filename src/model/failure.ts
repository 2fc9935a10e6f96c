/**
 * Normalised provider failures. Every adapter maps its transport and HTTP errors onto these codes,
 * so retry policy, turn-end reasons and telemetry never look at provider-specific errors.
 */
import { CodedError } from './coded-error.js';

export interface LlmFailure {
  message: string;
  code: LlmFailureCode | (string & {});
  status?: number;
  /** Delay the provider asked for (Retry-After), in ms. */
  providerRetryAfterMs?: number;
  requestId?: string;
}

export const LLM_FAILURE_CODES = [
  'AUTH',
  'QUOTA',
  'RATE_LIMIT',
  'CONTEXT_WINDOW_EXCEEDED',
  'INVALID_REQUEST',
  'SERVER',
  'TIMEOUT',
  'TRANSPORT',
  'STREAM_CLOSED',
  'MALFORMED_RESPONSE',
  'EMPTY_RESPONSE',
  'ABORTED',
  'MISSING_CREDENTIAL',
  'INVALID_CREDENTIAL',
  'NO_ADAPTER',
  'UNKNOWN',
] as const;
export type LlmFailureCode = (typeof LLM_FAILURE_CODES)[number];

/**
 * An error carrying an `LlmFailure`; what adapters throw and what the loop records verbatim. Its
 * code is open (`LlmFailureCode` or any other string): a replayed log carries the failure codes
 * its recording had, and those are kept as they were.
 */
export class LlmError extends CodedError<LlmFailure['code']> {
  readonly failure: LlmFailure;
  constructor(failure: LlmFailure, options?: { cause?: unknown }) {
    super(failure.code, failure.message, options);
    this.name = 'LlmError';
    this.failure = failure;
  }
}

/** Message chain of an unknown thrown value, for `{ code: 'UNKNOWN' }` failures. */
export function errorChain(e: unknown): string {
  const parts: string[] = [];
  let cur: unknown = e;
  for (let depth = 0; cur !== undefined && cur !== null && depth < 8; depth++) {
    if (cur instanceof Error) {
      parts.push(cur.message || cur.name);
      cur = (cur as { cause?: unknown }).cause;
    } else {
      parts.push(String(cur));
      break;
    }
  }
  return parts.join(': ') || 'unknown error';
}

export function toLlmFailure(e: unknown): LlmFailure {
  if (e instanceof LlmError) return e.failure;
  return { message: errorChain(e), code: 'UNKNOWN' };
}
