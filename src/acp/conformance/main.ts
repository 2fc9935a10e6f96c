/**
 * `npm run conformance:acp -- DIR [--jobs N] [--only NAME,…]`: run dsh's ACP snapshot scenarios
 * under DIR through this checkout's `dsh acp` (bin/dsh.js, the built dist/) and print one line per
 * scenario, the first differing message of each failure, and N/M. Exit status 0 when every
 * failure names a feature this agent lacks, 1 when one does not (a regression), 2 on bad usage.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkAll, report } from './index.js';

async function main(argv: string[]): Promise<number> {
  let dir: string | undefined;
  let jobs: number | undefined;
  let only: Set<string> | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--jobs') jobs = Number(argv[++i]);
    else if (a === '--only') only = new Set((argv[++i] ?? '').split(','));
    // Absolute: each scenario's dsh acp runs in its own scratch workspace, where a relative DIR means nothing.
    else if (dir === undefined && !a.startsWith('-')) dir = resolve(a);
    else {
      process.stderr.write(`conformance:acp: unexpected argument ${JSON.stringify(a)}\n`);
      return 2;
    }
  }
  if (dir === undefined || (jobs !== undefined && !(Number.isSafeInteger(jobs) && jobs > 0))) {
    process.stderr.write('usage: npm run conformance:acp -- DIR [--jobs N] [--only NAME,...]\n');
    return 2;
  }
  const bin = fileURLToPath(new URL('../../../bin/dsh.js', import.meta.url));
  const verdicts = await checkAll(dir, {
    command: [process.execPath, bin],
    ...(jobs !== undefined ? { jobs } : {}),
    ...(only ? { only: (n: string) => only.has(n) } : {}),
  });
  for (const l of report(verdicts)) process.stdout.write(`${l}\n`);
  return verdicts.some((v) => !v.pass && v.needs.length === 0) ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
