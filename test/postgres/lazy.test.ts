/**
 * The `pg` driver is loaded on first use only: no module that `dsh` loads at start (the static,
 * runtime import closure of the CLI entry and of the package entry) imports it, so a command that
 * never touches PostgreSQL does not pay for it. Imports are read with the TypeScript parser
 * (test/architecture/imports.ts); type-only and dynamic imports do not load anything at start.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readImports } from '../architecture/imports.js';
import { repoRoot } from '../support/shared.js';

/** Files reached from `entry` through runtime static imports, and the packages each imports so. */
function staticClosure(entry: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const visit = (file: string): void => {
    if (out.has(file)) return;
    const packages: string[] = [];
    out.set(file, packages);
    for (const ref of readImports(file, readFileSync(file, 'utf8')).imports) {
      if (ref.typeOnly || ref.form === 'dynamic-import' || ref.form === 'module-augmentation') continue;
      if (!ref.specifier.startsWith('.')) {
        packages.push(ref.specifier);
        continue;
      }
      const target = resolve(dirname(file), ref.specifier.replace(/\.js$/, '.ts'));
      visit(existsSync(target) ? target : join(target.replace(/\.ts$/, ''), 'index.ts'));
    }
  };
  visit(entry);
  return out;
}

describe('pg is imported lazily', () => {
  it.each(['src/cli/main.ts', 'src/index.ts'])('nothing %s loads at start imports pg', (entry) => {
    const closure = staticClosure(join(repoRoot, entry));
    const offenders = [...closure]
      .filter(([, pkgs]) => pkgs.some((p) => p === 'pg' || p.startsWith('pg/')))
      .map(([f]) => relative(repoRoot, f));
    expect(offenders).toEqual([]);
  });

  it('the check sees through the closure (the PostgreSQL store is in the package entry, type imports of pg with it)', () => {
    const closure = staticClosure(join(repoRoot, 'src/index.ts'));
    expect([...closure.keys()].map((f) => relative(repoRoot, f))).toContain('src/postgres/store.ts');
    // A module importing pg for real is caught: the connect module does, dynamically only.
    const connect = readImports('connect.ts', readFileSync(join(repoRoot, 'src/postgres/connect.ts'), 'utf8')).imports.filter(
      (r) => r.specifier === 'pg',
    );
    expect(connect.length).toBeGreaterThan(0);
    expect(connect.every((r) => r.typeOnly || r.form === 'dynamic-import')).toBe(true);
  });
});
