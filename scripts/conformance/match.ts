/**
 * Does our output hold every message a reference run wrote, in order, with the same content?
 * The comparison the conformance runners share (`npm run conformance:sdk`, `conformance:headless`,
 * and the ACP runner): each expected message must appear in the actual stream after the one
 * matched before it; messages we send that the reference does not are allowed.
 *
 * Before comparing, what a run generates is normalised on both sides: any UUID and any of the
 * run's session ids read `{{sessionId}}` (the reference's snapshots wrote every generated id so),
 * the workspace path reads `{{cwd}}`, and an event envelope's `time` reads 0. An expected string
 * that is a whole `{{token}}` other than those two (`{{system}}`, `{{tools}}`) matches any value:
 * the reference scrubbed it. Seqs are positions in each harness's own log, and ours holds events
 * the reference does not (sandbox mode, runtime context), so an expected envelope's `seq` matches
 * any actual seq, but consistently: once expected seq 4 matched actual seq 6, every later
 * `sourceEventSeqs` / `messageSeqs` entry 4 must read 6.
 *
 * Content is compared as a superset: every key the reference wrote must be present with an equal
 * value, and keys only we write are allowed (our tool results carry `meta`, our sandbox events a
 * `source`); arrays must have the same length and equal items, and scalars must be identical.
 */

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
/** Fields holding seqs of the same log (translated through the seq map). */
const SEQ_LISTS = new Set(['sourceEventSeqs', 'messageSeqs']);
const KEPT_TOKENS = new Set(['{{sessionId}}', '{{cwd}}']);

export interface NormalizeContext {
  /** Ids the run generated for its sessions (ours, or the reference's). */
  sessionIds: readonly string[];
  /** The run's workspace. */
  cwd?: string;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isEnvelope(v: Record<string, unknown>): boolean {
  return typeof v.type === 'string' && typeof v.seq === 'number' && 'time' in v && 'data' in v;
}

function normalizeString(s: string, ctx: NormalizeContext): string {
  let out = s;
  if (ctx.cwd) out = out.split(ctx.cwd).join('{{cwd}}');
  for (const id of ctx.sessionIds) if (id !== '') out = out.split(id).join('{{sessionId}}');
  return out.replace(UUID, '{{sessionId}}');
}

/** The value with generated ids, the workspace and envelope times normalised (a fresh copy). */
export function normalize(value: unknown, ctx: NormalizeContext): unknown {
  if (typeof value === 'string') return normalizeString(value, ctx);
  if (Array.isArray(value)) return value.map((v) => normalize(v, ctx));
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = normalize(v, ctx);
  if (isEnvelope(value)) out.time = 0;
  return out;
}

/** Expected seq → actual seq, for one reference log and ours. */
export type SeqMap = Map<number, number>;

export interface Difference {
  /** JSON path of the first difference (`$.params.event.data.content[0].text`). */
  path: string;
  expected: unknown;
  actual: unknown;
}

function isWildcard(v: unknown): boolean {
  return typeof v === 'string' && /^\{\{[A-Za-z0-9_.-]+\}\}$/.test(v) && !KEPT_TOKENS.has(v);
}

/**
 * The first difference between an expected and an actual (both normalised) value, or undefined.
 * New seq pairings are written to `pending`, and only kept by the caller when the whole message
 * matched.
 */
export function firstDifference(expected: unknown, actual: unknown, seqs: SeqMap, pending: SeqMap, path = '$'): Difference | undefined {
  if (isWildcard(expected)) return undefined;
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) return { path, expected, actual };
    for (let i = 0; i < expected.length; i++) {
      const d = firstDifference(expected[i], actual[i], seqs, pending, `${path}[${i}]`);
      if (d) return d;
    }
    return undefined;
  }
  if (isRecord(expected)) {
    if (!isRecord(actual)) return { path, expected, actual };
    const envelope = isEnvelope(expected);
    for (const k of Object.keys(expected)) {
      const p = `${path}.${k}`;
      if (!(k in actual)) return { path: p, expected: expected[k], actual: undefined };
      if (envelope && k === 'seq') {
        const d = pairSeq(expected.seq as number, actual.seq, seqs, pending, p);
        if (d) return d;
        continue;
      }
      if (SEQ_LISTS.has(k) && Array.isArray(expected[k])) {
        const e = expected[k] as unknown[];
        const a = actual[k];
        if (!Array.isArray(a) || a.length !== e.length) return { path: p, expected: e, actual: a };
        for (let i = 0; i < e.length; i++) {
          const want = typeof e[i] === 'number' ? (pending.get(e[i] as number) ?? seqs.get(e[i] as number)) : undefined;
          if (want === undefined || a[i] !== want) return { path: `${p}[${i}]`, expected: e[i], actual: a[i] };
        }
        continue;
      }
      const d = firstDifference(expected[k], actual[k], seqs, pending, p);
      if (d) return d;
    }
    // Keys only we write are allowed (a richer harness is a superset: `meta` on a tool result,
    // `source` on a sandbox mode); every key the reference wrote must be there, equal.
    return undefined;
  }
  return Object.is(expected, actual) ? undefined : { path, expected, actual };
}

