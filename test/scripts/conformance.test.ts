/**
 * The conformance runners over dsh's own scenarios (../shared/fixtures/dsh-jsonrpc and
 * dsh-headless): the scenarios whose features exist here pass; every other one fails naming
 * what it needs. Also: dsh run's stream-json output is dsh's headless stream event for event,
 * checked on the SDK's recorded text turn.
 */
import { spawnSync } from 'node:child_process';
import { expect, it } from 'vitest';
import { runHeadlessScenario } from '../../scripts/conformance/headless.js';
import { matchInOrder, normalize } from '../../src/replay/match.js';
import {
  concreteLog,
  DSH_BIN,
  firstPrompt,
  logRecords,
  makeSandbox,
  readJsonLines,
  runEnv,
  scenarioDirs,
  type ScenarioResult,
} from '../../scripts/conformance/scenario.js';
import { runSdkScenario } from '../../scripts/conformance/sdk.js';
import { describeShared, sharedPath } from '../support/shared.js';

async function runAll(dir: string, run: (d: string) => Promise<ScenarioResult>): Promise<ScenarioResult[]> {
  const out: ScenarioResult[] = [];
  for (const d of scenarioDirs(dir)) out.push(await run(d));
  return out;
}

describeShared('conformance with dsh', () => {
  it('dsh sdk passes the SDK scenarios whose features exist; the others name what they need', async () => {
    const results = await runAll(sharedPath('fixtures', 'dsh-jsonrpc'), runSdkScenario);
    expect(results.map((r) => r.name).sort()).toEqual(['bash-tool', 'persistent-tools', 'subagent-spawn-in-process', 'text-turn']);
    const passing = results.filter((r) => r.pass).map((r) => r.name);
    expect(passing, results.map((r) => [r.name, ...r.detail].join('\n')).join('\n')).toEqual([
      'bash-tool',
      'persistent-tools',
      'text-turn',
    ]);
    for (const r of results.filter((x) => !x.pass)) expect(r.needs.length, r.name).toBeGreaterThan(0);
    expect(results.find((r) => r.name === 'subagent-spawn-in-process')?.needs.join(' ')).toContain('subagent');
  }, 240_000);

  it('every headless scenario left failing names what it needs', async () => {
    const results = await runAll(sharedPath('fixtures', 'dsh-headless'), runHeadlessScenario);
    expect(results).toHaveLength(11);
    for (const r of results.filter((x) => !x.pass)) expect(r.needs.length, `${r.name}: ${r.detail.join(' ')}`).toBeGreaterThan(0);
  }, 300_000);

  it('dsh run --output-format stream-json prints the recorded turn event for event, then the result', () => {
    const dir = sharedPath('fixtures', 'dsh-jsonrpc', 'text-turn');
    const box = makeSandbox(dir);
    try {
      const rec = concreteLog(`${dir}/session.jsonl`, box, 'recorded.jsonl');
      const prompt = firstPrompt(logRecords(rec))!.text;
      const r = spawnSync(
        process.execPath,
        [
          DSH_BIN,
          'run',
          '--output-format',
          'stream-json',
          '--replay-model',
          rec,
          '--sandbox',
          'danger-full-access',
          '--approval',
          'never',
          prompt,
        ],
        { cwd: box.cwd, env: runEnv(box), encoding: 'utf8' },
      );
      expect(r.status, r.stderr).toBe(0);
      const ours = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { sessionId: string });
      const ctx = { sessionIds: [ours[0]!.sessionId], cwd: box.cwd };
      // The SDK scenario's events, in the headless envelope, then dsh's result line.
      const expected = readJsonLines(`${dir}/notifications.expected.jsonl`)
        .filter((n) => (n as { method: string }).method === 'session.event')
        .map((n) => ({ type: 'session_event', ...(n as { params: object }).params }));
      const last = {
        type: 'result',
        sessionId: '{{sessionId}}',
        output: 'SDK snapshot OK',
        usage: { inputTokens: 1769, outputTokens: 24, cacheReadTokens: 0, reasoningTokens: 19 },
      };
      const m = matchInOrder(
        [...expected, last].map((v) => normalize(v, ctx)),
        ours.map((v) => normalize(v, ctx)),
      );
      expect(m.failure).toBeUndefined();
      expect(m.matched).toBe(expected.length + 1);
      expect(normalize(ours.at(-1), ctx)).toEqual(last);
    } finally {
      box.dispose();
    }
  }, 60_000);
});
