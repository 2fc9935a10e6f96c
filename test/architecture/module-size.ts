/**
 * "No god files" (docs/architecture.md, issue 12): the size of each module under src/, in lines
 * of code, and the files over the limit.
 *
 * A line of code is a line on which some token of the program stands: blank lines and lines
 * holding only comments (JSDoc included) do not count, so a module is never pushed to drop the
 * comments that say why. A multi-line template literal counts each of its lines (it is code).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';

/**
 * At most this many lines of code per module. Why 500: on 2026-12-02 the 368 modules under src/
 * had a median of 85 lines of code, a 90th percentile of 274 and a 95th of 347; three were over
 * 500 (the statistics fold, the Postgres store, full-text search), each holding two or more jobs a
 * reader takes in separately. agent/agent.ts, 321 lines with its comments once the loop moved out
 * (issue 12 item 2), is the size of a module with one job. 500 leaves room for an honest module and
 * stops the next god file early.
 */
export const MODULE_LIMIT = 500;

const SOURCE = /\.(ts|mts|cts|tsx|js|mjs|cjs|jsx)$/;

/** Lines of code in one module's text (see the header). */
export function codeLines(file: string, text: string): number {
  const kind = /\.(js|mjs|cjs|jsx)$/.test(file) ? ts.ScriptKind.JS : file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const lines = new Set<number>();
  const line = (pos: number): number => sf.getLineAndCharacterOfPosition(pos).line;
  // Each node's first and last line (so a closing `});` counts), and every line of a literal
  // that spans lines. forEachChild skips JSDoc, and a node's start skips the comments before it.
  const visit = (node: ts.Node): void => {
    if (node.kind === ts.SyntaxKind.EndOfFileToken) return;
    const from = line(node.getStart(sf));
    const to = line(Math.max(node.getStart(sf), node.end - 1));
    lines.add(from).add(to);
    if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) for (let l = from + 1; l < to; l++) lines.add(l);
    ts.forEachChild(node, visit);
  };
  ts.forEachChild(sf, visit);
  return lines.size;
}

/** Every source module under `root`/src with its lines of code, paths relative to `root` with `/`. */
export function moduleSizes(root: string): Map<string, number> {
  const out = new Map<string, number>();
  const src = join(root, 'src');
  for (const f of readdirSync(src, { recursive: true }) as string[]) {
    if (!SOURCE.test(f) || f.endsWith('.d.ts')) continue;
    const path = join(src, f);
    out.set(relative(root, path).split(sep).join('/'), codeLines(path, readFileSync(path, 'utf8')));
  }
  return out;
}

/**
 * What breaks the rule in `sizes`: a module over MODULE_LIMIT that is not allowed, an allowed one
 * over its ceiling, and an allowance no longer needed (its module is gone or back under the limit).
 */
export function sizeProblems(sizes: ReadonlyMap<string, number>, allowed: Readonly<Record<string, number>>): string[] {
  const out: string[] = [];
  for (const [file, n] of sizes) {
    const ceiling = allowed[file];
    if (ceiling === undefined && n > MODULE_LIMIT)
      out.push(`${file}: ${n} lines of code, over the limit of ${MODULE_LIMIT}: split it along a seam`);
    else if (ceiling !== undefined && n > ceiling)
      out.push(`${file}: ${n} lines of code, over its allowed ceiling of ${ceiling}: it may shrink, not grow`);
  }
  for (const file of Object.keys(allowed)) {
    const n = sizes.get(file);
    if (n === undefined) out.push(`${file}: allowed but gone: remove its allowance`);
    else if (n <= MODULE_LIMIT) out.push(`${file}: ${n} lines of code, within the limit: remove its allowance`);
  }
  return out.sort();
}
