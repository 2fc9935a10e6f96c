/**
 * A million-event log in the browser: the first screen appears, the page holds a bounded number
 * of DOM nodes however long the timeline is, and the far end, a late turn's contents and search
 * all work. No timing is asserted; the log is generated (deterministically) for the test.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startViewer, type Viewer } from '../../src/viewer/index.js';
import { artifactPath, describeBrowser, launchBrowser, openViewer, watchErrors, type Browser } from './support/browser.js';
import { writeBigLog, type BigLogFacts } from './support/generate.js';
// Page functions run in the browser and are typed without the DOM library, hence `any` (allowed under test/).

/** Far more than the window ever needs, far fewer than one node per event or per turn. */
const MAX_NODES = 4000;

describeBrowser('a million-event log', () => {
  let dir: string;
  let facts: BigLogFacts;
  let browser: Browser;
  let viewer: Viewer;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dsh-viewer-big-'));
    const path = join(dir, 'big.jsonl');
    facts = writeBigLog(path, { events: 1_000_000 });
    expect(statSync(path).size).toBeGreaterThan(30_000_000);
    [browser, viewer] = await Promise.all([launchBrowser(), startViewer({ source: path })]);
    page = await browser.context.newPage();
    errors = watchErrors(page);
    await openViewer(page, viewer.url);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await viewer?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const nodes = (): Promise<number> => page.evaluate(() => (globalThis as any).document.getElementsByTagName('*').length);

  it('shows its first screen with a bounded DOM', async () => {
    expect(facts.events).toBeGreaterThanOrEqual(1_000_000);
    await page.waitForSelector('#rows .row[data-kind="turn"] .turn-name');
    expect(await page.locator('#rows .row[data-kind="turn"] .turn-name').first().textContent()).toBe('Turn 1');
    expect(await page.locator('#session-facts').textContent()).toContain(`${facts.turns.toLocaleString('en-US')} turns`);
    const drawn = await page.locator('#rows .row').count();
    expect(drawn).toBeGreaterThan(5);
    expect(drawn).toBeLessThan(200);
    expect(await nodes()).toBeLessThan(MAX_NODES);
    await page.screenshot({ path: artifactPath('big.png') });
  });

  it('reaches the last turn, expands it, and stays bounded', async () => {
    await page.locator('#timeline').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('End');
    const last = `Turn ${facts.turns}`;
    await page.waitForFunction(
      (t) => [...(globalThis as any).document.querySelectorAll('#rows .turn-name')].some((e: any) => e.textContent === t),
      last,
    );
    await page.keyboard.press('Enter');
    await page.waitForSelector('#rows .item[data-item="tool"]');
    expect(await page.locator('#rows .row.selected .turn-name').textContent()).toBe(last);
    expect(await nodes()).toBeLessThan(MAX_NODES);
  });

  it('jump to seq puts the target row on screen, and it stays there once the rows around it are measured', async () => {
    // Rows are laid out from estimated heights until drawn; the jump must land on the row anyway.
    for (const seq of [Math.floor(facts.events * 0.5) + 1, Math.floor(facts.events * 0.9) + 3, Math.floor(facts.events * 0.2) + 2]) {
      await page.fill('#jump', String(seq));
      await page.press('#jump', 'Enter');
      await page.waitForSelector('#rows .row.selected');
      // Let the list settle (it measures over a few animation frames).
      await page.waitForTimeout(600);
      const where = await page.evaluate(() => {
        const d = (globalThis as any).document;
        const row = d.querySelector('#rows .row.selected');
        const box = d.querySelector('#timeline').getBoundingClientRect();
        const r = row.getBoundingClientRect();
        return { top: r.top, bottom: r.bottom, viewTop: box.top, viewBottom: box.bottom, text: row.textContent as string };
      });
      expect(where.top, `seq ${seq}`).toBeGreaterThanOrEqual(where.viewTop - 1);
      expect(where.top, `seq ${seq}`).toBeLessThan(where.viewBottom);
    }
    expect(await nodes()).toBeLessThan(MAX_NODES);
  });

  it('finds text in a late turn and jumps there', async () => {
    const target = facts.turns - 3;
    await page.fill('#search', `contents of file ${target}-1`);
    await page.press('#search', 'Enter');
    await page.waitForFunction(() => /^1 of 1 /.test((globalThis as any).document.querySelector('#search-status').textContent));
    expect(await page.locator('#rows .row.selected').textContent()).toContain(`contents of file ${target}-1`);
    expect(await nodes()).toBeLessThan(MAX_NODES);
    const heap = await page.evaluate(() => (globalThis as any).performance.memory?.usedJSHeapSize ?? 0);
    expect(heap).toBeLessThan(200 * 1024 * 1024);
    expect(errors).toEqual([]);
  });
});
