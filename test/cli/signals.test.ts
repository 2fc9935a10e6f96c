/**
 * Signals against the real binary: the provider holds its stream open mid-answer, the test waits
 * until the streamed text has reached stdout (so the turn is provably running), then signals the
 * process. The log must close the turn `aborted` with the right cause before the process exits.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { chatStream } from '../support/faults.js';
import { startGatedProvider, type GatedProvider } from './support/gated-provider.js';
import { spawnDsh } from './support/driver.js';
import { agentEnv, gitRepo, logEvents, logPathFrom, tempDir, turnEnds } from './support/agent.js';

let provider: GatedProvider | undefined;
afterEach(async () => {
  await provider?.close();
  provider = undefined;
});

/** A text answer that stops after its first words and never finishes. */
async function hangingProvider(): Promise<GatedProvider> {
  // Parts: the role chunk, "Thinking about", " it", then the finish: hold before " it".
  provider = await startGatedProvider(() => ({ sse: chatStream({ text: ['Thinking about', ' it'] }), holdAfter: 2 }));
  return provider;
}

describe('signals', () => {
  it('SIGINT during a hanging stream: the turn ends aborted (cause user), the text so far is kept, exit 130', async () => {
    const p = await hangingProvider();
    const run = spawnDsh(['run', '--cwd', gitRepo(), 'Think'], { env: agentEnv(p.url, tempDir()) });
    await run.transcript.waitFor('stdout', /Thinking about/);
    run.kill('SIGINT');
    expect(await run.done).toBe(130);
    const { stderr } = run.transcript;
    expect(stderr).toContain('cancelling the turn (Ctrl-C again quits at once)');
    expect(stderr.trimEnd().split('\n').at(-1)).toMatch(/ · turn 1 · 1 step · no usage · aborted \(user\)$/);
    const events = logEvents(logPathFrom(stderr));
    expect(turnEnds(events).map((e) => e.data.reason)).toEqual([{ kind: 'aborted', reason: { kind: 'user' } }]);
    const kept = events.find((e) => e.type === 'assistant/message');
    expect(kept?.type === 'assistant/message' && kept.data.interrupted).toBe(true);
    expect(kept?.type === 'assistant/message' && kept.data.message.content).toEqual([{ type: 'text', text: 'Thinking about' }]);
  });

  it('SIGTERM: the turn is cancelled (cause disposed), the log closed, exit 143', async () => {
    const p = await hangingProvider();
    const run = spawnDsh(['run', '--cwd', gitRepo(), 'Think'], { env: agentEnv(p.url, tempDir()) });
    await run.transcript.waitFor('stdout', /Thinking about/);
    run.kill('SIGTERM');
    expect(await run.done).toBe(143);
    const events = logEvents(logPathFrom(run.transcript.stderr));
    expect(turnEnds(events).map((e) => e.data.reason)).toEqual([{ kind: 'aborted', reason: { kind: 'disposed' } }]);
  });

  it('chat: Ctrl-C cancels the running turn and the chat goes on; Ctrl-C at the idle prompt leaves', async () => {
    const p = await hangingProvider();
    const chat = spawnDsh(['chat', '--cwd', gitRepo()], { env: agentEnv(p.url, tempDir()) });
    chat.write('Think\n');
    await chat.transcript.waitFor('stdout', /Thinking about/);
    chat.kill('SIGINT');
    await chat.transcript.waitFor('stderr', /^turn 1 · 1 step · no usage · aborted \(user\)$/m);
    // Idle for sure (not just past turn/end): /session says so.
    chat.write('/session\n');
    await chat.transcript.waitFor('stdout', /^turns   1 · \d+ events · idle$/m);
    chat.kill('SIGINT');
    expect(await chat.done).toBe(0);
    expect(turnEnds(logEvents(logPathFrom(chat.transcript.stderr))).map((e) => e.data.reason.kind)).toEqual(['aborted']);
  });
});
