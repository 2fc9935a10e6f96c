/**
 * Standard output that fails (a full disk: /dev/full answers every write with ENOSPC) is one line
 * on stderr and exit status 1, not Node's uncaught-exception report with dsh's stack.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { builtBin } from './support/run.js';
import { tempDir } from './support/agent.js';

function toFull(args: readonly string[]): { status: number | null; stderr: string } {
  const fd = openSync('/dev/full', 'w');
  try {
    const r = spawnSync(process.execPath, [builtBin(), ...args], {
      stdio: ['ignore', fd, 'pipe'],
      env: { ...process.env, DSH_HOME: tempDir(), NO_COLOR: '1' },
      encoding: 'utf8',
    });
    return { status: r.status, stderr: r.stderr };
  } finally {
    closeSync(fd);
  }
}

describe.skipIf(!existsSync('/dev/full'))('standard output that cannot be written', () => {
  it('is one line naming the reason and its code, exit 1', () => {
    for (const args of [['--version'], ['sessions', '--json']]) {
      const r = toFull(args);
      expect(r.stderr, args.join(' ')).toBe('dsh: cannot write to standard output: no space left on device [ENOSPC]\n');
      expect(r.status).toBe(1);
    }
  });
});
