/**
 * The ordered surface: the sequence of surface-event seqs whose projection is
 * the model-visible history. `append` pushes a node; `{op:'replace', start, end}` splices the
 * nodes from position-of-start through position-of-end out and puts the replacing event there.
 *
 * `check` is a pure plan (it throws and changes nothing); `apply` commits. Session calls both,
 * in that order, so a refused event leaves the surface untouched.
 */
import type { SessionEvent, SurfaceOp } from './events.js';
import { SURFACE_EVENT_TYPES } from './events.js';
import { SessionError } from './errors.js';
import { preview } from './json.js';

export interface SurfaceReplacement {
  seq: number;
  start: number;
  end: number;
  shadowedSeqs: number[];
}

/** What a surface check needs to know about an event (a draft or a logged one). */
export interface SurfaceCandidate {
  type: string;
  seq: number;
  data: unknown;
  surfaceOp?: SurfaceOp | undefined;
  sourceEventSeqs?: readonly number[] | undefined;
}

export type EventLookup = (seq: number) => SessionEvent | undefined;

function fail(
  c: SurfaceCandidate,
  code: 'SURFACE_OP_REQUIRED' | 'SURFACE_OP_FORBIDDEN' | 'INVALID_SURFACE_OP' | 'INVALID_SOURCE_SEQS' | 'INVALID_REPLACE',
  rule: string,
  why: string,
): never {
  throw new SessionError(code, `event "${c.type}" at seq ${c.seq} breaks the ${rule} rule: ${why}`, {
    eventType: c.type,
    seq: c.seq,
    rule,
  });
}

/** A frozen snapshot of the surface, safe to hand out: it never changes and cannot be changed. */
export interface SurfaceView {
  readonly nodes: readonly number[];
  readonly replaceGeneration: number;
  readonly replacements: readonly Readonly<SurfaceReplacement>[];
}

export class SurfaceState {
  /** Surface node seqs in model order. */
  readonly nodes: number[] = [];
  replaceGeneration = 0;
  readonly replacements: SurfaceReplacement[] = [];
  private cachedView: SurfaceView | undefined;

  /** Frozen snapshot, shared until the surface next changes. */
  view(): SurfaceView {
    return (this.cachedView ??= Object.freeze({
      nodes: Object.freeze(this.nodes.slice()),
      replaceGeneration: this.replaceGeneration,
      replacements: Object.freeze(this.replacements.slice()),
    }));
  }

  /** Validate placement and provenance of the next event; throws a SessionError, changes nothing. */
  check(c: SurfaceCandidate, lookup: EventLookup): void {
    const isSurface = SURFACE_EVENT_TYPES.has(c.type);
    if (!isSurface) {
      if (c.surfaceOp !== undefined)
        fail(c, 'SURFACE_OP_FORBIDDEN', 'surface-op', 'only user/message, assistant/message and tool/result may carry surfaceOp');
      if (c.sourceEventSeqs !== undefined) fail(c, 'SURFACE_OP_FORBIDDEN', 'source-seqs', 'only surface events may carry sourceEventSeqs');
      return;
    }
    const op = c.surfaceOp;
    if (op === undefined) fail(c, 'SURFACE_OP_REQUIRED', 'surface-op', 'surface events must say how they enter the surface (surfaceOp)');
    const sources = c.sourceEventSeqs;
    if (sources !== undefined) this.checkSources(c, sources);
    if (op === 'append') return;
    if (typeof op !== 'object' || op === null || op.op !== 'replace' || !Number.isSafeInteger(op.start) || !Number.isSafeInteger(op.end)) {
      fail(
        c,
        'INVALID_SURFACE_OP',
        'surface-op',
        `surfaceOp must be 'append' or {op:'replace', start, end} with integer seqs, got ${preview(op)}`,
      );
    }
    const keys = Object.keys(op);
    if (keys.length !== 3) fail(c, 'INVALID_SURFACE_OP', 'surface-op', `replace surfaceOp has unexpected keys ${preview(keys)}`);
    const i = this.nodes.indexOf(op.start);
    const j = this.nodes.indexOf(op.end);
    if (i < 0) fail(c, 'INVALID_REPLACE', 'replace-range', `replace start ${op.start} is not a current surface node`);
    if (j < 0) fail(c, 'INVALID_REPLACE', 'replace-range', `replace end ${op.end} is not a current surface node`);
    if (i > j) fail(c, 'INVALID_REPLACE', 'replace-range', `replace start ${op.start} comes after end ${op.end} on the surface`);
    const shadowed = this.nodes.slice(i, j + 1);
    if (sources === undefined)
      fail(
        c,
        'INVALID_REPLACE',
        'replace-provenance',
        `a replace must list the nodes it shadows in sourceEventSeqs (${preview(shadowed, 200)})`,
      );
    const have = new Set(sources);
    const missing = shadowed.filter((s) => !have.has(s));
    if (missing.length > 0)
      fail(c, 'INVALID_REPLACE', 'replace-provenance', `sourceEventSeqs omits shadowed node(s) ${preview(missing, 200)}`);
    if (c.type === 'tool/result') this.checkToolResultReplace(c, shadowed, lookup);
  }

