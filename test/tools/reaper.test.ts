/**
 * The reaper (src/tools/shell/reaper.ts) against real processes: a signal that reaches it at any
 * moment, even while it is still starting the command, is passed on to everything the command
 * started, and its exit reports how the command ended.
 *
 * The window between starting the command (fork) and installing its handlers lasts microseconds;
 * the test widens it without a timer: Perl loads a module of the test's that makes the reaper's
 * `fork` wait, in the parent only, until the command has sent its signal and said so.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { reaperAvailable, underReaper } from '../../src/tools/shell/reaper.js';
import type { ShellSpawnPlan } from '../../src/tools/shell/hooks.js';
import { runForeground } from '../../src/tools/shell/run.js';
import { JobRegistry } from '../../src/tools/shell/jobs.js';
import { PERSISTENT_SHELL_COMMAND, PersistentShell } from '../../src/tools/shell/persistent.js';
import { killQuietly, processesWith } from '../support/processes.js';
import { tempDir } from './helpers.js';

/** Processes whose argv[0] is `name` (started as `exec -a name …`). */
const named = (name: string): number[] => processesWith(name).flatMap((p) => (p.argv[0] === name ? [p.pid] : []));
/** The command lines of the processes that mention `token`, whatever they are running. */
const alive = (token: string): string[] => processesWith(token).map((p) => p.argv.join(' '));

/** What a test started, ended after it whatever happened: process groups, processes by a token. */
const groups: number[] = [];
const tokens: string[] = [];
afterEach(() => {
  for (const pgid of groups.splice(0)) killQuietly(-pgid);
  for (const token of tokens.splice(0)) for (const p of processesWith(token)) killQuietly(p.pid);
});

interface Reaped {
  pid: number;
  /** How the reaper exited. */
  exited: Promise<{ code: number | null; signal: string | null }>;
}

/** `command` under the reaper, in its own process group as dsh runs it. */
function reap(command: string, env: NodeJS.ProcessEnv = process.env): Reaped {
  const { file, args } = underReaper('bash', ['-c', command]);
  const child = spawn(file, args, { stdio: 'ignore', detached: true, env });
  groups.push(child.pid!);
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  return { pid: child.pid!, exited };
}

