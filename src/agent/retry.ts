/**
 * The default retry policy (dsh's llm-retry, normal mode): up to 5 retries for transient failure
 * codes, exponential backoff from 0.5 s to 10 s with ±10% jitter, a provider's Retry-After used
 * when it is within the cap. Each retry is logged (`llm/retry` before the wait, `llm/retry-started`
 * after it) and the retried request is rebuilt from the log. The retry count comes from the log,
 * so a resumed step continues counting. Cancellation always wins over a retry.
 */
import { randomUUID } from 'node:crypto';
import type { SessionEvent } from '../session/events.js';
import type { Plugin } from './context.js';

export interface RetryPolicyOptions {
  maxRetries?: number;
  retryableCodes?: readonly string[];
  initialDelayMs?: number;
  maxDelayMs?: number;
  jitterRatio?: number;
  /** For tests: a deterministic random source in [0, 1). */
  random?: () => number;
  /** For tests: how to wait (must honour the signal). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

export const DEFAULT_RETRYABLE_CODES = ['RATE_LIMIT', 'SERVER', 'TIMEOUT', 'TRANSPORT', 'EMPTY_RESPONSE'] as const;

export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(t);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Retries already made in this step, counted from the log back to its `step/start`. */
export function retriesInStep(log: { length: number; at(seq: number): SessionEvent | undefined }, turn: number, step: number): number {
  let n = 0;
  for (let i = log.length - 1; i >= 0; i--) {
    const e = log.at(i)!;
    if (e.type === 'step/start' && e.data.turn === turn && e.data.step === step) break;
    if (e.type === 'llm/retry' && e.data.turn === turn && e.data.step === step) n++;
  }
  return n;
}

export function backoffDelay(
  retry: number,
  o: Required<Pick<RetryPolicyOptions, 'initialDelayMs' | 'maxDelayMs' | 'jitterRatio'>>,
  random: () => number,
  retryAfterMs?: number,
): number {
  if (retryAfterMs !== undefined && retryAfterMs >= 0 && retryAfterMs <= o.maxDelayMs) return Math.round(retryAfterMs);
  const base = Math.min(o.maxDelayMs, o.initialDelayMs * 2 ** (retry - 1));
  const jitter = base * o.jitterRatio * (2 * random() - 1);
  return Math.max(0, Math.round(Math.min(o.maxDelayMs, base + jitter)));
}

export function retryPolicy(opts: RetryPolicyOptions = {}): Plugin {
  const maxRetries = opts.maxRetries ?? 5;
  const codes = new Set(opts.retryableCodes ?? DEFAULT_RETRYABLE_CODES);
  const timing = {
    initialDelayMs: opts.initialDelayMs ?? 500,
    maxDelayMs: opts.maxDelayMs ?? 10_000,
    jitterRatio: opts.jitterRatio ?? 0.1,
  };
  const random = opts.random ?? Math.random;
  const sleep = opts.sleep ?? abortableSleep;
  return (host) =>
    host.on(
      'agent/request-error',
      async (p, next) => {
        const { agent, turn, step, failure, signal } = p;
        if (!codes.has(failure.code) || signal.aborted) return next();
        const session = agent.session;
        const retry = retriesInStep(session, turn, step) + 1;
        if (retry > maxRetries) return next();
        const delayMs = backoffDelay(retry, timing, random, failure.providerRetryAfterMs);
        const retryId = randomUUID();
        session.append('llm/retry', {
          retryId,
          turn,
          step,
          provider: p.provider,
          mode: 'normal',
          policyKey: 'default',
          retry,
          maxRetries,
          delayMs,
          failure,
        });
        await sleep(delayMs, signal);
        session.append('llm/retry-started', { retryId, turn, step, retry });
        return { kind: 'retry' };
      },
      { name: 'dsh:retry-policy' },
    );
}
