/**
 * Wrapping a word longer than a line (issue 15 review 4, R4-7): printable ASCII is cut into rows
 * by slicing instead of a grapheme at a time; the layout must be the one the grapheme path gives.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Span } from '../../../src/terminal/render/style.js';
import { spansWidth, wrapSpans } from '../../../src/terminal/render/width.js';

// 'à' (U+00E0) is one column and one code unit but not ASCII: it takes the grapheme path.
const toTwin = (s: string): string => s.replaceAll('a', '\u00e0');
const fromTwin = (s: string): string => s.replaceAll('\u00e0', 'a');
const twinSpans = (spans: Span[]): Span[] => spans.map((s) => ({ ...s, text: toTwin(s.text) }));
const plain = (lines: Span[][], map: (s: string) => string = (s) => s) => lines.map((l) => l.map((s) => ({ ...s, text: map(s.text) })));

const spansArb = fc.array(
  fc.record({
    text: fc.array(fc.constantFrom('a', 'a', 'a', 'b', ' ', '\n'), { maxLength: 60 }).map((a) => a.join('')),
    style: fc.option(fc.constantFrom(['bold'] as const, ['dim'] as const), { nil: undefined }),
  }),
  { maxLength: 5 },
);

describe('wrapSpans', () => {
  it('lays out a long ASCII word exactly as the grapheme path lays out its one-column twin', () => {
    fc.assert(
      fc.property(spansArb, fc.integer({ min: 1, max: 12 }), fc.constantFrom('', '> ', '12345678901234'), (raw, width, lead) => {
        const spans: Span[] = raw.map((s) => (s.style ? { text: s.text, style: [...s.style] } : { text: s.text }));
        const first: Span[] = lead ? [{ text: lead }] : [];
        const ascii = wrapSpans(spans, width, { first });
        const twin = wrapSpans(twinSpans(spans), width, { first });
        expect(plain(ascii)).toEqual(plain(twin, fromTwin));
        for (const l of ascii) expect(spansWidth(l)).toBeLessThanOrEqual(width);
      }),
      { numRuns: 2000 },
    );
  });

  it('cuts a 25-character word into rows of 10 after what fits on the first line', () => {
    const lines = wrapSpans([{ text: 'ab ' }, { text: 'x'.repeat(25), style: ['bold'] }], 10);
    expect(lines.map((l) => l.map((s) => s.text).join(''))).toEqual(['ab xxxxxxx', 'xxxxxxxxxx', 'xxxxxxxx']);
  });
});
