/**
 * The first difference between a recorded JSON value and a live one, as a JSON path.
 *
 * Shared by the replay adapter (a live request against the recorded one) and the log comparison.
 * Pure and dependency-free, so both the layer below the agent (the adapter) and the harness
 * above it can use it.
 *
 * Tokenised fixtures hold `{{token}}` strings where a prompt, a tool list or a path belonged. When
 * the caller collects placeholder hits, such a recorded string matches any live value (it says
 * "something was here", not what) and the hit is returned rather than silently accepted.
 */
import { PLACEHOLDER } from './validate.js';

export interface JsonDifference {
  /** `$`-rooted path of the first difference in document order, e.g. `$.messages[3].content[0].text`. */
  path: string;
  /** `undefined` when the recorded side has nothing at `path`. */
  recorded: unknown;
  /** `undefined` when the live side has nothing at `path`. */
  live: unknown;
}

export interface PlaceholderHit {
  path: string;
  token: string;
}

export interface DiffOptions {
  /** Root path; `$` by default. */
  path?: string;
  /** Collect `{{token}}` matches here; without it a placeholder is compared like any string. */
  placeholders?: PlaceholderHit[];
}

const IDENT = /^[A-Za-z_$][\w$]*$/;

export function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return IDENT.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

export function isPlaceholder(v: unknown): v is string {
  return typeof v === 'string' && PLACEHOLDER.test(v);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Walks both values in document order (recorded keys first, then keys only the live side has) and
 * stops at the first mismatch. An `undefined` property counts as absent, as in JSON. Iterative, so
 * a deeply nested tool result cannot overflow the stack.
 */
export function firstDifference(recorded: unknown, live: unknown, opts: DiffOptions = {}): JsonDifference | undefined {
  const stack: [unknown, unknown, string][] = [[recorded, live, opts.path ?? '$']];
  while (stack.length > 0) {
    const [r, l, path] = stack.pop()!;
    if (r === l) continue;
    if (opts.placeholders && isPlaceholder(r)) {
      opts.placeholders.push({ path, token: r });
      continue;
    }
    if (Array.isArray(r) && Array.isArray(l)) {
      const n = Math.max(r.length, l.length);
      for (let i = n - 1; i >= 0; i--) stack.push([r[i], l[i], childPath(path, i)]);
      continue;
    }
    if (isObject(r) && isObject(l)) {
      const keys = Object.keys(r).filter((k) => r[k] !== undefined);
      for (const k of Object.keys(l)) if (l[k] !== undefined && !(k in r && r[k] !== undefined)) keys.push(k);
      for (let i = keys.length - 1; i >= 0; i--) stack.push([r[keys[i]!], l[keys[i]!], childPath(path, keys[i]!)]);
      continue;
    }
    if (typeof r === 'number' && typeof l === 'number' && Number.isNaN(r) && Number.isNaN(l)) continue;
    return { path, recorded: r, live: l };
  }
  return undefined;
}

/** A short, one-line rendering of a value for messages and summaries. */
export function preview(v: unknown, max = 80): string {
  if (v === undefined) return '(absent)';
  const s = JSON.stringify(v);
  if (s === undefined) return String(v);
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

/** Messages with their top-level `id` dropped: ids are minted per run, the content is what replays. */
export function withoutIds<T>(messages: readonly T[]): unknown[] {
  return messages.map((m) => {
    if (!isObject(m)) return m;
    const { id: _id, ...rest } = m;
    return rest;
  });
}
