/**
 * The one escape table (issue 12 item 5): the union of the two it replaced and every invisible
 * code point (test/support/unsafe-chars.ts), code point for code point, with a reason for each
 * range; and the served module that gives the page both the table and its escape function.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  escapeCommand,
  escapeUnsafe,
  escapeUnsafeChar,
  escapeUnsafeText,
  foldSpaces,
  isFoldableSpace,
  isPlainUnit,
  UNSAFE_PATTERN,
  UNSAFE_CHAR_CLASS,
  UNSAFE_CHARS,
  unsafeCharsModule,
  unsafeEscaper,
} from '../../src/model/unsafe-chars.js';
import { EXPECTED_UNSAFE, visibleForm } from '../support/unsafe-chars.js';

describe('the unsafe-character table', () => {
  it('is the union of the terminal and page tables and the invisible code points, nothing more', () => {
    const inTable = new Set<number>();
    for (const r of UNSAFE_CHARS) for (let cp = r.from; cp <= r.to; cp++) inTable.add(cp);
    expect([...inTable].sort((a, b) => a - b)).toEqual(EXPECTED_UNSAFE);
    // The characters the issue names as escaped on one side only are all in it.
    for (const cp of [0x061c, 0x200b, 0x200c, 0x200d, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xfeff])
      expect(inTable.has(cp), cp.toString(16)).toBe(true);
    // And the invisible ones review 2 found shown raw: TAG block, soft hyphen, Hangul fillers,
    // variation selectors, interlinear annotation, musical format controls.
    for (const cp of [0xe0000, 0xe0041, 0xe007f, 0xad, 0x115f, 0x1160, 0x3164, 0xffa0, 0xfe0f, 0xe0100, 0xfff9, 0x1d173, 0x180e, 0x2065])
      expect(inTable.has(cp), cp.toString(16)).toBe(true);
    // Tab and line feed are each surface's own business.
    expect(inTable.has(0x09) || inTable.has(0x0a)).toBe(false);
  });

  it('escapes every blank-looking character, in commands and in running text, on both surfaces (second review, N10)', async () => {
    // Each drawn as a space or as nothing by a terminal or a browser.
    const blank: [number, string][] = [
      [0x2800, '\\u2800'],
      [0x3164, '\\u3164'],
      [0x115f, '\\u115f'],
      [0x1160, '\\u1160'],
      [0xffa0, '\\uffa0'],
      [0x180e, '\\u180e'],
      [0xad, '\\xad'],
      [0x1d159, '\\u{1d159}'],
      [0x16fe4, '\\u{16fe4}'],
    ];
    const page = await import(`data:text/javascript,${encodeURIComponent(unsafeCharsModule())}`);
    const pageRe = new RegExp(page.UNSAFE_PATTERN as string, 'gu');
    for (const [cp, shown] of blank) {
      const cmd = `rm a${String.fromCodePoint(cp)}b`;
      expect(escapeUnsafe(cmd), cp.toString(16)).toBe(`rm a${shown}b`);
      expect(escapeUnsafeText(cmd), cp.toString(16)).toBe(`rm a${shown}b`);
      expect(cmd.replace(pageRe, page.escapeUnsafeChar as (c: string) => string), cp.toString(16)).toBe(`rm a${shown}b`);
    }
  });

  it('gives a reason for every range, and ranges do not overlap or run backwards', () => {
    let last = -1;
    for (const r of UNSAFE_CHARS) {
      expect(r.why.length).toBeGreaterThan(10);
      expect(r.from).toBeGreaterThan(last);
      expect(r.to).toBeGreaterThanOrEqual(r.from);
      last = r.to;
    }
  });

  it('makes a character class that matches exactly the table, over all of Unicode', () => {
    const re = new RegExp(`[${UNSAFE_CHAR_CLASS}]`, 'u');
    const expected = new Set(EXPECTED_UNSAFE);
    const wrong: string[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (re.test(String.fromCodePoint(cp)) !== expected.has(cp)) wrong.push(cp.toString(16));
    }
    expect(wrong).toEqual([]);
  });

  it('escapes ESC and CR by name, Latin-1 as \\xNN, the BMP as \\uNNNN and the rest as \\u{N}', () => {
    expect(escapeUnsafeChar('\u001b')).toBe('\\e');
    expect(escapeUnsafeChar('\r')).toBe('\\r');
    expect(escapeUnsafeChar('\u0000')).toBe('\\x00');
    expect(escapeUnsafeChar('\u009b')).toBe('\\x9b');
    expect(escapeUnsafeChar('\u200b')).toBe('\\u200b');
    expect(escapeUnsafeChar('\ufeff')).toBe('\\ufeff');
    expect(escapeUnsafeChar('\u{e0041}')).toBe('\\u{e0041}');
  });

  it('shows a lone surrogate as its escape, and a pair as the character it makes (review 3)', () => {
    expect(escapeUnsafe('a\ud800b\udc00c\ufffd')).toBe('a\\ud800b\\udc00c\ufffd');
    expect(escapeUnsafe('\udc00\ud800')).toBe('\\udc00\\ud800');
    expect(escapeUnsafe('\ud83d\ude00')).toBe('😀');
  });

  it('never shows text that reads as an escape the way the escaped character shows (review 3)', () => {
    // The six characters \u202e, typed in a log, and a real U+202E: two texts, two sights.
    expect(escapeUnsafe('\\u202e')).toBe('\\\\u202e');
    expect(escapeUnsafe('\u202e')).toBe('\\u202e');
    expect(escapeUnsafe('\\e[31m \\r \\x1b \\u{e0041} \\\\')).toBe('\\\\e[31m \\\\r \\\\x1b \\\\u{e0041} \\\\\\');
    // A backslash at the very end starts nothing: `\\` + `\` reads back as two backslashes.
    // Backslashes that start no escape are left alone: paths and most code read as written.
    expect(escapeUnsafe('C:\\Program Files\\dsh \\n \\d+ \\')).toBe('C:\\Program Files\\dsh \\n \\d+ \\');
    // The property: what is shown reads back to one text only. The reader follows the forms the
    // table's escape writes (\\, \e, \r, \xNN, \uNNNN, \u{N}); any other backslash is itself.
    const read = (shown: string): string =>
      shown.replace(/\\(?:(\\)|(e)|(r)|x([0-9a-f]{2})|u\{([0-9a-f]+)\}|u([0-9a-f]{4}))/g, (_m, bs, e, r, x, astral, bmp) => {
        if (bs) return '\\';
        if (e) return '\u001b';
        if (r) return '\r';
        if (astral !== undefined) return String.fromCodePoint(Number.parseInt(astral, 16));
        return String.fromCharCode(Number.parseInt(x ?? bmp, 16));
      });
    const piece = fc.constantFrom(
      '\\',
      'u',
      'e',
      'r',
      'x',
      '{',
      '}',
      '2',
      '0',
      'e',
      'f',
      'a',
      ' ',
      '\u202e',
      '\u001b',
      '\r',
      '\ud800',
      '\u{e0041}',
      '\ufeff',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 24 }), (parts) => {
        const s = parts.join('');
        expect(read(escapeUnsafe(s))).toBe(s);
      }),
      { numRuns: 3000 },
    );
  });

  // escapeUnsafe skips the expression for strings of "plain" units only (issue 13): its result
  // must be the expression's replace on every input.
  const definition = (s: string): string => s.replace(new RegExp(UNSAFE_PATTERN, 'gu'), escapeUnsafeChar);

  it('calls plain only UTF-16 units that the pattern can never match, nor make a neighbour match', () => {
    const table = new Set(EXPECTED_UNSAFE);
    const wrong: string[] = [];
    for (let u = 0; u <= 0xffff; u++) {
      if (!isPlainUnit(u)) continue;
      // A plain unit is not in the table, not a backslash (which can start an escape), and not
      // a surrogate (half of a pair that may be a TAG character).
      if (table.has(u) || u === 0x5c || (u >= 0xd800 && u <= 0xdfff)) wrong.push(u.toString(16));
    }
    expect(wrong).toEqual([]);
    // The common text is plain: ASCII prose, tab and newline, accented Latin, CJK, Hangul.
    for (const c of 'Az09 ~{}\t\né\u00ff\u0100\u4e2d\u6587\uac00') expect(isPlainUnit(c.charCodeAt(0)), c).toBe(true);
  });

  it('equals the expression on any text, plain or not (the fast path changes nothing)', () => {
    // Every unit alone, after a letter and beside a backslash, over the whole BMP.
    const wrong: string[] = [];
    for (let u = 0; u <= 0xffff; u++) {
      const c = String.fromCharCode(u);
      for (const s of [c, `a${c}`, `\\${c}`, `${c}\\`, `x\\${c}y`]) if (escapeUnsafe(s) !== definition(s)) wrong.push(u.toString(16));
      // Running text takes the same fast path: a plain unit is never escaped there either.
      if (isPlainUnit(u) && escapeUnsafeText(`a${c}b`) !== `a${c}b`) wrong.push(`text ${u.toString(16)}`);
    }
    expect(wrong).toEqual([]);
    const piece = fc.oneof(
      fc.constantFrom(
        '\\',
        'e',
        'r',
        'x',
        'u',
        ' ',
        'a',
        'é',
        '\u4e2d',
        '\u202e',
        '\u001b',
        '\r',
        '\t',
        '\n',
        '\u00ad',
        '\u3164',
        '\u3165',
      ),
      fc.constantFrom('\ud800', '\udc00', '\ud83d\ude00', '\u{e0041}', '\u{e0100}', '\ufeff', '\u034f', '\u034e'),
      fc.string({ unit: 'binary', maxLength: 4 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (parts) => {
        const s = parts.join('');
        expect(escapeUnsafe(s)).toBe(definition(s));
      }),
      { numRuns: 3000 },
    );
  });

  it('is served to the page as a module holding the same class, ranges, escape function and scan', async () => {
    const mod = (await import(`data:text/javascript;base64,${Buffer.from(unsafeCharsModule()).toString('base64')}`)) as {
      UNSAFE_CHAR_CLASS: string;
      UNSAFE_RANGES: { from: number; to: number }[];
      escapeUnsafeChar: (c: string) => string;
      unsafeEscaper: typeof unsafeEscaper;
    };
    expect(mod.UNSAFE_CHAR_CLASS).toBe(UNSAFE_CHAR_CLASS);
    expect(mod.UNSAFE_RANGES).toEqual(UNSAFE_CHARS.map((r) => ({ from: r.from, to: r.to })));
    for (const cp of EXPECTED_UNSAFE) expect(mod.escapeUnsafeChar(String.fromCodePoint(cp)), cp.toString(16)).toBe(visibleForm(cp));
    // The page's visible() as dom.js builds it: the served scan over the served ranges.
    const page = mod.unsafeEscaper(mod.UNSAFE_RANGES, mod.escapeUnsafeChar);
    const every = EXPECTED_UNSAFE.map((cp) => String.fromCodePoint(cp)).join('a\\');
    expect(page.escape(every)).toBe(escapeUnsafe(every));
    expect(page.escape(every)).toBe(definition(every));
  });

  it('by design: running text in the terminal keeps the joiners an emoji is drawn with; the page escapes them', async () => {
    const mod = (await import(`data:text/javascript;base64,${Buffer.from(unsafeCharsModule()).toString('base64')}`)) as {
      UNSAFE_RANGES: { from: number; to: number }[];
      escapeUnsafeChar: (c: string) => string;
      unsafeEscaper: typeof unsafeEscaper;
    };
    const page = mod.unsafeEscaper(mod.UNSAFE_RANGES, mod.escapeUnsafeChar);
    const coder = '\u{1F469}\u200D\u{1F4BB}'; // woman technologist: a ZWJ sequence
    const check = '\u2714\uFE0F'; // heavy check mark, emoji presentation
    expect(escapeUnsafeText(coder)).toBe(coder);
    expect(escapeUnsafeText(check)).toBe(check);
    expect(page.escape(coder)).toBe('\u{1F469}\\u200d\u{1F4BB}');
    expect(page.escape(check)).toBe('\u2714\\ufe0f');
    // A joiner outside an emoji is escaped on both sides.
    expect(escapeUnsafeText('a\u200Db')).toBe('a\\u200db');
    expect(page.escape('a\u200Db')).toBe('a\\u200db');
  });
});

describe('the escape scan (unsafeEscaper) against the table itself', () => {
  // A reference read straight off the table, one code point at a time as the `u` flag reads a
  // string (a pair is one code point, a lone surrogate is itself): a code point of a range is
  // shown as its escape, a backslash before `\ e r x u` or before such a code point as `\\`.
  const inTable = (cp: number): boolean => UNSAFE_CHARS.some((r) => r.from <= cp && cp <= r.to);
  const reference = (s: string): string => {
    const cps = Array.from(s, (c) => c.codePointAt(0) ?? 0);
    return cps
      .map((cp, k) => {
        const next = cps[k + 1];
        if (inTable(cp)) return visibleForm(cp);
        if (cp === 0x5c && next !== undefined && ([0x5c, 0x65, 0x72, 0x78, 0x75].includes(next) || inTable(next))) return '\\\\';
        return String.fromCodePoint(cp);
      })
      .join('');
  };
  // Any code point (a surrogate one as a lone half), biased to the edges of every range, the
  // backslash and the letters after it; pieces next to each other can make pairs.
  const edges = UNSAFE_CHARS.flatMap((r) => [r.from - 1, r.from, r.to, r.to + 1]).filter((cp) => cp >= 0 && cp <= 0x10ffff);
  const unit = fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: 0, max: 0x10ffff }) },
    { weight: 3, arbitrary: fc.constantFrom(...edges) },
    { weight: 2, arbitrary: fc.constantFrom(0x5c, 0x65, 0x72, 0x78, 0x75, 0x61, 0x20, 0x0a, 0x09) },
    { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }) },
  );
  const text = fc.oneof(
    fc.array(unit, { maxLength: 40 }).map((cps) => cps.map((cp) => String.fromCodePoint(cp)).join('')),
    fc.string({ unit: 'binary', maxLength: 40 }),
  );

  it('equals the reference on any text: astral characters, lone surrogates, backslashes', () => {
    fc.assert(
      fc.property(text, (s) => {
        expect(escapeUnsafe(s)).toBe(reference(s));
      }),
      { numRuns: 5000 },
    );
    // The reference is not a copy of the scan: it fails where the scan would be wrong.
    expect(reference('\\u202e\u202e\u{e0041}\ud800\ud83d\ude00')).toBe('\\\\u202e\\u202e\\u{e0041}\\ud800\ud83d\ude00');
  });

  it('is built from the ranges it is given: another table escapes other characters', () => {
    // So the scan holds no character of its own: an entry added to the table (data) is escaped.
    const other = unsafeEscaper(
      [
        { from: 0x41, to: 0x41 },
        { from: 0x2800, to: 0x2800 },
        { from: 0x1f600, to: 0x1f600 },
      ],
      escapeUnsafeChar,
    );
    expect(other.escape('ABC\u2800\u{1f600}\u{1f601}\u001b\\A')).toBe('\\x41BC\\u2800\\u{1f600}\u{1f601}\u001b\\\\\\x41');
    expect(other.isPlainUnit(0x41)).toBe(false);
    expect(other.isPlainUnit(0x1b)).toBe(true);
  });

  it("leaves a character of the table raw only where `keep` says so, and offsets are the string's", () => {
    const seen: [number, number][] = [];
    const scan = unsafeEscaper(UNSAFE_CHARS, escapeUnsafeChar);
    const kept = (s: string): string =>
      scan.escape(s, (cp, at) => {
        seen.push([cp, at]);
        return cp === 0x200d;
      });
    expect(kept('a\u200d\u{e0041}\\\u200d')).toBe('a\u200d\\u{e0041}\\\\\u200d');
    expect(seen).toEqual([
      [0x200d, 1],
      [0xe0041, 2],
      [0x200d, 5],
    ]);
  });
});

describe('commands (escapeCommand): the table, and every space but U+0020 as an escape', () => {
  it('escapes exactly the table and the whitespace other than tab, line feed and space, over all of Unicode', () => {
    // The definition, from JavaScript's \s and the table, not from the list in the source.
    // biome-ignore lint/complexity/useRegexLiterals: the `v` flag as a literal needs an ES2024 target
    const lookalike = new RegExp('^[\\s--[\\t\\n ]]$', 'v');
    const table = new RegExp(`^[${UNSAFE_CHAR_CLASS}]$`, 'u');
    const wrong: string[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCodePoint(cp);
      const want = table.test(c) || lookalike.test(c) ? escapeUnsafeChar(c) : c;
      if (escapeCommand(c) !== want) wrong.push(cp.toString(16));
    }
    expect(wrong).toEqual([]);
  });

  it('rm\u00a0-rf does not read as rm -rf, and a typed escape does not read as the character', () => {
    expect(escapeCommand('rm\u00a0-rf /')).toBe('rm\\xa0-rf /');
    expect(escapeCommand('a\u3000b\u2009c\u202fd')).toBe('a\\u3000b\\u2009c\\u202fd');
    // The four characters `\xa0` typed: the backslash is shown doubled, unlike the escape above.
    expect(escapeCommand('rm\\xa0-rf')).toBe('rm\\\\xa0-rf');
    // A backslash before an NBSP: `\\` then the escape, so it reads back as the two characters.
    expect(escapeCommand('a\\\u00a0b')).toBe('a\\\\\\xa0b');
    // Tab, newline and space as they are; the rest as escapeUnsafe.
    expect(escapeCommand('a\tb\nc d\x1b')).toBe('a\tb\nc d\\e');
  });
});

describe('foldSpaces', () => {
  // The definition: JavaScript's whitespace less the table, runs replaced by one space, then
  // (trim) one space taken off each end.
  const FOLDABLE = new RegExp(`[\\s--[${UNSAFE_CHAR_CLASS}]]+`, 'gv');
  const reference = (s: string, trim: boolean): string => {
    const folded = s.replace(FOLDABLE, ' ');
    return trim ? folded.replace(/^ | $/g, '') : folded;
  };

  it('folds exactly the whitespace outside the table, over all of Unicode', () => {
    const one = new RegExp(`^[\\s--[${UNSAFE_CHAR_CLASS}]]$`, 'v');
    const wrong: string[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      // A code point beyond the BMP is two units, neither of them whitespace.
      const byUnit = cp <= 0xffff && isFoldableSpace(cp);
      if (one.test(String.fromCodePoint(cp)) !== byUnit) wrong.push(cp.toString(16));
    }
    expect(wrong).toEqual([]);
    // And no surrogate unit folds (a lone one is not whitespace either).
    for (let u = 0xd800; u <= 0xdfff; u++) expect(isFoldableSpace(u)).toBe(false);
  });

  it('equals the regular-expression definition on any text, trimmed or not', () => {
    // Every foldable character, the table's whitespace (kept for the escape), text and astral.
    const piece = fc.constantFrom(
      ' ',
      '  ',
      '\t',
      '\n',
      '\u00a0',
      '\u1680',
      '\u2000',
      '\u200a',
      '\u202f',
      '\u205f',
      '\u3000',
      '\r',
      '\v',
      '\f',
      '\u2028',
      '\ufeff',
      '\u200b',
      'a',
      'bc',
      'é',
      '😀',
      '\ud83d',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), fc.boolean(), (xs, trim) => {
        const s = xs.join('');
        expect(foldSpaces(s, trim)).toBe(reference(s, trim));
      }),
      { numRuns: 3000 },
    );
    for (const s of ['', ' ', '   ', ' a ', '\n\ta\n', 'a  b', 'a\u00a0b', '\ufeff ', ' \r '])
      for (const trim of [false, true]) expect(foldSpaces(s, trim), JSON.stringify([s, trim])).toBe(reference(s, trim));
  });

  it('folds each unit that isFoldableSpace names and no other (its lookup table is written out apart)', () => {
    const wrong: string[] = [];
    for (let u = 0; u <= 0xffff; u++) {
      const c = String.fromCharCode(u);
      if (foldSpaces(`a${c}${c}b`) !== (isFoldableSpace(u) ? 'a b' : `a${c}${c}b`)) wrong.push(u.toString(16));
    }
    expect(wrong).toEqual([]);
  });

  it('returns a string with nothing to fold as it is', () => {
    const s = 'one two three';
    expect(foldSpaces(s)).toBe(s);
    expect(foldSpaces(s, true)).toBe(s);
  });
});

describe('running text (escapeUnsafeText): the joiners an emoji or a word draws stay, nothing else', () => {
  // Expected forms written by hand, code point by code point.
  const VS16 = '\ufe0f';
  const ZWJ = '\u200d';
  const ZWNJ = '\u200c';
  it('keeps emoji with VS16, keycaps, ZWJ sequences, skin tones, tag flags and text presentation', () => {
    const emoji = [
      `\u2714${VS16}`, // ✔️
      `\u26a0${VS16}`, // ⚠️
      `\u2764${VS16}`, // ❤️
      `1${VS16}\u20e3`, // 1️⃣
      `\u{1f469}${ZWJ}\u{1f4bb}`, // 👩‍💻
      `\u{1f468}${ZWJ}\u{1f469}${ZWJ}\u{1f467}`, // 👨‍👩‍👧
      '\u{1f44d}\u{1f3fd}', // 👍🏽
      '\u{1f3f4}\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}', // Scotland
      '\u2714\ufe0e', // ✔︎ text presentation
    ];
    const line = `Done ${emoji.join(' ')} ok`;
    expect(escapeUnsafeText(line)).toBe(line);
    // The strict form (names, commands, paths) still shows every one of them.
    expect(escapeUnsafe(`\u2714${VS16}`)).toBe('\u2714\\ufe0f');
  });

  it('keeps ZWNJ and ZWJ between letters of a non-Latin script (Persian, Hindi, Malayalam)', () => {
    for (const word of [
      `\u0645\u06cc${ZWNJ}\u062e\u0648\u0627\u0647\u0645`, // می‌خواهم
      `\u0915\u094d${ZWJ}\u0937`, // क्‍ष
      `\u0d28\u0d4d${ZWJ}\u0d28`, // ന്‍ന
    ])
      expect(escapeUnsafeText(`say ${word}.`)).toBe(`say ${word}.`);
  });

  it('escapes the same characters anywhere they draw nothing', () => {
    expect(escapeUnsafeText(`a${ZWJ}b`)).toBe('a\\u200db'); // between ASCII letters
    expect(escapeUnsafeText(`a${ZWNJ}b`)).toBe('a\\u200cb');
    expect(escapeUnsafeText(`x${VS16}`)).toBe('x\\ufe0f'); // no emoji before it
    expect(escapeUnsafeText(`\u2714${VS16}${VS16}`)).toBe('\u2714\\ufe0f\\ufe0f'); // not a listed emoji: both shown
    expect(escapeUnsafeText(`\u{1f469}${ZWJ}`)).toBe('\u{1f469}\\u200d'); // joins nothing
    expect(escapeUnsafeText(`\u0645${ZWNJ}a`)).toBe('\u0645\\u200ca'); // joins a letter to ASCII
    expect(escapeUnsafeText('\u{e0041}\u{e0042}')).toBe('\\u{e0041}\\u{e0042}'); // tags outside a listed flag
    expect(escapeUnsafeText('\u{1f3f4}\u{e0041}\u{e007f}')).toBe('\u{1f3f4}\\u{e0041}\\u{e007f}'); // not a listed flag
    expect(escapeUnsafeText('\u001b[2J \u202e \\u202e')).toBe('\\e[2J \\u202e \\\\u202e');
  });

  it('escapes everything escapeUnsafe does except kept joiners (property)', () => {
    const piece = fc.constantFrom(
      'a',
      '\u2714',
      '\u{1f469}',
      '\u0645',
      '\u094d',
      ' ',
      '\\',
      'u',
      '\u001b',
      '\u202e',
      ZWJ,
      ZWNJ,
      VS16,
      '\ufe0e',
      '\u{e0041}',
      '\u{e007f}',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (xs) => {
        const s = xs.join('');
        const strict = escapeUnsafe(s);
        const text = escapeUnsafeText(s);
        // Without the joiners, raw or escaped, both sides are the same text: nothing else differs.
        const drop = (t: string): string =>
          t
            .replace(/\u200c|\u200d|\ufe0e|\ufe0f|[\u{e0020}-\u{e007f}]/gu, '')
            .replace(/\\u200[cd]|\\ufe0[ef]|\\u\{e00[2-7][0-9a-f]\}/g, '');
        expect(drop(text)).toBe(drop(strict));
        expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u202e]/);
      }),
      { numRuns: 2000 },
    );
  });
});
