/**
 * Windowed grapheme segmentation (issue 15 review 4, R4-7): the same clusters as one
 * `Intl.Segmenter` pass over the whole string, for any window, and a long line no longer costs
 * time quadratic in its length.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { graphemeList, graphemeSegments } from '../../src/model/graphemes.js';

const whole = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const reference = (s: string): Array<[string, number]> => [...whole.segment(s)].map((g) => [g.segment, g.index]);
const segment = (s: string): Iterable<{ segment: string; index: number }> => whole.segment(s);
const windowed = (s: string, w: number): Array<[string, number]> => [...graphemeSegments(s, segment, w)].map((g) => [g.segment, g.index]);

// Pieces that stress the rules whose context reaches over several code points.
const PIECES = [
  'a',
  ' ',
  'e\u0301', // combining acute
  '\u0301', // a lone combining mark
  '\r\n',
  '\r',
  '\n',
  '\u{1F1EB}', // regional indicator F (flags pair up; odd runs leave one alone)
  '\u{1F1F7}', // regional indicator R
  '\u{1F469}\u200D\u{1F4BB}', // woman technologist (ZWJ sequence)
  '\u200D',
  '\u{1F44D}\u{1F3FD}', // thumbs up, skin tone
  '\u2764\uFE0F',
  '\u1100\u1161\u11A8', // Hangul jamo L V T
  '\uAC00', // Hangul LV syllable
  '\u0915\u094D\u0937', // Devanagari conjunct (virama)
  '\u0E33', // Thai SARA AM
  '\uD83D', // a lone high surrogate
  '\uDE00', // a lone low surrogate
  '\u{1F600}',
  '\u0600', // prepended concatenation mark
  '\t',
  '\u00A0',
];

const text = fc.array(fc.constantFrom(...PIECES), { maxLength: 80 }).map((a) => a.join(''));
const anyText = fc.oneof(text, fc.string({ unit: 'grapheme', maxLength: 60 }), fc.string({ unit: 'binary', maxLength: 60 }));

describe('graphemeSegments', () => {
  it('gives the clusters of one whole-string pass, with their offsets, for any window', () => {
    fc.assert(
      fc.property(anyText, fc.integer({ min: 1, max: 40 }), (s, w) => {
        expect(windowed(s, w)).toEqual(reference(s));
      }),
      { numRuns: 3000 },
    );
  });

  it('keeps flags paired across window ends in odd and even runs of regional indicators', () => {
    const ri = '\u{1F1EB}';
    for (let n = 1; n <= 9; n++) {
      const s = `x${ri.repeat(n)}y`;
      for (let w = 1; w <= 8; w++) expect(windowed(s, w)).toEqual(reference(s));
    }
  });

  it('widens the window for a cluster longer than it (a letter under many combining marks)', () => {
    const s = `a${'\u0301'.repeat(50)}b`;
    expect(windowed(s, 4)).toEqual([
      [`a${'\u0301'.repeat(50)}`, 0],
      ['b', 51],
    ]);
  });

  it('never splits a surrogate pair at a window end', () => {
    const s = '\u{1F600}'.repeat(7);
    for (let w = 1; w <= 5; w++) expect(windowed(s, w)).toEqual(Array.from({ length: 7 }, (_, i) => ['\u{1F600}', 2 * i]));
  });

  it('gives the whole input as `input`, and nothing for an empty string', () => {
    expect([...graphemeSegments('ab', segment, 1)].map((g) => g.input)).toEqual(['ab', 'ab']);
    expect(graphemeList('')).toEqual([]);
  });

  it('segments a 400,000-character line (a whole-string pass takes minutes on Node 20)', () => {
    const unit = 'ab\u{1F469}\u200D\u{1F4BB}c\u0301 ';
    const s = unit.repeat(400_000 / unit.length);
    const gs = graphemeList(s);
    expect(gs.length).toBe((s.length / unit.length) * 5);
    expect(gs.slice(0, 5)).toEqual(['a', 'b', '\u{1F469}\u200D\u{1F4BB}', 'c\u0301', ' ']);
  });
});
