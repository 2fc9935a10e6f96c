/**
 * The chat screen dies when a line is wider than the screen by pi-tui's measure (pi-tui throws).
 * Our layouts measure with the same function, and the transcript cuts any line that still
 * overflows, so no answer, in any script, can end the chat (issue 15 second review, N1).
 */
import { visibleWidth } from '@mariozechner/pi-tui';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Transcript } from '../../../src/terminal/chat/transcript.js';
import { textWidth } from '../../../src/terminal/render/width.js';

// Pieces a model really writes, chosen where measures disagree: Thai with SARA AM, lone and
// paired regional indicators, emoji sequences, CJK, combining marks, tabs, markdown syntax.
const PIECES = [
  'กำลังทำงาน',
  'ทำ',
  'ຄຳ',
  '🇦',
  '🇦🇧',
  '👩‍💻',
  '✔️',
  '漢字',
  'é',
  'a\u0301',
  '\t',
  ' ',
  'word',
  '**b**',
  '`c`',
  '\n',
  '- ',
  '# ',
  '| x | y |\n',
  '```\n',
];

describe('transcript lines never exceed the screen width', () => {
  it('Thai SARA AM and a lone regional indicator take two columns, as the terminal draws them', () => {
    expect(textWidth('ทำ')).toBe(2); // ท one column, ำ draws its own
    expect(textWidth('🇦')).toBe(2);
    expect(textWidth('ab🇦ทำ')).toBe(6);
  });

  it('for any streamed answer and width, every rendered line fits (pi-tui would throw otherwise)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 80 }),
        fc.integer({ min: 4, max: 60 }),
        fc.integer({ min: 1, max: 7 }),
        (pieces, width, chunk) => {
          const t = new Transcript();
          t.line(pieces.join(''));
          const text = pieces.join('');
          for (let i = 0; i < text.length; i += chunk) t.answerDelta(text.slice(i, i + chunk));
          for (const l of t.render(width)) expect(visibleWidth(l)).toBeLessThanOrEqual(width);
          t.answerEnd();
          for (const l of t.render(width)) expect(visibleWidth(l)).toBeLessThanOrEqual(width);
        },
      ),
      { numRuns: 300 },
    );
  });
});
