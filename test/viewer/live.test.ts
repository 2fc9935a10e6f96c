/**
 * A live session in the browser: the page is open while a writer appends to the log file, and
 * what is appended appears (in the expanded running turn, as new turns, in the totals). The
 * waits are for content, never for a duration.
 */
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startViewer, type Viewer } from '../../src/viewer/index.js';
import { describeBrowser, launchBrowser, openViewer, watchErrors, type Browser } from './support/browser.js';
import { LogWriter } from './support/logs.js';
// Page functions run in the browser and are typed without the DOM library, hence `any` (allowed under test/).

describeBrowser('a live session', () => {
  let dir: string;
  let path: string;
  let w: LogWriter;
  let browser: Browser;
  let viewer: Viewer;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dsh-viewer-live-'));
    path = join(dir, 'live.jsonl');
    w = new LogWriter('live-page');
    w.beginTurn('first task');
    w.header('m-1');
    w.respond('done');
    w.endStep();
    w.endTurn();
    w.beginTurn('second task, still running');
    writeFileSync(path, w.text());
    browser = await launchBrowser();
    viewer = await startViewer({ source: path, pollMs: 30 });
    page = await browser.context.newPage();
    errors = watchErrors(page);
    await page.setViewportSize({ width: 1400, height: 3000 });
    await openViewer(page, viewer.url);
  });
  afterAll(async () => {
    await browser?.close();
    await viewer?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const turnRows = '#rows .row[data-kind="turn"]';

  it('shows appended events as they arrive, in the open turn and as new turns', async () => {
    await page.waitForFunction((s) => (globalThis as any).document.querySelectorAll(s).length === 2, turnRows);
    const second = page.locator(turnRows).nth(1);
    expect(await second.locator('.badge').textContent()).toBe('open');
    await second.locator('.head').click();
    await page.waitForSelector('#rows .row[data-kind="step"]');

    // The model starts a tool call: it appears with no result yet.
    w.respond('let me look', [{ id: 'call-live-1', name: 'read', args: '{"path":"notes.md"}' }]);
    const callSeq = w.call('call-live-1', 'read', '{"path":"notes.md"}');
    appendFileSync(path, w.more());
    const tool = page.locator('#rows .item[data-item="tool"]');
    await tool.waitFor();
    expect(await tool.getAttribute('data-seq')).toBe(String(callSeq));
    expect(await tool.locator('.line').first().textContent()).toContain('no result yet');

    // Its result arrives in two writes, the first ending mid-line.
    w.result(callSeq, 'call-live-1', 'the notes, read live');
    const lines = w.more();
    appendFileSync(path, lines.slice(0, 20));
    appendFileSync(path, lines.slice(20));
    await page.waitForFunction(
      () =>
        (globalThis as any).document
          .querySelector('#rows .item[data-item="tool"] .tool-result')
          ?.textContent.includes('the notes, read live') ?? false,
    );
    expect(await tool.locator('.badge').first().textContent()).toBe('ok');

    // The turn ends and a third one starts.
    w.endStep();
    w.endTurn();
    w.beginTurn('third task');
    appendFileSync(path, w.more());
    await page.waitForFunction((s) => (globalThis as any).document.querySelectorAll(s).length === 3, turnRows);
    await page.waitForFunction(
      () =>
        (globalThis as any).document.querySelectorAll('#rows .row[data-kind="turn"]')[1].querySelector('.badge').textContent ===
        'completed',
    );
    expect(await page.locator(turnRows).nth(2).locator('.prompt').textContent()).toBe('third task');
    await page.waitForFunction((n) => (globalThis as any).document.body.dataset.events === String(n), w.session.length);
    expect(await page.locator('#session-facts').textContent()).toContain('3 turns');
    expect(await page.locator('#status').textContent()).toContain('following');
    expect(errors).toEqual([]);
  });

  it('says so when following stops', async () => {
    appendFileSync(path, '{"type":"not json\n');
    await page.waitForFunction(() => (globalThis as any).document.querySelector('#status').textContent.includes('not following'));
    expect(await page.locator('#status').textContent()).toContain('CORRUPT_LOG');
  });
});
