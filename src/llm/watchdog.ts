/**
 * Per-attempt abort and idle control shared by the SDK adapters. The SDKs' own `timeout` only
 * covers the wait for response headers, and their stream iterators return silently when aborted,
 * so the adapter needs its own record of *why* an attempt stopped (caller abort vs. idle stall) and
 * whether the response had started (transport failure vs. a stream cut mid-way).
 *
 * Idleness is measured on bytes, not on parsed events: SSE keep-alive comments (DeepSeek sends
 * them while a request is queued) prove the connection is alive even though the SDK never yields
 * them, so the `fetch` handed to the SDK taps the body and every byte resets the timer.
 */
import { sendRequest } from './redirects.js';

export type Interruption = 'aborted' | 'idle';

export const DEFAULT_STREAM_IDLE_TIMEOUT_MS = 300_000;

export class AttemptWatchdog {
  private readonly controller = new AbortController();
  private readonly callerSignal: AbortSignal | undefined;
  private readonly onCallerAbort = (): void => this.interrupt('aborted');
  private timer: ReturnType<typeof setTimeout> | undefined;
  private disposed = false;
  private why: Interruption | undefined;
  private started = false;

  constructor(private readonly opts: { signal?: AbortSignal | undefined; idleTimeoutMs: number; baseFetch?: typeof fetch | undefined }) {
    this.callerSignal = opts.signal;
    if (opts.signal?.aborted) this.interrupt('aborted');
    else opts.signal?.addEventListener('abort', this.onCallerAbort, { once: true });
    this.touch();
  }

  /** Aborted when the caller aborts or the attempt goes idle; give it to the SDK call. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get interruption(): Interruption | undefined {
    return this.why;
  }

  /** The provider answered with response headers; later network failures cut a live stream. */
  get responseStarted(): boolean {
    return this.started;
  }

  get idleTimeoutMs(): number {
    return this.opts.idleTimeoutMs;
  }

  /** Restart the idle timer. */
  touch(): void {
    if (this.disposed || this.why) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.interrupt('idle'), this.opts.idleTimeoutMs);
    // An abandoned attempt must not keep the process alive; live sockets do that on their own.
    this.timer.unref?.();
  }

  readonly fetch: typeof fetch = async (input, init) => {
    // First under `redirect: 'error'`, redirects followed within the origin only (src/llm/redirects.ts).
    const response = await sendRequest(this.opts.baseFetch ?? globalThis.fetch, input, init);
    this.started = true;
    this.touch();
    if (!response.body) return response;
    const tap = new TransformStream<Uint8Array, Uint8Array>({
      transform: (chunk, controller) => {
        this.touch();
        controller.enqueue(chunk);
      },
    });
    return new Response(response.body.pipeThrough(tap), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };

  dispose(): void {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
    this.callerSignal?.removeEventListener('abort', this.onCallerAbort);
  }

  private interrupt(why: Interruption): void {
    if (this.why || this.disposed) return;
    this.why = why;
    if (this.timer) clearTimeout(this.timer);
    const message = why === 'idle' ? `no data from the provider for ${this.opts.idleTimeoutMs} ms` : 'aborted by the caller';
    // Always an AbortError, whatever the caller's reason: the SDKs then end their iterators quietly
    // and the adapter reports the interruption it recorded here.
    this.controller.abort(new DOMException(message, 'AbortError'));
  }
}
