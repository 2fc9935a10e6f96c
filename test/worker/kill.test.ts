/**
 * Two real `dsh worker` processes on one PostgreSQL store, against a fake provider on 127.0.0.1.
 * The one holding the session is SIGKILLed while its tool runs; the other takes the session over
 * once the lease expires, closes the dangling turn with the crash-repair closers (the tool's
 * outcome is unknown: the model is told), continues in a new turn, and releases it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { TOOL_OUTCOME_UNKNOWN_TEXT, type SessionEvent } from '../../src/session/index.js';
import { PgStore, inputMessageId } from '../../src/postgres/index.js';
import { TAKEOVER_NOTICE } from '../../src/worker/worker.js';
import { chatStream } from '../support/faults.js';
import { startGatedProvider, type GatedProvider } from '../cli/support/gated-provider.js';
import { spawnDsh, type SpawnedDsh } from '../cli/support/driver.js';
import { agentEnv, gitRepo, tempDir } from '../cli/support/agent.js';
import { describePg, freshSchema, pgUrl } from '../postgres/support/pg.js';

let provider: GatedProvider | undefined;
const procs: SpawnedDsh[] = [];
const stores: PgStore[] = [];
afterEach(async () => {
  for (const p of procs.splice(0)) if (p.child.exitCode === null && p.child.signalCode === null) p.kill('SIGKILL');
  for (const s of stores.splice(0)) await s.close();
  await provider?.close();
  provider = undefined;
});

async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${what}\n${procs.map((p, i) => `--- worker ${i} stderr:\n${p.transcript.stderr}`).join('\n')}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function stored(store: PgStore, id: string): Promise<SessionEvent[]> {
  const v = await store.inspect(id, { repair: false });
  return v.session.events.slice(0, v.eventCount);
}

describePg('dsh worker processes', () => {
  // The other closes the turn (outcome unknown) and continues.
  it('two workers, the holder SIGKILLed mid-tool: the other takes over after the lease', async () => {
    const schema = freshSchema();
    const repo = gitRepo();
    const side = join(repo, 'side.txt');
    // The tool leaves a mark, then runs long enough to be killed in the middle.
    const command = 'echo ran >> side.txt; sleep 60';
    provider = await startGatedProvider((n) =>
      n === 0
        ? { sse: chatStream({ toolCalls: [{ id: 'call_side', name: 'bash', args: [JSON.stringify({ command })] }] }) }
        : { sse: chatStream({ text: ['Checked side.txt', ': the step is done.'] }) },
    );
    const c = new PgStore({ url: pgUrl!, schema, poolSize: 2 });
    stores.push(c);
    await (await c.create({ cwd: repo, id: 'k' })).close();

    const env = agentEnv(provider.url, tempDir(), { DSH_STORE: pgUrl!, DSH_STORE_SCHEMA: schema });
    const args = ['worker', '--full-auto', '--lease-ms', '1500', '--poll-ms', '200', '--idle-ms', '500', '--grace-ms', '1000'];
    for (let i = 0; i < 2; i++) procs.push(spawnDsh(args, { env, cwd: repo }));
    await Promise.all(procs.map((p) => p.transcript.waitFor('stderr', /^worker: .* up to 8 sessions$/m, { timeoutMs: 60_000 })));

    const input = await c.enqueue('k', 'prompt', [{ type: 'text', text: 'Append to side.txt' }]);
    await until(() => existsSync(side), 'the tool to run');
    const holder = (await c.list()).sessions.find((s) => s.id === 'k')!.lockedBy;
    expect(holder?.role).toBe('worker');
    const victim = procs.find((p) => p.child.pid === holder!.pid)!;
    const survivor = procs.find((p) => p !== victim)!;
    expect(victim).toBeDefined();
    victim.kill('SIGKILL');
    expect(await victim.done).toBeNull();

    await until(async () => (await stored(c, 'k')).filter((e) => e.type === 'turn/end').length === 2, 'the takeover to finish its turn');
    await until(
      async () => (await c.list()).sessions.find((s) => s.id === 'k')!.lockedBy === undefined,
      'the survivor to release the session',
    );
    const events = await stored(c, 'k');
    expect(events.filter((e): e is SessionEvent<'turn/end'> => e.type === 'turn/end').map((e) => e.data.reason.kind)).toEqual([
      'interrupted',
      'completed',
    ]);
    // The dangling call got the crash-repair closer: its outcome is unknown.
    const results = events.filter((e): e is SessionEvent<'tool/result'> => e.type === 'tool/result');
    expect(results.map((e) => JSON.stringify(e.data))).toEqual([expect.stringContaining('"toolCallId":"call_side"')]);
    expect(JSON.stringify(results[0]!.data)).toContain(TOOL_OUTCOME_UNKNOWN_TEXT);
    const users = events.filter((e): e is SessionEvent<'user/message'> => e.type === 'user/message');
    // (The coding preset's own context messages aside: the prompt once, then the takeover notice.)
    expect(users.map((e) => e.data.id).filter((id) => /^(input|takeover)-/.test(id))).toEqual([
      inputMessageId(input.id),
      expect.stringMatching(/^takeover-\d+$/),
    ]);
    // The model was asked again with the unknown outcome and the notice in view.
    expect(provider.requests.length).toBe(2);
    const second = JSON.stringify(provider.requests[1]!.body);
    expect(second).toContain(JSON.stringify(TOOL_OUTCOME_UNKNOWN_TEXT).slice(1, -1));
    expect(second).toContain(TAKEOVER_NOTICE);
    // The side effect happened once: nothing re-ran the tool by itself (after a takeover a side
    // effect is at least once; here the model chose not to repeat it).
    expect(readFileSync(side, 'utf8')).toBe('ran\n');
    expect(survivor.transcript.stderr).toMatch(new RegExp(`took over session k from pid ${victim.child.pid} on .*closed its open turn`));
    expect((await c.inputs('k')).length).toBe(0);

    survivor.kill('SIGTERM');
    expect(await survivor.done).toBe(0);
  }, 120_000);
});
