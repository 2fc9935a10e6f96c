/**
 * Lossless JSON at the source. `snapshotJson` validates a value, copies it and deep-freezes the
 * copy in one walk; `freezeJsonInPlace` validates and freezes a value the caller hands over (the
 * load path, where the value came straight from `JSON.parse` and nobody else holds it).
 *
 * Lossless means `JSON.parse(JSON.stringify(v))` is indistinguishable from `v`. Refused, with the
 * JSON path of the first bad value: `undefined`, functions, symbols, BigInt, NaN/±Infinity, -0,
 * cycles, sparse arrays, and any object whose prototype is not `Object.prototype`/`null`/
 * `Array.prototype` (Map, Set, Date, RegExp, boxed primitives, typed arrays, class instances).
 *
 * The fast path is plain recursion with no cycle bookkeeping: a cycle shows up as unbounded depth,
 * which bails out to the iterative walk. That walk has no stack-depth limit, tracks the current
 * path, and produces the precise error. So deep or hostile input costs more but never crashes.
 */
import type { JsonValue } from '../model/json.js';
import { SessionError } from './errors.js';

const FAST_DEPTH_LIMIT = 256;
const objectProto = Object.prototype;
const arrayProto = Array.prototype;
const hasOwn = Object.prototype.hasOwnProperty;

/** Thrown inside the fast path only; never escapes this module. */
class Bail {}
const BAIL = new Bail();

function fastCopy(v: unknown, depth: number): unknown {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      // biome-ignore lint/suspicious/noSelfCompare: the NaN test, inline on this hot path
      if (v !== v || v === Infinity || v === -Infinity || (v === 0 && 1 / v < 0)) throw BAIL;
      return v;
    case 'object': {
      if (v === null) return null;
      if (depth > FAST_DEPTH_LIMIT) throw BAIL;
      if (Array.isArray(v)) {
        if (Object.getPrototypeOf(v) !== arrayProto) throw BAIL;
        const n = v.length;
        const out = new Array(n);
        for (let i = 0; i < n; i++) {
          const x = v[i];
          // A hole reads as undefined; both are refused, so one check covers both.
          if (x === undefined) throw BAIL;
          out[i] = typeof x === 'object' || typeof x === 'number' ? fastCopy(x, depth + 1) : checkLeaf(x);
        }
        return Object.freeze(out);
      }
      const proto = Object.getPrototypeOf(v);
      if (proto !== objectProto && proto !== null) throw BAIL;
      const out: Record<string, unknown> = {};
      for (const k in v) {
        // for-in also walks enumerable properties a polluted Object.prototype would lend; only
        // own properties are data (JSON.stringify agrees).
        if (!hasOwn.call(v, k)) continue;
        const x = (v as Record<string, unknown>)[k];
        if (k === '__proto__') throw BAIL; // needs defineProperty; rare, leave it to the slow path
        out[k] = typeof x === 'object' || typeof x === 'number' ? fastCopy(x, depth + 1) : checkLeaf(x);
      }
      return Object.freeze(out);
    }
    default:
      throw BAIL;
  }
}

function checkLeaf(x: unknown): unknown {
  if (typeof x === 'string' || typeof x === 'boolean') return x;
  throw BAIL;
}

/** Why a value is not lossless JSON, or undefined when it is a JSON leaf/container. */
function leafProblem(v: unknown): string | undefined {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return undefined;
    case 'number':
      // biome-ignore lint/suspicious/noSelfCompare: the NaN test
      if (v !== v) return 'NaN is not JSON';
      if (v === Infinity || v === -Infinity) return `${v} is not JSON`;
      if (v === 0 && 1 / v < 0) return '-0 does not survive JSON (it reads back as 0)';
      return undefined;
    case 'undefined':
      return 'undefined is not JSON';
    case 'bigint':
      return 'a BigInt is not JSON';
    case 'function':
      return 'a function is not JSON';
    case 'symbol':
      return 'a symbol is not JSON';
    case 'object': {
      if (v === null) return undefined;
      const proto = Object.getPrototypeOf(v);
      if (Array.isArray(v)) return proto === arrayProto ? undefined : 'an array subclass is not plain JSON';
      if (proto === objectProto || proto === null) return undefined;
      const name = (proto as { constructor?: { name?: string } }).constructor?.name;
      return `a ${name || 'non-plain'} object is not plain JSON (its prototype would be lost)`;
    }
    default:
      return 'not a JSON value';
  }
}

