/**
 * A viewer over a log written for one test file: `text()` goes to `<name>.jsonl` in a fresh temp
 * directory, served from the file's beforeAll and closed and removed in its afterAll. The setup
 * jump, jump-tall and panels each wrote out by hand.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startViewer, type Viewer } from '../../../src/viewer/index.js';

/** The served viewer; `viewer` is set once the beforeAll it registers has run. */
export interface ServedLog {
  readonly viewer: Viewer;
}

/** Register the hooks in the calling scope (a file or a describe); `timeout` is the beforeAll's, in ms. */
export function serveLog(name: string, text: () => string, timeout?: number): ServedLog {
  let dir: string | undefined;
  let viewer: Viewer | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `dsh-viewer-${name}-`));
    const path = join(dir, `${name}.jsonl`);
    writeFileSync(path, text());
    viewer = await startViewer({ source: path });
  }, timeout);
  afterAll(async () => {
    await viewer?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return {
    get viewer(): Viewer {
      if (!viewer) throw new Error(`the viewer of ${name}.jsonl is not started (its beforeAll has not run)`);
      return viewer;
    },
  };
}
