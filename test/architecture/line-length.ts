/**
 * The line-length rule (issue 12 item 6, "long lines wrapped"). Biome's formatter wraps code at
 * 140 columns but cannot split a string, template or regex literal, nor a comment, so those
 * stay long unless written wrapped; this check makes a long one fail the suite, naming
 * file:line. Width is counted in code points, as an editor shows them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export const LINE_LIMIT = 140;

/** Where the code lives: every TypeScript and JavaScript file under these, and at the root. */
export const CODE_ROOTS = ['src', 'test', 'bench', 'scripts', 'examples', 'bin'];
const CODE_FILE = /\.(?:[cm]?ts|[cm]?js)$/;
const SKIP_DIRS = new Set(['node_modules', 'dist', 'dist-bench', 'dist-scripts']);

/** The code files of the tree at `root`, as paths relative to it, sorted. */
export function codeFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) {
        if (!SKIP_DIRS.has(e.name)) walk(join(dir, e.name));
      } else if (e.isFile() && CODE_FILE.test(e.name)) out.push(relative(root, join(dir, e.name)));
    }
  };
  for (const r of CODE_ROOTS) {
    try {
      walk(join(root, r));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
  for (const e of readdirSync(root, { withFileTypes: true })) if (e.isFile() && CODE_FILE.test(e.name)) out.push(e.name);
  return out.sort();
}

/** `file:line: N columns` for every line of `text` wider than the limit. */
export function longLines(file: string, text: string, limit = LINE_LIMIT): string[] {
  const out: string[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const width = [...line].length;
    if (width > limit) out.push(`${file}:${i + 1}: ${width} columns`);
  });
  return out;
}

/** Every long line in the code files of the tree at `root`. */
export function longLinesIn(root: string, limit = LINE_LIMIT): string[] {
  return codeFiles(root).flatMap((f) => longLines(f, readFileSync(join(root, f), 'utf8'), limit));
}
