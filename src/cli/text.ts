/**
 * Making untrusted text safe to print. Everything a log contains (message text, tool output,
 * ids, even its JSON parse errors) was written by a model, a tool or whoever edited the file, so
 * before it reaches a terminal every character that could move the cursor, change colours,
 * rewrite the title, hide text or reorder it is shown as a visible escape instead: C0 and C1
 * controls (ESC, CSI, OSC start with them), DEL, and the Unicode bidi and line-separator
 * controls ("Trojan Source" reordering).
 */
import { stringifyJson } from '../session/index.js';

// C0 except \t and \n (handled per mode), DEL, C1, bidi embeddings/overrides/isolates, marks, separators.
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE_TEST = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

function escapeChar(c: string): string {
  const n = c.charCodeAt(0);
  if (n === 13) return '\\r';
  if (n === 27) return '\\e';
  return n <= 0xff ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;
}

/**
 * One line of safe text: whitespace runs (newlines included) become one space, other controls
 * become visible escapes.
 */
export function oneLine(s: string): string {
  const flat = s.replace(/\s+/g, ' ');
  return UNSAFE_TEST.test(flat) ? flat.replace(UNSAFE, escapeChar) : flat;
}

/** Multi-line safe text: newlines and tabs kept, every other control escaped. */
export function block(s: string): string {
  return UNSAFE_TEST.test(s) ? s.replace(UNSAFE, escapeChar) : s;
}

/** Cut to at most `max` code points, marking the cut; never splits a surrogate pair. */
export function truncate(s: string, max: number): string {
  if (s.length <= max) return s;
  let cut = max - 1;
  const c = s.charCodeAt(cut - 1);
  if (c >= 0xd800 && c <= 0xdbff) cut--;
  return `${s.slice(0, cut)}…`;
}

/** A quoted one-line preview (truncated unless `max` is undefined). */
export function preview(s: string, max: number | undefined): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  return `"${oneLine(max === undefined ? flat : truncate(flat, max))}"`;
}

/**
 * JSON for machine output. `JSON.stringify` escapes C0 controls but passes DEL, C1 and the bidi
 * controls through raw; escaping them too keeps `--json` output safe to cat, and the value is
 * unchanged for any JSON parser.
 */
export function safeJson(value: unknown, indent?: number): string {
  // stringifyJson: JSON.stringify's text, also for values nested deeper than its stack allows.
  return stringifyJson(value, indent).replace(/[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Thousands separators as a locale-independent space, from five digits on: "1850", "12 345". */
export function count(n: number): string {
  return Number.isSafeInteger(n) && Math.abs(n) >= 10000 ? n.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ' ') : String(n);
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}

/** ISO time of epoch ms; a value outside the Date range (a valid safe integer can be) as is. */
export function isoTime(ms: number): string {
  return Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : `${ms} ms`;
}
