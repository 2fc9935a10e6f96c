/**
 * dsh's newer-format logs (formats 2–4): those in ../shared/fixtures/dsh-next, plus the ones this
 * repository fetched from dsh's public repository itself (test/fixtures/dsh-next, see SOURCES.md
 * there), so a fetched log is tested wherever the suite runs, not only on the machine that
 * fetched it. One list, by file name; a name in both places is read from ../shared.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, sharedDir } from './shared.js';

export const sharedNextDir = join(sharedDir, 'fixtures', 'dsh-next');
export const repoNextDir = join(repoRoot, 'test', 'fixtures', 'dsh-next');

/** Every newer-format log by name, with its path; `keep` filters names. */
export function nextLogs(keep: (name: string) => boolean = (f) => f.endsWith('.jsonl')): Map<string, string> {
  const out = new Map<string, string>();
  for (const dir of [sharedNextDir, repoNextDir]) {
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir)) if (keep(f) && !out.has(f)) out.set(f, join(dir, f));
  }
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