  private checkSources(c: SurfaceCandidate, sources: readonly number[]): void {
    if (!Array.isArray(sources)) fail(c, 'INVALID_SOURCE_SEQS', 'source-seqs', 'sourceEventSeqs must be an array');
    if (sources.length === 0 && c.type !== 'assistant/message') {
      fail(
        c,
        'INVALID_SOURCE_SEQS',
        'source-seqs',
        'an empty sourceEventSeqs is allowed only on assistant/message (a known empty stream); omit it when sources are unknown',
      );
    }
    // Sources are almost always listed in ascending order, which proves them unique without a set.
    let ascending = true;
    let prev = -1;
    for (let i = 0; i < sources.length; i++) {
      const s = sources[i]!;
      if (!Number.isSafeInteger(s) || s < 0)
        fail(c, 'INVALID_SOURCE_SEQS', 'source-seqs', `sourceEventSeqs entries must be non-negative integers, got ${preview(s)}`);
      if (s >= c.seq)
        fail(c, 'INVALID_SOURCE_SEQS', 'source-seqs', `sourceEventSeqs entry ${s} does not precede the event's own seq ${c.seq}`);
      if (s <= prev) ascending = false;
      prev = s;
    }
    if (ascending) return;
    const seen = new Set<number>();
    for (const s of sources) {
      if (seen.has(s)) fail(c, 'INVALID_SOURCE_SEQS', 'source-seqs', `sourceEventSeqs lists ${s} twice`);
      seen.add(s);
    }
  }

  private checkToolResultReplace(c: SurfaceCandidate, shadowed: number[], lookup: EventLookup): void {
    if (shadowed.length !== 1)
      fail(c, 'INVALID_REPLACE', 'tool-result-replace', `a tool/result replace must shadow exactly one node, not ${shadowed.length}`);
    const target = lookup(shadowed[0]!);
    if (target?.type !== 'tool/result')
      fail(
        c,
        'INVALID_REPLACE',
        'tool-result-replace',
        `a tool/result replace must target a tool/result, not ${target?.type ?? 'nothing'}`,
      );
    if (!sameExceptToolContent(target.data, c.data)) {
      fail(c, 'INVALID_REPLACE', 'tool-result-replace', 'a tool/result replace may change only the tool-result block content');
    }
  }

  /** Commit a checked event. */
  apply(e: { type: string; seq: number; surfaceOp?: SurfaceOp | undefined }): SurfaceReplacement | undefined {
    const op = e.surfaceOp;
    if (op === undefined) return undefined;
    this.cachedView = undefined;
    if (op === 'append') {
      this.nodes.push(e.seq);
      return undefined;
    }
    const i = this.nodes.indexOf(op.start);
    const j = this.nodes.indexOf(op.end);
    const shadowedSeqs = this.nodes.splice(i, j - i + 1, e.seq);
    this.replaceGeneration += 1;
    const r: SurfaceReplacement = Object.freeze({
      seq: e.seq,
      start: op.start,
      end: op.end,
      shadowedSeqs: Object.freeze(shadowedSeqs) as number[],
    });
    this.replacements.push(r);
    return r;
  }
}

/** Deep equality of two tool/result payloads, ignoring the tool-result block's `content`. */
function sameExceptToolContent(a: unknown, b: unknown): boolean {
  const strip = (d: unknown): unknown => {
    if (typeof d !== 'object' || d === null) return d;
    const data = d as { message?: { content?: unknown[] } };
    const msg = data.message;
    if (!msg || !Array.isArray(msg.content)) return d;
    return {
      ...data,
      message: {
        ...msg,
        content: msg.content.map((blk) =>
          typeof blk === 'object' && blk !== null && (blk as { type?: string }).type === 'tool-result'
            ? { ...(blk as object), content: null }
            : blk,
        ),
      },
    };
  };
  return deepEqual(strip(a), strip(b));
}

/**
 * Structural equality of JSON values (key order ignored). Iterative: logged data has no depth
 * limit, so neither may the comparison.
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  const stack: unknown[] = [a, b];
  while (stack.length > 0) {
    const y = stack.pop();
    const x = stack.pop();
    if (x === y) continue;
    if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) {
      if (typeof x === 'number' && typeof y === 'number' && Number.isNaN(x) && Number.isNaN(y)) continue;
      return false;
    }
    const xa = Array.isArray(x);
    if (xa !== Array.isArray(y)) return false;
    if (xa) {
      const xs = x as unknown[];
      const ys = y as unknown[];
      if (xs.length !== ys.length) return false;
      for (let i = 0; i < xs.length; i++) stack.push(xs[i], ys[i]);
      continue;
    }
    const kx = Object.keys(x);
    if (kx.length !== Object.keys(y).length) return false;
    for (const k of kx) {
      if (!Object.prototype.hasOwnProperty.call(y, k)) return false;
      stack.push((x as Record<string, unknown>)[k], (y as Record<string, unknown>)[k]);
    }
  }
  return true;
}

/** Fold a whole event list into its surface (the pure, non-incremental form). */
export function foldSurface(events: readonly SessionEvent[]): {
  nodes: number[];
  replacements: SurfaceReplacement[];
  replaceGeneration: number;
} {
  const s = new SurfaceState();
  for (const e of events) s.apply(e);
  return { nodes: s.nodes, replacements: s.replacements, replaceGeneration: s.replaceGeneration };
}
