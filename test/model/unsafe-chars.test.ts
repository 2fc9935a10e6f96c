/**
 * The one escape table (issue 12 item 5): the union of the two it replaced (test/support/
 * unsafe-chars.ts), code point for code point, with a reason for each range.
 */
import { describe, expect, it } from 'vitest';
import { escapeUnsafeChar, UNSAFE_CHAR_CLASS, UNSAFE_CHARS, unsafeCharsModule } from '../../src/model/unsafe-chars.js';
import { EXPECTED_UNSAFE } from '../support/unsafe-chars.js';

describe('the unsafe-character table', () => {
  it('is the union of the terminal and page tables, nothing more', () => {
    const inTable = new Set<number>();
    for (const r of UNSAFE_CHARS) for (let cp = r.from; cp <= r.to; cp++) inTable.add(cp);
    expect([...inTable].sort((a, b) => a - b)).toEqual(EXPECTED_UNSAFE);
    // The characters the issue names as escaped on one side only are all in it.
    for (const cp of [0x061c, 0x200b, 0x200c, 0x200d, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xfeff])
      expect(inTable.has(cp), cp.toString(16)).toBe(true);
    // Tab and line feed are each surface's own business.
    expect(inTable.has(0x09) || inTable.has(0x0a)).toBe(false);
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
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      if (re.test(String.fromCodePoint(cp)) !== expected.has(cp)) wrong.push(cp.toString(16));
    }
    expect(wrong).toEqual([]);
  });

  it('escapes ESC and CR by name, Latin-1 as \\xNN and the rest as \\uNNNN', () => {
    expect(escapeUnsafeChar('\u001b')).toBe('\\e');
    expect(escapeUnsafeChar('\r')).toBe('\\r');
    expect(escapeUnsafeChar('\u0000')).toBe('\\x00');
    expect(escapeUnsafeChar('\u009b')).toBe('\\x9b');
    expect(escapeUnsafeChar('\u200b')).toBe('\\u200b');
    expect(escapeUnsafeChar('\ufeff')).toBe('\\ufeff');
  });

  it('is served to the page as a module holding the same class', async () => {
    const mod = (await import(`data:text/javascript;base64,${Buffer.from(unsafeCharsModule()).toString('base64')}`)) as {
      UNSAFE_CHAR_CLASS: string;
    };
    expect(mod.UNSAFE_CHAR_CLASS).toBe(UNSAFE_CHAR_CLASS);
  });
});
