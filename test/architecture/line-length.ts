/**
 * The line-length rule (issue 12 item 6, "long lines wrapped"). Biome's formatter wraps code at
 * 140 columns but cannot split a string, template or regex literal, nor a comment, so those
 * stay long unless written wrapped; this check makes a long one fail the suite, naming
 * file:line. Width is counted in columns as an editor shows them: one per code point, and a tab
 * to the next multiple of 8 (a comment padded with tabs is as wide on screen as with spaces).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export const LINE_LIMIT = 140;

/** Tab stops, as most editors and terminals set them. */
export const TAB_WIDTH = 8;

/**
 * Which files are code, wherever they are in the tree (a new top-level folder is scanned without
 * being listed anywhere). Code is TypeScript and
 * JavaScript in every module flavour (.ts/.mts/.cts/.tsx, .js/.mjs/.cjs/.jsx), shell scripts
 * (`.sh`, or no extension and a `#!` first line, as .ci/run and .ci/pg), CSS and HTML.
 * Left out on purpose: JSON, because package.json's `scripts` are one-line shell commands that
 * JSON cannot split (a script too long to read belongs in a file under scripts/ or .ci/), and
 * the generated JSON Schemas are held equal to their generator's output by their own test;
 * Markdown, because its tables and command-output samples cannot wrap without changing what
 * they show (docs are prose, reviewed as such).
 */
const CODE_FILE = /\.(?:[cm]?ts|tsx|[cm]?js|jsx|sh|css|html)$/;
/** A file without an extension is code when it is a script: its first line is a `#!` line. */
const isScript = (path: string, name: string): boolean => !name.includes('.') && readFileSync(path, 'utf8').startsWith('#!');
/** Installed packages, build output and git's own: none of it is written here. */
const SKIP_DIRS = new Set(['node_modules', 'dist', 'dist-bench', 'dist-scripts', 'dist-examples', 'coverage', '.bench-data', '.git']);

/** The code files of the tree at `root`, as paths relative to it, sorted. */
export function codeFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) {
        if (!SKIP_DIRS.has(e.name)) walk(join(dir, e.name));
      } else if (e.isFile() && (CODE_FILE.test(e.name) || isScript(join(dir, e.name), e.name))) {
        out.push(relative(root, join(dir, e.name)));
      }
    }
  };
  walk(root);
  return out.sort();
}

/** `file:line: N columns` for every line of `text` wider than the limit. */
export function longLines(file: string, text: string, limit = LINE_LIMIT): string[] {
  const out: string[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    let width = 0;
    for (const ch of line) width = ch === '\t' ? (Math.floor(width / TAB_WIDTH) + 1) * TAB_WIDTH : width + 1;
    if (width > limit) out.push(`${file}:${i + 1}: ${width} columns`);
  });
  return out;
}

/** Every long line in the code files of the tree at `root`. */
export function longLinesIn(root: string, limit = LINE_LIMIT): string[] {
  return codeFiles(root).flatMap((f) => longLines(f, readFileSync(join(root, f), 'utf8'), limit));
}
