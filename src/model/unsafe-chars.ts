/**
 * The one table of characters that dsh never shows raw: in the terminal (`src/cli/text.ts`) and
 * in the viewer's page (`src/viewer/page/dom.js`, which gets this table as a served module, see
 * `unsafeCharsModule`), each is replaced by a visible escape (`\e`, `\r`, `\x9b`, `\u202e`,
 * `\u{e0041}`).
 *
 * Everything a log holds was written by a model, a tool or whoever edited the file. A reader must
 * see the characters that are there, so each entry is a character that can move the cursor,
 * restyle or retitle a terminal, reorder text ("Trojan Source"), break a line where none shows,
 * or take no space at all (so that two different strings, say a command awaiting approval and
 * the one that would run, look the same). It holds every C0/C1 control, line and paragraph
 * separator, format character (Unicode Cf) and Default_Ignorable_Code_Point, among them the TAG
 * block (U+E0000–E007F: invisible ASCII a model reads, "ASCII smuggling"), the variation
 * selectors and the Hangul fillers; and the few other characters fonts draw as nothing at all
 * (BRAILLE PATTERN BLANK, MUSICAL SYMBOL NULL NOTEHEAD, KHITAN SMALL SCRIPT FILLER), which pass for
 * a space or for nothing: `rm a⠀b` read as `rm a b`. The only format characters left out are the prepended
 * concatenation marks (U+0600–0605, U+06DD, U+070F, U+0890–0891, U+08E2, U+110BD, U+110CD),
 * which are drawn as visible signs.
 *
 * Tab and line feed are not here: each surface handles them itself (a one-line rendering folds
 * them into a space, a block keeps them). Other whitespace that is in the table (VT, FF, CR,
 * U+2028/2029, U+FEFF) is escaped, never folded: see `foldSpaces`.
 *
 * Lone surrogates (half of a UTF-16 pair with no other half, which a lossless-JSON log can hold)
 * are in it too: every reader draws them as U+FFFD or nothing, so `\ud800`, `\udc00` and a real
 * U+FFFD would look the same.
 *
 * A backslash that would start one of those escape forms (one before `\`, `e`, `r`, `x`, `u` or
 * a character of the table) is itself shown as `\\`: a log holding the six characters `\u202e` shows `\\u202e`, never what a
 * real U+202E shows. Other backslashes (`\n`, `\d`, `C:\Program Files`) are shown as they are, so
 * every visible form still reads back to one text only (see UNSAFE_PATTERN).
 *
 * The character class needs a regular expression with the `u` (or `v`) flag: it names code
 * points beyond the BMP as `\u{…}`, and with it a surrogate range matches only lone halves.
 */
import { graphemeSegments } from './graphemes.js';

export interface UnsafeRange {
  /** First and last code point, inclusive. */
  from: number;
  to: number;
  why: string;
  /**
   * Where running text (`escapeUnsafeText`: answers, reasoning, the user's own prompt) shows the
   * character raw, because it is part of something drawn: `emoji`, inside one emoji grapheme
   * cluster that Unicode lists (RGI: ✔️, 👩‍💻, 🏴󠁧󠁢󠁳󠁣󠁴󠁿) or a text-presentation one (✔︎); `letters`, joining two
   * letters of a non-Latin script (Persian, Hindi, Malayalam need ZWNJ and ZWJ). Never raw in
   * names, commands, paths, approval questions or titles (`escapeUnsafe`).
   */
  keptIn?: readonly ('emoji' | 'letters')[];
}