describe.skipIf(!reaperAvailable())('the reaper', () => {
  it('a SIGTERM that arrives while it starts the command reaches every process the command started', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-reaper-'));
    writeFileSync(
      join(dir, 'HoldFork.pm'),
      [
        'package HoldFork;',
        '# The parent side of fork() returns only once the file $ENV{HOLD_FORK_UNTIL} exists.',
        'BEGIN { *CORE::GLOBAL::fork = sub { my $pid = CORE::fork();',
        '  if ($pid) { select(undef, undef, undef, 0.01) until -e $ENV{HOLD_FORK_UNTIL}; } return $pid; }; }',
        '1;',
      ].join('\n'),
    );
    const token = `dshreaper${randomBytes(4).toString('hex')}`;
    tokens.push(token);
    const go = join(dir, 'go');
    // A daemon out of the command's process group (only the reaper can still end it), then the
    // signal to the reaper (the command's parent), then the go-ahead for the reaper's fork.
    const command = `setsid -f bash -c 'exec -a ${token} sleep 300'; kill -TERM $PPID; touch ${go}; exec sleep 300`;
    const env = { ...process.env, PERL5LIB: dir, PERL5OPT: '-MHoldFork', HOLD_FORK_UNTIL: go };
    // The command died of the signal it was passed, and the reaper says so.
    expect(await reap(command, env).exited).toEqual({ code: null, signal: 'SIGTERM' });
    // Nothing it started outlives it (before: the reaper died of the SIGTERM, the daemon lived on).
    expect(alive(token)).toEqual([]);
  });

  it('a command that ignores SIGTERM is killed after the grace, and the reaper exits as killed, not 0', { timeout: 60_000 }, async () => {
    const token = `dshreaper${randomBytes(4).toString('hex')}`;
    tokens.push(token);
    const r = reap(`trap '' TERM; exec -a ${token} sleep 300`);
    while (named(token).length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    process.kill(-r.pid, 'SIGTERM'); // as dsh cancels a command
    expect(await r.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(alive(token)).toEqual([]);
  });
});

/** A fresh token for a process the test must find (`exec -a TOKEN …`); ended after the test. */
function newToken(): string {
  const token = `dshreaper${randomBytes(4).toString('hex')}`;
  tokens.push(token);
  return token;
}

/**
 * A plain `bash -c` plan, as dsh gives one to `spawnPlan` (which puts it under the reaper). HOME
 * is an empty directory: on a socket for stdin `bash -c` reads `~/.bashrc`, which is not the test's.
 */
function bashPlan(command: string): ShellSpawnPlan {
  const home = tempDir('dsh-reaper-home-');
  return { file: 'bash', args: ['-c', command], cwd: home, env: { PATH: process.env.PATH, HOME: home } };
}

async function untilNamed(token: string): Promise<void> {
  while (named(token).length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
}

/**
 * A command that ignores SIGTERM and SIGHUP and has left a daemon, out of its process group, that
 * ignores them too: only the reaper can end that daemon. dsh's own SIGKILL of the group at the end
 * of the grace used to come first (both 2 s; the persistent shell's 1 s), killing the reaper
 * before its own grace ran out: the daemon went to init and kept the output pipe, and the call
 * never returned.
 */
const stubborn = (token: string): string => `setsid -f bash -c "trap '' TERM HUP; exec -a ${token} sleep 300"; trap '' TERM HUP; sleep 300`;

describe.skipIf(!reaperAvailable())('stopping a command run under the reaper', () => {
  it('a cancel ends what left the group too, after the grace (SIGKILL)', { timeout: 20_000 }, async () => {
    const token = newToken();
    const cancel = new AbortController();
    const result = runForeground(bashPlan(stubborn(token)), { timeoutMs: 120_000, signal: cancel.signal, maxOutputBytes: 1000 });
    await untilNamed(token);
    cancel.abort();
    const r = await result;
    expect({ exitCode: r.exitCode, signal: r.signal, aborted: r.aborted }).toEqual({ exitCode: null, signal: 'SIGKILL', aborted: true });
    expect(alive(token)).toEqual([]);
  });

  it('job_kill ends what left the group too, and the job says killed', { timeout: 20_000 }, async () => {
    const token = newToken();
    const job = new JobRegistry().start('stubborn', bashPlan(stubborn(token)), undefined);
    await untilNamed(token);
    expect(job.kill()).toBe(true);
    await job.done;
    expect({ status: job.status, exitCode: job.exitCode, signal: job.signal }).toEqual({
      status: 'killed',
      exitCode: null,
      signal: 'SIGKILL',
    });
    expect(alive(token)).toEqual([]);
  });

  it('a persistent-shell cancel ends what left the group too', { timeout: 20_000 }, async () => {
    const token = newToken();
    const shell = PersistentShell.start(bashPlan(PERSISTENT_SHELL_COMMAND));
    const cancel = new AbortController();
    const result = shell.run(stubborn(token), { timeoutMs: 120_000, signal: cancel.signal, maxOutputBytes: 1000 });
    await untilNamed(token);
    cancel.abort();
    expect((await result).kind).toBe('aborted');
    // The shell is gone; what it had the reaper kill may still be on its way out.
    for (let i = 0; i < 100 && alive(token).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(alive(token)).toEqual([]);
  });

  // A command that kills the reaper keeps what it setsid-ed (docs/tools.md says so); what it must
  // not do is hang dsh: its daemon holds the output pipe, and the call used to wait for that pipe
  // to close, past its timeout and any cancel.
  const killsItsReaper = (token: string): string => `setsid -f bash -c "exec -a ${token} sleep 300"; kill -9 $PPID`;

  it('a foreground command that killed the reaper still returns, though its daemon holds the output pipe', {
    timeout: 20_000,
  }, async () => {
    const token = newToken();
    const r = await runForeground(bashPlan(killsItsReaper(token)), {
      timeoutMs: 5000,
      signal: new AbortController().signal,
      maxOutputBytes: 1000,
    });
    expect({ exitCode: r.exitCode, signal: r.signal, timedOut: r.timedOut }).toEqual({
      exitCode: null,
      signal: 'SIGKILL',
      timedOut: false,
    });
  });

  it('a background job whose command killed the reaper still ends', { timeout: 20_000 }, async () => {
    const token = newToken();
    const job = new JobRegistry().start('killer', bashPlan(killsItsReaper(token)), undefined);
    await job.done;
    expect({ status: job.status, exitCode: job.exitCode, signal: job.signal }).toEqual({
      status: 'failed',
      exitCode: null,
      signal: 'SIGKILL',
    });
  });
});
