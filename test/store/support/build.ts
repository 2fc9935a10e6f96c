/**
 * Child processes for crash and race tests run plain JavaScript: the child script and every
 * module it reaches by relative import are transpiled file by file (the project compiles with
 * `isolatedModules`, so per-file transpilation is exact) into a directory keyed by a hash of the
 * sources, under node_modules/.cache/dsh-store-test. Test files share one build.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { repoRoot } from '../../support/shared.js';

const cacheRoot = join(repoRoot, 'node_modules', '.cache', 'dsh-store-test');

function closure(entry: string): Map<string, string> {
  const files = new Map<string, string>();
  const visit = (file: string): void => {
    if (files.has(file)) return;
    const text = readFileSync(file, 'utf8');
    files.set(file, text);
    for (const ref of ts.preProcessFile(text, true, true).importedFiles) {
      if (!ref.fileName.startsWith('.')) continue;
      const target = resolve(dirname(file), ref.fileName.replace(/\.js$/, '.ts'));
      visit(existsSync(target) ? target : join(target.replace(/\.ts$/, ''), 'index.ts'));
    }
  };
  visit(entry);
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : 1)));
}

const built = new Map<string, string>();

/** Path of the JavaScript build of `entry` (a .ts file in this repo). */
export function buildChild(entry: string): string {
  const cached = built.get(entry);
  if (cached) return cached;
  const files = closure(entry);
  const h = createHash('sha256');
  for (const [f, text] of files) h.update(relative(repoRoot, f)).update('\0').update(text).update('\0');
  const dir = join(cacheRoot, h.digest('hex').slice(0, 16));
  const out = join(dir, relative(repoRoot, entry)).replace(/\.ts$/, '.js');
  if (!existsSync(out)) {
    const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
    const options: ts.CompilerOptions = {
      target: ts.ScriptTarget.ES2023,
      module: ts.ModuleKind.ESNext,
      verbatimModuleSyntax: true,
      isolatedModules: true,
    };
    for (const [file, text] of files) {
      const js = ts.transpileModule(text, { compilerOptions: options, fileName: file }).outputText;
      const dest = join(tmp, relative(repoRoot, file)).replace(/\.ts$/, '.js');
      mkdirSync(dirname(dest), { recursive: true });
      writeFileSync(dest, js);
    }
    writeFileSync(join(tmp, 'package.json'), '{"type":"module"}\n');
    try {
      renameSync(tmp, dir);
    } catch {
      rmSync(tmp, { recursive: true, force: true }); // another test file built the same sources
    }
  }
  built.set(entry, out);
  return out;
}
