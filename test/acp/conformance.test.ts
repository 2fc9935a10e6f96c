/**
 * The ACP conformance runner over dsh's own snapshot scenarios (../shared/fixtures/dsh-acp), run
 * through the real `dsh acp` built from these sources; and the ACP normalisation and allowances
 * on inputs made here (the matcher's own rules: test/replay/match.test.ts). The whole set takes a
 * while (one `dsh acp` process per scenario), so it runs two at a time.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkAll, report, scenarioNeeds } from '../../src/acp/conformance/index.js';
import { firstMismatch, normaliseOurs } from '../../src/acp/conformance/compare.js';
import { loadScenario, ScenarioError } from '../../src/acp/conformance/scenario.js';
import { describeShared, sharedPath } from '../support/shared.js';
import { builtBin } from '../cli/support/run.js';

const DIR = sharedPath('fixtures', 'dsh-acp');

describe('comparison', () => {
  it('joins streamed deltas of one block, replaces session ids and the workspace, renumbers ids', () => {
    const chunk = (text: string, block: number) =>
      JSON.stringify({
        jsonrpc: '2.0',
        method: 'session/update',
        params: {
          sessionId: 'S1',
          update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text }, messageId: '1.1.1', _meta: { dsh: { block } } },
        },
      });
    const stdout = [
      JSON.stringify({ jsonrpc: '2.0', id: 7, result: { sessionId: 'S1', path: '/w/x' } }),
      chunk('PO', 0),
      chunk('NG', 0),
      chunk('other', 1),
      JSON.stringify({ jsonrpc: '2.0', id: 8, result: { stopReason: 'end_turn' } }),
    ].join('\n');
    const ours = normaliseOurs(stdout, { sessionIds: ['S1'], cwd: '/w' });
    expect(ours).toHaveLength(4);
    expect(ours[0]).toEqual({ jsonrpc: '2.0', id: 1, result: { sessionId: '{{sessionId}}', path: '{{cwd}}/x' } });
    expect((ours[1] as { params: { update: { content: { text: string } } } }).params.update.content.text).toBe('PONG');
    expect((ours[2] as { params: { update: { content: { text: string } } } }).params.update.content.text).toBe('other');
    expect(ours[3]).toMatchObject({ id: 2 });
  });

  it('needs every expected message in order; says which line is missing and where the nearest one differs', () => {
    const u = (text: string) => ({
      method: 'session/update',
      params: { update: { sessionUpdate: 'agent_message_chunk', content: { text } } },
    });
    expect(firstMismatch([u('a'), u('b')], [u('a'), u('x'), u('b')])).toBeUndefined();
    const m = firstMismatch([u('b'), u('a')], [u('a'), u('b')]);
    expect(m?.line).toBe(2);
    const d = firstMismatch([u('a')], [u('z')]);
    expect(d?.difference?.path).toBe('$.params.update.content.text');
  });

  it('allows max_tokens for end_turn only where the recorded turn ended max-tokens', () => {
    const want = [{ id: 1, result: { stopReason: 'end_turn' } }];
    const ours = [{ id: 1, result: { stopReason: 'max_tokens' } }];
    expect(firstMismatch(want, ours, ['max-tokens'])).toBeUndefined();
    expect(firstMismatch(want, ours, ['completed'])?.line).toBe(1);
  });

  it("does not require dsh's agent name or the capabilities dsh declares false; does require what it declares true", () => {
    const want = [
      {
        id: 1,
        result: {
          protocolVersion: 1,
          agentInfo: { name: 'deepseek-harness-acp' },
          agentCapabilities: { promptCapabilities: { image: false } },
        },
      },
    ];
    expect(
      firstMismatch(want, [
        { id: 1, result: { protocolVersion: 1, agentInfo: { name: 'dsh' }, agentCapabilities: { promptCapabilities: { image: true } } } },
      ]),
    ).toBeUndefined();
    expect(firstMismatch([{ id: 1, result: { protocolVersion: 1 } }], [{ id: 1, result: { protocolVersion: 2 } }])?.line).toBe(1);
  });
});

describeShared('conformance with dsh ACP snapshot scenarios', () => {
  it('refuses a malformed scenario with the file and JSON path', () => {
    expect(() => loadScenario('/nonexistent/scenario')).toThrow(ScenarioError);
  });

  it(
    'every scenario whose features exist here passes through the real dsh acp; each failure names what it needs',
    async () => {
      expect(existsSync(DIR)).toBe(true);
      const verdicts = await checkAll(DIR, { command: [process.execPath, builtBin()], jobs: 2 });
      const lines = report(verdicts);
      console.log(lines.join('\n'));
      expect(verdicts.length).toBe(60);
      const regressions = verdicts.filter((v) => !v.pass && v.needs.length === 0);
      expect(regressions.map((v) => lines.filter((l) => l.includes(v.name)).join('\n'))).toEqual([]);
      // A scenario that needs nothing missing is one that must pass (computed from its files).
      for (const v of verdicts) if (scenarioNeeds(loadScenario(`${DIR}/${v.name}`)).length === 0) expect(v.pass, v.name).toBe(true);
    },
    15 * 60_000,
  );
});
