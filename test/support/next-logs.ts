/**
 * dsh's newer-format logs (formats 2–4) in ../shared/fixtures/dsh-next, by file name.
 * Logs fetched from dsh's public repository are data that lives only in that shared folder, never
 * in this repository; a test that needs one that is absent skips with a message.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { sharedDir } from './shared.js';

export const sharedNextDir = join(sharedDir, 'fixtures', 'dsh-next');

/** Every newer-format log by name, with its path; `keep` filters names. */
export function nextLogs(keep: (name: string) => boolean = (f) => f.endsWith('.jsonl')): Map<string, string> {
  const out = new Map<string, string>();
  if (!existsSync(sharedNextDir)) return out;
  for (const f of readdirSync(sharedNextDir).sort()) if (keep(f)) out.set(f, join(sharedNextDir, f));
  return out;
}
