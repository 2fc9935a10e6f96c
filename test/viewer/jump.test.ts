/**
 * Jump to a seq, in a real headless Chromium: a stream chunk (the row of the message it streamed),
 * a tool result (shown in its call's row), events outside any turn (before and after it), and a
 * step boundary (a step/start or step/end has no row of its own: its step's row), and a seq past
 * the end (a clear message, the selection kept). Expected seqs are the ones the writer returned.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBrowser, viewerPage, type Browser } from './support/browser.js';
import { LogWriter } from './support/logs.js';
import { serveLog } from './support/serve.js';

const seqs = { outside: 0, chunk: 0, message: 0, call: 0, result: 0, step2Start: 0, step2End: 0, after: 0, length: 0 };

let types: string[] = [];

function jumpLog(): string {
  const w = new LogWriter('jump');
  w.event('session/title', { title: 'titled before any turn' });
  seqs.outside = w.session.length - 1;
  w.beginTurn('read the file');
  w.header('test-1');
  w.respond('reading the file for you now', [{ id: 'c1', name: 'read', args: '{"file_path":"a.txt"}' }]);
  seqs.message = w.session.length - 1;
  seqs.chunk = w.session.events.find((e) => e.type === 'assistant/chunk')!.seq + 2;
  seqs.call = w.call('c1', 'read', '{"file_path":"a.txt"}');
  w.result(seqs.call, 'c1', 'the contents of a.txt');
  seqs.result = w.session.length - 1;
  w.endStep();
  w.beginStep();
  seqs.step2Start = w.session.length - 1;
  w.respond('the file says hello');
  w.endStep();
  seqs.step2End = w.session.length - 1;
  w.endTurn();
  w.event('session/title', { title: 'retitled after the turn' });
  seqs.after = w.session.length - 1;
  seqs.length = w.session.length;
  types = w.session.events.map((e) => e.type);
  return w.text();
}

const served = serveLog('jump', jumpLog);

describeBrowser('jump to a seq of every kind', () => {
  let browser: Browser;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    ({ browser, page, errors } = await viewerPage(served.viewer.url));
  });
  afterAll(async () => {
    await browser?.close();
  });

  async function jump(seq: number): Promise<void> {
    await page.fill('#jump', String(seq));
    await page.press('#jump', 'Enter');
  }
  const selectedText = (): Promise<string> =>
    page
      .locator('#rows .row.selected')
      .textContent()
      .then((t) => t ?? '');

  it('a chunk selects the row of the message it streamed', async () => {
    await jump(seqs.chunk);
    await page.waitForSelector('#rows .row.selected .item[data-item="assistant"]');
    expect(await selectedText()).toContain('reading the file for you now');
  });

  it("a tool result selects its call's row, which shows it", async () => {
    await jump(seqs.outside); // somewhere else first
    await page.waitForSelector(`#rows .row.selected`);
    await jump(seqs.result);
    await page.waitForSelector(`#rows .row.selected .item[data-seq="${seqs.call}"]`);
    expect(await selectedText()).toContain('the contents of a.txt');
  });

  it('events outside any turn select their own rows, before and after the turn', async () => {
    await jump(seqs.outside);
    await page.waitForFunction((t) => document.querySelector('#rows .row.selected')?.textContent?.includes(t), 'titled before any turn');
    await jump(seqs.after);
    await page.waitForFunction((t) => document.querySelector('#rows .row.selected')?.textContent?.includes(t), 'retitled after the turn');
    expect(await selectedText()).not.toContain('titled before any turn');
  });

  it("a step boundary (step/start, step/end) selects its step's row", async () => {
    expect([types[seqs.step2Start], types[seqs.step2End]]).toEqual(['step/start', 'step/end']);
    for (const seq of [seqs.step2Start, seqs.step2End]) {
      await jump(seqs.outside); // somewhere else first
      await page.waitForFunction(
        (t) => (globalThis as any).document.querySelector('#rows .row.selected')?.textContent?.includes(t),
        'titled before any turn',
      );
      await jump(seq);
      await page.waitForSelector('#rows .row.selected[data-kind="step"]');
      const sel = page.locator('#rows .row.selected');
      expect(await sel.locator('.step-name').textContent()).toBe('Step 2');
      expect(await sel.locator('.seqs').textContent()).toContain(String(seqs.step2Start));
      // Its step is open, showing the answer it holds just below it.
      await page.waitForFunction(
        (t) => (globalThis as any).document.querySelector('#rows .row.selected + .row')?.textContent?.includes(t),
        'the file says hello',
      );
    }
  });

  it('a seq past the end says which seqs the log has, and leaves the selection where it was', async () => {
    await jump(seqs.message);
    await page.waitForSelector('#rows .row.selected .item[data-item="assistant"]');
    await jump(seqs.length + 100);
    await page.waitForSelector('#status.error');
    expect(await page.locator('#status').textContent()).toBe(
      `NOT_FOUND: the log has no seq ${seqs.length + 100} (it has ${seqs.length} events)`,
    );
    expect(await selectedText()).toContain('reading the file for you now');
    // The 404 answer of api/locate is the browser's one console line; nothing else.
    expect(errors.filter((e) => !/status of 404/.test(e))).toEqual([]);
  });
});
