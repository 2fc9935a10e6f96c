/**
 * What the shared escape table must hold (issue 12 item 5, and review 2's finding 3), computed
 * from source data rather than copied from the table:
 * - the two tables it replaced, copied from the sources before they were joined: the terminal's
 *   (src/cli/text.ts) and the page's (src/viewer/page/dom.js);
 * - every code point that Unicode (as this Node's regular expressions know it) calls a control
 *   (Cc), a format character (Cf), a line or paragraph separator (Zl, Zp), a surrogate (Cs: as a
 *   string of its own, a lone half of a pair) or default ignorable,
 *   less tab and line feed (each surface's own business) and the prepended concatenation marks,
 *   format characters drawn as visible signs (Unicode's Prepended_Concatenation_Mark, which
 *   JavaScript cannot name, listed from PropList.txt);
 * - the characters that are none of those yet are drawn as a blank (second review, N10): U+2800
 *   BRAILLE PATTERN BLANK (Unicode: "the braille cell with no dots"), U+1D159 MUSICAL SYMBOL NULL
 *   NOTEHEAD and U+16FE4 KHITAN SMALL SCRIPT FILLER (both on the public lists of invisible
 *   characters). Whitespace (NBSP, U+2000–200A, the ideographic space…) is not here: it is drawn
 *   as the space it is, and one-line views fold it.
 */
const OLD_TERMINAL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const OLD_PAGE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\u2028\u2029\ufeff]/;
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Default_Ignorable_Code_Point}]/u;
const PREPENDED_CONCATENATION_MARKS = new Set([
  0x600, 0x601, 0x602, 0x603, 0x604, 0x605, 0x6dd, 0x70f, 0x890, 0x891, 0x8e2, 0x110bd, 0x110cd,
]);

const BLANK_GLYPHS = new Set([0x2800, 0x1d159, 0x16fe4]);

/** Every code point the table must hold, ascending. */
export const EXPECTED_UNSAFE: readonly number[] = (() => {
  const out: number[] = [];
  for (let cp = 0; cp <= 0x10ffff; cp++) {
    const c = String.fromCodePoint(cp);
    const invisible = INVISIBLE.test(c) && cp !== 0x09 && cp !== 0x0a && !PREPENDED_CONCATENATION_MARKS.has(cp);
    if (OLD_TERMINAL.test(c) || OLD_PAGE.test(c) || invisible || BLANK_GLYPHS.has(cp)) out.push(cp);
  }
  return out;
})();

/** The visible form the table's characters take on both surfaces, written from the code point. */
export function visibleForm(cp: number): string {
  if (cp === 0x1b) return '\\e';
  if (cp === 0x0d) return '\\r';
  if (cp <= 0xff) return `\\x${cp.toString(16).padStart(2, '0')}`;
  return cp <= 0xffff ? `\\u${cp.toString(16).padStart(4, '0')}` : `\\u{${cp.toString(16)}}`;
}
