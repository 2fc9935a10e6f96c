/**
 * A persistent shell: one long-lived interactive bash per session, fed one command at a time on
 * its stdin, so the working directory, variables (exported or not), functions and aliases carry
 * from one command to the next.
 *
 * It is started from a spawn plan like every other shell (`shell/spawn`: the sandbox wraps it in
 * bubblewrap, the environment is the scrubbed one), in its own process group, under the reaper
 * where no PID namespace ends it with dsh.
 *
 * The protocol, all on one physical line per command (an interactive bash would otherwise print
 * continuation prompts): print a start marker, restore the previous command's status (so `$?`
 * means what the user expects), `eval` the command with stdin from /dev/null (so a command that
 * reads its input cannot swallow the next command), then print an end marker with the status. A
 * fresh random nonce per command keeps a command's own output from faking a marker. stderr is
 * merged into stdout at the shell (`2>&1`), so the output interleaves as on a terminal.
 *
 * Why `-i`: an interactive bash prints `exit` when the `exit` builtin ends it, as dsh's
 * terminal-backed shell shows; `--noediting` keeps readline from echoing the input back,
 * `--norc --noprofile` keeps the user's startup files out, and history is off.
 *
 * Outcomes: the command completed (its status), the shell exited (its code or signal: `exit N`,
 * `set -e`, a crash), or it was stopped (timeout, cancel). In the last two cases the shell is gone
 * and the owner starts a fresh one for the next command.
 */
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import type { ShellSpawnPlan } from './hooks.js';
import { StreamCapture, type CapturedOutput } from './capture.js';
import { killGroup, spawnPlan } from './run.js';
import { ToolError } from '../types.js';

/** The command a spawn plan runs for a persistent shell. */
export const PERSISTENT_SHELL_COMMAND = 'exec bash --noprofile --norc --noediting -i 2>&1';

/** Prompts off (they would land between commands), history off, and the status-restoring helper. */
const SETUP = 'PS1=; PS2=; PS0=; unset PROMPT_COMMAND HISTFILE; set +o history +H; __dsh_status() { return "$1"; }\n';

/** How long the shell gets after SIGHUP before the group is killed outright. */
const KILL_GRACE_MS = 1000;
/** How long output may keep arriving after the shell exited before the result is made. */
const DRAIN_MS = 1000;
/** What the shell itself (or bubblewrap) says on the stderr it had before `2>&1`: kept for a failed start. */
const MAX_STDERR = 4096;

export type PersistentOutcome =
  | { kind: 'completed'; exitCode: number; output: CapturedOutput }
  | { kind: 'exited'; exitCode: number | null; signal: NodeJS.Signals | null; output: CapturedOutput; stderr: string }
  | { kind: 'timed-out'; output: CapturedOutput }
  | { kind: 'aborted'; output: CapturedOutput };

export interface PersistentRunOptions {
  timeoutMs: number;
  signal: AbortSignal;
  maxOutputBytes: number;
  spillDir?: string;
}

/** `$'…'` quoting: only backslash, quote and line breaks need escapes there. */
export function ansiQuote(s: string): string {
  return `$'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'").replaceAll('\n', '\\n').replaceAll('\r', '\\r')}'`;
}

/** The one line that runs `command` between two markers. */
export function wrapCommand(command: string, start: string, end: string): string {
  return (
    `printf '%s\\n' ${start}; __dsh_status "\${__dsh_rc:-0}"; eval -- ${ansiQuote(command)} </dev/null; ` +
    `__dsh_rc=$?; printf '%s%s\\n' ${end} "$__dsh_rc"\n`
  );
}

interface Running {
  start: Buffer;
  end: Buffer;
  started: boolean;
  /** Bytes not yet given to the capture: they may hold the start of the end marker. */
  pending: Buffer;
  capture: StreamCapture;
  done(outcome: PersistentOutcome): void;
}

export class PersistentShell {
  private readonly child: ChildProcess;
  private running: Running | undefined;
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private spawnError: string | undefined;
  private stderrText = '';
  private readonly closed: Promise<void>;
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(readonly plan: ShellSpawnPlan) {
    this.child = spawnPlan(plan, 'pipe');
    let outputEnded!: () => void;
    const ended = new Promise<void>((r) => (outputEnded = r));
    let exited!: () => void;
    const exitSeen = new Promise<void>((r) => (exited = r));
    // Settled once the process is gone and its output read (or a short drain passed: a process
    // the shell left behind may hold the pipe open until the group is killed).
    this.closed = exitSeen.then(() => Promise.race([ended, new Promise<void>((r) => setTimeout(r, DRAIN_MS).unref())]));
    this.child.stdout!.on('data', (b: Buffer) => this.onData(b));
    this.child.stdout!.on('close', outputEnded);
    this.child.stderr!.on('data', (b: Buffer) => {
      if (this.stderrText.length < MAX_STDERR) this.stderrText += b.toString('utf8').slice(0, MAX_STDERR - this.stderrText.length);
    });
    this.child.stdin!.on('error', () => {
      // EPIPE: the shell is gone; the exit handler reports it.
    });
    this.child.on('error', (e) => {
      this.spawnError = e.message;
      if (this.child.pid === undefined) {
        this.exitInfo ??= { code: null, signal: null };
        outputEnded();
        exited();
      }
    });
    this.child.on('exit', (code, signal) => {
      this.exitInfo = { code, signal };
      // Whatever the shell left in its group goes with it.
      killGroup(this.child, 'SIGKILL');
      exited();
    });
    void this.closed.then(() => this.finishExited());
    this.child.stdin!.write(SETUP);
  }

