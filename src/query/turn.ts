/**
 * `turnOf`: every event of one turn (one run of the agent loop), from its `turn/start` to its
 * `turn/end`, grouped by step. A turn the log leaves open runs to the end of the log.
 */
import type { SessionEvent, TurnEndReason } from '../session/events.js';
import { QueryError } from './errors.js';
import { isChunkRun, num, obj, viewOf, type LogView, type QueryInput } from './input.js';

export interface StepSlice {
  step: number;
  /** Seq of `step/start`. */
  start: number;
  /** Seq of `step/end`; absent when the log leaves the step open. */
  end?: number;
}

export interface TurnSlice {
  turn: number;
  /** Seq of `turn/start`. */
  start: number;
  /** Seq of the turn's last event: its `turn/end`, or the log's last event while it is open. */
  last: number;
  /** Seq of `turn/end`; absent when the log leaves the turn open. */
  end?: number;
  reason?: TurnEndReason;
  /** `turn/end` was added by crash repair when the log was loaded, not written by the log. */
  repaired: boolean;
  steps: StepSlice[];
  events: SessionEvent[];
}

/** The first and last turn numbers of a log (null: no turns). */
export function turnNumbers(view: LogView): { first: number; last: number; count: number } | null {
  let first: number | undefined;
  let last = 0;
  let count = 0;
  for (const e of view.records()) {
    if (isChunkRun(e) || e.type !== 'turn/start') continue;
    const t = num(obj(e.data).turn);
    if (t === undefined) continue;
    first ??= t;
    last = t;
    count++;
  }
  return first === undefined ? null : { first, last, count };
}

/** Every event of turn `n`; TURN_NOT_FOUND (with the log's turn range) when it has none. */
export function turnOf(input: QueryInput, n: number): TurnSlice {
  const view = viewOf(input);
  let slice: TurnSlice | undefined;
  let open: StepSlice | undefined;
  for (const r of view.records()) {
    if (slice === undefined) {
      // Until the turn starts, chunk runs are skipped whole.
      if (!isChunkRun(r) && r.type === 'turn/start' && num(obj(r.data).turn) === n)
        slice = { turn: n, start: r.seq, last: r.seq, repaired: false, steps: [], events: [r] };
      continue;
    }
    if (isChunkRun(r)) {
      for (let k = 0; k < r.length; k++) slice.events.push(r.member(k));
      slice.last = r.seq0 + r.length - 1;
      continue;
    }
    const e = r;
    // A second start of the same number cannot load; another turn's start ends an unclosed one.
    if (e.type === 'turn/start') break;
    slice.events.push(e);
    slice.last = e.seq;
    if (e.type === 'step/start') {
      open = { step: num(obj(e.data).step) ?? slice.steps.length + 1, start: e.seq };
      slice.steps.push(open);
    } else if (e.type === 'step/end' && open) {
      open.end = e.seq;
      open = undefined;
    } else if (e.type === 'turn/end') {
      slice.end = e.seq;
      slice.reason = (e as SessionEvent<'turn/end'>).data.reason;
      slice.repaired = e.seq >= view.written;
      break;
    }
  }
  if (slice) return slice;
  const turns = turnNumbers(view);
  const has =
    turns === null
      ? 'it has no turns'
      : turns.first === turns.last
        ? `it has only turn ${turns.first}`
        : `its turns are ${turns.first}…${turns.last}`;
  throw new QueryError('TURN_NOT_FOUND', `the log has no turn ${n}: ${has}`, {
    turn: n,
    turns: turns && { first: turns.first, last: turns.last },
  });
}
