/**
 * The CLI's `main` run in this process with captured output: the same code path as the binary
 * minus the process spawn. Suites use it wherever the process itself is not under test (signals,
 * standard input read from fd 0, colour on a real terminal, the shim): a spawn costs a second or
 * more under load, a call a few milliseconds.
 */
import { main } from '../../../src/cli/main.js';
import { Output } from '../../../src/cli/output.js';
import type { Run } from './run.js';

export interface InprocRun {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runMain(argv: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<InprocRun> {
  let stdout = '';
  let stderr = '';
  const out = new Output({ write: (s: string) => (stdout += s) }, false);
  const err = new Output({ write: (s: string) => (stderr += s) }, false);
  const code = await main(argv, { out, err, env });
  return { code, stdout, stderr };
}

/** The same result shape as `dsh()` in run.ts (exit status and raw bytes), without a process. */
export async function dshIn(argv: readonly string[], opts: { env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  const r = await runMain(argv, { ...opts.env });
  return { ...r, rawOut: Buffer.from(r.stdout, 'utf8'), rawErr: Buffer.from(r.stderr, 'utf8') };
}

export async function dshAllIn(argvs: readonly (readonly string[])[]): Promise<Run[]> {
  const out: Run[] = [];
  for (const argv of argvs) out.push(await dshIn(argv));
  return out;
}
