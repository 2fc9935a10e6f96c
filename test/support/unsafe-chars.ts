/**
 * What the shared escape table must hold (issue 12 item 5), computed from the two tables it
 * replaced, copied from the sources before they were joined: the terminal's (src/cli/text.ts) and
 * the page's (src/viewer/page/dom.js). The shared table is their union.
 */
const OLD_TERMINAL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const OLD_PAGE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\u2028\u2029\ufeff]/;

/** Every code point of the union, ascending (all in the BMP). */
export const EXPECTED_UNSAFE: readonly number[] = (() => {
  const out: number[] = [];
  for (let cp = 0; cp <= 0xffff; cp++) {
    const c = String.fromCharCode(cp);
    if (OLD_TERMINAL.test(c) || OLD_PAGE.test(c)) out.push(cp);
  }
  return out;
})();

/** The visible form the table's characters take on both surfaces, written from the code point. */
export function visibleForm(cp: number): string {
  if (cp === 0x1b) return '\\e';
  if (cp === 0x0d) return '\\r';
  return cp <= 0xff ? `\\x${cp.toString(16).padStart(2, '0')}` : `\\u${cp.toString(16).padStart(4, '0')}`;
}
