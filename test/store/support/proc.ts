/**
 * Driving child processes: spawn, read their stdout line by line, wait for a line, kill.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { buildChild } from './build.js';
import { repoRoot } from '../../support/shared.js';

export class Child {
  readonly proc: ChildProcessWithoutNullStreams;
  readonly lines: string[] = [];
  stderr = '';
  private waiters: { pred: (l: string) => boolean; resolve: (l: string) => void }[] = [];
  private buf = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  /** `as`: run as this user and group (a test run by root that needs permissions to apply). */
  constructor(args: string[], as: { uid?: number; gid?: number } = {}) {
    const script = buildChild(join(repoRoot, 'test', 'store', 'fixtures', 'child.ts'));
    this.proc = spawn(process.execPath, [script, ...args], { stdio: ['pipe', 'pipe', 'pipe'], ...as });
    this.proc.stdout.setEncoding('utf8');
    this.proc.stdout.on('data', (d: string) => {
      this.buf += d;
      let nl: number;
      while ((nl = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        this.lines.push(line);
        this.waiters = this.waiters.filter((w) => (w.pred(line) ? (w.resolve(line), false) : true));
      }
    });
    this.proc.stderr.setEncoding('utf8');
    this.proc.stderr.on('data', (d: string) => (this.stderr += d));
    this.exited = new Promise((resolve) => this.proc.on('exit', (code, signal) => resolve({ code, signal })));
  }

  get pid(): number {
    return this.proc.pid!;
  }

  /** The first line (already seen or to come) that starts with `prefix`. */
  waitFor(prefix: string, timeoutMs = 10_000): Promise<string> {
    const seen = this.lines.find((l) => l.startsWith(prefix));
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const t = setTimeout(
        () =>
          reject(
            new Error(
              `child ${this.pid}: no "${prefix}" line within ${timeoutMs} ms; stdout: ${this.lines.slice(-5).join(' | ')}` +
                `; stderr: ${this.stderr}`,
            ),
          ),
        timeoutMs,
      );
      this.waiters.push({ pred: (l) => l.startsWith(prefix), resolve: (l) => (clearTimeout(t), resolve(l)) });
      void this.exited.then(() =>
        setTimeout(() => reject(new Error(`child ${this.pid} exited before "${prefix}"; stderr: ${this.stderr}`)), 50),
      );
    });
  }

  send(line: string): void {
    this.proc.stdin.write(`${line}\n`);
  }

  async kill(): Promise<void> {
    this.proc.kill('SIGKILL');
    await this.exited;
  }

  /** Close stdin (the child's cue to finish) and wait for it to exit. */
  async finish(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    this.proc.stdin.end();
    return this.exited;
  }
}

/** A pid that no longer names a process: a child that has exited and been reaped. */
export async function deadPid(): Promise<number> {
  const p = spawn('true', [], { stdio: 'ignore' });
  await new Promise((r) => p.on('exit', r));
  return p.pid!;
}
