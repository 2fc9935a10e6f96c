/**
 * Headless Chromium for the page tests: Debian's `chromium` package driven by playwright-core
 * (never a browser playwright downloads). Each test file launches one browser, with a fresh
 * profile directory, and shares it across its tests. Without Chromium the browser suites skip,
 * saying how to install it.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { describe } from 'vitest';
import { repoRoot } from '../../support/shared.js';

export const CHROMIUM = process.env.DSH_CHROMIUM ?? '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);

/** Screenshots for a human to look at (gitignored). */
export const ARTIFACTS = join(repoRoot, 'test', 'viewer', '__artifacts__');

export function describeBrowser(name: string, fn: () => void): void {
  if (hasChromium) {
    describe(name, fn);
    return;
  }
  const how = 'install it with `apt-get update && apt-get install -y chromium` (or set DSH_CHROMIUM to a Chromium binary)';
  describe.skip(`${name} (skipped: no Chromium at ${CHROMIUM}; ${how})`, fn);
  if (!process.env.DSH_QUIET_SKIPS) console.warn(`[dsh tests] skipping "${name}": no Chromium at ${CHROMIUM}; ${how}`);
}

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'dsh-viewer-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 900 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Page errors and console errors, collected so a test can assert there were none. */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  return errors;
}

/** Open the viewer's page and wait until it has drawn its first rows. */
export async function openViewer(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.waitForSelector('body[data-ready="1"]');
  // A function, not a string: the page's CSP forbids eval, which string predicates need.
  await page.waitForFunction(() => {
    const d = (
      globalThis as unknown as { document: { querySelectorAll(s: string): { length: number }; body: { dataset: Record<string, string> } } }
    ).document;
    return d.querySelectorAll('#rows .row').length > 0 || d.body.dataset.events === '0';
  });
}

export function artifactPath(name: string): string {
  mkdirSync(ARTIFACTS, { recursive: true });
  return join(ARTIFACTS, name);
}

/** A browser with one page open on the viewer, its errors and dialogs collected (dialogs dismissed). */
export async function viewerPage(url: string): Promise<{ browser: Browser; page: Page; errors: string[]; dialogs: string[] }> {
  const browser = await launchBrowser();
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await openViewer(page, url);
  return { browser, page, errors, dialogs };
}
