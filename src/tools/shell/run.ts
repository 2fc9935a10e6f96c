/**
 * Run one spawn plan in the foreground: its own process group (so a timeout or cancel ends the
 * whole tree, not just the shell), no stdin, bounded capture of stdout and stderr.
 *
 * When the shell exits, whatever it left running in its group is ended too: a fresh shell per
 * call means nothing outlives the call (long-running work belongs in `run_in_background`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { WaterfallHook } from '../../hooks/bus.js';
import type { ShellSpawnPlan, ShellSpawnRequest } from './hooks.js';
import { StreamCapture, type CapturedOutput } from './capture.js';
import { reaperAvailable, underReaper } from './reaper.js';
import { procStatFields } from '../../model/proc-stat.js';

export interface RunOptions {
  timeoutMs: number;
  signal: AbortSignal;
  maxOutputBytes: number;
  spillDir?: string;
}

export interface RunResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** The process could not be started at all. */
  spawnError?: string;
  stdout: CapturedOutput;
  stderr: CapturedOutput;
  /** Where the command ran when a `shell/run` listener ran it elsewhere (an editor's terminal). */
  ranIn?: string;
}

export interface ShellRunRequest {
  /** The command as asked for (before any sandbox wrapping): what a runner elsewhere starts. */
  request: ShellSpawnRequest;
  plan: ShellSpawnPlan;
  options: RunOptions;
}

declare module '../../hooks/bus.js' {
  interface HookMap {
    /**
     * A foreground command's run. The terminal runs the plan here (`runForeground`); a listener
     * may run it elsewhere (an editor's terminal over ACP), only when the plan is `unconfined`.
     */
    'shell/run': WaterfallHook<ShellRunRequest, RunResult>;
  }
}

/** How long a process group gets to exit after SIGTERM before SIGKILL. */
const KILL_GRACE_MS = 2000;

/**
 * Children that are a wrapper which ends everything it started when it dies (bubblewrap: its
 * PID namespace goes with it). Such a wrapper has no handler for SIGTERM: signalled with its
 * group it would die at once and take the command with it, so a cancel would kill the command
 * outright instead of giving it the grace to exit. It is left out of every signal but SIGKILL,
 * which goes to its group; the others go to every process in it, in its group or not.
 */
const wrappers = new WeakSet<ChildProcess>();

/**
 * Children that are the reaper. The end of a grace must be its work, not a SIGKILL of its group:
 * only the reaper reaches what left the group (`setsid`), and killed first it cannot (what it
 * would have killed was left to init, and kept dsh's output pipe open). So it is asked
 * (SIGUSR1: kill everything, exit as the command ended), and its group is SIGKILLed only if it
 * is still there a grace later (a reaper stopped by its command).
 */
const reaped = new WeakSet<ChildProcess>();

const running = (child: ChildProcess): boolean => child.exitCode === null && child.signalCode === null;

/**
 * The processes descended from `root` (Linux /proc; empty where it cannot be read). For a
 * wrapper that is everything in its sandbox: what leaves the group (`setsid`) stays in the tree,
 * since an orphan goes to the namespace's init, which descends from the wrapper.
 */
function descendants(root: number): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const children = new Map<number, number[]>();
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // Field 4 is the parent.
      const ppid = Number(procStatFields(readFileSync(`/proc/${name}/stat`, 'utf8'))?.[4]);
      const siblings = children.get(ppid);
      if (siblings) siblings.push(Number(name));
      else children.set(ppid, [Number(name)]);
    } catch {
      // gone meanwhile
    }
  }
  // A set: /proc is not read in one instant, so a reused pid could make the snapshot a cycle.
  const found = new Set<number>();
  const todo = [root];
  for (let parent = todo.pop(); parent !== undefined; parent = todo.pop()) {
    for (const pid of children.get(parent) ?? []) {
      if (pid === root || found.has(pid)) continue;
      found.add(pid);
      todo.push(pid);
    }
  }
  return [...found];
}

