/**
 * A short screen (issue 15 review 4, R4-11): on 60×7 the choices opened in the same frame that
 * pushed the call's last row off the top, so a call could be approved with its last row unseen.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  APPROVAL_BURST_MS,
  APPROVAL_GRACE_MS,
  type ApprovalChoice,
  ApprovalPrompt,
  RESERVED_ROWS,
} from '../../../src/terminal/chat/approval.js';
import { manualDefer } from './approval-support.js';

const PGDN = '\x1b[6~';

/** Pages to the end as a user would, then presses 1: was the last row ever on screen before the answer? */
function run(rows: number, width: number, detailRows: number, reason: boolean) {
  let t = 0;
  const answers: ApprovalChoice[] = [];
  const d = manualDefer(() => t);
  const detail = Array.from({ length: detailRows }, (_, i) => ({ text: `s${i + 1}` }));
  const p = new ApprovalPrompt(
    { call: 'bash', detail, rule: 'bash(s1 *)', ...(reason ? { reason: 'it runs outside the workspace sandbox' } : {}) },
    (c) => answers.push(c),
    { color: false, rows: () => rows, now: () => t, defer: d.defer },
  );
  const last = new RegExp(`^  [│┆] s${detailRows}$`);
  let lastSeen = false;
  let choicesOffScreen = false;
  const frame = (): string[] => {
    const out = p.render(width);
    // The question sits at the bottom of the screen, under the status line and a transcript row.
    const visible = out.slice(-Math.max(0, rows - RESERVED_ROWS));
    if (visible.some((l) => last.test(l))) lastSeen = true;
    if (out.some((l) => /allow once/.test(l)) && out.length > rows - RESERVED_ROWS) choicesOffScreen = true;
    return out;
  };
  frame();
  for (let i = 0; i < detailRows + 2; i++) {
    t += 1000;
    p.handleInput(PGDN);
    frame();
  }
  t += APPROVAL_GRACE_MS + 1000;
  frame();
  p.handleInput('1');
  d.advance((t += APPROVAL_BURST_MS));
  return { answered: answers.length > 0, lastSeen, choicesOffScreen, screen: frame() };
}

describe('approval question on a short screen', () => {
  it('60×7, a call of 12 rows: no answer is taken; the screen asks to be made taller', () => {
    const r = run(7, 60, 12, false);
    expect(r.answered).toBe(false);
    expect(r.screen.join(' ')).toMatch(/make the terminal taller \(\d+ rows\) to read the call; Esc cancels/);
  });

  it('for any height and width, an answer is taken only after the last row was on screen, and the choices always fit', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 3, max: 30 }),
        fc.integer({ min: 10, max: 100 }),
        fc.integer({ min: 1, max: 30 }),
        fc.boolean(),
        (rows, width, detailRows, reason) => {
          const r = run(rows, width, detailRows, reason);
          if (r.answered) expect(r.lastSeen).toBe(true);
          expect(r.choicesOffScreen).toBe(false);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('a tall enough screen still answers (the rule is not a refusal of every short screen)', () => {
    expect(run(16, 60, 12, false).answered).toBe(true);
    expect(run(8, 60, 1, false).answered).toBe(true);
    expect(run(7, 60, 1, false).answered).toBe(false); // 1 + 1 + 3 + 1 rows and the 2 around: 8
  });
});
