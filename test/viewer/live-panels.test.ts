/**
 * The inspector panels while the page follows a live log (issue 14 item 4), in a real headless
 * Chromium: a panel opened on an open call, a call's provenance and the statistics is asked again
 * as the writer appends, and shows the new answer without a click (a result arriving, a citation
 * appearing, a dangling turn ending), keeping what the reader opened in it. Expected seqs and figures are the writer's; the waits are
 * for content, never for a duration.
 */
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startViewer, type Viewer } from '../../src/viewer/index.js';
import { describeBrowser, viewerPage, type Browser } from './support/browser.js';
import { LogWriter } from './support/logs.js';

describeBrowser('inspector panels while following', () => {
  let dir: string;
  let path: string;
  let w: LogWriter;
  let browser: Browser;
  let viewer: Viewer;
  let page: Page;
  let errors: string[];
  const seqs = { callA: 0, callB: 0 };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dsh-viewer-live-panels-'));
    path = join(dir, 'live.jsonl');
    w = new LogWriter('live-panels');
    w.beginTurn('first task');
    w.header('m-1');
    w.respond('done');
    w.endStep();
    w.endTurn();
    // The second turn is running: two calls issued, neither answered yet.
    w.beginTurn('second task, still running');
    w.respond('reading two files', [
      { id: 'c-a', name: 'read', args: '{"path":"a.md"}' },
      { id: 'c-b', name: 'read', args: '{"path":"b.md"}' },
    ]);
    seqs.callA = w.call('c-a', 'read', '{"path":"a.md"}');
    seqs.callB = w.call('c-b', 'read', '{"path":"b.md"}');
    writeFileSync(path, w.text());
    viewer = await startViewer({ source: path, pollMs: 30 });
    ({ browser, page, errors } = await viewerPage(viewer.url));
  });
  afterAll(async () => {
    await browser?.close();
    await viewer?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Select a call's row (jump to its seq) and press one of its inspector buttons. */
  async function inspect(seq: number, button: '.act-call' | '.act-prov'): Promise<void> {
    await page.fill('#jump', String(seq));
    await page.press('#jump', 'Enter');
    const item = page.locator(`#rows .row.selected .item[data-seq="${seq}"]`);
    await item.waitFor();
    await item.locator(button).click();
  }

  /** Wait for the panel to be ready; its number of answers drawn. */
  async function ready(kind: string): Promise<number> {
    await page.waitForSelector(`#inspect[data-panel="${kind}"][data-state="ready"]`);
    return Number(await page.locator('#inspect').getAttribute('data-answers'));
  }

  const text = (sel: string): Promise<string> =>
    page
      .locator(sel)
      .textContent()
      .then((t) => t ?? '');

  it("a call's round trip shows its result when it arrives", async () => {
    await inspect(seqs.callA, '.act-call');
    expect(await ready('call')).toBe(1);
    expect(await page.locator('#inspect section.trip').getAttribute('data-state')).toBe('unanswered');
    // The reader opened the arguments: a refresh keeps them open.
    await page.click('#inspect details.args summary');
    expect(await page.locator('#inspect details.args[open]').count()).toBe(1);

    w.result(seqs.callA, 'c-a', 'the text of a.md');
    const resultSeq = w.session.length - 1;
    appendFileSync(path, w.more());
    await page.waitForSelector('#inspect section.trip[data-state="answered"]');
    // The result's seq, as the writer numbered it, is a link in the panel.
    expect(await page.locator(`#inspect .kv .seq-link[data-seq="${resultSeq}"]`).count()).toBe(1);
    expect(await page.locator('#inspect').getAttribute('data-panel')).toBe('call');
    expect(Number(await page.locator('#inspect').getAttribute('data-answers'))).toBeGreaterThan(1);
    expect(await page.locator('#inspect details.args[open]').count()).toBe(1);
  });

  it("an event's provenance gains what cites it", async () => {
    await inspect(seqs.callB, '.act-prov');
    await ready('provenance');
    const citedBy = '#inspect .group[data-group="cited by"]';
    expect(await text(citedBy)).toContain('cited by (0)');

    w.result(seqs.callB, 'c-b', 'the text of b.md');
    const resultSeq = w.session.length - 1;
    appendFileSync(path, w.more());
    await page.waitForSelector(`${citedBy} .seq-link[data-seq="${resultSeq}"]`);
    expect(await text(citedBy)).toContain('cited by (1)');
    expect(await text('#inspect-title')).toBe(`Provenance of seq ${seqs.callB}`);
  });

  it('the statistics follow the turn to its end', async () => {
    await page.click('#stats-toggle');
    await ready('stats');
    // The open turn has no store lock beside the file: dangling until it ends.
    const alerts = () => page.locator('#inspect .alert').evaluateAll((els) => els.map((e: any) => e.dataset.kind as string));
    expect(await alerts()).toEqual(['dangling']);
    expect(await text('#inspect .group[data-group="reasons"]')).toMatch(/dangling 1/);

    w.respond('both read');
    w.endStep();
    w.endTurn();
    w.beginTurn('third task');
    appendFileSync(path, w.more());
    await page.waitForFunction(() =>
      /completed 2/.test((globalThis as any).document.querySelector('#inspect .group[data-group="reasons"]')?.textContent ?? ''),
    );
    expect(await page.locator('#inspect-body .line').first().textContent()).toContain('3 turns');
    // The new third turn is the dangling one now; the second is no longer.
    expect(await alerts()).toEqual(['dangling']);
    // A dangling turn's alert points at its turn/start.
    const link = await page.locator('#inspect .alert[data-kind="dangling"] .seq-link').getAttribute('data-seq');
    expect(Number(link)).toBe(w.session.events.findLast((e) => e.type === 'turn/start')!.seq);
  });

  it('a closed panel is left closed, and nothing raised an error', async () => {
    await page.click('#inspect-close');
    w.event('session/title', { title: 'after closing' });
    appendFileSync(path, w.more());
    await page.waitForFunction((n) => (globalThis as any).document.body.dataset.events === String(n), w.session.length);
    expect(await page.locator('#inspect').isHidden()).toBe(true);
    expect(errors).toEqual([]);
  });
});
