/**
 * Jump to a seq near the end of a long log whose rows have very different heights (prompts of 1 to
 * 40 lines, tool results of 1 to 60 lines), in a real headless Chromium: once the page has settled,
 * the row jumped to is inside the timeline's viewport. Estimates are wrong for every one of these
 * rows, so the rows measured around the target move it after the jump; the list must keep it in
 * sight whatever they measure to (review of issue 14, finding 1).
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBrowser, viewerPage, type Browser } from './support/browser.js';
import { LogWriter } from './support/logs.js';
import { serveLog } from './support/serve.js';
// Page functions run in the browser and are typed without the DOM library, hence `any` (allowed under test/).

const TURNS = 1500;
const lines = (n: number, what: string): string => Array.from({ length: n }, (_, k) => `${what} line ${k + 1} of ${n}`).join('\n');

/** The seqs of the tool results jumped to, last turns first. */
const targets: { seq: number; call: number }[] = [];

function tallLog(): string {
  const w = new LogWriter('jump-tall');
  for (let t = 1; t <= TURNS; t++) {
    w.beginTurn(lines(1 + ((t * 7) % 40), `runtime context of turn ${t}`));
    if (t === 1) w.header('test-1');
    w.respond(`turn ${t}: reading two files`, [
      { id: `a${t}`, name: 'read', args: '{"file_path":"a.txt"}' },
      { id: `b${t}`, name: 'read', args: '{"file_path":"b.txt"}' },
    ]);
    const a = w.call(`a${t}`, 'read', '{"file_path":"a.txt"}');
    w.result(a, `a${t}`, lines(1 + ((t * 13) % 60), `a.txt of turn ${t}`));
    const b = w.call(`b${t}`, 'read', '{"file_path":"b.txt"}');
    w.result(b, `b${t}`, lines(1 + ((t * 29) % 60), `b.txt of turn ${t}`));
    if (t > TURNS - 3) targets.unshift({ seq: w.session.length - 1, call: b });
    w.endStep();
    w.beginStep();
    w.respond(lines(1 + ((t * 3) % 12), `answer of turn ${t}`));
    w.endStep();
    w.endTurn();
  }
  return w.text();
}

const served = serveLog('tall', tallLog, 120_000);

describeBrowser('jump to a seq near the end of a log of tall rows of varied heights', () => {
  let browser: Browser;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    ({ browser, page, errors } = await viewerPage(served.viewer.url));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
  });

  /** The selected row's box and the timeline's, once neither has moved for 20 frames. */
  async function settled(call: number): Promise<{ top: number; bottom: number; viewTop: number; viewBottom: number }> {
    await page.waitForSelector(`#rows .row.selected .item[data-seq="${call}"]`);
    return page.evaluate(
      () =>
        new Promise((resolve) => {
          const d = (globalThis as any).document;
          let last = '';
          let same = 0;
          const tick = (): void => {
            const r = d.querySelector('#rows .row.selected').getBoundingClientRect();
            const v = d.querySelector('#timeline').getBoundingClientRect();
            const now = { top: r.top, bottom: r.bottom, viewTop: v.top, viewBottom: v.bottom };
            const key = JSON.stringify(now);
            same = key === last ? same + 1 : 0;
            last = key;
            if (same >= 20) resolve(now);
            else (globalThis as any).requestAnimationFrame(tick);
          };
          tick();
        }),
    );
  }

  it('keeps the row jumped to on screen once heights settle', async () => {
    for (const { seq, call } of targets) {
      await page.fill('#jump', String(seq));
      await page.press('#jump', 'Enter');
      const box = await settled(call);
      expect(box.top, `seq ${seq}: ${JSON.stringify(box)}`).toBeGreaterThanOrEqual(box.viewTop - 1);
      expect(box.top, `seq ${seq}: ${JSON.stringify(box)}`).toBeLessThan(box.viewBottom);
    }
    expect(errors).toEqual([]);
  }, 120_000);
});
