/**
 * Compact in-memory storage of chunk runs. A streamed answer is hundreds of token-sized
 * `assistant/chunk` events; as objects each costs three frozen objects and a boxed time (about
 * 200 bytes on a 64-bit V8), while its payload is a few characters. A `ChunkRun` keeps a run of
 * same-block deltas the way a packed row stores it on disk: shared placement (turn, step, block
 * index, call id and name), the payloads, and the times.
 * Its members are materialised on demand as frozen `SessionEvent`s, identical (field order
 * included) to the events the run was built from.
 *
 * Only the loader builds runs, from rows and event lines it has parsed and checked itself; a run
 * is therefore canonical by construction: string payloads, safe-integer seqs and times, integer
 * turn and step ≥ 1. The class is internal (not exported from the package).
 */
import type { SessionEvent } from './events.js';

export type RunKind = 'text-delta' | 'reasoning-delta' | 'tool-call-delta';

/** A run's payloads and times, as built or as read later (`ChunkRun.deferred`). */
export interface RunBody {
  readonly payloads: readonly string[];
  readonly times: readonly number[];
}

export class ChunkRun {
  readonly length: number;
  /**
   * Payloads, either as parsed (a packed row's own array: no copy on the load path) or joined
   * into one string with end offsets (runs gathered from event lines, whose payload strings
   * would otherwise each stay a separate heap object).
   */
  private parts: readonly string[] | undefined;
  private texts: string | undefined;
  private ends: Uint32Array | undefined;
  /** Member times (safe integers). */
  private times: readonly number[];
  /**
   * A deferred run (a resume from the sidecar index): where its body comes from, read on the
   * first access to a payload or a time, then dropped. Undefined once the body is in hand.
   */
  private pending: (() => RunBody) | undefined;

  constructor(
    readonly seq0: number,
    readonly turn: number,
    readonly step: number,
    readonly index: number,
    readonly kind: RunKind,
    /** Tool-call runs: the call id, and the name when every member carried it. */
    readonly id: string | undefined,
    readonly name: string | undefined,
    payloads: readonly string[],
    times: readonly number[],
    join: boolean,
    length = payloads.length,
  ) {
    this.length = length;
    this.times = times;
    this.setBody(payloads, join);
    Object.seal(this);
  }

  /**
   * A run whose placement is known (from the resume index) and whose payloads and times are
   * read from storage by `load` only when a member is first read. `load` must return exactly
   * `length` of each, or throw.
   */
  static deferred(
    seq0: number,
    length: number,
    placement: { turn: number; step: number; index: number; kind: RunKind; id: string | undefined; name: string | undefined },
    load: () => RunBody,
  ): ChunkRun {
    const run = new ChunkRun(
      seq0,
      placement.turn,
      placement.step,
      placement.index,
      placement.kind,
      placement.id,
      placement.name,
      [],
      [],
      false,
      length,
    );
    run.pending = load;
    return run;
  }

  /** Is the body still in storage (a deferred run not read yet)? */
  get isDeferred(): boolean {
    return this.pending !== undefined;
  }

  /**
   * The first member's placement as a candidate for the trace check, without reading a deferred
   * body (the trace reads only type, seq, turn and step of a chunk).
   */
  probe(): SessionEvent {
    if (this.pending === undefined) return this.member(0);
    return {
      type: 'assistant/chunk',
      seq: this.seq0,
      time: 0,
      data: { turn: this.turn, step: this.step, chunk: { type: this.kind, index: this.index } },
    } as unknown as SessionEvent;
  }

  private setBody(payloads: readonly string[], join: boolean): void {
    const n = payloads.length;
    if (join) {
      this.texts = payloads.join('');
      const ends = new Uint32Array(n);
      let end = 0;
      for (let k = 0; k < n; k++) {
        end += payloads[k]!.length;
        ends[k] = end;
      }
      this.ends = ends;
    } else {
      this.parts = payloads;
    }
  }

  private fetch(): void {
    const load = this.pending!;
    const body = load();
    if (body.payloads.length !== this.length || body.times.length !== this.length) {
      throw new Error(`chunk run at seq ${this.seq0}: storage returned ${body.payloads.length} payloads for ${this.length} members`);
    }
    this.times = body.times;
    this.setBody(body.payloads, false);
    this.pending = undefined;
  }

  payload(k: number): string {
    if (this.pending !== undefined) this.fetch();
    if (this.parts !== undefined) return this.parts[k]!;
    const ends = this.ends!;
    return this.texts!.slice(k === 0 ? 0 : ends[k - 1]!, ends[k]!);
  }

  time(k: number): number {
    if (this.pending !== undefined) this.fetch();
    return this.times[k]!;
  }

  /** Member `k` as a frozen event, in canonical field order. */
  member(k: number): SessionEvent {
    const p = this.payload(k);
    const chunk =
      this.kind === 'tool-call-delta'
        ? this.name !== undefined
          ? Object.freeze({ type: this.kind, index: this.index, id: this.id, name: this.name, argumentsDelta: p })
          : Object.freeze({ type: this.kind, index: this.index, id: this.id, argumentsDelta: p })
        : Object.freeze({ type: this.kind, index: this.index, text: p });
    return Object.freeze({
      type: 'assistant/chunk',
      seq: this.seq0 + k,
      time: this.time(k),
      data: Object.freeze({ turn: this.turn, step: this.step, chunk }),
    }) as unknown as SessionEvent;
  }
}

/** A log slot: an event, or the run one of whose members sits at this seq. */
export type Slot = SessionEvent | ChunkRun;

export function materialise(slot: Slot, seq: number): SessionEvent {
  return slot instanceof ChunkRun ? slot.member(seq - slot.seq0) : slot;
}

export function slotType(slot: Slot): string {
  return slot instanceof ChunkRun ? 'assistant/chunk' : slot.type;
}
