/**
 * The CLI's `main` run in this process with captured output: the same code path as the binary
 * minus the process spawn, for suites that would otherwise start hundreds of processes.
 */
import { main } from '../../../src/cli/main.js';
import { Output } from '../../../src/cli/output.js';

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
