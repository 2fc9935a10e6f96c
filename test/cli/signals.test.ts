/**
 * Signals against the real binary: the provider holds its stream open mid-answer, the test waits
 * until the streamed text has reached stdout (so the turn is provably running), then signals the
 * process. The log must close the turn `aborted` with the right cause before the process exits.
 */
import { writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { chatStream } from '../support/faults.js';
import { killQuietly, processesWith } from '../support/processes.js';
import { runMain } from './support/inproc.js';
import { startGatedProvider, type GatedProvider } from './support/gated-provider.js';
import { spawnDsh } from './support/driver.js';
import { agentEnv, gitRepo, logEvents, logPathFrom, storedLogs, tempDir, turnEnds } from './support/agent.js';

let provider: GatedProvider | undefined;

/**
 * How long the waits below may take. Each waits for an event (text on stdout, a marker file), so
 * on an idle machine it returns in a second or two; the budget only turns a hang into a failure,
 * and a loaded machine (a cold start of the binary under a load of 25) must not look like one.
 * The timing of a signal is not what these tests check: what it does to the turn and the log is.
 */
const WAIT_MS = 120_000;
const TEST_MS = 240_000;

async function waitUntil(test: () => boolean): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!test() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (!test()) throw new Error('condition never became true');
}

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
  it('SIGINT during a hanging stream: the turn ends aborted (cause user), the text so far is kept, exit 130', {
    timeout: TEST_MS,
  }, async () => {
    const p = await hangingProvider();
    const run = spawnDsh(['run', '--cwd', gitRepo(), 'Think'], { env: agentEnv(p.url, tempDir()) });
    await run.transcript.waitFor('stdout', /Thinking about/, { timeoutMs: WAIT_MS });
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

  it('SIGTERM: the turn is cancelled (cause disposed), the log closed, exit 143', { timeout: TEST_MS }, async () => {
    const p = await hangingProvider();
    const run = spawnDsh(['run', '--cwd', gitRepo(), 'Think'], { env: agentEnv(p.url, tempDir()) });
    await run.transcript.waitFor('stdout', /Thinking about/, { timeoutMs: WAIT_MS });
    run.kill('SIGTERM');
    expect(await run.done).toBe(143);
    const events = logEvents(logPathFrom(run.transcript.stderr));
    expect(turnEnds(events).map((e) => e.data.reason)).toEqual([{ kind: 'aborted', reason: { kind: 'disposed' } }]);
  });

  it('a second SIGINT while the turn winds down exits at once, the log flushed up to that point', { timeout: TEST_MS }, async () => {
    // The cancelled turn waits for its command's output to close, so a process that escaped the
    // command and still holds its stdout keeps the turn winding down until the test ends it, which
    // is after dsh has left: the second signal provably lands mid wind-down, however slow the
    // machine. (A command that only ignores SIGTERM does not: under bubblewrap it is killed within
    // milliseconds, and the second signal could arrive after the turn had closed.) The holder
    // escapes with setsid; without bubblewrap only the reaper would still end it, so the test
    // kills the reaper first (as a hostile command could: docs/tools.md).
    const token = `dshwinddown${randomBytes(4).toString('hex')}`;
    const command = `setsid -f bash -c 'exec -a ${token} sleep 300'; exec sleep 300`;
    provider = await startGatedProvider([
      { sse: chatStream({ toolCalls: [{ id: 'call_sleep', name: 'bash', args: [JSON.stringify({ command })] }] }) },
    ]);
    const home = tempDir();
    const config = join(tempDir(), 'config.json');
    writeFileSync(config, JSON.stringify({ sandbox: { bubblewrap: false } }));
    const args = ['run', '--sandbox', 'danger-full-access', '--approval', 'never', '--config', config, '--cwd', gitRepo(), 'Wait'];
    const run = spawnDsh(args, { env: agentEnv(provider.url, home) });
    try {
      await waitUntil(() => processesWith(token).some((p) => p.argv[0] === token));
      for (const p of processesWith(token)) if (p.argv[0] === 'perl') killQuietly(p.pid);
      run.kill('SIGINT');
      await run.transcript.waitFor('stderr', /cancelling the turn/, { timeoutMs: WAIT_MS });
      run.kill('SIGINT');
      expect(await run.done).toBe(130);
    } finally {
      if (run.child.exitCode === null && run.child.signalCode === null) run.kill('SIGKILL');
      for (const p of processesWith(token)) killQuietly(p.pid);
    }
    // No closing line: it left at once. The call is on disk; the turn never closed, so loading
    // the log runs crash repair.
    expect(run.transcript.stderr).not.toMatch(/· log /);
    const [path] = storedLogs(home);
    const check = await runMain(['log', 'check', path!]);
    expect(check.code, check.stdout).toBe(0);
    expect(check.stdout).toMatch(/warning OPEN_TURN/);
    expect(logEvents(path!).some((e) => e.type === 'tool/call')).toBe(true);
  });

  it('chat: Ctrl-C cancels the running turn and the chat goes on; Ctrl-C at the idle prompt leaves', { timeout: TEST_MS }, async () => {
    const p = await hangingProvider();
    const chat = spawnDsh(['chat', '--cwd', gitRepo()], { env: agentEnv(p.url, tempDir()) });
    chat.write('Think\n');
    await chat.transcript.waitFor('stdout', /Thinking about/, { timeoutMs: WAIT_MS });
    chat.kill('SIGINT');
    await chat.transcript.waitFor('stderr', /^turn 1 · 1 step · no usage · aborted \(user\)$/m, { timeoutMs: WAIT_MS });
    // Idle for sure (not just past turn/end): /session says so.
    chat.write('/session\n');
    await chat.transcript.waitFor('stdout', /^turns {3}1 · \d+ events · idle$/m, { timeoutMs: WAIT_MS });
    chat.kill('SIGINT');
    expect(await chat.done).toBe(0);
    expect(turnEnds(logEvents(logPathFrom(chat.transcript.stderr))).map((e) => e.data.reason.kind)).toEqual(['aborted']);
  });
});
