/**
 * Background jobs started by `bash` with `run_in_background`. A job has an id the model uses
 * with `job_output` / `job_kill` / `job_list` (`bash-1`, `bash-2`, … as dsh names them). Its
 * complete output always goes to a log file; reads return what arrived since the previous read,
 * bounded in memory (a read that lost bytes says so and points at the file).
 */
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { ShellSpawnPlan } from './hooks.js';
import { killGroup, onEnded, spawnPlan } from './run.js';
import type { SandboxReport } from '../permissions/modes.js';

export type JobStatus = 'running' | 'completed' | 'failed' | 'killed';

export interface JobRead {
  delta: string;
  lost: number;
  status: JobStatus;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  logPath?: string;
  spawnError?: string;
}

const KILL_GRACE_MS = 2000;

export class Job {
  status: JobStatus = 'running';
  exitCode: number | null = null;
  signal: NodeJS.Signals | null = null;
  spawnError?: string;
  readonly done: Promise<void>;
  private unread: Buffer[] = [];
  private unreadBytes = 0;
  private lost = 0;
  private log: WriteStream | undefined;
  private killRequested = false;
  private readonly child: ChildProcess;

  constructor(
    readonly id: string,
    readonly command: string,
    plan: ShellSpawnPlan,
    readonly sandbox: SandboxReport | undefined,
    private readonly maxUnreadBytes: number,
    readonly logPath: string | undefined,
  ) {
    if (logPath) {
      try {
        this.log = createWriteStream(logPath);
        this.log.on('error', () => {
          this.log = undefined;
        });
      } catch {
        this.log = undefined;
      }
    }
    this.child = spawnPlan(plan);
    const onData = (b: Buffer): void => this.push(b);
    this.child.stdout!.on('data', onData);
    this.child.stderr!.on('data', onData);
    this.done = new Promise((resolve) => {
      const settle = (code: number | null, sig: NodeJS.Signals | null): void => {
        if (this.status !== 'running') return resolve();
        this.exitCode = code;
        this.signal = sig;
        this.status = this.killRequested ? 'killed' : code === 0 ? 'completed' : 'failed';
        killGroup(this.child, 'SIGKILL');
        if (this.log) this.log.end(() => resolve());
        else resolve();
      };
      this.child.on('error', (e) => {
        this.spawnError = e.message;
        if (this.child.pid === undefined) settle(null, null);
      });
      onEnded(this.child, settle);
    });
  }

  private push(b: Buffer): void {
    this.log?.write(b);
    this.unread.push(b);
    this.unreadBytes += b.length;
    while (this.unreadBytes > this.maxUnreadBytes && this.unread.length > 1) {
      const dropped = this.unread.shift()!;
      this.unreadBytes -= dropped.length;
      this.lost += dropped.length;
    }
  }

  /** Output since the previous read (consuming). */
  read(): JobRead {
    const delta = Buffer.concat(this.unread).toString('utf8');
    const r: JobRead = { delta, lost: this.lost, status: this.status, exitCode: this.exitCode, signal: this.signal };
    if (this.logPath) r.logPath = this.logPath;
    if (this.spawnError !== undefined) r.spawnError = this.spawnError;
    this.unread = [];
    this.unreadBytes = 0;
    this.lost = 0;
    return r;
  }

  /** Request the job to stop; false when it had already finished. */
  kill(): boolean {
    if (this.status !== 'running') return false;
    this.killRequested = true;
    killGroup(this.child, 'SIGTERM');
    const t = setTimeout(() => killGroup(this.child, 'SIGKILL'), KILL_GRACE_MS);
    void this.done.then(() => clearTimeout(t));
    return true;
  }

  /** Wait until the job settles or `timeoutMs` passes (or `signal` aborts). */
  async wait(timeoutMs: number, signal: AbortSignal): Promise<void> {
    if (this.status !== 'running') return;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    await Promise.race([
      this.done,
      new Promise<void>((r) => {
        timer = setTimeout(r, timeoutMs);
        onAbort = () => r();
        signal.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

export class JobRegistry {
  private readonly jobs = new Map<string, Job>();
  private next = 1;

  constructor(private readonly opts: { logDir?: string; maxUnreadBytes?: number } = {}) {}

  start(command: string, plan: ShellSpawnPlan, sandbox: SandboxReport | undefined): Job {
    const id = `bash-${this.next++}`;
    let logPath: string | undefined;
    if (this.opts.logDir) {
      try {
        mkdirSync(this.opts.logDir, { recursive: true });
        logPath = join(this.opts.logDir, `job-${id}-${process.pid}-${Date.now()}.log`);
      } catch {
        logPath = undefined;
      }
    }
    const job = new Job(id, command, plan, sandbox, this.opts.maxUnreadBytes ?? 256 * 1024, logPath);
    this.jobs.set(id, job);
    return job;
  }

  get(id: string): Job | undefined {
    return this.jobs.get(id);
  }

  list(): Job[] {
    return [...this.jobs.values()];
  }

  /** Kill every running job and wait for them (plugin teardown). */
  async dispose(): Promise<void> {
    const running = this.list().filter((j) => j.status === 'running');
    for (const j of running) j.kill();
    await Promise.all(running.map((j) => j.done));
  }
}
