/**
 * Bounding what the API sends. Log strings can be megabytes and log JSON arbitrarily deep, so
 * every string in a view is capped (with its full length, so the page can say what it left out)
 * and JSON is printed by an explicit-stack printer: `JSON.stringify` recurses and throws on
 * deep nesting, which a hostile or buggy log may well hold.
 *
 * Nothing here escapes HTML: the page renders every string as text, never as markup.
 */

/** A possibly shortened string; `total` is the original length when it was cut. */
export interface Text {
  text: string;
  total?: number;
}

export function cap(s: string, max: number): Text {
  if (s.length <= max) return { text: s };
  let end = max;
  // Do not split a surrogate pair.
  const c = s.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return { text: s.slice(0, end), total: s.length };
}

export function str(v: unknown): string {
  return typeof v === 'string' ? v : v === undefined ? '' : compactJson(v, 200);
}

type Frame =
  | { kind: 'array'; items: readonly unknown[]; i: number }
  | { kind: 'object'; obj: Record<string, unknown>; keys: string[]; i: number };

/**
 * JSON text of `value`, indented by `indent` spaces (0: one line). Stops once the output
 * passes `max` characters and marks the cut with `…`. Handles any depth.
 */
export function printJson(value: unknown, indent: number, max = Number.POSITIVE_INFINITY): string {
  const parts: string[] = [];
  let size = 0;
  const out = (s: string): void => {
    parts.push(s);
    size += s.length;
  };
  const nl = (depth: number): void => {
    if (indent > 0) out(`\n${' '.repeat(Math.min(depth, 64) * indent)}`);
  };
  const stack: Frame[] = [];
  const open = (v: unknown): void => {
    if (Array.isArray(v)) {
      if (v.length === 0) return out('[]');
      out('[');
      stack.push({ kind: 'array', items: v, i: 0 });
    } else if (typeof v === 'object' && v !== null) {
      const keys = Object.keys(v);
      if (keys.length === 0) return out('{}');
      out('{');
      stack.push({ kind: 'object', obj: v as Record<string, unknown>, keys, i: 0 });
    } else if (typeof v === 'string') {
      out(JSON.stringify(v));
    } else if (typeof v === 'number') {
      out(Number.isFinite(v) ? String(v) : 'null');
    } else if (typeof v === 'boolean' || v === null) {
      out(String(v));
    } else {
      out('null');
    }
  };
  open(value);
  while (stack.length > 0) {
    if (size > max) break;
    const f = stack[stack.length - 1]!;
    const len = f.kind === 'array' ? f.items.length : f.keys.length;
    if (f.i >= len) {
      stack.pop();
      nl(stack.length);
      out(f.kind === 'array' ? ']' : '}');
      continue;
    }
    if (f.i > 0) out(',');
    nl(stack.length);
    if (f.kind === 'array') open(f.items[f.i++]);
    else {
      const k = f.keys[f.i++]!;
      out(`${JSON.stringify(k)}:${indent > 0 ? ' ' : ''}`);
      open(f.obj[k]);
    }
  }
  const s = parts.join('');
  return size > max ? `${s.slice(0, max)}…` : s;
}

export function compactJson(v: unknown, max: number): string {
  return printJson(v, 0, max);
}

/** A tool call's raw argument text, pretty-printed when it is JSON (it usually is). */
export function prettyArgs(raw: string, max: number): Text {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return cap(raw, max);
  }
  if (typeof parsed !== 'object' || parsed === null) return cap(raw, max);
  const pretty = printJson(parsed, 2, max);
  return pretty.length > max ? { text: pretty.slice(0, max), total: raw.length } : { text: pretty };
}
