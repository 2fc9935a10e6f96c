/**
 * Making untrusted text safe to print. Everything a log contains (message text, tool output,
 * ids, even its JSON parse errors) was written by a model, a tool or whoever edited the file, so
 * before it reaches a terminal every character that could move the cursor, change colours,
 * rewrite the title, hide text or reorder it is shown as a visible escape instead. Which
 * characters those are is one table shared with the viewer's page (`src/model/unsafe-chars.ts`):
 * C0 and C1 controls (ESC, CSI, OSC start with them), DEL, the Unicode bidi controls ("Trojan
 * Source" reordering), line separators and the zero-width characters.
 */
import { stringifyJson } from '../session/json.js';
import { escapeUnsafe, foldSpaces, hasUnsafe, UNSAFE_CHAR_CLASS } from '../model/unsafe-chars.js';

// The table's characters; \t and \n are not among them (each function handles them).
const UNSAFE = new RegExp(`[${UNSAFE_CHAR_CLASS}]`, 'gu');

const PLAIN_ONE_LINE = /^(?:[\x21-\x5b\x5d-\x7e]| (?! ))*$/;

/**
 * One line of safe text: the page's text (`visible` in src/viewer/page/dom.js) with its
 * whitespace runs, newlines included, as one space. The table's whitespace (CR, VT, FF, U+2028,
 * U+FEFF) is escaped, not folded, so both surfaces show the same characters.
 */
export function oneLine(s: string): string {
  // Printable ASCII less the backslash, with no run of spaces: nothing to fold or escape (ids,
  // paths and most titles; a listing prints 40,000 of them). test/cli/text.test.ts holds it equal.
  if (PLAIN_ONE_LINE.test(s)) return s;
  return escapeUnsafe(foldSpaces(s));
}

/** Multi-line safe text: newlines and tabs kept, every other control escaped. */
export function block(s: string): string {
  return escapeUnsafe(s);
}

/** Cut to at most `max` code points, marking the cut; never splits a surrogate pair. */
export function truncate(s: string, max: number): string {
  if (s.length <= max) return s;
  let cut = max - 1;
  const c = s.charCodeAt(cut - 1);
  if (c >= 0xd800 && c <= 0xdbff) cut--;
  return `${s.slice(0, cut)}…`;
}

/**
 * `s` with its whitespace runs folded to one space and trimmed (`foldSpaces`), then truncated to
 * `max` (when given). A long text is folded only as far as the cut needs: the folded form of a
 * prefix is a prefix of the whole's, so once a prefix gives `max + 2` characters (one more than
 * a trailing space the whole's trim could drop), the cut is the same as the whole's.
 */
export function flatten(s: string, max: number | undefined): string {
  if (max !== undefined) {
    // Prose folds little (single spaces stay), so a prefix a little longer than the cut
    // usually does; whitespace-heavy text takes a longer one.
    for (let n = max + 32; n < s.length; n *= 4) {
      const head = foldSpaces(s.slice(0, n)).replace(/^ /, '');
      if (head.length >= max + 2) return truncate(head, max);
    }
  }
  const flat = foldSpaces(s, true);
  return max === undefined ? flat : truncate(flat, max);
}

/** A quoted one-line preview (truncated unless `max` is undefined). */
export function preview(s: string, max: number | undefined): string {
  // `oneLine` less its fold: flatten's text is folded already (folding it again changes nothing).
  return `"${escapeUnsafe(flatten(s, max))}"`;
}

/**
 * JSON for machine output. `JSON.stringify` escapes C0 controls but passes DEL, C1, the bidi
 * controls and the zero-width characters through raw; escaping every character of the table as
 * `\uNNNN` keeps `--json` output safe to cat, and the value is unchanged for any JSON parser.
 */
export function safeJson(value: unknown, indent?: number): string {
  // stringifyJson: JSON.stringify's text, also for values nested deeper than its stack allows.
  const text = stringifyJson(value, indent);
  // One \uNNNN per UTF-16 unit: a character beyond the BMP is written as its surrogate pair.
  const units = (c: string): string =>
    [...Array(c.length).keys()].map((i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join('');
  return hasUnsafe(text) ? text.replace(UNSAFE, units) : text;
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
