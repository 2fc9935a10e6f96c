/**
 * Terminal escaping with every character of the shared table (issue 12 item 5). The expected
 * escape of each character is written from its code point here (`\e`, `\r`, `\xNN`, `\uNNNN`,
 * `\u{N}`). Then the terminal against the page: the real src/viewer/page/dom.js, beside the
 * unsafe-chars.js module the viewer serves, in a temp dir, on generated strings.
 */
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { block, flatten, oneLine, preview, safeJson, truncate } from '../../src/cli/text.js';
import { foldSpaces, unsafeCharsModule } from '../../src/model/unsafe-chars.js';
import { repoRoot } from '../support/shared.js';
import { EXPECTED_UNSAFE, visibleForm } from '../support/unsafe-chars.js';

describe('terminal escaping', () => {
  it('block() shows each unsafe character as its escape, and keeps tab and newline', () => {
    for (const cp of EXPECTED_UNSAFE) {
      const c = String.fromCodePoint(cp);
      expect(block(`a${c}b`), cp.toString(16)).toBe(`a${visibleForm(cp)}b`);
    }
    expect(block('a\tb\nc')).toBe('a\tb\nc');
  });

  it('oneLine() shows each as its escape, also those JavaScript counts as whitespace (CR, U+2028, U+FEFF)', () => {
    for (const cp of EXPECTED_UNSAFE) {
      const c = String.fromCodePoint(cp);
      expect(oneLine(`a${c}b`), cp.toString(16)).toBe(`a${visibleForm(cp)}b`);
      expect(preview(` a${c}b${c} `, undefined), cp.toString(16)).toBe(`"a${visibleForm(cp)}b${visibleForm(cp)}"`);
    }
    // The other whitespace is a space: runs of it, newlines and tabs too, become one.
    expect(oneLine('a \t\n\u00a0\u2003\u3000b')).toBe('a b');
  });

  it('safeJson() leaves none raw, and parses back to the same text', () => {
    for (const cp of EXPECTED_UNSAFE) {
      const s = `a${String.fromCodePoint(cp)}b`;
      const out = safeJson({ s });
      expect(out.includes(String.fromCodePoint(cp)), cp.toString(16)).toBe(false);
      expect(JSON.parse(out)).toEqual({ s });
    }
    expect(safeJson({ s: 'x\u200by' })).toBe('{"s":"x\\u200by"}');
    expect(safeJson({ s: 'x\u{e0041}y' })).toBe('{"s":"x\\udb40\\udc41y"}');
  });

  it('leaves other text alone, including characters near the ranges', () => {
    const near = '\u061b\u061d\u200a\u2010\u2027\u202f\u205f\u2070\ufefe\uff00\u0600\u{e1000} é 漢字 🙂';
    expect(block(near)).toBe(near);
    expect(oneLine('plain text')).toBe('plain text');
  });
});

describe('the terminal and the page', () => {
  let dir = '';
  let visible: (s: string) => string = () => '';
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dsh-escape-'));
    copyFileSync(join(repoRoot, 'src', 'viewer', 'page', 'dom.js'), join(dir, 'dom.js'));
    writeFileSync(join(dir, 'unsafe-chars.js'), unsafeCharsModule());
    ({ visible } = (await import(pathToFileURL(join(dir, 'dom.js')).href)) as { visible: (s: string) => string });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // Strings dense in the table's characters, whitespace of every kind and the characters next to both.
  const interesting = [...EXPECTED_UNSAFE.filter((_, i) => i % 7 === 0), 0x09, 0x0a, 0x20, 0xa0, 0x2003, 0x3000, 0x5c, 0x41, 0x1f600];
  const char = fc.oneof(
    fc.constantFrom(...interesting).map((cp) => String.fromCodePoint(cp)),
    fc
      .integer({ min: 0, max: 0x10ffff })
      .filter((cp) => cp < 0xd800 || cp > 0xdfff)
      .map((cp) => String.fromCodePoint(cp)),
    fc.constantFrom(' ', 'a', '\n', '\r', '\ufeff', '\u2028', '\u{e0041}'),
  );
  const text = fc.array(char, { maxLength: 40 }).map((cs) => cs.join(''));

  it('show every code point alike: block() is the page text, oneLine() the page text with its whitespace folded', () => {
    fc.assert(
      fc.property(text, (s) => {
        expect(block(s)).toBe(visible(s));
        expect(oneLine(s)).toBe(visible(s).replace(/\s+/g, ' '));
      }),
      { numRuns: 2000 },
    );
    // Each of the table's characters on its own, and the ones review 2 found apart.
    for (const cp of EXPECTED_UNSAFE) expect(oneLine(String.fromCodePoint(cp)), cp.toString(16)).toBe(visible(String.fromCodePoint(cp)));
    for (const c of ['\ufeff', '\u2028', '\u2029', '\u000b', '\u000c', '\r']) expect(oneLine(`bash${c}`)).toBe(visible(`bash${c}`));
  });
});