export const UNSAFE_CHARS: readonly UnsafeRange[] = [
  { from: 0x0000, to: 0x0008, why: 'C0 controls (NUL to BS): BS moves the cursor back over shown text' },
  {
    from: 0x000b,
    to: 0x001f,
    why: 'C0 controls: VT, FF, CR (returns to the line start and overwrites), ESC (starts every ANSI/CSI/OSC sequence)',
  },
  { from: 0x007f, to: 0x009f, why: 'DEL and the C1 controls (U+009B is a one-character CSI on terminals that honour 8-bit controls)' },
  { from: 0x00ad, to: 0x00ad, why: 'SOFT HYPHEN: shown only where a line happens to break there' },
  { from: 0x034f, to: 0x034f, why: 'COMBINING GRAPHEME JOINER: takes no space' },
  { from: 0x061c, to: 0x061c, why: 'ARABIC LETTER MARK: an invisible bidi mark, like LRM and RLM' },
  { from: 0x115f, to: 0x1160, why: 'HANGUL CHOSEONG and JUNGSEONG FILLER: blank, so they pass for spaces or nothing' },
  { from: 0x17b4, to: 0x17b5, why: 'KHMER VOWEL INHERENT AQ and AA: not drawn' },
  { from: 0x180b, to: 0x180f, why: 'MONGOLIAN FREE VARIATION SELECTORS and VOWEL SEPARATOR: take no space' },
  { from: 0x200b, to: 0x200b, why: 'ZERO WIDTH SPACE: takes no space, so it hides inside names and commands' },
  {
    from: 0x200c,
    to: 0x200c,
    why: 'ZERO WIDTH NON-JOINER: takes no space, so it hides inside names and commands',
    keptIn: ['letters'],
  },
  {
    from: 0x200d,
    to: 0x200d,
    why: 'ZERO WIDTH JOINER: takes no space, so it hides inside names and commands',
    keptIn: ['emoji', 'letters'],
  },
  { from: 0x200e, to: 0x200f, why: 'LEFT-TO-RIGHT and RIGHT-TO-LEFT MARK: invisible bidi marks' },
  { from: 0x2028, to: 0x2029, why: 'LINE and PARAGRAPH SEPARATOR: line breaks to some readers and none to others' },
  { from: 0x202a, to: 0x202e, why: 'bidi embeddings and overrides (LRE, RLE, PDF, LRO, RLO): reorder the text shown' },
  {
    from: 0x2060,
    to: 0x2064,
    why: 'WORD JOINER and the invisible operators (function application, times, separator, plus): take no space',
  },
  { from: 0x2065, to: 0x2065, why: 'reserved in the invisible-operator block: default ignorable, drawn as nothing' },
  { from: 0x2066, to: 0x2069, why: 'bidi isolates (LRI, RLI, FSI, PDI): reorder the text shown' },
  { from: 0x206a, to: 0x206f, why: 'deprecated format characters (symmetric swapping, Arabic shaping, digit shapes): take no space' },
  { from: 0x2800, to: 0x2800, why: 'BRAILLE PATTERN BLANK: a symbol with no dots, drawn as a space, so `rm a\u2800b` reads as two words' },
  { from: 0x3164, to: 0x3164, why: 'HANGUL FILLER: blank, so it passes for a space or a name' },
  {
    from: 0xd800,
    to: 0xdfff,
    why: 'lone surrogates (u flag: only a half without its pair): drawn as U+FFFD or nothing, so they pass for one another',
  },
  { from: 0xfe00, to: 0xfe0d, why: 'VARIATION SELECTORS 1-14: take no space, so they tell apart strings that look the same' },
  {
    from: 0xfe0e,
    to: 0xfe0f,
    why: 'VARIATION SELECTORS 15-16 (text and emoji presentation): take no space, so they tell apart strings that look the same',
    keptIn: ['emoji'],
  },
  { from: 0xfeff, to: 0xfeff, why: 'ZERO WIDTH NO-BREAK SPACE (byte-order mark): takes no space' },
  { from: 0xffa0, to: 0xffa0, why: 'HALFWIDTH HANGUL FILLER: blank' },
  { from: 0xfff0, to: 0xfff8, why: 'reserved specials: default ignorable, drawn as nothing' },
  { from: 0xfff9, to: 0xfffb, why: 'INTERLINEAR ANNOTATION ANCHOR, SEPARATOR, TERMINATOR: can hide the annotated text' },
  { from: 0x13430, to: 0x1343f, why: 'EGYPTIAN HIEROGLYPH format controls: take no space of their own' },
  { from: 0x16fe4, to: 0x16fe4, why: 'KHITAN SMALL SCRIPT FILLER: a mark that draws nothing' },
  { from: 0x1bca0, to: 0x1bca3, why: 'SHORTHAND FORMAT controls: take no space' },
  { from: 0x1d159, to: 0x1d159, why: 'MUSICAL SYMBOL NULL NOTEHEAD: drawn blank, so it passes for a space' },
  { from: 0x1d173, to: 0x1d17a, why: 'MUSICAL SYMBOL BEGIN/END BEAM, TIE, SLUR, PHRASE: format controls, take no space' },
  { from: 0xe0000, to: 0xe001f, why: 'LANGUAGE TAG and reserved: default ignorable, drawn as nothing' },
  {
    from: 0xe0020,
    to: 0xe007f,
    why: 'TAG characters: invisible ASCII that a model still reads ("ASCII smuggling"); only a listed flag (🏴󠁧󠁢󠁳󠁣󠁴󠁿) is drawn from them',
    keptIn: ['emoji'],
  },
  { from: 0xe0080, to: 0xe0fff, why: 'VARIATION SELECTORS SUPPLEMENT and reserved: take no space' },
];

