/**
 * The hook bus: how live behaviour is extended. Four dispatch modes:
 *
 * - `emit`: fire and forget. Listeners run synchronously in order; a throw (or a rejected
 *   promise) is reported and contained, so an observer can never break the caller.
 * - `serial`: awaited one after another, in order, no `next`. A throw propagates to the caller.
 * - `parallel`: all awaited together; any failures propagate as one `AggregateError`.
 * - `waterfall`: a chain. Each listener gets `(payload, next)`: it may rewrite what it passes to
 *   `next`, rewrite what comes back, or short-circuit by returning a value without calling
 *   `next`. The caller's `terminal` sits at the end of the chain.
 *
 * A waterfall listener that neither calls `next()` nor returns a decision is the classic silent
 * bug (the chain just stops). The bus reports it, naming the listener, and continues the chain as
 * if `next()` had been called. A listener that calls `next()` but forgets to return its result is
 * reported too, and the downstream result is used.
 *
 * `HookMap` is merge-extensible: each layer declares its own events by declaration merging
 * (`declare module '…/hooks/bus.js' { interface HookMap { … } }`), so the bus imports nothing
 * from above it.
 */

export interface EmitHook<P> {
  mode: 'emit';
  payload: P;
}
export interface SerialHook<P> {
  mode: 'serial';
  payload: P;
}
export interface ParallelHook<P> {
  mode: 'parallel';
  payload: P;
}
export interface WaterfallHook<P, R> {
  mode: 'waterfall';
  payload: P;
  result: R;
}

// biome-ignore lint/suspicious/noEmptyInterface: each layer adds its hooks by declaration merging (an interface, not a type alias)
export interface HookMap {}

export type HookName = keyof HookMap;
type Spec<K extends HookName> = HookMap[K];
export type PayloadOf<K extends HookName> = Spec<K> extends { payload: infer P } ? P : never;
export type ResultOf<K extends HookName> = Spec<K> extends { mode: 'waterfall'; result: infer R } ? R : void;
type NamesOf<M extends string> = { [K in HookName]: Spec<K> extends { mode: M } ? K : never }[HookName];
export type EmitName = NamesOf<'emit'>;
export type SerialName = NamesOf<'serial'>;
export type ParallelName = NamesOf<'parallel'>;
export type WaterfallName = NamesOf<'waterfall'>;

export type Next<K extends HookName> = (payload?: PayloadOf<K>) => Promise<ResultOf<K>>;
export type Listener<K extends HookName> =
  Spec<K> extends { mode: 'waterfall' }
    ? (payload: PayloadOf<K>, next: Next<K>) => ResultOf<K> | undefined | Promise<ResultOf<K> | undefined>
    : (payload: PayloadOf<K>) => void | Promise<void>;

export type Disposer = () => void;

export interface ListenOptions {
  /** Run before listeners registered earlier (used by invariants that must see everything first). */
  prepend?: boolean;
  /** Name used in diagnostics; defaults to the function's name. */
  name?: string;
}

export interface HookDiagnostic {
  hook: string;
  listener: string;
  kind: 'no-decision' | 'result-dropped' | 'emit-listener-threw';
  message: string;
  error?: unknown;
}

interface Entry {
  fn: (...args: never[]) => unknown;
  name: string;
}

export class HookBus {
  private readonly entries = new Map<string, Entry[]>();
  private diagnosticSinks: ((d: HookDiagnostic) => void)[] = [];

  /** Register a listener; returns its disposer. */
  on<K extends HookName>(hook: K, fn: Listener<K>, opts: ListenOptions = {}): Disposer {
    const list = this.entries.get(hook) ?? [];
    const entry: Entry = { fn: fn as Entry['fn'], name: opts.name ?? (fn.name || `${hook} listener #${list.length + 1}`) };
    const next = opts.prepend ? [entry, ...list] : [...list, entry];
    this.entries.set(hook, next); // copy-on-write: dispatches in flight keep their snapshot
    let disposed = false;
    return () => {
      if (disposed) return;
      disposed = true;
      const cur = this.entries.get(hook) ?? [];
      this.entries.set(
        hook,
        cur.filter((e) => e !== entry),
      );
    };
  }

