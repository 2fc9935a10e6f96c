/**
 * The one table of characters that dsh never shows raw: in the terminal (`src/cli/text.ts`) and
 * in the viewer's page (`src/viewer/page/dom.js`, which gets this table as a served module, see
 * `unsafeCharsModule`), each is replaced by a visible escape (`\e`, `\r`, `\x9b`, `\u202e`).
 *
 * Everything a log holds was written by a model, a tool or whoever edited the file. A reader must
 * see the characters that are there, so each entry is a character that can move the cursor,
 * restyle or retitle a terminal, reorder text ("Trojan Source"), break a line where none shows,
 * or take no space at all (so that two different strings, say a command awaiting approval and
 * the one that would run, look the same). The table is the union of what the terminal and the
 * page escaped before they shared it.
 *
 * Tab and line feed are not here: each surface handles them itself (a one-line rendering folds
 * them into a space, a block keeps them).
 */
export interface UnsafeRange {
  /** First and last code point, inclusive. */
  from: number;
  to: number;
  why: string;
}

export const UNSAFE_CHARS: readonly UnsafeRange[] = [
  { from: 0x0000, to: 0x0008, why: 'C0 controls (NUL to BS): BS moves the cursor back over shown text' },
  {
    from: 0x000b,
    to: 0x001f,
    why: 'C0 controls: VT, FF, CR (returns to the line start and overwrites), ESC (starts every ANSI/CSI/OSC sequence)',
  },
  { from: 0x007f, to: 0x009f, why: 'DEL and the C1 controls (U+009B is a one-character CSI on terminals that honour 8-bit controls)' },
  { from: 0x061c, to: 0x061c, why: 'ARABIC LETTER MARK: an invisible bidi mark, like LRM and RLM' },
  {
    from: 0x200b,
    to: 0x200d,
    why: 'ZERO WIDTH SPACE, ZERO WIDTH NON-JOINER, ZERO WIDTH JOINER: take no space, so they hide inside names and commands',
  },
  { from: 0x200e, to: 0x200f, why: 'LEFT-TO-RIGHT and RIGHT-TO-LEFT MARK: invisible bidi marks' },
  { from: 0x2028, to: 0x2029, why: 'LINE and PARAGRAPH SEPARATOR: line breaks to some readers and none to others' },
  { from: 0x202a, to: 0x202e, why: 'bidi embeddings and overrides (LRE, RLE, PDF, LRO, RLO): reorder the text shown' },
  {
    from: 0x2060,
    to: 0x2064,
    why: 'WORD JOINER and the invisible operators (function application, times, separator, plus): take no space',
  },
  { from: 0x2066, to: 0x2069, why: 'bidi isolates (LRI, RLI, FSI, PDI): reorder the text shown' },
  { from: 0xfeff, to: 0xfeff, why: 'ZERO WIDTH NO-BREAK SPACE (byte-order mark): takes no space' },
];

const hex4 = (n: number): string => n.toString(16).padStart(4, '0');

/** The table as the body of a regular-expression character class (`\u0000-\u0008…`). */
export const UNSAFE_CHAR_CLASS = UNSAFE_CHARS.map((r) =>
  r.from === r.to ? `\\u${hex4(r.from)}` : `\\u${hex4(r.from)}-\\u${hex4(r.to)}`,
).join('');

/** The visible form of one unsafe character: `\e` (ESC), `\r` (CR), `\xNN` up to U+00FF, else `\uNNNN`. */
export function escapeUnsafeChar(c: string): string {
  const n = c.charCodeAt(0);
  if (n === 0x0d) return '\\r';
  if (n === 0x1b) return '\\e';
  return n <= 0xff ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${hex4(n)}`;
}

/**
 * The table as an ES module for the viewer's page, which runs in the browser and cannot import
 * TypeScript: the viewer serves this text as `unsafe-chars.js` beside the page's own files.
 */
export function unsafeCharsModule(): string {
  return [
    '// Served by the viewer from src/model/unsafe-chars.ts: the characters shown as escapes, the',
    '// same table the terminal uses. Not a file on disk.',
    `export const UNSAFE_CHAR_CLASS = ${JSON.stringify(UNSAFE_CHAR_CLASS)};`,
    '',
  ].join('\n');
}
