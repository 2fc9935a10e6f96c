/**
 * Access to `../shared` (real dsh logs, recorded provider traffic). CI has it beside the clone; a
 * user's fresh clone does not, so suites that need it skip with a message saying why.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe } from 'vitest';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const sharedDir = process.env.DSH_SHARED_DIR ?? resolve(repoRoot, '..', 'shared');
export const hasShared = existsSync(join(sharedDir, 'fixtures'));

export function sharedPath(...parts: string[]): string {
  return join(sharedDir, ...parts);
}

/** `describe` that runs only when ../shared is present, and otherwise says why it skipped. */
export function describeShared(name: string, fn: () => void): void {
  if (hasShared) {
    describe(name, fn);
  } else {
    describe.skip(`${name} (skipped: ${sharedDir} not found; it holds the real fixtures)`, fn);
    if (!process.env.DSH_QUIET_SKIPS) {
      console.warn(`[dsh tests] skipping "${name}": ${sharedDir}/fixtures is absent on this machine`);
    }
  }
}
