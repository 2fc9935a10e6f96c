/**
 * `npm run conformance:sdk -- DIR` and `npm run conformance:headless -- DIR`: replay every
 * scenario folder under DIR through `dsh sdk` or `dsh run --output-format stream-json`, print one
 * line per scenario (with the first difference and what is missing for a failure) and `N/M`.
 * Exit status 0 when every scenario passes, 1 otherwise, 2 for a usage error.
 */
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { runHeadlessScenario } from './headless.js';
import { report, scenarioDirs, type ScenarioResult } from './scenario.js';
import { runSdkScenario } from './sdk.js';

const RUNNERS: Record<string, (dir: string) => Promise<ScenarioResult>> = {
  sdk: runSdkScenario,
  headless: runHeadlessScenario,
};

export async function main(argv: readonly string[]): Promise<number> {
  const [kind, dir, ...rest] = argv;
  const run = kind === undefined ? undefined : RUNNERS[kind];
  if (!run || dir === undefined || rest.length > 0) {
    process.stderr.write(`usage: conformance ${Object.keys(RUNNERS).join('|')} DIR (a folder of scenario folders)\n`);
    return 2;
  }
  if (!existsSync(dir)) {
    process.stderr.write(`conformance: ${dir}: no such folder\n`);
    return 2;
  }
  const results: ScenarioResult[] = [];
  for (const s of scenarioDirs(dir)) results.push(await run(s));
  for (const l of report(results)) process.stdout.write(`${l}\n`);
  return results.every((r) => r.pass) ? 0 : 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exitCode = await main(process.argv.slice(2));
