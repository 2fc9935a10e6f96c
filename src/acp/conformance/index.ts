/**
 * The ACP conformance runner (`npm run conformance:acp -- DIR`): every scenario folder under DIR
 * (dsh's ACP snapshot layout) is run through the real `dsh acp` (run.ts) and its stdout compared
 * with dsh's (compare.ts). A scenario that fails names what it needs, computed from its own files:
 * a tool its recording calls that this agent does not have, a client step this runner cannot drive
 * (a turn the agent starts by itself). (The hook scenarios run with the hook bridges.) A
 * failure that names nothing is a regression.
 */
import { availableParallelism } from 'node:os';
import { firstMismatch, normaliseExpected, normaliseOurs, type Mismatch } from './compare.js';
import { runScenario, type RunOptions } from './run.js';
import { loadScenario, scenarioDirs, type Scenario } from './scenario.js';

/** The tools `dsh acp` gives the model (the coding preset's built-ins). */
export const OUR_TOOLS: ReadonlySet<string> = new Set([
  'read',
  'write',
  'edit',
  'glob',
  'grep',
  'bash',
  'job_output',
  'job_kill',
  'job_list',
  'todo_write',
]);

export interface Verdict {
  name: string;
  pass: boolean;
  /** What the scenario needs that this agent lacks (empty for a pass, or an unexplained failure). */
  needs: string[];
  mismatch?: Mismatch;
  error?: string;
  /** Said beside a pass that holds for the messages only. */
  note?: string;
  ms: number;
}

/** What a scenario needs, from its files alone. */
export function scenarioNeeds(s: Scenario): string[] {
  const needs = new Set<string>();
  for (const e of s.events) if (e.type === 'tool/call' && !OUR_TOOLS.has(e.data.name)) needs.add(`the ${e.data.name} tool`);
  for (const st of s.steps) if (st.op === 'unsupported') needs.add(`the client step ${st.name}`);
  if (s.steps.some((st) => st.op === 'waitForTurnStart' && (st.minimumTurn ?? 1) > 1)) needs.add('turns the agent starts by itself');
  return [...needs];
}

export async function checkScenario(s: Scenario, opts: RunOptions): Promise<Verdict> {
  const t0 = Date.now();
  const run = await runScenario(s, opts);
  const ours = normaliseOurs(run.stdout, { sessionIds: run.sessionIds, cwd: run.cwd });
  const turnEnds = s.events.flatMap((e) => (e.type === 'turn/end' ? [e.data.reason.kind] : []));
  const mismatch = firstMismatch(normaliseExpected(s.expected), ours, turnEnds);
  const v: Verdict = { name: s.name, pass: mismatch === undefined && run.error === undefined, needs: [], ms: Date.now() - t0 };
  if (!v.pass) v.needs = scenarioNeeds(s);
  else {
    // A pass on the messages alone: the replayed replies do not depend on what a missing tool returned.
    const missing = scenarioNeeds(s);
    if (missing.length > 0)
      v.note = `passes on the messages, though it needs ${missing.join(', ')} (the recorded replies do not depend on it)`;
  }
  if (mismatch) v.mismatch = mismatch;
  if (run.error !== undefined) v.error = run.error;
  return v;
}

/** Run every scenario under `dir`, `jobs` at a time; verdicts in name order. */
export async function checkAll(dir: string, opts: RunOptions & { jobs?: number; only?: (name: string) => boolean }): Promise<Verdict[]> {
  const dirs = scenarioDirs(dir).filter((d) => opts.only?.(d.split('/').at(-1)!) ?? true);
  const out: Verdict[] = new Array(dirs.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < dirs.length) {
      const i = next++;
      out[i] = await checkScenario(loadScenario(dirs[i]!), opts);
    }
  };
  const jobs = Math.max(1, Math.min(opts.jobs ?? availableParallelism(), dirs.length));
  await Promise.all(Array.from({ length: jobs }, worker));
  return out;
}

function short(v: unknown, max = 300): string {
  const t = JSON.stringify(v) ?? String(v);
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/** The report: one line per scenario, the first differing message of each failure, then N/M. */
export function report(verdicts: readonly Verdict[]): string[] {
  const lines: string[] = [];
  for (const v of verdicts) {
    if (v.pass) {
      lines.push(`PASS ${v.name}${v.note !== undefined ? ` (${v.note})` : ''}`);
      continue;
    }
    lines.push(`FAIL ${v.name}${v.needs.length > 0 ? ` (needs ${v.needs.join(', ')})` : ' (needs nothing missing: a regression)'}`);
    if (v.error !== undefined) lines.push(`  runner: ${v.error}`);
    const m = v.mismatch;
    if (m) {
      lines.push(`  expected line ${m.line}: ${short(m.expected)}`);
      if (m.nearest !== undefined) lines.push(`  ours (nearest of its kind): ${short(m.nearest)}`);
      else lines.push('  ours: no message of that kind after the previous match');
      if (m.difference)
        lines.push(
          `  first difference at ${m.difference.path}: ` +
            `expected ${short(m.difference.expected, 120)}, got ${short(m.difference.actual, 120)}`,
        );
    }
  }
  const passed = verdicts.filter((v) => v.pass).length;
  lines.push(`${passed}/${verdicts.length}`);
  return lines;
}
