/**
 * Packed chunk rows: the storage encoding of dsh format v0 for runs of stream deltas. A provider
 * streams token-sized deltas, and a one-event-per-line log spends most of its bytes on repeated
 * envelopes; a row stores a run of 3 or more consecutive same-block deltas as
 *
 *   {type: 'text-chunks'|'reasoning-chunks'|'tool-call-chunks', seq0, time0,
 *    data: {turn, step, index, dt: number[], texts|args: string[], id?, name?}}
 *
 * Member k is seq `seq0 + k` at time `time0 + dt[0] + … + dt[k-1]` (so `dt` is one shorter than
 * the payload; a gap may be negative when the wall clock stepped back). Tool-call rows carry the
 * run's call `id`, and `name` only when every member carried the same name.
 *
 * Rows are not events: their tags have no slash, so they cannot be confused with event types.
 * The encoder packs only shapes it recognises exactly; anything else is written verbatim, so an
 * unknown field costs compression, never data. The decoder validates a row before expanding it.
 */
import { CodedError } from '../../model/coded-error.js';
import type { SessionEvent } from '../events.js';
import { preview } from '../json.js';

export const ROW_TAGS = ['text-chunks', 'reasoning-chunks', 'tool-call-chunks'] as const;
export type RowTag = (typeof ROW_TAGS)[number];
export const MIN_RUN = 3;

export interface TextRow {
  type: 'text-chunks' | 'reasoning-chunks';
  seq0: number;
  time0: number;
  data: { turn: number; step: number; index: number; dt: number[]; texts: string[] };
}
export interface ToolCallRow {
  type: 'tool-call-chunks';
  seq0: number;
  time0: number;
  data: { turn: number; step: number; index: number; id: string; name?: string; dt: number[]; args: string[] };
}
export type ChunkRow = TextRow | ToolCallRow;
export type StorageRecord = SessionEvent | ChunkRow;

export function isRowTag(t: unknown): t is RowTag {
  return t === 'text-chunks' || t === 'reasoning-chunks' || t === 'tool-call-chunks';
}

export type DeltaKind = 'text-delta' | 'reasoning-delta' | 'tool-call-delta';

const hasOwn = Object.prototype.hasOwnProperty;

/** Own enumerable keys (for-in alone would count keys a polluted Object.prototype lends). */
function keyCount(o: object): number {
  let n = 0;
  for (const k in o) if (hasOwn.call(o, k)) n++;
  return n;
}

/**
 * True when `o`'s own enumerable keys are exactly `keys`, in that order. Decoding rebuilds a
 * member in this canonical order, so packing anything else would not round-trip byte for byte.
 */
function keysInOrder(o: object, keys: readonly string[]): boolean {
  let i = 0;
  for (const k in o) {
    // Own keys come first in for-in order; anything after them is lent by a (polluted) prototype.
    if (i < keys.length) {
      if (k !== keys[i] || !hasOwn.call(o, k)) return false;
      i++;
    } else if (hasOwn.call(o, k)) return false;
  }
  return i === keys.length;
}

const EVENT_ORDER = ['type', 'seq', 'time', 'data'] as const;
const DATA_ORDER = ['turn', 'step', 'chunk'] as const;
const TEXT_ORDER = ['type', 'index', 'text'] as const;
const CALL_ORDER = ['type', 'index', 'id', 'argumentsDelta'] as const;
const CALL_NAMED_ORDER = ['type', 'index', 'id', 'name', 'argumentsDelta'] as const;

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1;

/**
 * The delta kind of an event (a logged one, or a line the loader parsed) whose whole shape a
 * run can hold exactly: a delta chunk in canonical field order, with safe-integer seq and time
 * and valid turn and step. Anything else is stored, and loaded, as an event of its own.
 */
export function chunkRunKind(o: Record<string, unknown>): DeltaKind | undefined {
  if (o.type !== 'assistant/chunk' || !keysInOrder(o, EVENT_ORDER)) return undefined;
  const seq = o.seq;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0 || !Number.isSafeInteger(o.time)) return undefined;
  const d = o.data as Record<string, unknown> | null;
  if (typeof d !== 'object' || d === null || !keysInOrder(d, DATA_ORDER) || !isCount(d.turn) || !isCount(d.step)) return undefined;
  const c = d.chunk as Record<string, unknown> | null;
  if (typeof c !== 'object' || c === null || typeof c.index !== 'number') return undefined;
  switch (c.type) {
    case 'text-delta':
    case 'reasoning-delta':
      return typeof c.text === 'string' && keysInOrder(c, TEXT_ORDER) ? c.type : undefined;
    case 'tool-call-delta':
      if (typeof c.id !== 'string' || typeof c.argumentsDelta !== 'string') return undefined;
      if (keysInOrder(c, CALL_ORDER)) return 'tool-call-delta';
      return typeof c.name === 'string' && keysInOrder(c, CALL_NAMED_ORDER) ? 'tool-call-delta' : undefined;
    default:
      return undefined;
  }
}