  has(hook: HookName): boolean {
    return (this.entries.get(hook)?.length ?? 0) > 0;
  }

  /** Receive diagnostics (waterfall misuse, contained emit errors). Default: stderr. */
  onDiagnostic(sink: (d: HookDiagnostic) => void): Disposer {
    this.diagnosticSinks.push(sink);
    return () => {
      this.diagnosticSinks = this.diagnosticSinks.filter((s) => s !== sink);
    };
  }

  private report(d: HookDiagnostic): void {
    if (this.diagnosticSinks.length === 0) {
      console.warn(`[dsh] ${d.message}`, d.error ?? '');
      return;
    }
    for (const s of this.diagnosticSinks) {
      try {
        s(d);
      } catch {
        // a broken sink must not turn a diagnostic into a failure
      }
    }
  }

  emit<K extends EmitName>(hook: K, payload: PayloadOf<K>): void {
    const list = this.entries.get(hook);
    if (!list) return;
    for (const e of list) {
      const fail = (error: unknown): void =>
        this.report({
          hook,
          listener: e.name,
          kind: 'emit-listener-threw',
          message: `"${hook}" listener "${e.name}" threw (contained)`,
          error,
        });
      try {
        const r = (e.fn as (p: unknown) => unknown)(payload);
        if (r && typeof (r as Promise<unknown>).then === 'function') (r as Promise<unknown>).then(undefined, fail);
      } catch (error) {
        fail(error);
      }
    }
  }

  async serial<K extends SerialName>(hook: K, payload: PayloadOf<K>): Promise<void> {
    const list = this.entries.get(hook);
    if (!list) return;
    for (const e of list) await (e.fn as (p: unknown) => unknown)(payload);
  }

  async parallel<K extends ParallelName>(hook: K, payload: PayloadOf<K>): Promise<void> {
    const list = this.entries.get(hook);
    if (!list) return;
    const settled = await Promise.allSettled(list.map(async (e) => (e.fn as (p: unknown) => unknown)(payload)));
    const errors = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected').map((s) => s.reason as unknown);
    if (errors.length > 0) throw new AggregateError(errors, `${errors.length} "${hook}" listener(s) failed`);
  }

  async waterfall<K extends WaterfallName>(
    hook: K,
    payload: PayloadOf<K>,
    terminal: (payload: PayloadOf<K>) => ResultOf<K> | Promise<ResultOf<K>>,
  ): Promise<ResultOf<K>> {
    const chain = this.entries.get(hook) ?? [];
    const run = async (i: number, p: PayloadOf<K>): Promise<ResultOf<K>> => {
      if (i >= chain.length) return terminal(p);
      const e = chain[i]!;
      let downstream: Promise<ResultOf<K>> | undefined;
      const next: Next<K> = (np) => {
        downstream = run(i + 1, np === undefined ? p : np);
        return downstream;
      };
      const out = await (e.fn as (p: unknown, n: unknown) => unknown)(p, next);
      if (out !== undefined) return out as ResultOf<K>;
      if (downstream !== undefined) {
        const r = await downstream;
        if (r !== undefined) {
          this.report({
            hook,
            listener: e.name,
            kind: 'result-dropped',
            message:
              `waterfall "${hook}": listener "${e.name}" called next() but did not return its result; using the downstream result ` +
              `(write \`return next(…)\`)`,
          });
        }
        return r;
      }
      this.report({
        hook,
        listener: e.name,
        kind: 'no-decision',
        message:
          `waterfall "${hook}": listener "${e.name}" neither called next() nor returned a decision; continuing the chain as if it ` +
          'called next()',
      });
      return run(i + 1, p);
    };
    return run(0, payload);
  }
}
