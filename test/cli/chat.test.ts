/**
 * `dsh chat` in its line mode: prompts, steering, approvals and slash commands written to its
 * standard input one line at a time, each after the output that line depends on has appeared.
 * The pipe case runs the real binary; the others run `main()` in this process.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { chatStream } from '../support/faults.js';
import { startGatedProvider, type GatedProvider, type GatedResponse } from './support/gated-provider.js';
import { spawnDsh, startMain } from './support/driver.js';
import { agentEnv, gitRepo, logEvents, logPathFrom, storedLogs, tempDir, turnEnds } from './support/agent.js';

let provider: GatedProvider | undefined;
afterEach(async () => {
  await provider?.close();
  provider = undefined;
});
async function gated(script: GatedResponse[]): Promise<GatedProvider> {
  provider = await startGatedProvider(script);
  return provider;
}

const say = (parts: string[], holdAfter?: number): GatedResponse => ({
  sse: chatStream({ text: parts }),
  ...(holdAfter !== undefined ? { holdAfter } : {}),
});
const write = (id: string, file: string, content: string): GatedResponse => ({
  sse: chatStream({ toolCalls: [{ id, name: 'write', args: [JSON.stringify({ file_path: file, content })] }] }),
});

interface Msg {
  role: string;
  content: unknown;
}
const sent = (p: GatedProvider, n: number): Msg[] => (p.requests[n]!.body as { messages: Msg[] }).messages;
const body = (p: GatedProvider, n: number): { model: string } => p.requests[n]!.body as { model: string };

describe('dsh chat', () => {
  it('through a pipe: two prompts, a steer while the first runs, /session, /exit', async () => {
    // Turn 1 holds its answer open until the steer is queued; the steer makes it take a second step.
    const p = await gated([say(['Working', ' on it.'], 2), say(['Done, and the steer is noted.']), say(['Second answer.'])]);
    const home = tempDir();
    const chat = spawnDsh(['chat', '--cwd', gitRepo()], { env: agentEnv(p.url, home) });
    const t = chat.transcript;
    chat.write('first prompt\n');
    await t.waitFor('stdout', /Working/);
    chat.write('please also mention the steer\n');
    await t.waitFor('stderr', /^\(steering: it enters at the next step\)$/m);
    p.release(0);
    await t.waitFor('stderr', /^turn 1 · 2 steps · .* · completed$/m);
    chat.write('second prompt\n');
    await t.waitFor('stderr', /^turn 2 · 1 step · .* · completed$/m);
    chat.write('/session\n');
    await t.waitFor('stdout', /^model {3}deepseek:deepseek-v4-flash$/m);
    chat.write('/exit\n');
    expect(await chat.done).toBe(0);

    expect(t.stdout).toContain('Working on it.\nDone, and the steer is noted.\n');
    expect(t.stdout).toContain('Second answer.\n');
    const path = logPathFrom(t.stderr);
    expect(storedLogs(home)).toEqual([path]);
    expect(t.stdout).toMatch(new RegExp(`^log     ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
    expect(t.stdout).toMatch(/^turns {3}2 · \d+ events · idle$/m);
    expect(t.stdout).toMatch(/^usage {3}in 30 · out 15 · cache read 0$/m);

    // The steer entered turn 1 at its second step, after the first answer; the second prompt got turn 2.
    const steer = JSON.stringify(sent(p, 1).at(-1));
    expect(steer).toContain('please also mention the steer');
    expect(sent(p, 1).at(-2)?.role).toBe('assistant');
    expect(JSON.stringify(sent(p, 2).at(-1))).toContain('second prompt');
    const events = logEvents(path);
    expect(turnEnds(events).map((e) => e.data.reason.kind)).toEqual(['completed', 'completed']);
    const steerEvent = events.find((e) => e.type === 'user/message' && JSON.stringify(e.data.content).includes('mention the steer'));
    const stepOf = (seq: number): unknown => events.filter((e) => e.type === 'step/start' && e.seq < seq).at(-1)?.data;
    expect(stepOf(steerEvent!.seq)).toEqual({ turn: 1, step: 2 });
  });

  it('asks for approval: y runs the call once, n rejects it, end of input cancels the question', async () => {
    const repo = gitRepo();
    const home = tempDir();
    const p = await gated([
      write('w1', 'notes.txt', 'yes'),
      say(['Wrote it.']),
      write('w2', 'other.txt', 'no'),
      say(['Not written.']),
      write('w3', 'third.txt', 'eof'),
      say(['Cancelled.']),
    ]);
    const chat = startMain(['chat', '--ask', 'write(*)', '--cwd', repo], agentEnv(p.url, home));
    const t = chat.transcript;

    chat.write('create notes.txt\n');
    await t.waitFor('stderr', /^allow once\? \[y\/N\]$/m);
    expect(t.stderr).toContain(
      'approval needed: write {"file_path":"notes.txt","content":"yes"}\n  because it matches the ask rule "write(*)"\n',
    );
    chat.write('y\n');
    await t.waitFor('stderr', /^turn 1 · 2 steps · .* · completed$/m);
    expect(readFileSync(join(repo, 'notes.txt'), 'utf8')).toBe('yes');

    let from = t.stderr.length;
    chat.write('create other.txt\n');
    await t.waitFor('stderr', /^allow once\? \[y\/N\]$/m, { from });
    chat.write('n\n');
    await t.waitFor('stderr', /^turn 2 · 2 steps · .* · completed$/m);
    expect(existsSync(join(repo, 'other.txt'))).toBe(false);

    from = t.stderr.length;
    chat.write('create third.txt\n');
    await t.waitFor('stderr', /^allow once\? \[y\/N\]$/m, { from });
    chat.end();
    expect(await chat.done).toBe(0);
    expect(existsSync(join(repo, 'third.txt'))).toBe(false);

    const events = logEvents(logPathFrom(t.stderr));
    expect(events.filter((e) => e.type === 'approval/decided').map((e) => (e.type === 'approval/decided' ? e.data.outcome : ''))).toEqual([
      'allowed-once',
      'rejected',
      'cancelled',
    ]);
    const codes = events.filter((e) => e.type === 'tool/result').map((e) => (e.type === 'tool/result' ? (e.data.error?.code ?? 'ok') : ''));
    expect(codes).toEqual(['ok', 'APPROVAL_REJECTED', 'APPROVAL_CANCELLED']);
    // The model was told about the rejection in its next request.
    expect(JSON.stringify(sent(p, 3).at(-1))).toContain('the user rejected it; it was not run');
  });

  it('the line-mode approval question shows the whole call, however long (never cut at 160 characters)', async () => {
    const repo = gitRepo();
    const p = await gated([write('w1', 'notes.txt', `${'harmless '.repeat(30)}DANGER-TAIL\nsecond line`), say(['Done.'])]);
    const chat = startMain(['chat', '--ask', 'write(*)', '--cwd', repo], agentEnv(p.url, tempDir()));
    chat.write('create notes.txt\n');
    await chat.transcript.waitFor('stderr', /^allow once\? \[y\/N\]$/m);
    expect(chat.transcript.stderr).toContain(
      `approval needed: write {"file_path":"notes.txt","content":"${'harmless '.repeat(30)}DANGER-TAIL\\nsecond line"}\n`,
    );
    chat.write('n\n');
    await chat.transcript.waitFor('stderr', /^turn 1 · /m);
    chat.end();
    expect(await chat.done).toBe(0);
  });

  it('/model changes the model of the next requests (a request/header change); /fork continues in a fork', async () => {
    const home = tempDir();
    const p = await gated([say(['one']), say(['two']), say(['three'])]);
    const chat = startMain(['chat', '--cwd', gitRepo()], agentEnv(p.url, home));
    const t = chat.transcript;

    chat.write('first\n');
    await t.waitFor('stderr', /^turn 1 · .* · completed$/m);
    chat.write('/model deepseek:deepseek-v4-pro\n');
    await t.waitFor('stdout', /^model deepseek:deepseek-v4-pro from the next request on$/m);
    chat.write('second\n');
    await t.waitFor('stderr', /^turn 2 · .* · completed$/m);
    expect(body(p, 0).model).toBe('deepseek-v4-flash');
    expect(body(p, 1).model).toBe('deepseek-v4-pro');

    // A seq inside a turn is refused; the end of turn 1 is a valid fork point.
    chat.write('/fork 3\n');
    await t.waitFor(
      'stderr',
      /^cannot fork: cannot fork at seq 3: turn 1 \(opened at seq \d+\) is still open there; pick a seq between turns \[OPEN_TURN\]$/m,
    );
    chat.write('/session\n');
    const id = (await t.waitFor('stdout', /^session (\S+)$/m))[1]!;
    await t.waitFor('stdout', /^model {3}/m);
    const parentLog = storedLogs(home)[0]!;
    const turn1End = logEvents(parentLog).find((e) => e.type === 'turn/end')!.seq;
    chat.write(`/fork ${turn1End}\n`);
    const forked = await t.waitFor('stdout', /^forked (\S+) at seq (\d+); continuing in (\S+) \((\S+)\)$/m);
    expect(forked[1]).toBe(id);
    expect(Number(forked[2])).toBe(turn1End);
    const before = t.stderr.length;
    chat.write('third\n');
    await t.waitFor('stderr', /^turn 2 · .* · completed$/m, { from: before });
    chat.write('/exit\n');
    expect(await chat.done).toBe(0);

    // The fork holds turn 1 of the parent, then its own turn 2 (the parent's turn 2 is not in it).
    const fork = logEvents(forked[4]!);
    const sentThird = JSON.stringify(sent(p, 2));
    expect(sentThird).toContain('first');
    expect(sentThird).not.toContain('second');
    expect(body(p, 2).model).toBe('deepseek-v4-pro');
    expect(turnEnds(fork).map((e) => e.data.turn)).toEqual([1, 2]);
    expect(t.stderr.trimEnd().split('\n').at(-1)).toContain(`session ${forked[3]} · log ${forked[4]}`);

    // The parent logged the switch as a header change.
    const headers = logEvents(parentLog).filter((e) => e.type === 'request/header');
    expect(headers.map((e) => (e.type === 'request/header' ? [e.data.reason, e.data.header.config.model] : []))).toEqual([
      ['initial', 'deepseek-v4-flash'],
      ['change', 'deepseek-v4-pro'],
    ]);
  });

  it('refuses unknown commands and bad arguments with one line each, and keeps going', async () => {
    const p = await gated([]);
    const chat = startMain(['chat', '--no-persist', '--cwd', gitRepo()], agentEnv(p.url, tempDir()));
    const t = chat.transcript;
    chat.write('/frobnicate\n/fork x\n/fork 1 2\n/model nope:thing\n/cancel\n/resume\n/resume abcd\n/help\n');
    await t.waitFor('stdout', /^ {2}\/exit {12}leave/m);
    chat.end();
    expect(await chat.done).toBe(0);
    const lines = t.stderr.split('\n');
    expect(lines).toContain('unknown command /frobnicate: /help lists the commands');
    expect(lines).toContain('not a seq: "x" (a seq is a number; dsh log show lists them)');
    expect(lines).toContain('no turn has ended yet');
    expect(lines).toContain('usage: /fork [SEQ] (a seq between turns; dsh log show lists them)');
    expect(lines.some((l) => /^unknown provider "nope" in "nope:thing": use one of deepseek, openai, anthropic/.test(l))).toBe(true);
    expect(lines).toContain('nothing to cancel: the agent is idle');
    expect(lines).toContain('usage: /resume ID (dsh sessions lists them; the list to pick from is on the chat screen)');
    expect(lines).toContain(
      'cannot resume: this chat keeps its session in memory (--no-persist): there is no store to resume from [USAGE]',
    );
    expect(p.requests).toHaveLength(0);
  });
});