function pathKey(k: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`;
}

interface Frame {
  src: Record<string, unknown> | unknown[];
  dst: Record<string, unknown> | unknown[];
  keys: string[] | null; // null for arrays
  i: number;
}

/** The JSON path of the value a walk is at: built only when a walk fails. */
function pathOf(rootPath: string, stack: readonly Frame[]): string {
  const parts = [rootPath];
  for (const f of stack) {
    const idx = f.i - 1;
    parts.push(f.keys ? pathKey(f.keys[idx]!) : `[${idx}]`);
  }
  return parts.join('');
}

/**
 * The reference walk: iterative (no depth limit), cycle-aware, path-reporting. `copy` false
 * validates and freezes in place. The path of the current value is the chain of open frames,
 * so it is assembled only for the error message.
 */
function slowWalk(root: unknown, rootPath: string, copy: boolean, fail: (path: string, why: string) => never): unknown {
  const stack: Frame[] = [];
  try {
    return walk(root, rootPath, copy, fail, stack);
  } catch (e) {
    if (e instanceof SessionError) throw e;
    // A getter that throws, a revoked Proxy: not data. Named with the path being read.
    fail(
      pathOf(rootPath, stack),
      `reading it threw (${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}); only plain data is JSON`,
    );
  }
}

function walk(root: unknown, rootPath: string, copy: boolean, fail: (path: string, why: string) => never, stack: Frame[]): unknown {
  const leaf = leafProblem(root);
  if (leaf) fail(rootPath, leaf);
  if (typeof root !== 'object' || root === null) return root;

  const onPath = new Set<object>();
  const open = (src: object): Frame => {
    onPath.add(src);
    const isArr = Array.isArray(src);
    return {
      src: src as Record<string, unknown>,
      dst: !copy ? (src as Record<string, unknown>) : isArr ? new Array((src as unknown[]).length) : {},
      keys: isArr ? null : Object.keys(src),
      i: 0,
    };
  };
  const rootFrame = open(root);
  stack.push(rootFrame);
  while (stack.length > 0) {
    const f = stack[stack.length - 1]!;
    const n = f.keys ? f.keys.length : (f.src as unknown[]).length;
    if (f.i >= n) {
      stack.pop();
      onPath.delete(f.src);
      Object.freeze(f.dst);
      if (stack.length > 0) {
        const parent = stack[stack.length - 1]!;
        assign(parent, parent.i - 1, f.dst);
      }
      continue;
    }
    const idx = f.i++;
    let value: unknown;
    if (f.keys) {
      value = (f.src as Record<string, unknown>)[f.keys[idx]!];
    } else {
      if (!(idx in (f.src as unknown[]))) fail(pathOf(rootPath, stack), 'a sparse array hole is not JSON (it reads back as null)');
      value = (f.src as unknown[])[idx];
    }
    const why = leafProblem(value);
    if (why) fail(pathOf(rootPath, stack), why);
    if (typeof value === 'object' && value !== null) {
      if (onPath.has(value)) fail(pathOf(rootPath, stack), 'a cycle is not JSON (this value contains itself)');
      stack.push(open(value));
    } else if (copy) {
      assign(f, idx, value);
    }
  }
  return rootFrame.dst;
}

function assign(f: Frame, idx: number, value: unknown): void {
  // In-place mode: the value is already there, and the container may already be frozen (a
  // subtree the loader's fast freeze finished before it met a bad number further on).
  if (f.dst === f.src) return;
  if (!f.keys) {
    (f.dst as unknown[])[idx] = value;
    return;
  }
  const key = f.keys[idx]!;
  if (key === '__proto__') {
    Object.defineProperty(f.dst, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    (f.dst as Record<string, unknown>)[key] = value;
  }
}

/**
 * A JSON path as a message shows it: whole when short, else its start and end around the count
 * of what was left out (a path 100,000 levels deep stays in the error's details, not its text).
 */
export function shortPath(path: string, max = 160): string {
  if (path.length <= max) return path;
  const head = path.slice(0, Math.floor(max / 2));
  const tail = path.slice(-Math.floor(max / 3));
  return `${head}…(${path.length - head.length - tail.length} characters)…${tail}`;
}

export interface JsonContext {
  /** Event type, for the message. */
  eventType: string;
  /** Root of the JSON path, e.g. `$.data`. */
  path?: string;
  seq?: number;
}

function failer(ctx: { eventType: string; seq?: number | undefined }): (path: string, why: string) => never {
  return (path, why) => {
    const details: { eventType: string; path: string; rule: string; seq?: number } = {
      eventType: ctx.eventType,
      path,
      rule: 'lossless-json',
    };
    if (ctx.seq !== undefined) details.seq = ctx.seq;
    throw new SessionError(
      'NON_JSON',
      `session event "${shortPath(ctx.eventType, 80)}"${ctx.seq !== undefined ? ` at seq ${ctx.seq}` : ''} carries ` +
        `non-JSON-serializable data at ${shortPath(path)}: ${why}`,
      details,
    );
  };
}

/** Validate, copy and deep-freeze. The caller keeps its own (unfrozen) value. */
export function snapshotJson<T>(value: T, ctx: JsonContext): T {
  return copyJson(value, ctx.eventType, ctx.path ?? '$', ctx.seq);
}

/** Validate and deep-freeze in place; for values the caller owns outright (fresh from JSON.parse). */
export function freezeJsonInPlace<T>(value: T, ctx: JsonContext): T {
  return freezeInPlace(value, ctx.eventType, ctx.path ?? '$', ctx.seq);
}

/** `snapshotJson` without a context object (the append hot path). */
export function copyJson<T>(value: T, eventType: string, path: string, seq: number | undefined): T {
  try {
    return fastCopy(value, 0) as T;
  } catch {
    // BAIL, or something that threw while being read (a getter, a revoked Proxy): the slow walk
    // decides, and names the path.
  }
  return slowWalk(value, path, true, failer({ eventType, seq })) as T;
}

/** `freezeJsonInPlace` without a context object (the load hot path). */
export function freezeInPlace<T>(value: T, eventType: string, path: string, seq: number | undefined): T {
  try {
    if (fastFreeze(value, 0)) return value;
  } catch {
    // something threw while being read: the slow walk names it
  }
  return slowWalk(value, path, false, failer({ eventType, seq })) as T;
}

/**
 * Deep-freeze a value this process has just produced with `JSON.parse` (the loader's own parse of
 * one line, never a caller's object). Such a value holds only ordinary objects and arrays,
 * strings, booleans, null and numbers; of those only a number can fail to be lossless: `-0`
 * (from "-0") and ±Infinity (from "1e400"). Anything deep or doubtful takes the full walk.
 */
export function freezeParsed<T>(value: T, eventType: string, path: string, seq: number | undefined): T {
  // for-in would also visit enumerable properties lent by a polluted Object.prototype.
  let polluted = false;
  for (const _ in objectProto) {
    polluted = true;
    break;
  }
  if (parsedFreeze(value, 0, polluted)) return value;
  return freezeInPlace(value, eventType, path, seq);
}

function parsedFreeze(v: unknown, depth: number, polluted: boolean): boolean {
  if (typeof v !== 'object') return typeof v !== 'number' || (v - v === 0 && (v !== 0 || 1 / v > 0));
  if (v === null) return true;
  if (depth > FAST_DEPTH_LIMIT) return false;
  // Leaves are checked inline: long lists of numbers (sourceEventSeqs) would otherwise cost a
  // call per element.
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (typeof x === 'object') {
        if (x !== null && !parsedFreeze(x, depth + 1, polluted)) return false;
      } else if (typeof x === 'number' && !(x - x === 0 && (x !== 0 || 1 / x > 0))) return false;
    }
  } else {
    for (const k in v) {
      if (polluted && !hasOwn.call(v, k)) continue;
      const x: unknown = (v as Record<string, unknown>)[k];
      if (typeof x === 'object') {
        if (x !== null && !parsedFreeze(x, depth + 1, polluted)) return false;
      } else if (typeof x === 'number' && !(x - x === 0 && (x !== 0 || 1 / x > 0))) return false;
    }
  }
  Object.freeze(v);
  return true;
}

/** True when the value is lossless JSON and now frozen; false means "use the slow walk". */
function fastFreeze(v: unknown, depth: number): boolean {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      // biome-ignore lint/suspicious/noSelfCompare: the NaN test, inline on this hot path
      return !(v !== v || v === Infinity || v === -Infinity || (v === 0 && 1 / v < 0));
    case 'object': {
      if (v === null) return true;
      if (depth > FAST_DEPTH_LIMIT) return false;
      if (Object.isFrozen(v)) {
        // Already frozen (shared subtree, or a value logged before): still validate, cheaply.
      }
      if (Array.isArray(v)) {
        if (Object.getPrototypeOf(v) !== arrayProto) return false;
        for (let i = 0; i < v.length; i++) {
          const x = v[i];
          if (x === undefined || !fastFreeze(x, depth + 1)) return false;
        }
        Object.freeze(v);
        return true;
      }
      const proto = Object.getPrototypeOf(v);
      if (proto !== objectProto && proto !== null) return false;
      for (const k in v) {
        if (!hasOwn.call(v, k)) continue;
        if (!fastFreeze((v as Record<string, unknown>)[k], depth + 1)) return false;
      }
      Object.freeze(v);
      return true;
    }
    default:
      return false;
  }
}

/** Type guard form, for callers that want a boolean (no throw, no freeze). */
export function isLosslessJson(value: unknown): value is JsonValue {
  try {
    slowWalk(value, '$', true, () => {
      throw BAIL;
    });
    return true;
  } catch (e) {
    if (e === BAIL) return false;
    throw e;
  }
}

/**
 * `JSON.stringify` for logged (lossless, frozen) values, without its stack limit: V8's native
 * serializer recurses and throws a RangeError a few thousand levels down, while the log accepts
 * any depth. The native path runs first; only a value too deep for it takes the iterative walk,
 * which produces the same text (same key order, same escaping).
 */
export function stringifyJson(value: unknown, indent?: number): string {
  try {
    return JSON.stringify(value, null, indent);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
  }
  // Too deep for the native serializer: written compact whatever `indent` asks, since indenting
  // n levels costs n² characters (20,000 levels would not fit in a string).
  return stringifyDeep(value);
}

/** Values `JSON.stringify` leaves out of objects (and writes as null in arrays). */
const skipped = (v: unknown): boolean => v === undefined || typeof v === 'function' || typeof v === 'symbol';

function stringifyDeep(root: unknown): string {
  const out: string[] = [];
  // Each frame: the container, its keys (null for arrays), the next index, how many were written.
  const stack: { v: Record<string, unknown> | unknown[]; keys: string[] | null; i: number; n: number }[] = [];
  const emit = (v: unknown): void => {
    if (typeof v !== 'object' || v === null) {
      out.push(skipped(v) ? 'null' : JSON.stringify(v));
      return;
    }
    if (Array.isArray(v)) {
      out.push('[');
      stack.push({ v, keys: null, i: 0, n: 0 });
    } else {
      out.push('{');
      stack.push({ v: v as Record<string, unknown>, keys: Object.keys(v), i: 0, n: 0 });
    }
  };
  emit(root);
  while (stack.length > 0) {
    const f = stack[stack.length - 1]!;
    if (f.keys === null) {
      const a = f.v as unknown[];
      if (f.i >= a.length) {
        out.push(']');
        stack.pop();
        continue;
      }
      if (f.n++ > 0) out.push(',');
      emit(a[f.i++]);
    } else {
      if (f.i >= f.keys.length) {
        out.push('}');
        stack.pop();
        continue;
      }
      const k = f.keys[f.i++]!;
      const v = (f.v as Record<string, unknown>)[k];
      if (skipped(v)) continue;
      out.push(`${f.n++ > 0 ? ',' : ''}${JSON.stringify(k)}:`);
      emit(v);
    }
  }
  return out.join('');
}

/**
 * A short, bounded rendering of any value for an error message: JSON-like, at most about `max`
 * characters (then `…`), iterative (a value nested 100,000 levels deep costs `max` steps, never
 * the stack), and total (getters that throw, Proxies, cycles, BigInt: described, never thrown).
 * Log content is untrusted: a message quotes it, it never echoes it whole.
 */
export function preview(value: unknown, max = 60): string {
  const out: string[] = [];
  let used = 0;
  let cut = false;
  const put = (s: string): boolean => {
    if (used + s.length > max) {
      out.push(s.slice(0, Math.max(0, max - used)));
      used = max;
      cut = true;
      return false;
    }
    out.push(s);
    used += s.length;
    return true;
  };
  const leaf = (v: unknown): string => {
    switch (typeof v) {
      case 'string':
        return JSON.stringify(v.length > max ? v.slice(0, max) : v);
      case 'number':
        return Object.is(v, -0) ? '-0' : String(v);
      case 'bigint':
        return `${v}n`;
      case 'undefined':
        return 'undefined';
      case 'function':
        return '[function]';
      case 'symbol':
        return v.toString();
      default:
        return String(v);
    }
  };
  try {
    const stack: { v: Record<string, unknown> | unknown[]; keys: string[] | null; i: number }[] = [];
    const open = (v: unknown): boolean => {
      if (typeof v !== 'object' || v === null) return put(leaf(v));
      if (stack.length > max) return put('…');
      const isArr = Array.isArray(v);
      stack.push({ v: v as Record<string, unknown>, keys: isArr ? null : Object.keys(v), i: 0 });
      return put(isArr ? '[' : '{');
    };
    if (!open(value)) return `${out.join('')}…`;
    while (stack.length > 0 && !cut) {
      const f = stack[stack.length - 1]!;
      const n = f.keys === null ? (f.v as unknown[]).length : f.keys.length;
      if (f.i >= n) {
        stack.pop();
        if (!put(f.keys === null ? ']' : '}')) break;
        continue;
      }
      const i = f.i++;
      if (i > 0 && !put(',')) break;
      if (f.keys === null) {
        if (!open((f.v as unknown[])[i])) break;
      } else {
        const k = f.keys[i]!;
        if (!put(`${JSON.stringify(k.length > max ? k.slice(0, max) : k)}:`)) break;
        if (!open((f.v as Record<string, unknown>)[k])) break;
      }
    }
  } catch {
    return `${out.join('')}…(unreadable)`;
  }
  return cut ? `${out.join('')}…` : out.join('');
}
