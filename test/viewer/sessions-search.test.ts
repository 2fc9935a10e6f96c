/**
 * Search across sessions from the viewer page (api/sessions-search over src/search), on a real
 * store and in a real headless Chromium: a hit in the session shown is a link that selects its
 * row, a hit in another session names the command that opens it, and log text (markup, scripts)
 * stays text. Expected seqs are the ones the store's writer returned.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startViewer, type Viewer } from '../../src/viewer/index.js';
import { makeSession } from '../search/support.js';
import { describeBrowser, viewerPage, type Browser } from './support/browser.js';
import { json, parts, raw } from './support/http.js';

const IMG = `<img src=x onerror="window.__pwned = 1">`;
const HERE_PROMPT = `find the wallaroo ${IMG} <script>window.__pwned = 2</script>`;
const HERE_ANSWER = 'the wallaroo is in the second answer';
const OTHER_PROMPT = `another wallaroo, elsewhere ${IMG}`;

let dir: string;
let viewer: Viewer;
let bare: Viewer;
let here: Record<string, number>;
let other: Record<string, number>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dsh-viewer-sessions-'));
  const root = join(dir, 'sessions');
  mkdirSync(root);
  const a = await makeSession(root, '/w/a', 'here-1', [
    { prompt: 'first prompt', answer: 'nothing yet' },
    { prompt: HERE_PROMPT, answer: HERE_ANSWER },
  ]);
  const b = await makeSession(root, '/w/b', 'other-2', [{ prompt: OTHER_PROMPT, answer: 'ok' }]);
  here = a.seqs;
  other = b.seqs;
  viewer = await startViewer({ source: a.path, sessions: { root, index: join(dir, 'search', 'index.sqlite') } });
  bare = await startViewer({ source: a.path });
});
afterAll(async () => {
  await viewer?.close();
  await bare?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('api/sessions-search', () => {
  it('answers hits across the store, marking those in the session shown', async () => {
    const b = await json(viewer.url, 'sessions-search', { q: 'wallaroo' });
    expect(b.order).toBe('rank');
    const got = (b.hits as { session: string; here: boolean; seq: number; kind: string; turn: number }[])
      .map((h) => `${h.session} ${h.here} ${h.turn} ${h.seq} ${h.kind}`)
      .sort();
    expect(got).toEqual(
      [
        `here-1 true 2 ${here[HERE_PROMPT]} prompt`,
        `here-1 true 2 ${here[HERE_ANSWER]} answer`,
        `other-2 false 1 ${other[OTHER_PROMPT]} prompt`,
      ].sort(),
    );
    const hit = (b.hits as { snippet: string; match: [number, number]; kind: string; here: boolean }[]).find(
      (h) => h.here && h.kind === 'prompt',
    )!;
    expect(hit.snippet.slice(...hit.match)).toBe('wallaroo');
  });

  it('refuses a missing, too long or wordless query, and says when there is no store to search', async () => {
    const { port, base } = parts(viewer.url);
    expect((await raw(port, `${base}api/sessions-search`)).status).toBe(400);
    expect((await raw(port, `${base}api/sessions-search?q=${'x'.repeat(501)}`)).status).toBe(400);
    const wordless = await raw(port, `${base}api/sessions-search?q=...`);
    expect(wordless.status).toBe(400);
    expect(JSON.parse(wordless.body).error.code).toBe('BAD_REQUEST');
    const b = parts(bare.url);
    const none = await raw(b.port, `${b.base}api/sessions-search?q=wallaroo`);
    expect(none.status).toBe(404);
    expect(JSON.parse(none.body).error.message).toMatch(/needs the session store/);
  });
});

describeBrowser('the page searches across sessions', () => {
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let dialogs: string[];

  beforeAll(async () => {
    ({ browser, page, errors, dialogs } = await viewerPage(viewer.url));
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('lists the hits; one in this session jumps to its row, one elsewhere names dsh view; log text stays text', async () => {
    await page.fill('#sessions-q', 'wallaroo');
    await page.press('#sessions-q', 'Enter');
    await page.waitForSelector('#inspect[data-panel="sessions"][data-state="ready"]');
    expect(await page.locator('#inspect .hit').count()).toBe(3);
    expect(await page.locator('#inspect .hit.here').count()).toBe(2);
    const elsewhere = page.locator('#inspect .hit:not(.here)');
    expect(await elsewhere.locator('code').textContent()).toBe(`dsh view other-2 --seq ${other[OTHER_PROMPT]}`);
    expect(await elsewhere.locator('.seq-link').count()).toBe(0);
    // The match is marked, the markup around it is text.
    const prompt = page.locator(`#inspect .hit.here[data-seq="${here[HERE_PROMPT]}"]`);
    expect(await prompt.locator('mark').allTextContents()).toEqual(['wallaroo']);
    expect(await prompt.locator('.snippet').textContent()).toContain(IMG);
    await prompt.locator('.seq-link').click();
    await page.waitForSelector(`#rows .row.selected .item[data-seq="${here[HERE_PROMPT]}"]`);

    expect(await page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned)).toBeUndefined();
    expect(await page.locator('#inspect img, #inspect script').count()).toBe(0);
    expect(dialogs).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('a query with no match says so', async () => {
    await page.fill('#sessions-q', 'nothinglikeitanywhere');
    await page.press('#sessions-q', 'Enter');
    await page.waitForSelector('#inspect[data-panel="sessions"][data-state="ready"]');
    expect(await page.locator('#inspect-body').textContent()).toContain('no match in the stored sessions');
  });
});
