/**
 * Driving an interactive `dsh` (chat, a run to interrupt) and waiting for what it prints: either
 * the real binary as a child process (signals, pipes, exit status of the process) or `main()` in
 * this process with a pipe for standard input (everything else; much faster). `waitFor` waits for
 * output to appear; its timeout only turns a hang into a failure that shows the transcript.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { main } from '../../../src/cli/main.js';
import { Output } from '../../../src/cli/output.js';
import { repoRoot } from '../../support/shared.js';
import { builtBin } from './run.js';

export type Stream = 'stdout' | 'stderr';

export class Transcript {
  stdout = '';
  stderr = '';
  private waiters: { check: () => boolean }[] = [];

  push(stream: Stream, text: string): void {
    this[stream] += text;
    this.waiters = this.waiters.filter((w) => !w.check());
  }

  /** Resolves with the match once `re` matches the stream's text (from `from` on). */
  waitFor(stream: Stream, re: RegExp, opts: { from?: number; timeoutMs?: number } = {}): Promise<RegExpExecArray> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`no ${re} on ${stream}\n--- stdout ---\n${this.stdout}\n--- stderr ---\n${this.stderr}`));
      }, opts.timeoutMs ?? 20_000);
      const waiter = {
        check: (): boolean => {
          const m = re.exec(this[stream].slice(opts.from ?? 0));
          if (!m) return false;
          clearTimeout(timer);
          resolve(m);
          return true;
        },
      };
      if (!waiter.check()) this.waiters.push(waiter);
    });
  }
}

export interface Driven {
  transcript: Transcript;
  write(text: string): void;
  end(): void;
  /** Exit status (null when killed by a signal, for a child). */
  done: Promise<number | null>;
}

export interface SpawnedDsh extends Driven {
  child: ChildProcessWithoutNullStreams;
  kill(signal: NodeJS.Signals): void;
}

export function spawnDsh(args: readonly string[], opts: { env?: Record<string, string | undefined>; cwd?: string } = {}): SpawnedDsh {
  const env: Record<string, string | undefined> = {
    ...process.env,
    NO_COLOR: '1',
    FORCE_COLOR: undefined,
    DSH_DEBUG: undefined,
    DEEPSEEK_API_KEY: undefined,
    DSH_MODEL: undefined,
    ...opts.env,
  };
  for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
  const child = spawn(process.execPath, [builtBin(), ...args], {
    cwd: opts.cwd ?? repoRoot,
    env: env as NodeJS.ProcessEnv,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const transcript = new Transcript();
  child.stdout.setEncoding('utf8').on('data', (s: string) => transcript.push('stdout', s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => transcript.push('stderr', s));
  const done = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });
  return {
    child,
    transcript,
    write: (text) => void child.stdin.write(text),
    end: () => child.stdin.end(),
    kill: (signal) => void child.kill(signal),
    done,
  };
}

/** `main()` in this process, standard input a pipe the test writes to. */
export function startMain(args: readonly string[], env: NodeJS.ProcessEnv): Driven {
  const transcript = new Transcript();
  const stdin = new PassThrough();
  const out = new Output({ write: (s: string) => transcript.push('stdout', s) }, false);
  const err = new Output({ write: (s: string) => transcript.push('stderr', s) }, false);
  const done = main(args, { out, err, env, stdin });
  return { transcript, write: (text) => void stdin.write(text), end: () => stdin.end(), done };
}
