/**
 * The page in headless Chromium, over the bundled example log. What the page should show is
 * computed from the log here (lines parsed one by one; `deriveMessagesFrom` for the model view),
 * not taken from the viewer. The viewport is made tall where a test counts rows, so that the
 * windowed list draws them all.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { deriveEventMessage, deriveMessagesFrom, loadJsonl } from '../../src/session/index.js';
import { startViewer, type Viewer } from '../../src/viewer/index.js';
import { repoRoot } from '../support/shared.js';
import { artifactPath, describeBrowser, launchBrowser, openViewer, watchErrors, type Browser } from './support/browser.js';
import { eventLines, turnFacts } from './support/logs.js';

const EXAMPLE = join(repoRoot, 'examples', 'fix-typo.jsonl');
const lines = eventLines(EXAMPLE);
const facts = turnFacts(lines);
const loaded = loadJsonl(readFileSync(EXAMPLE, 'utf8'), { repair: false });
const events = loaded.session.events.slice(0, loaded.eventCount);

async function count(page: Page, selector: string): Promise<number> {
  return page.locator(selector).count();
}

async function waitCount(page: Page, selector: string, n: number): Promise<void> {
  await page.waitForFunction(
    ([s, k]) =>
      (globalThis as unknown as { document: { querySelectorAll(q: string): { length: number } } }).document.querySelectorAll(s).length ===
      k,
    [selector, n] as const,
  );
}

describeBrowser('the page, on the example log', () => {
  let browser: Browser;
  let viewer: Viewer;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    browser = await launchBrowser();
    viewer = await startViewer({ source: EXAMPLE });
    page = await browser.context.newPage();
    errors = watchErrors(page);
    await page.setViewportSize({ width: 1400, height: 6000 });
    await openViewer(page, viewer.url);
  });
  afterAll(async () => {
    await browser?.close();
    await viewer?.close();
  });

  it('shows one row per turn, and the session totals', async () => {
    await waitCount(page, '#rows .row[data-kind="turn"]', facts.length);
    const heads = await page.locator('#rows .row[data-kind="turn"] .turn-name').allTextContents();
    expect(heads).toEqual(facts.map((f) => `Turn ${f.turn}`));
    const summary = await page.locator('#session-facts').textContent();
    expect(summary).toContain(`${facts.length} turns`);
    expect(summary).toContain(`${facts.reduce((n, f) => n + f.steps, 0)} steps`);
    expect(summary).toContain(`${facts.reduce((n, f) => n + f.toolCalls.length, 0)} tool calls`);
  });

  it('expanding a turn shows its steps, and each tool call with its result', async () => {
    for (const [k, f] of facts.entries()) {
      const turn = page.locator('#rows .row[data-kind="turn"]').nth(k);
      await turn.locator('.head').click();
      await waitCount(page, '#rows .row[data-kind="step"]', f.steps);
      await waitCount(page, '#rows .item[data-item="tool"]', f.toolCalls.length);
      const tools = page.locator('#rows .item[data-item="tool"]');
      for (const [j, call] of f.toolCalls.entries()) {
        const tool = tools.nth(j);
        const result = f.results.find((r) => r.callId === call.callId)!;
        expect(await tool.getAttribute('data-seq')).toBe(String(call.seq));
        const head = await tool.locator('.line').first().textContent();
        expect(head).toContain(call.name);
        expect(head).toContain(`[${call.callId}]`);
        expect(head).toContain(result.error ? `error ${result.error}` : 'ok');
        expect(head).toContain(`result #${result.seq}`);
        expect(await tool.locator('.tool-result').textContent()).toContain(result.text);
      }
      await turn.locator('.head').click();
      await waitCount(page, '#rows .row[data-kind="step"]', 0);
    }
  });

  it('the model view shows the history as of a chosen seq', async () => {
    const seq = facts[0]!.results[0]!.seq;
    const expected = deriveMessagesFrom(events, seq);
    // The seq of each expected message: the surface event that projects to it.
    const seqs = expected.map((m) => events.find((e) => deriveEventMessage(e) === m)!.seq);
    await page.click('#model-toggle');
    await page.fill('#model-seq', String(seq));
    await page.press('#model-seq', 'Enter');
    await page.waitForFunction(
      (s) =>
        (globalThis as unknown as { document: { querySelector(q: string): { textContent: string } | null } }).document
          .querySelector('#model-info')
          ?.textContent.includes(`after #${s}`) ?? false,
      seq,
    );
    expect(await page.locator('#model-info .count').textContent()).toBe(`${expected.length} messages`);
    expect(
      await page
        .locator('#model-list .msg')
        .evaluateAll((els) => els.map((e) => (e as unknown as { dataset: { seq: string } }).dataset.seq)),
    ).toEqual(seqs.map(String));
    const lastText = await page.locator('#model-list .msg').last().textContent();
    expect(lastText).toContain(facts[0]!.results[0]!.text);
    await page.click('#model-toggle');
    expect(await page.locator('#model').isHidden()).toBe(true);
  });

  it('search finds a string, selects where it is and marks it', async () => {
    const expected = lines.filter((l) => l.type !== 'assistant/chunk' && JSON.stringify(l.data).toLowerCase().includes('recieve'));
    await page.fill('#search', 'recieve');
    await page.press('#search', 'Enter');
    await page.waitForFunction(() =>
      /^1 of/.test(
        (globalThis as unknown as { document: { querySelector(q: string): { textContent: string } } }).document.querySelector(
          '#search-status',
        ).textContent,
      ),
    );
    expect(await page.locator('#search-status').textContent()).toContain(`1 of ${expected.length}`);
    expect(await page.locator('#search-status').textContent()).toContain(`#${expected[0]!.seq}`);
    const marks = await page.locator('#rows .row.selected mark').allTextContents();
    expect(marks.length).toBeGreaterThan(0);
    for (const m of marks) expect(m.toLowerCase()).toBe('recieve');
    // n goes to the next match.
    await page.locator('#timeline').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('n');
    await page.waitForFunction(() =>
      /^2 of/.test(
        (globalThis as unknown as { document: { querySelector(q: string): { textContent: string } } }).document.querySelector(
          '#search-status',
        ).textContent,
      ),
    );
    expect(await page.locator('#search-status').textContent()).toContain(`#${expected[1]!.seq}`);
    await page.fill('#search', '');
    await page.press('#search', 'Enter');
    await waitCount(page, '#rows mark', 0);
    // "Turn 1" is on the page (a turn row's name) but in no event: no match, and nothing marked.
    expect(lines.some((l) => JSON.stringify(l).toLowerCase().includes('turn 1'))).toBe(false);
    expect(await page.locator('#rows .turn-name', { hasText: 'Turn 1' }).count()).toBeGreaterThan(0);
    await page.fill('#search', 'turn 1');
    await page.press('#search', 'Enter');
    await page.waitForFunction(() =>
      /no match/.test(
        (globalThis as unknown as { document: { querySelector(q: string): { textContent: string } } }).document.querySelector(
          '#search-status',
        ).textContent,
      ),
    );
    await waitCount(page, '#rows mark', 0);
    await page.fill('#search', '');
    await page.press('#search', 'Enter');
  });

  it('jumps to a seq and navigates with the keyboard', async () => {
    const failed = facts.flatMap((f) => f.results).find((r) => r.error)!;
    const call = facts.flatMap((f) => f.toolCalls).find((c) => c.callId === failed.callId)!;
    // Jumping to a result selects the tool item of its call (which shows the result).
    await page.fill('#jump', String(failed.seq));
    await page.press('#jump', 'Enter');
    await page.waitForSelector(`#rows .row.selected .item[data-item="tool"][data-seq="${call.seq}"]`);
    expect(await page.locator('#rows .row.selected').textContent()).toContain(failed.error!);
    await page.keyboard.press('Escape');
    await page.keyboard.press('Home');
    expect(await page.locator('#rows .row.selected').getAttribute('data-key')).toBe('s0');
    await page.keyboard.press('j');
    expect(await page.locator('#rows .row.selected').getAttribute('data-kind')).toBe('turn');
    // Steps of this turn have keys under the turn's own key.
    const key = await page.locator('#rows .row.selected').getAttribute('data-key');
    const steps = `#rows .row[data-kind="step"][data-key^="${key}/"]`;
    if ((await count(page, steps)) === 0) await page.keyboard.press('Enter');
    await waitCount(page, steps, facts[0]!.steps);
    await page.keyboard.press('ArrowLeft');
    await waitCount(page, steps, 0);
    await page.keyboard.press('Enter');
    await waitCount(page, steps, facts[0]!.steps);
    await page.keyboard.press('j');
    expect(await page.locator('#rows .row.selected').getAttribute('data-kind')).not.toBe('turn');
    await page.keyboard.press('h'); // to the parent row
    expect(await page.locator('#rows .row.selected .turn-name').textContent()).toBe('Turn 1');
  });

  it('takes a screenshot for a human to look at', async () => {
    await page.setViewportSize({ width: 1400, height: 900 });
    await page.keyboard.press('Home');
    const call = facts[0]!.toolCalls[0]!;
    await page.fill('#jump', String(call.seq));
    await page.press('#jump', 'Enter');
    await page.waitForSelector(`#rows .row.selected .item[data-item="tool"][data-seq="${call.seq}"]`);
    await page.keyboard.press('Escape');
    await page.keyboard.press('m');
    await page.waitForSelector('#model-list .msg');
    // From the top, so the picture shows the turn and step rows above the selected call.
    await page.locator('#timeline').evaluate((t) => {
      (t as unknown as { scrollTop: number }).scrollTop = 0;
    });
    await page.waitForSelector('#rows .row[data-key="s0"]');
    const file = artifactPath('fix-typo.png');
    await page.screenshot({ path: file });
    expect(statSync(file).size).toBeGreaterThan(10_000);
    expect(errors).toEqual([]);
  });
});