function pairSeq(e: number, a: unknown, seqs: SeqMap, pending: SeqMap, path: string): Difference | undefined {
  if (typeof a !== 'number') return { path, expected: e, actual: a };
  const known = pending.get(e) ?? seqs.get(e);
  if (known !== undefined) return known === a ? undefined : { path, expected: e, actual: a };
  for (const v of [...seqs.values(), ...pending.values()]) if (v === a) return { path, expected: e, actual: a };
  pending.set(e, a);
  return undefined;
}

export interface MatchFailure {
  /** Index (0-based) of the first expected message not found in order. */
  index: number;
  expected: unknown;
  /** The nearest candidate: the first actual message after the last match of the same kind, if any. */
  nearest?: { index: number; message: unknown; difference: Difference };
}

export interface MatchResult {
  matched: number;
  total: number;
  failure?: MatchFailure;
}

/** What makes two messages comparable at all (the same method, notification or event type). */
function kindOf(m: unknown): string {
  if (!isRecord(m)) return typeof m;
  const params = isRecord(m.params) ? m.params : undefined;
  const event = isRecord(m.event) ? m.event : isRecord(params?.event) ? (params.event as Record<string, unknown>) : undefined;
  const head = typeof m.method === 'string' ? m.method : typeof m.type === 'string' ? m.type : 'id' in m ? 'response' : '?';
  return event && typeof event.type === 'string' ? `${head}:${event.type}` : head;
}

/**
 * Match `expected` (normalised) as an ordered subsequence of `actual` (normalised). Stops at the
 * first expected message with no match: later ones cannot be placed reliably after it.
 */
export function matchInOrder(expected: readonly unknown[], actual: readonly unknown[]): MatchResult {
  const seqs: SeqMap = new Map();
  let cursor = 0;
  for (let i = 0; i < expected.length; i++) {
    const e = expected[i];
    let found = -1;
    for (let j = cursor; j < actual.length; j++) {
      const pending: SeqMap = new Map();
      if (firstDifference(e, actual[j], seqs, pending) === undefined) {
        for (const [k, v] of pending) seqs.set(k, v);
        found = j;
        break;
      }
    }
    if (found < 0) {
      const kind = kindOf(e);
      const failure: MatchFailure = { index: i, expected: e };
      for (let j = cursor; j < actual.length; j++) {
        if (kindOf(actual[j]) !== kind) continue;
        const difference = firstDifference(e, actual[j], seqs, new Map());
        if (difference) failure.nearest = { index: j, message: actual[j], difference };
        break;
      }
      return { matched: i, total: expected.length, failure };
    }
    cursor = found + 1;
  }
  return { matched: expected.length, total: expected.length };
}

/** One line of JSON, cut to `max` characters. */
export function preview(v: unknown, max = 240): string {
  const s = v === undefined ? '(absent)' : JSON.stringify(v);
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** A failure as the lines a runner prints. */
export function describeFailure(f: MatchFailure): string[] {
  const lines = [`expected message ${f.index + 1} not found in order: ${preview(f.expected)}`];
  if (f.nearest) {
    const d = f.nearest.difference;
    lines.push(
      `  nearest (our message ${f.nearest.index + 1}) differs at ${d.path}: ` +
        `expected ${preview(d.expected, 160)}, got ${preview(d.actual, 160)}`,
    );
  } else lines.push('  we sent no message of that kind after the previous match');
  return lines;
}
