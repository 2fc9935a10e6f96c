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

export class ChunkRun {
  readonly length: number;
  /**
   * Payloads, either as parsed (a packed row's own array: no copy on the load path) or joined
   * into one string with end offsets (runs gathered from event lines, whose payload strings
   * would otherwise each stay a separate heap object).
   */
  private readonly parts: readonly string[] | undefined;
  private readonly texts: string | undefined;
  private readonly ends: Uint32Array | undefined;
  /** Member times (safe integers). */
  private readonly times: readonly number[];

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
  ) {
    const n = payloads.length;
    this.length = n;
    this.times = times;
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
    Object.freeze(this);
  }

  payload(k: number): string {
    if (this.parts !== undefined) return this.parts[k]!;
    const ends = this.ends!;
    return this.texts!.slice(k === 0 ? 0 : ends[k - 1]!, ends[k]!);
  }

  time(k: number): number {
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
      time: this.times[k]!,
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
