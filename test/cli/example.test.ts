/**
 * The bundled example log is what its generator (real `Session` API, fixed clock) produces, and
 * the CLI accepts it with no warnings at all.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/shared.js';
import { makeFixTypo } from './support/make-fix-typo.js';
import { dsh } from './support/run.js';

const examplePath = join(repoRoot, 'examples', 'fix-typo.jsonl');

describe('examples/fix-typo.jsonl', () => {
  it('is exactly what the generator writes', () => {
    const generated = makeFixTypo();
    if (process.env.DSH_UPDATE_EXAMPLE === '1') writeFileSync(examplePath, generated);
    expect(readFileSync(examplePath, 'utf8')).toBe(generated);
  });

  it('generates the same bytes twice (fixed clock and ids)', () => {
    expect(makeFixTypo()).toBe(makeFixTypo());
  });

  it('passes dsh log check --strict', async () => {
    const r = await dsh(['log', 'check', '--strict', examplePath]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/: ok · \d+ events in \d+ rows · 2 turns · 6 steps · \d+ messages$/m);
  });

  it('stores runs of three or more deltas as packed rows', () => {
    const lines = readFileSync(examplePath, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string });
    const tags = new Set(lines.map((l) => l.type));
    expect(tags).toContain('reasoning-chunks');
    expect(tags).toContain('text-chunks');
    expect(tags).toContain('tool-call-chunks');
    expect(lines[0]).toMatchObject({ type: 'session', version: 0, cwd: '/tmp/demo-repo', delegationDepth: 0 });
  });
});
