/**
 * What a query reads. Every query takes any of the forms a log comes in: a live `Session`, a
 * loaded JSONL log (`loadJsonl`, `loadJsonlFile`, the CLI's reader), a bare `{ id, events }`, or an
 * event reader (the viewer's followed source). They are all seen through one `LogView`: events by
 * seq, and a scan that does not copy the log.
 *
 * A loaded log holds more than the file: crash repair's closers for a turn the writer left open,
 * and the end-of-seed marker the loader adds. `written` is where the file's own events end, so
 * the statistics can tell a turn the file left open (dangling, or still being written) from one
 * it closed; the closers stay readable (a query may name their seqs, as `dsh log show` lists
 * them), the loader's marker does not (it is not part of the session's history).
 */
import { isChunkRun, Session, type ChunkRunView } from '../session/session.js';
import type { SessionEvent, SessionHeader } from '../session/events.js';
import type { LoadedLog } from '../session/codec/load.js';
import { QueryError } from './errors.js';

/** A session's events as plain data. */
export interface EventList {
  id: string;
  header?: SessionHeader;
  events: readonly SessionEvent[];
}

/** Events by seq from something that may grow (the viewer's sources). */
export interface EventReader {
  id: string;
  header?: SessionHeader;
  length(): number;
  at(seq: number): SessionEvent;
  since(from: number): Iterable<SessionEvent>;
}

export type QueryInput = Session | LoadedLog | EventList | EventReader;

export interface LogView {
  readonly id: string;
  readonly header: SessionHeader | undefined;
  /** Events a query may name: seqs 0 … length − 1. */
  readonly length: number;
  /** Events the log itself holds (before a loader's crash-repair closers); ≤ length. */
  readonly written: number;
  /** The event at `seq` (0 ≤ seq < length). */
  at(seq: number): SessionEvent;
  /** Events `from` … `to − 1` in seq order, without copying the log. */
  scan(from?: number, to?: number): Iterable<SessionEvent>;
  /**
   * The same events, with the runs of chunks a loaded log stores compactly given whole (their
   * members not materialised): for folds that can take a run at once.
   */
  records(from?: number, to?: number): Iterable<SessionEvent | ChunkRunView>;
}

export { isChunkRun, type ChunkRunView };

function sessionView(s: Session, id: string, header: SessionHeader, length: number, written: number): LogView {
  return {
    id,
    header,
    length,
    written,
    at: (seq) => s.at(seq)!,
    *scan(from = 0, to = length) {
      if (from >= to) return;
      for (const e of s.since(from)) {
        if (e.seq >= to) return;
        yield e;
      }
    },
    *records(from = 0, to = length) {
      if (from >= to) return;
      for (const r of s.records(from)) {
        if (isChunkRun(r)) {
          if (r.seq0 >= to) return;
          if (r.seq0 + r.length <= to) yield r;
          else for (let k = 0; r.seq0 + k < to; k++) yield r.member(k);
          continue;
        }
        if (r.seq >= to) return;
        yield r;
      }
    },
  };
}

function isLoaded(v: object): v is LoadedLog {
  return (
    'session' in v &&
    (v as { session: unknown }).session instanceof Session &&
    typeof (v as { eventCount?: unknown }).eventCount === 'number'
  );
}

/** The view of any accepted input; INVALID_INPUT otherwise. */
export function viewOf(input: QueryInput): LogView {
  if (input instanceof Session) return sessionView(input, input.id, input.header, input.length, input.length);
  if (typeof input === 'object' && input !== null) {
    if (isLoaded(input)) {
      const s = input.session;
      let length = s.length;
      const last = s.at(length - 1);
      // The loader's own end-of-seed marker comes after everything the file and repair hold.
      if (last?.type === 'session/end-seed' && last.seq >= input.eventCount) length--;
      return sessionView(s, s.id, s.header, length, Math.min(input.eventCount, length));
    }
    if ('events' in input && Array.isArray(input.events) && typeof input.id === 'string') {
      const events = input.events;
      const n = events.length;
      return {
        id: input.id,
        header: input.header,
        length: n,
        written: n,
        at: (seq) => events[seq]!,
        *scan(from = 0, to = n) {
          for (let i = Math.max(0, from); i < Math.min(to, n); i++) yield events[i]!;
        },
        records(from = 0, to = n) {
          return this.scan(from, to);
        },
      };
    }
    const r = input as Partial<EventReader>;
    if (typeof r.length === 'function' && typeof r.at === 'function' && typeof r.since === 'function' && typeof r.id === 'string') {
      const reader = input as EventReader;
      // Fixed at the time of the call, like a Session's: a query answers for the log as it was.
      const n = reader.length();
      return {
        id: reader.id,
        header: reader.header,
        length: n,
        written: n,
        at: (seq) => reader.at(seq),
        *scan(from = 0, to = n) {
          if (from >= to) return;
          for (const e of reader.since(from)) {
            if (e.seq >= to) return;
            yield e;
          }
        },
        records(from = 0, to = n) {
          return this.scan(from, to);
        },
      };
    }
  }
  throw new QueryError('INVALID_INPUT', 'expected a Session, a loaded log (loadJsonl / loadJsonlFile), { id, events } or an event reader');
}

/** SEQ_OUT_OF_RANGE unless `seq` names an event of `view`. */
export function requireSeq(view: LogView, seq: number): void {
  if (Number.isSafeInteger(seq) && seq >= 0 && seq < view.length) return;
  const range = view.length === 0 ? 'it has no events' : `its seqs are 0…${view.length - 1}`;
  throw new QueryError('SEQ_OUT_OF_RANGE', `seq ${String(seq)} is outside the log: ${range}`, { seq, length: view.length });
}

// ---------------------------------------------------------------------------------------------
// Reading payloads defensively: plugin data is only required to be JSON, and loaders of other
// formats may fill fewer fields than ours.

export type Obj = Readonly<Record<string, unknown>>;

export function obj(v: unknown): Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {};
}

export function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** `turn` and `step` of an event's data, when it names them. */
export function placeOf(e: SessionEvent): { turn?: number; step?: number } {
  const d = obj(e.data);
  const out: { turn?: number; step?: number } = {};
  const t = num(d.turn);
  const s = num(d.step);
  if (t !== undefined) out.turn = t;
  if (s !== undefined) out.step = s;
  return out;
}

/** A short reference to an event, for query answers. */
export interface EventRef {
  seq: number;
  type: string;
  time: number;
  turn?: number;
  step?: number;
}

export function refOf(e: SessionEvent): EventRef {
  return { seq: e.seq, type: e.type, time: e.time, ...placeOf(e) };
}
