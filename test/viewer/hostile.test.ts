/**
 * A hostile log in a real browser: markup and script in every kind of string a log holds (user
 * text, plugin names, model names, tool names and arguments, tool output, error messages, plugin
 * payloads, the session id), terminal escapes, bidi overrides, deep nesting and a 5 MB string.
 * All of it must stay text: no script runs, no dialog opens, no element from the log exists.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Dialog, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
// Page functions run in the browser and are typed without the DOM library, hence `any` (allowed under test/).
import { startViewer, type Viewer } from '../../src/viewer/index.js';
import { artifactPath, describeBrowser, launchBrowser, openViewer, watchErrors, type Browser } from './support/browser.js';
import { LogWriter } from './support/logs.js';
import { EXPECTED_UNSAFE, visibleForm } from '../support/unsafe-chars.js';

const BIG = 5 * 1024 * 1024;
const SCRIPT = '<script>window.__pwned = 1</script>';
const IMG = (n: number): string => `<img src=x onerror="window.__pwned = ${n}">`;
const ANSI = '\u001b[31mRED\u001b[0m\u001b]0;owned title\u0007';
const BIDI = 'abc\u202edcba';

let lastSeq = 0;

function hostileLog(): string {
  const w = new LogWriter(`hostile${SCRIPT}${BIDI}`, `/tmp/${IMG(10)}`);
  w.beginTurn(`${SCRIPT}${IMG(2)} ${ANSI} ${BIDI}`);
  w.user(`snapshot ${IMG(13)}`, {
    kind: 'plugin',
    plugin: `<b id="plugin-b">${IMG(14)}</b>`,
    form: 'snapshot',
    sections: [{ name: '<i>s</i>', text: IMG(15) }],
  });
  w.header(`model${IMG(11)}`, { system: '<style>*{display:none}</style>', tools: [`tool${IMG(4)}`] });
  const name = `read${IMG(3)}`;
  const args = JSON.stringify({ html: `<iframe srcdoc="<script>parent.__pwned = 6</script>"></iframe>`, [`key${IMG(16)}`]: 1 });
  w.respond(`answer <svg onload="window.__pwned = 5"></svg> ${ANSI}`, [{ id: `call${IMG(17)}`, name, args }]);
  w.tool(`call${IMG(17)}`, name, args, `${SCRIPT}${'A'.repeat(BIG)}`, `CODE${IMG(18)}`);
  let deep: unknown = { leaf: IMG(9) };
  for (let i = 0; i < 3000; i++) deep = { [`k${IMG(19)}`]: deep };
  w.event('hook/result', { nested: deep });
  w.event('session/title', { title: SCRIPT });
  w.endStep();
  w.endTurn({ kind: 'error', error: { code: `E${IMG(20)}`, message: `${SCRIPT}${IMG(12)}` } });
  lastSeq = w.session.length - 1;
  return w.text();
}

describeBrowser('a hostile log', () => {
  let dir: string;
  let browser: Browser;
  let viewer: Viewer;
  let page: Page;
  let errors: string[];
  const dialogs: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dsh-viewer-hostile-'));
    const path = join(dir, `hostile${BIDI}.jsonl`);
    writeFileSync(path, hostileLog());
    browser = await launchBrowser();
    viewer = await startViewer({ source: path });
    page = await browser.context.newPage();
    errors = watchErrors(page);
    page.on('dialog', (d: Dialog) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.setViewportSize({ width: 1400, height: 5000 });
    await openViewer(page, viewer.url);
  });
  afterAll(async () => {
    await browser?.close();
    await viewer?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('shows every character of the escape table the terminal uses as the same escape (issue 12 item 5)', async () => {
    const got = (await page.evaluate(
      `(async () => { const m = await import(new URL('dom.js', location.href).href); return ${JSON.stringify(EXPECTED_UNSAFE)}` +
        `.map((cp) => m.visible('a' + String.fromCodePoint(cp) + 'b')); })()`,
    )) as string[];
    expect(got).toEqual(EXPECTED_UNSAFE.map((cp) => `a${visibleForm(cp)}b`));
    // Tab and newline stay (the page wraps pre-formatted text), as in the terminal's block().
    expect(await page.evaluate(`import(new URL('dom.js', location.href).href).then((m) => m.visible('a\\tb\\nc'))`)).toBe('a\tb\nc');
  });

  it('renders every string as inert text, even when shown whole and searched', async () => {
    await page.locator('#rows .row[data-kind="turn"] .head').first().click();
    await page.waitForSelector('#rows .item[data-item="tool"]');
    // The output's preview is taller than its 22em box: a note under it says so, and lifts the cap.
    const note = page.locator('#rows .item[data-item="tool"] .tool-result .clip-note').first();
    await note.waitFor();
    expect(await note.textContent()).toMatch(/^continues below \(\d+% hidden; scroll inside the block\)/);
    await note.locator('button', { hasText: 'expand the block' }).click();
    expect(await page.locator('#rows .item[data-item="tool"] .tool-result pre.full').count()).toBe(1);
    // Open every disclosure, show the 5 MB output whole, search for markup, open the model view.
    await page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })");
    await page.locator('#rows .item[data-item="tool"] .tool-result button', { hasText: 'show all' }).click();
    // The whole output is in the page now, shown a window at a time.
    const total = (SCRIPT.length + BIG).toLocaleString('en-US');
    const windowNav = page.locator('#rows .tool-result .cut.window');
    await windowNav.waitFor();
    expect(await windowNav.textContent()).toContain(`characters 1–65,536 of ${total}`);
    await windowNav.locator('button', { hasText: 'next' }).click();
    await page.waitForFunction(() =>
      (globalThis as any).document.querySelector('#rows .tool-result .cut.window').textContent.includes('characters 65,537–131,072'),
    );
    expect(
      await page
        .locator('#rows .tool-result pre')
        .first()
        .evaluate((p) => (p as unknown as { textContent: string }).textContent),
    ).toBe('A'.repeat(65536));
    await windowNav.locator('button', { hasText: 'previous' }).click();
    await page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })");
    await page.fill('#search', '<script>');
    await page.press('#search', 'Enter');
    await page.waitForFunction(() => / of /.test((globalThis as any).document.querySelector('#search-status').textContent));
    await page.keyboard.press('Escape');
    await page.keyboard.press('m');
    await page.fill('#model-seq', String(lastSeq));
    await page.press('#model-seq', 'Enter');
    await page.waitForSelector('#model-list .msg');
    await page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })");

    expect(await page.evaluate('typeof window.__pwned')).toBe('undefined');
    expect(dialogs).toEqual([]);
    // No element the log describes exists; the page's own single script is the only one.
    expect(
      await page.evaluate(
        "document.querySelectorAll('img, iframe, svg, style, b, i, object, embed, frame, video, audio, " +
          "form:not(#search-form):not(#sessions-form):not(#jump-form):not(#model-form)').length",
      ),
    ).toBe(0);
    expect(await page.evaluate('document.scripts.length')).toBe(1);
    // Tooltips are text too: no attribute the page sets from the log holds a live bidi override.
    expect(
      await page.evaluate(
        "[...document.querySelectorAll('[title]')].map((e) => e.title)" + '.filter((t) => /[\\u202a-\\u202e\\u2066-\\u2069]/.test(t))',
      ),
    ).toEqual([]);
    expect(await page.evaluate("document.querySelector('#plugin-b')")).toBeNull();
    expect(await page.evaluate('document.title')).toBe('dsh view');

    // The markup is there, as text.
    const text = (await page.locator('#rows').textContent()) ?? '';
    expect(text).toContain(SCRIPT);
    expect(text).toContain(IMG(2));
    expect(text).toContain(`read${IMG(3)}`);
    expect(text).toContain('<svg onload="window.__pwned = 5"></svg>');
    expect(text).toContain(`<b id="plugin-b">`);
    expect(text).toContain(`CODE${IMG(18)}`);
    // Terminal escapes and bidi controls are shown as escapes, not passed through.
    expect(text).toContain('\\e[31mRED\\e[0m\\e]0;owned title\\x07');
    expect(text).toContain('abc\\u202edcba');
    expect(text).not.toContain('\u001b');
    expect(text).not.toContain('\u202e');
    const header = (await page.locator('#top').textContent()) ?? '';
    expect(header).toContain(`hostile${SCRIPT}`);
    expect(header).toContain(IMG(10));
    expect(await page.locator('#model-list').textContent()).toContain(SCRIPT);

    expect(await page.evaluate('typeof window.__pwned')).toBe('undefined');
    expect(errors).toEqual([]);
    await page.setViewportSize({ width: 1400, height: 1100 });
    await page.screenshot({ path: artifactPath('hostile.png') });
  });
});