/** The table as the body of a regular-expression character class (`\u{0}-\u{8}…`), for the `u` or `v` flag. */
export const UNSAFE_CHAR_CLASS = charClass(UNSAFE_CHARS);

function charClass(ranges: readonly UnsafeRange[]): string {
  return ranges
    .map((r) => (r.from === r.to ? `\\u{${r.from.toString(16)}}` : `\\u{${r.from.toString(16)}}-\\u{${r.to.toString(16)}}`))
    .join('');
}

/**
 * What is escaped, as a regular-expression source for the `u` flag: a character of the table, or
 * a backslash that a reader of the escapes would take for the start of one: followed by `\`, `e`,
 * `r`, `x` or `u`, or by a character of the table (whose own escape starts with a backslash, so
 * `\` + CR would show as `\\r`).
 */
export const UNSAFE_PATTERN = `[${UNSAFE_CHAR_CLASS}]|\\\\(?=[\\\\erxu${UNSAFE_CHAR_CLASS}])`;

/**
 * The visible form of one unsafe character (one code point): `\e` (ESC), `\r` (CR), `\\` (a
 * backslash matched by UNSAFE_PATTERN), `\xNN` up to U+00FF, `\uNNNN` in the BMP (a lone
 * surrogate too), else `\u{NNNNN}`.
 *
 * The page runs this very function: `unsafeCharsModule` serves its source text, so it must stay
 * self-contained (no helper outside its body).
 */
export function escapeUnsafeChar(c: string): string {
  const n = c.codePointAt(0) ?? 0;
  if (n === 0x0d) return '\\r';
  if (n === 0x1b) return '\\e';
  if (n === 0x5c) return '\\\\';
  if (n <= 0xff) return `\\x${n.toString(16).padStart(2, '0')}`;
  if (n <= 0xffff) return `\\u${n.toString(16).padStart(4, '0')}`;
  return `\\u{${n.toString(16)}}`;
}

/**
 * The escape as a scan of UTF-16 units, built from a table of ranges (`ranges`, the table's data)
 * and an escape of one character (`escapeChar`). The result equals replacing UNSAFE_PATTERN with
 * `escapeChar` (test/model/unsafe-chars.test.ts holds it to that and to a reference built from the
 * table), at the cost of the scan: a `u`-flag expression over this table (astral ranges, lone
 * surrogates) is two to five times slower than a one-byte lookup per unit, and is what made the
 * shared table cost more than the two it replaced (issue 12).
 *
 * `escape(s, keep)` leaves a character of the table raw where `keep(code point, offset)` says so
 * (running text's drawn joiners); a backslash is escaped or not whatever `keep` says.
 * `isPlainUnit(u)`: can the unit `u` never be escaped, nor make a neighbour escaped? (Neither in
 * the table, nor a backslash, nor a surrogate, which may pair into an astral code point.)
 *
 * The page runs this very function (`unsafeCharsModule` serves its source text), so it must stay
 * self-contained: no helper outside its body, no type-only syntax a stripper would leave behind.
 */
