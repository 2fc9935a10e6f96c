/**
 * /proc/<pid>/stat: the fields after a command name that holds spaces, parentheses or newlines,
 * read the way the store (lock liveness), the shell tool (process groups) and the CLI (the
 * environment block) all read them.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { procStatFields } from '../../src/model/proc-stat.js';

const onLinux = process.platform === 'linux';

describe('procStatFields', () => {
  it.runIf(onLinux)("reads this process's own line as ps reads it: pid, process group, start after the name", () => {
    const fields = procStatFields(readFileSync('/proc/self/stat', 'utf8'))!;
    expect(fields[1]).toBe(String(process.pid));
    expect(fields[2]).toBe(readFileSync('/proc/self/comm', 'utf8').replace(/\n$/, ''));
    expect(fields[3]).toMatch(/^[A-Za-z]$/);
    const [pgid] = execFileSync('ps', ['-o', 'pgid=', '-p', String(process.pid)], { encoding: 'utf8' })
      .trim()
      .split(/\s+/);
    expect(fields[5]).toBe(pgid);
    // Every field through exit_code (52) on the kernels we run on; the environment block's bounds are ordered.
    expect(fields.length).toBeGreaterThanOrEqual(53);
    expect(Number(fields[51])).toBeGreaterThan(Number(fields[50]));
  });

  it('counts the fields after the last parenthesis, whatever the name holds', () => {
    const tail = 'S 1 42 42 0 -1 4194560';
    expect(procStatFields(`77 (a) b (c) ${tail}\n`)!.slice(1, 6)).toEqual(['77', 'a) b (c', 'S', '1', '42']);
    expect(procStatFields(`77 (x\ny) ${tail}\n`)![2]).toBe('x\ny');
    expect(procStatFields(`77 () ${tail}`)![2]).toBe('');
    expect(procStatFields(`77 ()) ${tail}`)![2]).toBe(')');
  });

  it('refuses what is not a stat line: nothing, a cut line, no fields after the name', () => {
    for (const bad of ['', 'hello', '77', '77 (abc', '77 (abc)', '77 (abc)\n', '77 (abc)S 1', ') 77 (x'])
      expect(procStatFields(bad), JSON.stringify(bad)).toBeUndefined();
  });

  it('recovers every field from any name (property)', () => {
    const field = fc.stringMatching(/^-?[0-9A-Za-z]{1,12}$/);
    fc.assert(
      fc.property(
        fc.nat(),
        fc.string({ unit: 'binary', maxLength: 20 }),
        fc.array(field, { minLength: 1, maxLength: 60 }),
        (pid, comm, rest) => {
          const line = `${pid} (${comm}) ${rest.join(' ')}\n`;
          expect(procStatFields(line)).toEqual(['', String(pid), comm, ...rest]);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
