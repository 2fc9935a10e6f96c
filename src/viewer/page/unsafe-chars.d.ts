// The module the viewer serves as unsafe-chars.js (made from src/model/unsafe-chars.ts; there is
// no such file on disk). This declaration lets the page's imports of it be checked.
/** The characters shown as escapes, as the body of a regular-expression character class. */
export const UNSAFE_CHAR_CLASS: string;
/** What is escaped, as a regular-expression source for the u flag: the class, or a backslash that would start an escape. */
export const UNSAFE_PATTERN: string;
/** The visible escape of one of those characters (one code point): `\e`, `\r`, `\\`, `\xNN`, `\uNNNN`, `\u{NNNNN}`. */
export function escapeUnsafeChar(c: string): string;
/** The table's ranges of code points (first and last, inclusive), as data. */
export const UNSAFE_RANGES: readonly { from: number; to: number }[];
/**
 * The escape built from those ranges and that function: `escape(s)` shows every character of the
 * table and every backslash that would start an escape as its escape.
 */
export function unsafeEscaper(
  ranges: readonly { from: number; to: number }[],
  escapeChar: (c: string) => string,
): { escape: (s: string, keep?: (cp: number, at: number) => boolean) => string; isPlainUnit: (u: number) => boolean };