export function unsafeEscaper(
  ranges: readonly { from: number; to: number }[],
  escapeChar: (c: string) => string,
): { escape: (s: string, keep?: (cp: number, at: number) => boolean) => string; isPlainUnit: (u: number) => boolean } {
  // One byte per UTF-16 unit, 0 for a plain one: bit 1 in the table (a BMP code point, or a
  // surrogate standing alone), bit 2 the backslash, bit 4 a surrogate. A unit that is not plain
  // is decided by the code point it starts (`inTable`, the backslash rule).
  const units = new Uint8Array(0x10000);
  // The ranges beyond the BMP as [from, to, from, to, …], in the table's (ascending) order.
  const astral: number[] = [];
  // (`fill`, not a loop per unit: this runs as every command loads, in the interpreter.)
  for (const r of ranges) {
    if (r.from <= 0xffff) units.fill(1, r.from, Math.min(r.to, 0xffff) + 1);
    if (r.to > 0xffff) astral.push(Math.max(r.from, 0x10000), r.to);
  }
  units[0x5c] = units[0x5c]! | 2;
  for (let c = 0xd800; c <= 0xdfff; c++) units[c] = units[c]! | 4;
  const inTable = (cp: number): boolean => {
    if (cp <= 0xffff) return (units[cp]! & 1) === 1;
    for (let k = 0; k < astral.length; k += 2) if (cp >= astral[k]! && cp <= astral[k + 1]!) return true;
    return false;
  };
  // The first unit from `i` on that is not plain (`n` if none): the one loop over every unit.
  // Kept a function of its own, called by both functions below: when V8 compiled the loop into
  // each of them, the escape ran at times 2–3× slower in bench/escape.ts, depending on which
  // strings it had seen first (the same process, the same texts).
  const skipPlain = (s: string, i: number, n: number): number => {
    while (i < n && units[s.charCodeAt(i)] === 0) i++;
    return i;
  };
  // The rest of `s` from `i`, its first unit that is not plain. Apart from `scan` so that the
  // plain scan, nearly all of the calls, stays small and its compiled code is not thrown away
  // the first time a string needs escapes.
  const escapeFrom = (s: string, i: number, keep?: (cp: number, at: number) => boolean): string => {
    const n = s.length;
    let out = '';
    let done = 0;
    while (i < n) {
      // The code point here as the `u` flag reads it: a pair, or a unit (a lone surrogate too).
      const cp = s.codePointAt(i) ?? 0;
      const width = cp > 0xffff ? 2 : 1;
      let shown = false;
      if (inTable(cp)) shown = keep === undefined || !keep(cp, i);
      else if (cp === 0x5c && i + 1 < n) {
        // A backslash before `\ e r x u` or before a character of the table would read as an escape.
        const next = s.codePointAt(i + 1) ?? 0;
        shown = next === 0x5c || next === 0x65 || next === 0x72 || next === 0x78 || next === 0x75 || inTable(next);
      }
      if (shown) {
        out += s.slice(done, i) + escapeChar(s.slice(i, i + width));
        done = i + width;
      }
      i = skipPlain(s, i + width, n);
    }
    return done === 0 ? s : out + s.slice(done);
  };
  const scan = (s: string, keep?: (cp: number, at: number) => boolean): string => {
    const n = s.length;
    // Nearly every string (ids, prose, code) is plain: one lookup per unit proves it, no copy.
    const i = skipPlain(s, 0, n);
    return i === n ? s : escapeFrom(s, i, keep);
  };
  return { escape: scan, isPlainUnit: (u: number): boolean => units[u] === 0 };
}

const ESCAPER = unsafeEscaper(UNSAFE_CHARS, escapeUnsafeChar);
const UNSAFE_TEST = new RegExp(`[${UNSAFE_CHAR_CLASS}]`, 'u');

/**
 * Whitespace that may be folded into a space: JavaScript's `\s` less the table (VT, FF, CR,
 * U+2028/2029, U+FEFF), i.e. tab, line feed, space, NBSP, OGHAM SPACE MARK, U+2000–200A, NNBSP,
 * MMSP and the ideographic space. Written out rather than as the regular expression
 * `[\s--[table]]` because a timeline folds every preview (`dsh log show` of a large log: ~70,000
 * calls) and a char-code test runs about twice as fast as that expression's replace;
 * test/model/unsafe-chars.test.ts holds it equal to the expression over every code point.
 */
export function isFoldableSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || c === 0x09 || c === 0x0a;
  if (c < 0x2000) return c === 0xa0 || c === 0x1680;
  return c <= 0x200a || c === 0x202f || c === 0x205f || c === 0x3000;
}

/**
 * Is the UTF-16 unit `c` something UNSAFE_PATTERN can never match, nor make a neighbour match?
 * Not in the table, not a backslash, not a surrogate (which may pair into a TAG character): read
 * from the table, like the escape itself. test/model/unsafe-chars.test.ts holds this to the
 * table over every BMP unit.
 */
export const isPlainUnit: (c: number) => boolean = ESCAPER.isPlainUnit;