describe('flatten (previews collapse only what the cut needs)', () => {
  /** The definition: fold the whole text's whitespace runs (foldSpaces, trimmed), then cut. */
  const whole = (s: string, max: number | undefined): string => {
    const flat = foldSpaces(s, true);
    return max === undefined ? flat : truncate(flat, max);
  };
  // Whitespace-heavy text (long leading runs, runs across the prefix boundaries), surrogate pairs.
  const piece = fc.oneof(
    fc.constantFrom(' ', '\n', '\t\t', '\u3000', '\u00a0 ', '\r', '\ufeff ', ' '.repeat(300), '\n'.repeat(97)),
    fc.string({ maxLength: 40 }),
    fc.constantFrom('😀', '\ud83d', 'ab😀'),
  );
  const text = fc.array(piece, { maxLength: 80 }).map((p) => p.join(''));

  it('equals collapsing the whole text then cutting, for any text and width', () => {
    fc.assert(
      fc.property(text, fc.option(fc.integer({ min: 1, max: 120 }), { nil: undefined }), (s, max) => {
        expect(flatten(s, max)).toBe(whole(s, max));
      }),
      { numRuns: 2000 },
    );
  });

  it('holds at the prefix boundaries: a space run or a pair cut where the first prefix ends', () => {
    for (const max of [1, 2, 10, 60]) {
      const n = 4 * max + 64;
      for (let at = n - 3; at <= n + 3; at++) {
        for (const fill of [' ', 'x', '😀']) {
          const s = `${'a'.repeat(Math.max(0, at - max))}${fill.repeat(max + 4)}${'b'.repeat(n)}`;
          expect(flatten(s, max), `${max} ${at} ${fill}`).toBe(whole(s, max));
          const spaced = `${' '.repeat(at)}${'c'.repeat(max + 1)}  `;
          expect(flatten(spaced, max), `${max} ${at} spaced`).toBe(whole(spaced, max));
        }
      }
    }
  });
});

describe("oneLine's plain-text shortcut and the listing's time (issue 13 item 3)", () => {
  it('oneLine equals the escape of the folded text on ASCII-heavy strings (the shortcut returns them as they are)', async () => {
    const { escapeUnsafe } = await import('../../src/model/unsafe-chars.js');
    const char = fc.constantFrom(' ', '  ', 'a', 'Z', '~', '!', '\\', '\t', '\n', '\x7f', '\x1b', '\u00a0', '\u202e', '/', '-');
    fc.assert(
      fc.property(fc.array(char, { maxLength: 24 }), (cs) => {
        const s = cs.join('');
        expect(oneLine(s)).toBe(escapeUnsafe(foldSpaces(s)));
      }),
      { numRuns: 3000 },
    );
  });

  it('humanTime is the ISO time to the minute, as the regular expressions made it', async () => {
    const { humanTime } = await import('../../src/cli/sessions.js');
    const old = (ms: number): string =>
      (Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : `${ms} ms`).replace('T', ' ').replace(/:\d\d\.\d+Z$/, 'Z');
    fc.assert(
      fc.property(fc.integer({ min: -8.64e15, max: 8.64e15 }), (ms) => {
        expect(humanTime(ms)).toBe(old(ms));
      }),
    );
    for (const ms of [-30610224000001, -30610224000000, -60000.5, -0.5, 0, 59999.9, 253402300799999, 253402300800000, 8.64e15 + 1])
      expect(humanTime(ms)).toBe(old(ms));
    // Runs of times on one day and the days around it (a sorted listing reuses the day's text),
    // fractions of a millisecond and times before 1970 among them.
    fc.assert(
      fc.property(
        fc.integer({ min: -30610224000000, max: 253402300799999 - 3 * 86_400_000 }),
        fc.array(fc.double({ min: 0, max: 3 * 86_400_000, noNaN: true }), { maxLength: 40 }),
        (start, offsets) => {
          for (const o of offsets) expect(humanTime(start + o)).toBe(old(start + o));
        },
      ),
    );
  });
});
