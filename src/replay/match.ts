/**
 * Does our output hold every message a reference run wrote, in order, with the same content?
 * The one comparison of the conformance runners (`npm run conformance:acp`, `conformance:sdk`,
 * `conformance:headless`): each expected message must appear in the actual stream after the one
 * matched before it; messages we send that the reference does not are allowed. A runner first
 * puts its protocol's generated ids in a common form (`normalize` below; the ACP runner also
 * renumbers JSON-RPC ids and joins streamed deltas, src/acp/conformance/compare.ts).
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
 * `source`); scalars must be identical. Arrays must have the same length and equal items, or, with
 * `arrays: 'in-order'` (ACP: we may offer more permission options, send more content), the
 * expected items must match items of ours in the same order, extras between allowed. An expected
 * message may be `oneOf(a, b)`: either form is accepted (a reason the protocol names differently).
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

export interface MatchOptions {
  /** `exact` (default): same length, item by item; `in-order`: the expected items in order among ours. */
  arrays?: 'exact' | 'in-order';
}

/** Either of these expected forms is accepted (`matchInOrder`). */
export class OneOf {
  readonly options: readonly unknown[];
  constructor(...options: unknown[]) {
    this.options = options;
  }
}

export const oneOf = (...options: unknown[]): OneOf => new OneOf(...options);

const key = (path: string, k: string): string => (/^[A-Za-z_$][\w$]*$/.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`);

/**
 * The first difference between an expected and an actual (both normalised) value, or undefined.
 * New seq pairings are written to `pending`, and only kept by the caller when the whole message
 * matched.
 */
export function firstDifference(
  expected: unknown,
  actual: unknown,
  seqs: SeqMap,
  pending: SeqMap,
  path = '$',
  opts: MatchOptions = {},
): Difference | undefined {
  if (isWildcard(expected)) return undefined;
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return { path, expected, actual };
    if (opts.arrays === 'in-order') return inOrderDifference(expected, actual, seqs, pending, path, opts);
    if (actual.length !== expected.length) return { path, expected, actual };
    for (let i = 0; i < expected.length; i++) {
      const d = firstDifference(expected[i], actual[i], seqs, pending, `${path}[${i}]`, opts);
      if (d) return d;
    }
    return undefined;
  }
  if (isRecord(expected)) {
    if (!isRecord(actual)) return { path, expected, actual };
    const envelope = isEnvelope(expected);
    for (const k of Object.keys(expected)) {
      const p = key(path, k);
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
      const d = firstDifference(expected[k], actual[k], seqs, pending, p, opts);
      if (d) return d;
    }
    // Keys only we write are allowed (a richer harness is a superset: `meta` on a tool result,
    // `source` on a sandbox mode); every key the reference wrote must be there, equal.
    return undefined;
  }
  return Object.is(expected, actual) ? undefined : { path, expected, actual };
}

/** Each expected item matched by a later item of ours; the first one that is not, with its nearest difference. */
function inOrderDifference(
  expected: readonly unknown[],
  actual: readonly unknown[],
  seqs: SeqMap,
  pending: SeqMap,
  path: string,
  opts: MatchOptions,
): Difference | undefined {
  let j = 0;
  for (let i = 0; i < expected.length; i++) {
    let first: Difference | undefined;
    let found = false;
    for (; j < actual.length; j++) {
      const trial: SeqMap = new Map(pending);
      const d = firstDifference(expected[i], actual[j], seqs, trial, `${path}[${j}]`, opts);
      if (!d) {
        for (const [k, v] of trial) pending.set(k, v);
        found = true;
        j++;
        break;
      }
      first ??= d;
    }
    if (!found) return first ?? { path: `${path}[${i}]`, expected: expected[i], actual: undefined };
  }
  return undefined;
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

/** What makes two messages comparable at all (the same method and update kind, event type, or response id). */
function kindOf(m: unknown): string {
  if (!isRecord(m)) return typeof m;
  const params = isRecord(m.params) ? m.params : undefined;
  const event = isRecord(m.event) ? m.event : isRecord(params?.event) ? (params.event as Record<string, unknown>) : undefined;
  const update = isRecord(params?.update) ? (params.update as Record<string, unknown>) : undefined;
  const head =
    typeof m.method === 'string' ? m.method : typeof m.type === 'string' ? m.type : 'id' in m ? `response:${JSON.stringify(m.id)}` : '?';
  if (event && typeof event.type === 'string') return `${head}:${event.type}`;
  if (update && typeof update.sessionUpdate === 'string') return `${head}:${update.sessionUpdate}`;
  return head;
}

function differenceOf(e: unknown, a: unknown, seqs: SeqMap, pending: SeqMap, opts: MatchOptions): Difference | undefined {
  if (!(e instanceof OneOf)) return firstDifference(e, a, seqs, pending, '$', opts);
  let first: Difference | undefined;
  for (const option of e.options) {
    const trial: SeqMap = new Map();
    const d = firstDifference(option, a, seqs, trial, '$', opts);
    if (!d) {
      for (const [k, v] of trial) pending.set(k, v);
      return undefined;
    }
    first ??= d;
  }
  return first;
}

/**
 * Match `expected` (normalised) as an ordered subsequence of `actual` (normalised). Stops at the
 * first expected message with no match: later ones cannot be placed reliably after it.
 */
export function matchInOrder(expected: readonly unknown[], actual: readonly unknown[], opts: MatchOptions = {}): MatchResult {
  const seqs: SeqMap = new Map();
  let cursor = 0;
  for (let i = 0; i < expected.length; i++) {
    const e = expected[i];
    let found = -1;
    for (let j = cursor; j < actual.length; j++) {
      const pending: SeqMap = new Map();
      if (differenceOf(e, actual[j], seqs, pending, opts) === undefined) {
        for (const [k, v] of pending) seqs.set(k, v);
        found = j;
        break;
      }
    }
    if (found < 0) {
      const shown = e instanceof OneOf ? e.options[0] : e;
      const kind = kindOf(shown);
      const failure: MatchFailure = { index: i, expected: shown };
      for (let j = cursor; j < actual.length; j++) {
        if (kindOf(actual[j]) !== kind) continue;
        const difference = differenceOf(e, actual[j], seqs, new Map(), opts);
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