/** Every character of the table as its escape, and a backslash before `\ e r x u` as `\\`; tab, newline and everything else as is. */
export function escapeUnsafe(s: string): string {
  return ESCAPER.escape(s);
}

/**
 * The spaces a reader cannot tell from U+0020 and a shell can: NBSP, OGHAM SPACE MARK, U+2000–200A,
 * NNBSP, MMSP and the ideographic space (`isFoldableSpace` less tab, line feed and space). Running
 * text keeps them (French typography, CJK), so they are not in the table; a command shows them
 * as escapes (`escapeCommand`): bash splits words at space and tab only, so `rm\u00a0-rf` runs a
 * program named "rm -rf" while it reads as `rm -rf`.
 */
export const LOOKALIKE_SPACES: readonly UnsafeRange[] = [
  { from: 0x00a0, to: 0x00a0, why: 'NO-BREAK SPACE' },
  { from: 0x1680, to: 0x1680, why: 'OGHAM SPACE MARK' },
  { from: 0x2000, to: 0x200a, why: 'EN QUAD to HAIR SPACE' },
  { from: 0x202f, to: 0x202f, why: 'NARROW NO-BREAK SPACE' },
  { from: 0x205f, to: 0x205f, why: 'MEDIUM MATHEMATICAL SPACE' },
  { from: 0x3000, to: 0x3000, why: 'IDEOGRAPHIC SPACE' },
];

let commandEscaper: ReturnType<typeof unsafeEscaper> | undefined;

/**
 * A command (a line of a bash call, as a tool header or an approval question shows it): as
 * `escapeUnsafe`, and the lookalike spaces as escapes too (`\xa0`, `\u3000`), with the same
 * backslash rule, so `rm\u00a0-rf` never reads as `rm -rf` and a typed `\xa0` never as an NBSP.
 */
export function escapeCommand(s: string): string {
  commandEscaper ??= unsafeEscaper([...UNSAFE_CHARS, ...LOOKALIKE_SPACES], escapeUnsafeChar);
  return commandEscaper.escape(s);
}

const classOf = (k: 'emoji' | 'letters'): string => charClass(UNSAFE_CHARS.filter((r) => r.keptIn?.includes(k)));
/** The code points of the table that running text may keep raw (`keptIn`). */
const JOINERS = new Set<number>();
for (const r of UNSAFE_CHARS) if (r.keptIn?.length) for (let cp = r.from; cp <= r.to; cp++) JOINERS.add(cp);
const NON_ASCII_LETTER = /^(?![\x00-\x7f])\p{L}/u;

/**
 * What `drawnJoiners` needs, made on its first call: the emoji expression (a property of strings)
 * and the grapheme segmenter (made on first use in model/graphemes.ts) cost 40–60 ms of start-up together, paid by every command that
 * loads this module, while only a string holding a joiner of the table ever reaches them.
 */
let clusterTests: { emoji: RegExp; joinedLetters: RegExp } | undefined;
function getClusterTests(): NonNullable<typeof clusterTests> {
  clusterTests ??= {
    // The `v` flag (a property of strings): Node 20 has it; as a literal TypeScript wants ES2024.
    // biome-ignore lint/complexity/useRegexLiterals: the project's TypeScript target is ES2023
    emoji: new RegExp(`^(?:\\p{RGI_Emoji}|\\p{Emoji}\\u{fe0e})$`, 'v'),
    /** Letters (with their marks) of a non-ASCII script, each joiner between two of them. */
    joinedLetters: new RegExp(`^(?:(?![\\x00-\\x7f])\\p{L}\\p{M}*[${classOf('letters')}]?)+$`, 'u'),
  };
  return clusterTests;
}

/** Offsets in `s` of the table's characters that its grapheme clusters draw (see `keptIn`). */
function drawnJoiners(s: string): Set<number> {
  const kept = new Set<number>();
  const t = getClusterTests();
  const segs = [...graphemeSegments(s)];
  segs.forEach(({ segment: g, index }, i) => {
    let ok = t.emoji.test(g);
    if (!ok && t.joinedLetters.test(g)) {
      // A joiner ending the cluster joins it to the next one, which must be a letter too.
      const last = g.codePointAt(g.length - 1) ?? 0;
      ok = !JOINERS.has(last) || NON_ASCII_LETTER.test(segs[i + 1]?.segment ?? '');
    }
    if (!ok) return;
    for (let k = 0; k < g.length; k++) {
      const cp = g.codePointAt(k) ?? 0;
      if (JOINERS.has(cp)) kept.add(index + k);
      if (cp > 0xffff) k++;
    }
  });
  return kept;
}

