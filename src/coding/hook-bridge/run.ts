/**
 * Running one command hook: the command through the shell, in the workspace, its JSON payload on
 * stdin, killed (its whole process group) at its timeout or when the turn is cancelled. Never
 * throws: a hook that cannot start, times out or is killed comes back as a run with a typed
 * `failure` the bridge records.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

export interface HookRun {
  exitCode?: number;
  stdout: string;
  stderr: string;
  durationMs: number;
  failure?: { code: 'HOOK_TIMEOUT' | 'HOOK_SPAWN_FAILED' | 'HOOK_CANCELLED'; message: string };
}

export interface RunOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  payload: unknown;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Output kept per stream (a hook that floods its output is cut, not buffered without bound). */
  maxOutputBytes?: number;
}

const SHELL = existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';

export function runCommandHook(command: string, opts: RunOptions): Promise<HookRun> {
  const started = performance.now();
  const max = opts.maxOutputBytes ?? 1024 * 1024;
  return new Promise((resolve) => {
    let settled = false;
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let failure: HookRun['failure'];
    const finish = (exitCode?: number): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      const run: HookRun = {
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        durationMs: performance.now() - started,
      };
      if (exitCode !== undefined && failure === undefined) run.exitCode = exitCode;
      if (failure) run.failure = failure;
      resolve(run);
    };
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(SHELL, ['-c', command], { cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    } catch (e) {
      const message = `the hook could not start: ${(e as Error).message}`;
      resolve({ stdout: '', stderr: '', durationMs: performance.now() - started, failure: { code: 'HOOK_SPAWN_FAILED', message } });
      return;
    }
    const kill = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const timer = setTimeout(() => {
      failure = { code: 'HOOK_TIMEOUT', message: `the hook did not finish within ${opts.timeoutMs / 1000} s and was killed` };
      kill();
    }, opts.timeoutMs);
    const onAbort = (): void => {
      failure ??= { code: 'HOOK_CANCELLED', message: 'the turn was cancelled while the hook ran; it was killed' };
      kill();
    };
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout?.on('data', (b: Buffer) => {
      if (outBytes < max) out.push(b.subarray(0, max - outBytes));
      outBytes += b.length;
    });
    child.stderr?.on('data', (b: Buffer) => {
      if (errBytes < max) err.push(b.subarray(0, max - errBytes));
      errBytes += b.length;
    });
    child.on('error', (e) => {
      failure ??= { code: 'HOOK_SPAWN_FAILED', message: `the hook could not start: ${e.message}` };
      finish();
    });
    child.on('close', (code, sig) => finish(code ?? (sig ? 128 : undefined)));
    // A hook that exits without reading its stdin is normal: a broken pipe is not a failure.
    child.stdin?.on('error', () => {});
    child.stdin?.end(JSON.stringify(opts.payload));
  });
}