function send(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

export function killGroup(child: ChildProcess, sig: NodeJS.Signals): void {
  const pid = child.pid;
  if (pid === undefined) return;
  if (sig === 'SIGKILL' && reaped.has(child) && running(child)) {
    send(pid, 'SIGUSR1');
    setTimeout(() => {
      if (running(child)) send(-pid, 'SIGKILL');
    }, KILL_GRACE_MS).unref();
    return;
  }
  if (sig !== 'SIGKILL' && wrappers.has(child)) {
    for (const member of descendants(pid)) send(member, sig);
    return;
  }
  send(-pid, sig);
}

/** How long output may keep arriving after the process dsh started has exited. */
const DRAIN_MS = 1000;

/**
 * `onEnd` once `child` has exited and its output is read, or, when something it started still
 * holds the output pipes, `DRAIN_MS` after it exited, the pipes then closed on dsh's side. Only a
 * process out of dsh's reach holds them then (one that killed or stopped the reaper; any daemon
 * where no reaper runs): waiting for it to let go would hang the call, cancel included.
 */
export function onEnded(child: ChildProcess, onEnd: (code: number | null, sig: NodeJS.Signals | null) => void): void {
  let drain: NodeJS.Timeout | undefined;
  child.on('exit', (code, sig) => {
    drain = setTimeout(() => {
      child.stdout?.destroy();
      child.stderr?.destroy();
      onEnd(code, sig);
    }, DRAIN_MS);
  });
  child.on('close', (code, sig) => {
    clearTimeout(drain);
    onEnd(code, sig);
  });
}

/**
 * Start a plan in its own session and process group. A plan that does not end its processes with
 * dsh by itself runs under the reaper, so no command (or what it leaves behind) outlives dsh.
 */
export function spawnPlan(plan: ShellSpawnPlan, stdin: 'ignore' | 'pipe' = 'ignore'): ChildProcess {
  const reaper = !plan.diesWithParent && reaperAvailable();
  const { file, args } = reaper ? underReaper(plan.file, plan.args) : plan;
  const child = spawn(file, args, {
    cwd: plan.cwd,
    env: plan.env as NodeJS.ProcessEnv,
    // `pipe` only for the persistent shell, which reads its commands from it.
    stdio: [stdin, 'pipe', 'pipe'],
    detached: true, // own session and process group: no controlling terminal, killable as a group
  });
  if (plan.diesWithParent) wrappers.add(child);
  if (reaper) reaped.add(child);
  return child;
}

export function runForeground(plan: ShellSpawnPlan, opts: RunOptions): Promise<RunResult> {
  const out = new StreamCapture(opts.maxOutputBytes, opts.spillDir, 'stdout');
  const err = new StreamCapture(opts.maxOutputBytes, opts.spillDir, 'stderr');
  return new Promise((resolve) => {
    let timedOut = false;
    let aborted = false;
    let spawnError: string | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    let settled = false;
    const child = spawnPlan(plan);
    const stop = (): void => {
      killGroup(child, 'SIGTERM');
      killTimer ??= setTimeout(() => killGroup(child, 'SIGKILL'), KILL_GRACE_MS);
    };
    const timer = setTimeout(() => {
      if (aborted) return;
      timedOut = true;
      stop();
    }, opts.timeoutMs);
    const onAbort = (): void => {
      if (timedOut) return;
      aborted = true;
      stop();
    };
    const settle = (code: number | null, sig: NodeJS.Signals | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(killTimer);
      opts.signal.removeEventListener('abort', onAbort);
      void Promise.all([out.finish(), err.finish()]).then(([stdout, stderr]) => {
        const r: RunResult = { exitCode: code, signal: sig, timedOut, aborted, stdout, stderr };
        if (spawnError !== undefined) r.spawnError = spawnError;
        resolve(r);
      });
    };
    if (opts.signal.aborted) onAbort();
    else opts.signal.addEventListener('abort', onAbort, { once: true });
    child.stdout!.on('data', (b: Buffer) => out.push(b));
    child.stderr!.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e) => {
      spawnError = e.message;
      if (child.pid === undefined) settle(null, null); // never started: no 'close' is owed
    });
    child.on('exit', () => killGroup(child, 'SIGKILL'));
    onEnded(child, settle);
  });
}
