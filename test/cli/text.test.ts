/**
 * Terminal escaping with every character of the shared table (issue 12 item 5). The expected
 * escape of each character is written from its code point here (`\e`, `\r`, `\xNN`, `\uNNNN`).
 */
import { describe, expect, it } from 'vitest';
import { block, oneLine, safeJson } from '../../src/cli/text.js';
import { EXPECTED_UNSAFE, visibleForm } from '../support/unsafe-chars.js';

describe('terminal escaping', () => {
  it('block() shows each unsafe character as its escape, and keeps tab and newline', () => {
    for (const cp of EXPECTED_UNSAFE) {
      const c = String.fromCharCode(cp);
      expect(block(`a${c}b`), cp.toString(16)).toBe(`a${visibleForm(cp)}b`);
    }
    expect(block('a\tb\nc')).toBe('a\tb\nc');
  });

  it('oneLine() shows each as its escape, or as a plain space where it is whitespace to JavaScript', () => {
    for (const cp of EXPECTED_UNSAFE) {
      const c = String.fromCharCode(cp);
      const want = /\s/.test(c) ? 'a b' : `a${visibleForm(cp)}b`;
      expect(oneLine(`a${c}b`), cp.toString(16)).toBe(want);
    }
  });

  it('safeJson() leaves none raw, and parses back to the same text', () => {
    for (const cp of EXPECTED_UNSAFE) {
      const s = `a${String.fromCharCode(cp)}b`;
      const out = safeJson({ s });
      expect(out.includes(String.fromCharCode(cp)), cp.toString(16)).toBe(false);
      expect(JSON.parse(out)).toEqual({ s });
    }
    expect(safeJson({ s: 'x\u200by' })).toBe('{"s":"x\\u200by"}');
  });

  it('leaves other text alone, including characters near the ranges', () => {
    const near = '\u061b\u061d\u200a\u2010\u2027\u202f\u205f\u2065\u206a\ufefe\uff00 é 漢字 🙂';
    expect(block(near)).toBe(near);
    expect(oneLine('plain text')).toBe('plain text');
  });
});