const packable = (e: SessionEvent): DeltaKind | undefined => chunkRunKind(e as unknown as Record<string, unknown>);

type Chunkish = { index: number; id?: string; name?: string; text?: string; argumentsDelta?: string };
const chunkOf = (e: SessionEvent): Chunkish => (e.data as unknown as { chunk: Chunkish }).chunk;
const dataOf = (e: SessionEvent): { turn: number; step: number } => e.data as unknown as { turn: number; step: number };

function extends_(prev: SessionEvent, next: SessionEvent, kind: DeltaKind): boolean {
  if (next.seq !== prev.seq + 1) return false;
  // A gap outside safe-integer range would not reconstruct exactly.
  if (!Number.isSafeInteger(next.time - prev.time)) return false;
  const a = dataOf(prev);
  const b = dataOf(next);
  if (a.turn !== b.turn || a.step !== b.step) return false;
  const ca = chunkOf(prev);
  const cb = chunkOf(next);
  if (ca.index !== cb.index) return false;
  if (kind !== 'tool-call-delta') return true;
  return ca.id === cb.id && 'name' in ca === 'name' in cb && ca.name === cb.name;
}

function buildRow(kind: DeltaKind, run: SessionEvent[]): ChunkRow {
  const first = run[0]!;
  const d = dataOf(first);
  const c = chunkOf(first);
  const dt = new Array<number>(run.length - 1);
  for (let i = 1; i < run.length; i++) dt[i - 1] = run[i]!.time - run[i - 1]!.time;
  if (kind === 'tool-call-delta') {
    const args = run.map((e) => chunkOf(e).argumentsDelta!);
    // Field order as dsh writes it: placement, gaps, call identity, payload.
    const data: ToolCallRow['data'] =
      'name' in c
        ? { turn: d.turn, step: d.step, index: c.index, dt, id: c.id!, name: c.name!, args }
        : { turn: d.turn, step: d.step, index: c.index, dt, id: c.id!, args };
    return { type: 'tool-call-chunks', seq0: first.seq, time0: first.time, data };
  }
  return {
    type: kind === 'text-delta' ? 'text-chunks' : 'reasoning-chunks',
    seq0: first.seq,
    time0: first.time,
    data: { turn: d.turn, step: d.step, index: c.index, dt, texts: run.map((e) => chunkOf(e).text!) },
  };
}

/**
 * Storage records for a batch: each run of ≥ 3 packable same-block deltas becomes one row, the
 * rest pass through in order. Pure; a run split by a batch boundary simply packs per batch.
 */
export function packChunkRuns(events: readonly SessionEvent[]): StorageRecord[] {
  const out: StorageRecord[] = [];
  let kind: DeltaKind | undefined;
  let run: SessionEvent[] = [];
  const flush = (): void => {
    if (kind !== undefined && run.length >= MIN_RUN) out.push(buildRow(kind, run));
    else for (const e of run) out.push(e);
    kind = undefined;
    run = [];
  };
  for (const e of events) {
    const k = packable(e);
    if (k === undefined) {
      flush();
      out.push(e);
      continue;
    }
    if (k === kind && extends_(run[run.length - 1]!, e, k)) {
      run.push(e);
      continue;
    }
    flush();
    kind = k;
    run = [e];
  }
  flush();
  return out;
}

/** Internal to the codec: a caller turns it into a `SessionError` (`CORRUPT_LOG`, rule `storage`) with its line. */
export class RowError extends CodedError<'MALFORMED_ROW'> {
  constructor(
    readonly tag: string,
    why: string,
  ) {
    super('MALFORMED_ROW', `malformed ${tag} row: ${why}`);
    this.name = 'RowError';
  }
}

function exactKeys(o: Record<string, unknown>, keys: readonly string[]): boolean {
  if (keyCount(o) !== keys.length) return false;
  for (const k of keys) if (!Object.prototype.hasOwnProperty.call(o, k)) return false;
  return true;
}

const TEXT_KEYS = ['turn', 'step', 'index', 'dt', 'texts'] as const;
const CALL_KEYS = ['turn', 'step', 'index', 'id', 'dt', 'args'] as const;
const CALL_KEYS_NAMED = ['turn', 'step', 'index', 'id', 'name', 'dt', 'args'] as const;

/** A validated row, ready to expand or to store compactly. */
export interface RowParts {
  tag: RowTag;
  kind: 'text-delta' | 'reasoning-delta' | 'tool-call-delta';
  seq0: number;
  turn: number;
  step: number;
  index: number;
  /** Tool-call rows: the call id, and the name when the row carries one. */
  id: string | undefined;
  name: string | undefined;
  payload: string[];
  /** Member times (time0 plus the running sum of dt), all safe integers. */
  times: number[];
}

