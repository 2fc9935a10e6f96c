/**
 * The bench scripts' arguments (bench/args.ts): `--help` prints the usage and exits 0; an unknown
 * option, a malformed count or an unknown phase exits 2 with one line naming it and the usage,
 * before any work starts (no stack trace, no run with NaN repetitions).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildChild } from '../store/support/build.js';
import { repoRoot } from '../support/shared.js';

const run = (script: string, args: string[]) => {
  const r = spawnSync(process.execPath, [buildChild(join(repoRoot, 'bench', script)), ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

describe('bench script arguments', () => {
  it('--help and -h print the usage, naming every option, and exit 0', () => {
    for (const flag of ['--help', '-h']) {
      const r = run('escape.ts', [flag]);
      expect(r.code).toBe(0);
      expect(r.err).toBe('');
      expect(r.out).toMatch(/^bench\/escape\.js: /);
      for (const o of ['--reps N', '--turns N', '-h, --help']) expect(r.out).toContain(o);
    }
  });

  it.each([
    [['--bogus'], "Unknown option '--bogus'"],
    [['--reps', '0'], '--reps must be a positive integer, got "0"'],
    [['--reps', 'x'], '--reps must be a positive integer, got "x"'],
    [['--reps', '2.5'], '--reps must be a positive integer, got "2.5"'],
    [['--turns', '1e3'], '--turns must be a positive integer, got "1e3"'],
    [['stray'], 'Unexpected argument'],
  ])('escape.js %j exits 2 naming the problem, before any output', (args, message) => {
    const r = run('escape.ts', args);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err.split('\n')[0]).toContain(message);
    expect(r.err).toContain('bench/escape.js: ');
  });

  it('a phase that does not exist is refused by name, with the phases there are', () => {
    const r = run('main.ts', ['--only', 'derive,nope']);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err.split('\n')[0]).toBe('--only "nope": one of derive, seed, encode, decode, longline, query, rss');
  });
});