  /** Start a shell from `plan` (its command should be `PERSISTENT_SHELL_COMMAND`). */
  static start(plan: ShellSpawnPlan): PersistentShell {
    return new PersistentShell(plan);
  }

  /** The process id dsh started (bubblewrap, the reaper or bash itself). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return this.exitInfo === undefined;
  }

  /** Run one command; calls are queued, one at a time. */
  run(command: string, opts: PersistentRunOptions): Promise<PersistentOutcome> {
    const next = this.queue.then(() => this.runNow(command, opts));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private runNow(command: string, opts: PersistentRunOptions): Promise<PersistentOutcome> {
    if (command.includes('\0')) throw new ToolError('BASH_INVALID_COMMAND', 'the command contains a NUL byte, which bash cannot hold');
    if (this.spawnError !== undefined && this.child.pid === undefined)
      throw new ToolError('BASH_SPAWN_FAILED', `the persistent shell could not be started (${this.plan.file}): ${this.spawnError}`);
    const nonce = randomUUID().replaceAll('-', '');
    const start = `__dsh_start_${nonce}__`;
    const end = `__dsh_end_${nonce}__`;
    return new Promise<PersistentOutcome>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = (): void => void this.stop('aborted');
      const run: Running = {
        start: Buffer.from(`${start}\n`),
        end: Buffer.from(end),
        started: false,
        pending: Buffer.alloc(0),
        capture: new StreamCapture(opts.maxOutputBytes, opts.spillDir, 'output'),
        done: (outcome) => {
          clearTimeout(timer);
          opts.signal.removeEventListener('abort', onAbort);
          if (this.running === run) this.running = undefined;
          resolve(outcome);
        },
      };
      this.running = run;
      if (!this.alive) {
        void this.finishExited();
        return;
      }
      timer = setTimeout(() => void this.stop('timed-out'), opts.timeoutMs);
      if (opts.signal.aborted) {
        void this.stop('aborted');
        return;
      }
      opts.signal.addEventListener('abort', onAbort, { once: true });
      this.child.stdin!.write(wrapCommand(command, start, end));
    });
  }

  private onData(chunk: Buffer): void {
    const run = this.running;
    if (!run) return; // between commands (a background job's output, prompts): not any command's
    let buf = run.pending.length ? Buffer.concat([run.pending, chunk]) : chunk;
    if (!run.started) {
      const at = buf.indexOf(run.start);
      if (at < 0) {
        // Keep only what could be the start of the marker.
        run.pending = buf.subarray(Math.max(0, buf.length - run.start.length));
        return;
      }
      run.started = true;
      buf = buf.subarray(at + run.start.length);
    }
    const at = buf.indexOf(run.end);
    if (at >= 0) {
      const status = /^(\d+)\n/.exec(buf.subarray(at + run.end.length, at + run.end.length + 12).toString('latin1'));
      if (!status) {
        run.pending = buf; // the status digits are still on their way
        return;
      }
      run.capture.push(buf.subarray(0, at));
      run.pending = Buffer.alloc(0);
      const exitCode = Number(status[1]);
      void run.capture.finish().then((output) => run.done({ kind: 'completed', exitCode, output }));
      return;
    }
    // Hold back a marker's length (plus its status): the marker may be split across chunks.
    const keep = run.end.length + 12;
    if (buf.length > keep) {
      run.capture.push(buf.subarray(0, buf.length - keep));
      run.pending = buf.subarray(buf.length - keep);
    } else run.pending = buf;
  }

  /** The shell is gone while a command ran: report what it printed, and how it ended. */
  private async finishExited(): Promise<void> {
    const run = this.running;
    if (!run || this.alive) return;
    this.running = undefined;
    if (run.started && run.pending.length) run.capture.push(run.pending);
    const output = await run.capture.finish();
    const info = this.exitInfo ?? { code: null, signal: null };
    run.done({ kind: 'exited', exitCode: info.code, signal: info.signal, output, stderr: this.stderrText.trim() });
  }

  /** Timeout or cancel: end the shell, report what the command printed so far. */
  private async stop(kind: 'timed-out' | 'aborted'): Promise<void> {
    const run = this.running;
    if (!run) return;
    this.running = undefined;
    await this.close();
    if (run.started && run.pending.length) run.capture.push(run.pending);
    const output = await run.capture.finish();
    run.done({ kind, output });
  }

  /**
   * End the shell and everything it started: SIGHUP to its process group (an interactive bash
   * exits on it and the reaper passes it on), SIGKILL to the group if it is still there a second
   * later. Resolves once the process has exited.
   */
  async close(): Promise<void> {
    if (this.alive && this.child.pid !== undefined) {
      this.child.stdin!.end();
      killGroup(this.child, 'SIGHUP');
      const kill = setTimeout(() => killGroup(this.child, 'SIGKILL'), KILL_GRACE_MS);
      await this.closed;
      clearTimeout(kill);
    }
    await this.closed;
  }
}