/** Validate a parsed row (throws `RowError`: a malformed row is corrupt storage). */
export function checkRow(value: Record<string, unknown>, tag: RowTag): RowParts {
  if (!exactKeys(value, ['type', 'seq0', 'time0', 'data'])) throw new RowError(tag, 'the row must have exactly type, seq0, time0 and data');
  const seq0 = value.seq0;
  const time0 = value.time0;
  if (typeof seq0 !== 'number' || !Number.isSafeInteger(seq0) || seq0 < 0) throw new RowError(tag, 'seq0 must be a non-negative integer');
  if (typeof time0 !== 'number' || !Number.isSafeInteger(time0)) throw new RowError(tag, 'time0 must be an integer');
  const d = value.data as Record<string, unknown>;
  if (typeof d !== 'object' || d === null || Array.isArray(d)) throw new RowError(tag, 'data must be an object');
  const isCall = tag === 'tool-call-chunks';
  const named = isCall && Object.prototype.hasOwnProperty.call(d, 'name');
  if (!exactKeys(d, isCall ? (named ? CALL_KEYS_NAMED : CALL_KEYS) : TEXT_KEYS)) {
    throw new RowError(
      tag,
      isCall
        ? 'data must have exactly turn, step, index, id, name?, dt and args'
        : 'data must have exactly turn, step, index, dt and texts',
    );
  }
  const { turn, step, index } = d;
  if (typeof turn !== 'number' || typeof step !== 'number' || typeof index !== 'number')
    throw new RowError(tag, 'turn, step and index must be numbers');
  // -0 would reach every member and be written back as 0: not lossless.
  if (Object.is(time0, -0) || Object.is(turn, -0) || Object.is(step, -0) || Object.is(index, -0))
    throw new RowError(tag, 'time0, turn, step and index must not be -0 (it is written back as 0)');
  if (isCall && (typeof d.id !== 'string' || (named && typeof d.name !== 'string')))
    throw new RowError(tag, 'id (and name, when present) must be strings');
  const payload = (isCall ? d.args : d.texts) as unknown[];
  const dt = d.dt as unknown[];
  if (!Array.isArray(payload) || payload.length === 0) throw new RowError(tag, `${isCall ? 'args' : 'texts'} must be a non-empty array`);
  if (!Array.isArray(dt) || dt.length !== payload.length - 1)
    throw new RowError(tag, `dt must have one entry fewer than the ${payload.length} members`);
  if (!Number.isSafeInteger(seq0 + (payload.length - 1))) throw new RowError(tag, 'member seqs leave the safe-integer range');
  const times = new Array<number>(payload.length);
  let time = time0;
  for (let k = 0; k < payload.length; k++) {
    if (k > 0) {
      const gap = dt[k - 1];
      if (typeof gap !== 'number' || !Number.isSafeInteger(gap) || Object.is(gap, -0))
        throw new RowError(tag, `dt[${k - 1}] must be a safe integer (and not -0), got ${preview(gap)}`);
      time += gap;
      if (!Number.isSafeInteger(time)) throw new RowError(tag, 'member times leave the safe-integer range');
    }
    if (typeof payload[k] !== 'string') throw new RowError(tag, `member ${k} must be a string`);
    times[k] = time;
  }
  return {
    tag,
    kind: tag === 'text-chunks' ? 'text-delta' : tag === 'reasoning-chunks' ? 'reasoning-delta' : 'tool-call-delta',
    seq0,
    turn,
    step,
    index,
    id: isCall ? (d.id as string) : undefined,
    name: named ? (d.name as string) : undefined,
    payload: payload as string[],
    times,
  };
}

/** Push a validated row's members as frozen `assistant/chunk` events. */
export function expandParts(r: RowParts, out: SessionEvent[]): void {
  const { kind, index, id, name, turn, step } = r;
  for (let k = 0; k < r.payload.length; k++) {
    const p = r.payload[k]!;
    const chunk =
      kind === 'tool-call-delta'
        ? name !== undefined
          ? Object.freeze({ type: kind, index, id, name, argumentsDelta: p })
          : Object.freeze({ type: kind, index, id, argumentsDelta: p })
        : Object.freeze({ type: kind, index, text: p });
    out.push(
      Object.freeze({
        type: 'assistant/chunk',
        seq: r.seq0 + k,
        time: r.times[k]!,
        data: Object.freeze({ turn, step, chunk }),
      }) as unknown as SessionEvent,
    );
  }
}

/**
 * Expand a parsed row into frozen `assistant/chunk` events (validated first: a malformed row is
 * corrupt storage and throws `RowError`, never silently dropping its run).
 */
export function expandRow(value: Record<string, unknown>, tag: RowTag, out: SessionEvent[]): void {
  expandParts(checkRow(value, tag), out);
}
