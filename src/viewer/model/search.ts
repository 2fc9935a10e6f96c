/**
 * Text search over a log: a case-insensitive substring of any string in an event (its type, or
 * any string value in its data). Chunks are skipped: their text is also in the assistant message
 * they assembled, and they are most of a big log. Results come a page at a time, in seq order.
 */
import type { LogSource } from '../source/source.js';
import type { LogIndex } from './log-index.js';
import type { SearchMatch } from './views.js';

const CONTEXT = 60;

/** First string in `v` (depth-first, any depth) containing `needle` (lower case). */
function findIn(v: unknown, needle: string): { s: string; at: number } | undefined {
  const stack: unknown[] = [v];
  while (stack.length > 0) {
    const x = stack.pop();
    if (typeof x === 'string') {
      const at = x.toLowerCase().indexOf(needle);
      if (at >= 0) return { s: x, at };
    } else if (Array.isArray(x)) {
      for (let i = x.length - 1; i >= 0; i--) stack.push(x[i]);
    } else if (typeof x === 'object' && x !== null) {
      const vals = Object.values(x);
      for (let i = vals.length - 1; i >= 0; i--) stack.push(vals[i]);
    }
  }
  return undefined;
}

export function search(
  src: LogSource,
  index: LogIndex,
  query: string,
  from: number,
  limit: number,
): { matches: SearchMatch[]; next?: number } {
  const needle = query.toLowerCase();
  const matches: SearchMatch[] = [];
  const seqs = index.others;
  // First candidate at or after `from`.
  let lo = 0;
  let hi = seqs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (seqs[mid]! < from) lo = mid + 1;
    else hi = mid;
  }
  for (let i = lo; i < seqs.length; i++) {
    const seq = seqs[i]!;
    if (seq >= src.length()) break;
    const e = src.at(seq);
    const hit = e.type.toLowerCase().includes(needle) ? { s: e.type, at: e.type.toLowerCase().indexOf(needle) } : findIn(e.data, needle);
    if (!hit) continue;
    if (matches.length >= limit) return { matches, next: seq };
    // Lower-casing can change a string's length (rarely); clamp so the snippet stays in range.
    const at = Math.min(hit.at, hit.s.length);
    const m: SearchMatch = {
      seq,
      type: e.type.slice(0, 200),
      before: hit.s.slice(Math.max(0, at - CONTEXT), at),
      match: hit.s.slice(at, at + query.length),
      after: hit.s.slice(at + query.length, at + query.length + CONTEXT),
    };
    const where = index.locate(seq);
    if (where?.segment.kind === 'turn') m.turn = where.segment.turn;
    if (where?.step) m.step = where.step.step;
    matches.push(m);
  }
  return { matches };
}
