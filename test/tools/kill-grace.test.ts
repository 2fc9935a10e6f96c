/**
 * A cancelled command gets SIGTERM and the grace to exit by itself before SIGKILL, under
 * bubblewrap too, where the wrapper (which has no handler for SIGTERM, and whose death takes its
 * PID namespace with it) used to be signalled with the command and kill it within milliseconds.
 * Real bwrap, real processes; the test cancels (or kills the job) once the command says its trap
 * is set.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bubblewrapArgs, probeBubblewrap } from '../../src/tools/shell/bubblewrap.js';
import type { ShellSpawnPlan } from '../../src/tools/shell/hooks.js';
import { JobRegistry } from '../../src/tools/shell/jobs.js';
import { runForeground, type RunResult } from '../../src/tools/shell/run.js';
import { tempDir } from './helpers.js';

const bwrap = await probeBubblewrap('bwrap');

/** A plan for `command` in bubblewrap (danger-full-access: the test sees its files), and the file it makes when ready. */
function inBubblewrap(command: (ready: string) => string): { plan: ShellSpawnPlan; ready: string } {
  const root = tempDir();
  const ready = join(root, 'ready');
  const args = [...bubblewrapArgs('danger-full-access', root, root), 'bash', '-c', command(ready)];
  return { plan: { file: 'bwrap', args, cwd: root, env: { PATH: process.env.PATH }, diesWithParent: true }, ready };
}

async function until(file: string): Promise<void> {
  while (!existsSync(file)) await new Promise((r) => setTimeout(r, 20));
}

/** The ready file of the latest `cancelled` command (a test reads what the command left next to it). */
let lastReady = '';

/** `command` in the foreground, cancelled once it is ready. */
async function cancelled(command: (ready: string) => string): Promise<RunResult> {
  const { plan, ready } = inBubblewrap(command);
  lastReady = ready;
  const cancel = new AbortController();
  const result = runForeground(plan, { timeoutMs: 120_000, signal: cancel.signal, maxOutputBytes: 10_000 });
  await until(ready);
  cancel.abort();
  return result;
}

describe.skipIf(!bwrap.ok)('the kill grace under bubblewrap', () => {
  it('a command that handles SIGTERM exits by its handler, with its own status', { timeout: 60_000 }, async () => {
    const r = await cancelled((ready) => `trap 'echo handled; exit 7' TERM; touch ${ready}; sleep 300 & wait`);
    expect({ exitCode: r.exitCode, signal: r.signal, aborted: r.aborted, stdout: r.stdout.text }).toEqual({
      exitCode: 7,
      signal: null,
      aborted: true,
      stdout: 'handled\n',
    });
  });

  it('a command that ignores SIGTERM is killed when the grace is over (SIGKILL)', { timeout: 60_000 }, async () => {
    const r = await cancelled((ready) => `trap '' TERM; touch ${ready}; sleep 300`);
    expect({ exitCode: r.exitCode, signal: r.signal, aborted: r.aborted }).toEqual({ exitCode: null, signal: 'SIGKILL', aborted: true });
  });

  it('a process that left the group (setsid) inside the sandbox gets the SIGTERM and its grace too', { timeout: 60_000 }, async () => {
    // The daemon says it is ready only once its trap is set; the command exits 3 on SIGTERM, a
    // second later, so the daemon's handler has the time to run before the namespace goes.
    const r = await cancelled(
      (ready) =>
        `setsid -f bash -c "trap 'echo daemon handled >> ${ready}.log; exit 0' TERM; touch ${ready}; sleep 300 & wait"; ` +
        `trap 'sleep 1; exit 3' TERM; sleep 300 & wait`,
    );
    expect({ exitCode: r.exitCode, aborted: r.aborted }).toEqual({ exitCode: 3, aborted: true });
    expect(readFileSync(`${lastReady}.log`, 'utf8')).toBe('daemon handled\n');
  });

  it('job_kill: a background job that handles SIGTERM exits by its handler', { timeout: 60_000 }, async () => {
    const { plan, ready } = inBubblewrap((file) => `trap 'echo handled; exit 7' TERM; touch ${file}; sleep 300 & wait`);
    const job = new JobRegistry().start('trapper', plan, undefined);
    await until(ready);
    expect(job.kill()).toBe(true);
    await job.done;
    const read = job.read();
    expect({ status: read.status, exitCode: read.exitCode, signal: read.signal, output: read.delta }).toEqual({
      status: 'killed',
      exitCode: 7,
      signal: null,
      output: 'handled\n',
    });
  });
});
