/**
 * The wiring: `dsh run` compacts on a provider's context-overflow error unless `--no-compact`,
 * and `dsh chat` has `/compact` (recorded as a command, the bracket carrying its id). Both run
 * `main()` in this process against the fake provider on 127.0.0.1.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider, type FakeResponse } from '../support/fake-provider.js';
import { fault } from '../support/faults.js';
import { runMain } from '../cli/support/inproc.js';
import { startMain } from '../cli/support/driver.js';
import { agentEnv, call, gitRepo, logEvents, logPathFrom, tempDir, text } from '../cli/support/agent.js';
import { ofType } from './helpers.js';

let provider: FakeProvider | undefined;
afterEach(async () => {
  await provider?.close();
  provider = undefined;
});
async function serve(script: FakeResponse[]): Promise<FakeProvider> {
  provider = await startFakeProvider({ script });
  return provider;
}

const TASK = `Read README.md and say what the tool does. ${'Keep every detail of this request in mind while you work. '.repeat(8)}`;

describe('dsh run', () => {
  const script = (): FakeResponse[] => [
    call('call_1', 'read', { file_path: 'README.md' }),
    fault('context-overflow'),
    text(['The user asked what README.md says.']),
    text(['A tiny command-line tool.']),
  ];

  it('recovers from a context-overflow error by compacting, by default', async () => {
    const p = await serve(script());
    const home = tempDir();
    const r = await runMain(['run', '--cwd', gitRepo(), TASK], agentEnv(p.url, home));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('A tiny command-line tool.');
    expect(p.requests).toHaveLength(4);
    expect(p.requests[2]!.headers['x-deepseek-harness-compact']).toBe('1');
    const events = logEvents(logPathFrom(r.stderr));
    expect(ofType(events, 'compaction/end').map((e) => e.data)).toEqual([
      { compactionId: ofType(events, 'compaction/start')[0]!.data.compactionId, turn: 1 },
    ]);
  });

  it('--no-compact leaves the failure to end the turn', async () => {
    const p = await serve(script());
    const r = await runMain(['run', '--no-compact', '--cwd', gitRepo(), TASK], agentEnv(p.url, tempDir()));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('CONTEXT_WINDOW_EXCEEDED');
    expect(p.requests).toHaveLength(2);
    expect(ofType(logEvents(logPathFrom(r.stderr)), 'compaction/start')).toEqual([]);
  });
});

describe('dsh chat', () => {
  it('/compact summarises the older history between turns; the next prompt sees the checkpoint', async () => {
    const p = await serve([
      text(['It is a tiny command-line tool.']),
      text(['Nothing else.']),
      text(['The user asked about README.md: a tiny command-line tool.']),
      text(['Still here.']),
    ]);
    const home = tempDir();
    const chat = startMain(['chat', '--cwd', gitRepo()], agentEnv(p.url, home));
    const t = chat.transcript;
    chat.write(`${TASK}\n`);
    await t.waitFor('stderr', /^turn 1 · .* · completed$/m);
    chat.write('Anything else?\n');
    await t.waitFor('stderr', /^turn 2 · .* · completed$/m);
    chat.write('/compact\n');
    const done = await t.waitFor('stdout', /^compacted (\d+) message\(s\) \(~\d+ tokens\) into a summary \(~\d+ tokens\)$/m);
    chat.write('Go on.\n');
    await t.waitFor('stderr', /^turn 3 · .* · completed$/m);
    chat.write('/exit\n');
    expect(await chat.done).toBe(0);

    expect(p.requests[2]!.headers['x-deepseek-harness-compact']).toBe('1');
    const last = JSON.stringify((p.requests[3]!.body as { messages: unknown[] }).messages);
    expect(last).toContain('<compacted-summary>');
    expect(last).toContain('The user asked about README.md');
    expect(last).not.toContain('Keep every detail of this request');

    const events = logEvents(logPathFrom(t.stderr));
    const run = ofType(events, 'command/run')[0]!;
    const commandId = (run.data as { commandId: string }).commandId;
    const start = ofType(events, 'compaction/start')[0]!;
    expect(start.data).toMatchObject({ sourceCommandId: commandId, turn: null });
    expect(ofType(events, 'compaction/summary')[0]!.data.shadowedSeqs).toHaveLength(Number(done[1]));
    expect(ofType(events, 'command/done')[0]!.data).toMatchObject({ commandId, kind: 'success' });
    // Between turns 2 and 3.
    const ends = ofType(events, 'turn/end');
    expect(start.seq).toBeGreaterThan(ends[1]!.seq);
    expect(start.seq).toBeLessThan(ofType(events, 'turn/start')[2]!.seq);
  });

  it('/compact with arguments, or on a session with nothing to compact, says so', async () => {
    const p = await serve([text(['Hi.'])]);
    const chat = startMain(['chat', '--no-persist', '--cwd', gitRepo()], agentEnv(p.url, tempDir()));
    const t = chat.transcript;
    chat.write('/compact now\n');
    await t.waitFor('stderr', /^usage: \/compact \(no arguments\)$/m);
    chat.write('/compact\n');
    await t.waitFor('stdout', /^nothing to compact/m);
    chat.write('/exit\n');
    expect(await chat.done).toBe(0);
    expect(p.requests).toHaveLength(0);
  });
});
