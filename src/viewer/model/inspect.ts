/**
 * The inspector's answers: the query layer (src/query) run on the viewer's source, so the page
 * shows exactly what `dsh log call`, `dsh log trace` and `dsh log stats` print and never
 * re-implements a query. What is added here is only what the page needs to draw them: strings
 * capped (a tool's arguments can be megabytes), and edits and writes as line diffs built from
 * the recorded call's arguments (`src/query/edit-diffs.ts`, shared with the terminal).
 *
 * The answers hold log text as plain strings; the page renders them with `textContent` only.
 */
import { QueryError, alertsOf, callOf, provenance, StatsFold, writerOf, type EventReader, type WriterState } from '../../query/index.js';
import { editDiffs } from '../../query/edit-diffs.js';
import { ViewerError } from '../errors.js';
import type { LogSource } from '../source/source.js';
import type { CallView, ProvenanceView, StatsView } from './views.js';

export { editDiffs, type EditDiff, type DiffHunk } from '../../query/edit-diffs.js';

/** Longest string sent in an inspector answer; longer ones are cut and say their length. */
const STRING_CAP = 20_000;
/** Round trips sent for one call id (ids repeat across steps). */
const MAX_TRIPS = 50;

/** A reader of the source for the query layer (its length is fixed when a query starts). */
function readerOf(src: LogSource): EventReader {
  return {
    id: String(src.header.id),
    header: src.header,
    length: () => src.length(),
    at: (seq) => src.at(seq),
    since: (from) => src.since(from),
  };
}

/** A query's own errors as the viewer's: a missing call or seq is a 404, not a crash. */
function run<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof QueryError) {
      throw new ViewerError(e.code === 'INVALID_INPUT' ? 'BAD_REQUEST' : 'NOT_FOUND', `${e.code}: ${e.message}`.slice(0, 2000));
    }
    throw e;
  }
}

/** Every string in `v` cut to STRING_CAP (with a note of the length), arrays and objects copied. */
export function capStrings<T>(v: T): T {
  // Same shape out as in: a string stays a string (only shorter), arrays and plain objects are copied.
  return capped(v, 0) as T;
}

function capped(v: unknown, depth: number): unknown {
  if (typeof v === 'string') return v.length <= STRING_CAP ? v : `${v.slice(0, STRING_CAP)} … (${v.length} characters in all)`;
  if (depth > 20 || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => capped(x, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = capped(x, depth + 1);
  return out;
}

/** `callOf` on the source, with each trip's edit/write diffs. */
export function callView(src: LogSource, callId: string): CallView {
  const trips = run(() => callOf(readerOf(src), callId));
  return {
    callId,
    total: trips.length,
    trips: trips.slice(0, MAX_TRIPS).map((t) => {
      const args = t.call?.arguments ?? t.issuedBy?.arguments ?? '';
      const diffs = editDiffs(t.name ?? t.issuedBy?.name, args);
      return { ...capStrings(t), diffs };
    }),
  };
}

/** `provenance` on the source. */
export function provenanceView(src: LogSource, seq: number): ProvenanceView {
  return capStrings(run(() => provenance(readerOf(src), seq)));
}

function writerFor(src: LogSource): WriterState {
  if (src.kind === 'session') return { state: 'live' };
  if (src.kind === 'file') return writerOf(src.label);
  return { state: 'unknown' };
}

/**
 * The fold behind a source's statistics, kept between answers: the page asks again after each
 * growth of a followed log, and folding the whole log each time (~1 s at 100K events) on the
 * server's one thread held up every other request. Only the events appended since are folded.
 */
export interface StatsCache {
  fold?: StatsFold;
  /** Events folded so far. */
  done?: number;
}

/** `stats` (per turn, for the alerts) and `alertsOf` on the source; the per-turn rows are left out of the answer. */
export function statsView(src: LogSource, cache: StatsCache = {}): StatsView {
  const s = run(() => {
    const r = readerOf(src);
    const n = r.length();
    // A log only grows; one that got shorter (rewritten under the viewer) is folded again.
    if (!cache.fold || (cache.done ?? 0) > n) {
      cache.fold = new StatsFold();
      cache.done = 0;
    }
    for (const e of r.since(cache.done ?? 0)) {
      if (e.seq >= n) break;
      cache.fold.push(e);
    }
    cache.done = n;
    return cache.fold.result({ id: r.id, header: r.header }, writerFor(src)).stats;
  });
  const alerts = alertsOf(s).slice(0, 500);
  const { perTurn: _perTurn, ...totals } = s;
  return capStrings({ stats: totals, alerts });
}