/**
 * Running text (an answer, a reasoning, the user's prompt) made safe: as `escapeUnsafe`, except
 * that the table's joiners stay raw where a grapheme cluster draws them (`keptIn`): ✔️ and 👩‍💻
 * show as emoji, not as `✔\ufe0f`, and Persian or Hindi words keep their ZWNJ and ZWJ. Every
 * other character of the table (ESC, bidi controls, a ZWJ between ASCII letters, a stray
 * variation selector, tags outside a listed flag) is escaped as everywhere else.
 */
export function escapeUnsafeText(s: string): string {
  let kept: Set<number> | undefined;
  return ESCAPER.escape(s, (cp, at) => JOINERS.has(cp) && (kept ??= drawnJoiners(s)).has(at));
}

/** Does `s` hold a character of the table? (A backslash is not one: it hides nothing.) */
export function hasUnsafe(s: string): boolean {
  return UNSAFE_TEST.test(s);
}

// isFoldableSpace as a lookup (1 for a foldable unit): the same test, with one compare and one
// load per unit and no branch that a text of one script never takes (V8 drops the compiled scan
// the first time a string takes one, and the code it compiles again ran slower in bench/escape.ts).
const LAST_FOLDABLE = 0x3000;
const FOLDABLE = new Uint8Array(LAST_FOLDABLE + 1);
// The units isFoldableSpace names, set one by one rather than by asking it about all 12,289 units
// as every command loads (test/model/unsafe-chars.test.ts holds foldSpaces to it over every unit).
for (const c of [0x09, 0x0a, 0x20, 0xa0, 0x1680, 0x202f, 0x205f, 0x3000]) FOLDABLE[c] = 1;
FOLDABLE.fill(1, 0x2000, 0x200b);
const isFoldableUnit = (c: number): boolean => c <= LAST_FOLDABLE && FOLDABLE[c] === 1;

/**
 * Runs of whitespace as one space, and trimmed when `trim`: only the whitespace a reader sees as
 * such. The table's whitespace (CR, U+2028, U+FEFF, …) is kept for the escape, so a one-line
 * rendering shows `a\ufeffb` as the page does, not `a b`.
 */
export function foldSpaces(s: string, trim = false): string {
  const n = s.length;
  // Slices of `s` between the runs that change; most strings (ids, names, prose with single
  // spaces) have none and are returned as they are, without a copy.
  let out = '';
  let kept = 0;
  let i = 0;
  for (;;) {
    let c = 0;
    while (i < n && ((c = s.charCodeAt(i)) > LAST_FOLDABLE || FOLDABLE[c] === 0)) i++;
    if (i >= n) break;
    let j = i + 1;
    while (j < n && isFoldableUnit(s.charCodeAt(j))) j++;
    const drop = trim && (i === 0 || j === n);
    if (drop || j - i > 1 || c !== 0x20) {
      out += drop ? s.slice(kept, i) : `${s.slice(kept, i)} `;
      kept = j;
    }
    i = j;
  }
  return kept === 0 ? s : out + s.slice(kept);
}

/**
 * The table as an ES module for the viewer's page, which runs in the browser and cannot import
 * TypeScript: the viewer serves this text as `unsafe-chars.js` beside the page's own files.
 */
export function unsafeCharsModule(): string {
  return [
    '// Served by the viewer from src/model/unsafe-chars.ts: the characters shown as escapes and',
    '// their escape, the same table and function the terminal uses. Not a file on disk.',
    `export const UNSAFE_CHAR_CLASS = ${JSON.stringify(UNSAFE_CHAR_CLASS)};`,
    `export const UNSAFE_PATTERN = ${JSON.stringify(UNSAFE_PATTERN)};`,
    `export const UNSAFE_RANGES = ${JSON.stringify(UNSAFE_CHARS.map(({ from, to }) => ({ from, to })))};`,
    `export ${escapeUnsafeChar.toString()}`,
    `export ${unsafeEscaper.toString()}`,
    '',
  ].join('\n');
}
