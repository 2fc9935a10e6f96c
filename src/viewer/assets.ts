/**
 * The page: plain HTML, CSS and ES modules in `src/viewer/page/`, served as they are (no build
 * step, no framework). They are read once at start into memory and served by exact name, so no
 * request path ever reaches the file system.
 *
 * Running from the sources, the folder sits beside this module; running from `dist/viewer/`, it
 * is found at `src/viewer/page/` of the package (which ships it).
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ViewerError } from './errors.js';
import { unsafeCharsModule } from '../model/unsafe-chars.js';

export interface Asset {
  type: string;
  body: Buffer;
}

const TYPES: Readonly<Record<string, string>> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
};

const NAME = /^[a-z0-9-]+\.(html|js|css|svg)$/;

export function pageDir(): string {
  const candidates = [new URL('./page/', import.meta.url), new URL('../../src/viewer/page/', import.meta.url)];
  for (const c of candidates) {
    const dir = fileURLToPath(c);
    if (existsSync(`${dir}index.html`)) return dir;
  }
  throw new ViewerError(
    'ASSETS_MISSING',
    `the viewer's page files were not found (looked in ${candidates.map((c) => fileURLToPath(c)).join(' and ')})`,
  );
}

/**
 * Page files by name (`index.html`, `app.js`, …), and `unsafe-chars.js`: the table of characters
 * the page shows as escapes, made from the same module the terminal uses, so the two cannot differ.
 */
export function loadAssets(dir = pageDir()): Map<string, Asset> {
  const out = new Map<string, Asset>();
  for (const name of readdirSync(dir)) {
    const m = NAME.exec(name);
    if (!m) continue;
    out.set(name, { type: TYPES[m[1]!]!, body: readFileSync(`${dir}${name}`) });
  }
  out.set('unsafe-chars.js', { type: TYPES['js']!, body: Buffer.from(unsafeCharsModule(), 'utf8') });
  return out;
}
