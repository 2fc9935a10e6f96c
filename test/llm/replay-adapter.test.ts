/** The replay adapter (issue 3 item 7): grouping, attempts, divergence, hang-until-abort, routes. */
import { describe, expect, it } from 'vitest';
import { ReplayAdapter, ReplayError } from '../../src/llm/replay-adapter.js';
import { collectStream } from '../../src/llm/runtime.js';
import { createAgent } from '../../src/create-agent.js';
import { Session } from '../../src/session/session.js';
import type { StreamChunk } from '../../src/model/stream.js';
import type { Message, ToolResultBlock } from '../../src/model/message.js';
import { encodeJsonl } from '../../src/session/codec/jsonl.js';
import { LogBuilder, ROUTE, callChunks, drain, requestBefore, textChunks, user } from '../replay/helpers.js';

/** Turn 1: a tool step then a text step; turn 2: a failed attempt, a retry, then text. */
function twoTurns(): { log: LogBuilder; attempts: StreamChunk[][] } {
  const log = new LogBuilder();
  const p1 = user('list the files');
  const p2 = user('again');
  log.startTurn(p1).startStep(p1).call('call_1', 'ls', '{"dir":"."}', 'a.txt').endStep();
  log.startStep().reply('one file').endStep().endTurn();
  const failed: StreamChunk[] = [
    { type: 'usage', usage: { inputTokens: 1, outputTokens: 0 } },
    { type: 'finish', reason: { kind: 'error', failure: { code: 'EMPTY_RESPONSE', message: 'empty' } } },
  ];
  log.startTurn(p2).startStep(p2);
  log.chunks(failed);
  log.retry('EMPTY_RESPONSE', 1).reply('still one').endStep().endTurn();
  return { log, attempts: [callChunks('call_1', 'ls', '{"dir":"."}'), textChunks('one file'), failed, textChunks('still one')] };
}

describe('grouping', () => {
  it('groups chunks by turn and step and splits a retried step into attempts', () => {
    const { log, attempts } = twoTurns();
    const replay = new ReplayAdapter(log.session);
    const got = replay.recording.attempts.map((a) => ({
      turn: a.turn,
      step: a.step,
      attempt: a.attempt,
      finish: a.finish?.kind,
      retried: a.retried,
      chunks: a.chunks,
    }));
    expect(got).toEqual([
      { turn: 1, step: 1, attempt: 1, finish: 'tool-calls', retried: false, chunks: attempts[0] },
      { turn: 1, step: 2, attempt: 1, finish: 'stop', retried: false, chunks: attempts[1] },
      { turn: 2, step: 1, attempt: 1, finish: 'error', retried: true, chunks: attempts[2] },
      { turn: 2, step: 1, attempt: 2, finish: 'stop', retried: false, chunks: attempts[3] },
    ]);
  });

  it('two error finishes in a row are two attempts even without a retry event between them', () => {
    const log = new LogBuilder();
    const p = user('x');
    log.startTurn(p).startStep(p);
    const err: StreamChunk = { type: 'finish', reason: { kind: 'error', failure: { code: 'SERVER', message: 'boom' } } };
    log.chunks([err]);
    log.chunks([err]);
    log.endStep().endTurn({ kind: 'error', error: { code: 'SERVER', message: 'boom' } });
    const replay = new ReplayAdapter(log.session);
    expect(replay.recording.attempts.map((a) => [a.attempt, a.chunks.length])).toEqual([
      [1, 1],
      [2, 1],
    ]);
  });

  it('serves the attempts in recorded order and reports no divergence for the recorded requests', async () => {
    const { log, attempts } = twoTurns();
    const replay = new ReplayAdapter(log.session);
    const out: StreamChunk[][] = [];
    for (const a of replay.recording.attempts) out.push(await collectStream(replay, requestBefore(log.events, a.firstSeq)));
    expect(out).toEqual(attempts);
    expect(replay.divergences).toEqual([]);
    expect(replay.remaining).toBe(0);
  });

  it('serves by position when told where the live request stands', async () => {
    const { log, attempts } = twoTurns();
    let pos = { turn: 2, step: 1 };
    const replay = new ReplayAdapter(log.session, { position: () => pos });
    const second = replay.recording.attempt(2, 1, 2)!;
    expect(await collectStream(replay, requestBefore(log.events, replay.recording.attempt(2, 1, 1)!.firstSeq))).toEqual(attempts[2]);
    expect(await collectStream(replay, requestBefore(log.events, second.firstSeq))).toEqual(attempts[3]);
    pos = { turn: 1, step: 2 };
    expect(await collectStream(replay, requestBefore(log.events, replay.recording.attempt(1, 2, 1)!.firstSeq))).toEqual(attempts[1]);
  });

  it('fails an unrecorded request with REPLAY_EXHAUSTED', async () => {
    const { log } = twoTurns();
    const replay = new ReplayAdapter(log.session, { position: () => ({ turn: 1, step: 3 }) });
    const chunks = await collectStream(replay, { ...ROUTE, messages: [] });
    expect(chunks).toEqual([{ type: 'finish', reason: { kind: 'error', failure: expect.objectContaining({ code: 'REPLAY_EXHAUSTED' }) } }]);
    expect(replay.divergences[0]).toMatchObject({ turn: 1, step: 3, attempt: 1, field: 'attempt' });
  });
});

describe('divergence', () => {
  it('reports the first differing path of an altered request, with its attempt', async () => {
    const { log } = twoTurns();
    const replay = new ReplayAdapter(log.session);
    const a = replay.recording.attempts[1]!; // turn 1 step 2: after the tool result
    const recorded = requestBefore(log.events, a.firstSeq);
    await collectStream(replay, requestBefore(log.events, replay.recording.attempts[0]!.firstSeq));
    const altered = structuredClone(recorded.messages) as Message[];
    const result = altered[2]!.content[0] as ToolResultBlock;
    result.content = [{ type: 'text', text: 'b.txt' }];
    const chunks = await collectStream(replay, { ...recorded, messages: altered, model: 'deepseek-v4-pro' });
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: { kind: 'stop' } }); // report mode still serves
    expect(replay.divergences.map((d) => [d.turn, d.step, d.attempt, d.field, d.path, d.recorded, d.live])).toEqual([
      [1, 2, 1, 'messages', 'messages[2].content[0].content[0].text', 'a.txt', 'b.txt'],
      [1, 2, 1, 'model', 'model', 'deepseek-v4-flash', 'deepseek-v4-pro'],
    ]);
  });

  it('strict mode refuses the diverging request with REPLAY_DIVERGED', async () => {
    const log = new LogBuilder();
    const p = user('hello');
    log.startTurn(p).startStep(p).reply('hi').endStep().endTurn();
    const replay = new ReplayAdapter(log.session, { mode: 'strict' });
    const it = replay.stream({ ...ROUTE, messages: [user('goodbye')] });
    await expect(it.next()).rejects.toSatisfy(
      (e: unknown) => e instanceof ReplayError && e.code === 'REPLAY_DIVERGED' && e.message.includes('messages[0].content[0].text'),
    );
  });

  it('ignores message ids, which are minted per run', async () => {
    const log = new LogBuilder();
    const p = user('hello');
    log.startTurn(p).startStep(p).reply('hi').endStep().endTurn();
    const replay = new ReplayAdapter(log.session, { mode: 'strict' });
    const chunks = await drain(replay.stream({ ...ROUTE, messages: [user('hello', 'another-id')] }));
    expect(chunks).toEqual(textChunks('hi'));
    expect(replay.divergences).toEqual([]);
  });

  it('lets recorded {{placeholders}} match anything and reports them', async () => {
    const built = new LogBuilder();
    const p = user('hello');
    built.startTurn(p).startStep(p).reply('hi').endStep().endTurn();
    // Tokenised fixtures keep "{{system}}"/"{{tools}}" in the header: only a lenient seed accepts them.
    const seed = built.events.map((e) =>
      e.type === 'request/header'
        ? { ...e, data: { ...e.data, header: { ...e.data.header, system: '{{system}}', tools: '{{tools}}' } } }
        : e,
    );
    const session = Session.create({ seed, validation: { onPlaceholder: () => undefined } });
    const replay = new ReplayAdapter(session, { mode: 'strict' });
    const live = {
      ...ROUTE,
      messages: [p],
      system: 'You are helpful.',
      tools: [{ name: 'ls', description: 'list', parameters: { type: 'object' } }],
    };
    expect(await drain(replay.stream(live))).toEqual(textChunks('hi'));
    expect(replay.divergences).toEqual([]);
    expect(replay.placeholders).toEqual([
      { turn: 1, step: 1, attempt: 1, field: 'system', path: 'system', token: '{{system}}' },
      { turn: 1, step: 1, attempt: 1, field: 'tools', path: 'tools', token: '{{tools}}' },
    ]);
  });
});

describe('an attempt recorded without a finish', () => {
  it('serves its chunks, then waits until the signal aborts', async () => {
    const log = new LogBuilder();
    const p = user('long task');
    log.startTurn(p).startStep(p);
    const partial: StreamChunk[] = [
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'partial' },
    ];
    const seqs = log.chunks(partial);
    log
      .message([{ type: 'text', text: 'partial' }], seqs, { interrupted: true })
      .endStep()
      .endTurn({ kind: 'aborted', reason: { kind: 'user' } });

    const hung: number[] = [];
    const replay = new ReplayAdapter(log.session, { onHang: (a) => hung.push(a.attempt) });
    const ac = new AbortController();
    const it = replay.stream(requestBefore(log.events, seqs[0]!, ac.signal));
    expect((await it.next()).value).toEqual(partial[0]);
    expect((await it.next()).value).toEqual(partial[1]);
    let settled = false;
    const pending = it.next().then((r) => {
      settled = true;
      return r;
    });
    await new Promise((r) => setImmediate(r)); // let everything already runnable run
    expect(settled).toBe(false);
    expect(hung).toEqual([1]);
    ac.abort();
    expect((await pending).value).toMatchObject({ type: 'finish', reason: { kind: 'aborted' } });
    expect((await it.next()).done).toBe(true);
  });

  it('an aborted turn whose request saw no chunk gets an empty attempt to wait on', () => {
    const log = new LogBuilder();
    const p = user('x');
    log
      .startTurn(p)
      .startStep(p)
      .endStep()
      .endTurn({ kind: 'aborted', reason: { kind: 'user' } });
    const replay = new ReplayAdapter(log.session);
    expect(replay.recording.attempts).toMatchObject([{ turn: 1, step: 1, attempt: 1, chunks: [] }]);
    expect(replay.recording.attempts[0]!.finish).toBeUndefined();
  });
});

describe('routes and configuration', () => {
  it('serves the provider routes the recorded headers name, so createAgent can use the recorded model', async () => {
    const log = new LogBuilder();
    const p = user('ping');
    log.startTurn(p).startStep(p).reply('PONG').endStep().endTurn();
    const replay = new ReplayAdapter(log.session);
    expect(replay.providers).toEqual(['deepseek-official']);

    const agent = createAgent({ model: 'deepseek-official:deepseek-v4-flash', adapters: replay, retry: false });
    agent.prompt(p);
    await agent.whenIdle();
    const messages = agent.session.events
      .filter((e) => e.type === 'assistant/message')
      .map((e) => e.type === 'assistant/message' && e.data.message.content);
    expect(messages).toEqual([[{ type: 'text', text: 'PONG' }]]);
    expect(replay.divergences).toEqual([]);
  });

  it('fills in the values the recorded adapter marked as its defaults', () => {
    const log = new LogBuilder({
      config: { ...ROUTE, reasoningEffort: 'max', maxTokens: 256000 },
      adapterDefaults: { reasoningEffort: true, maxTokens: true },
    });
    const p = user('x');
    log.startTurn(p).startStep(p).reply('y').endStep().endTurn();
    const replay = new ReplayAdapter(log.session);
    expect(replay.resolveCall({ ...ROUTE })).toEqual({
      config: { ...ROUTE, reasoningEffort: 'max', maxTokens: 256000 },
      adapterDefaults: { reasoningEffort: true, maxTokens: true },
    });
    expect(replay.resolveCall({ ...ROUTE, maxTokens: 10 })).toEqual({
      config: { ...ROUTE, maxTokens: 10, reasoningEffort: 'max' },
      adapterDefaults: { reasoningEffort: true },
    });
  });

  it('reads JSONL text', () => {
    const log = new LogBuilder();
    const p = user('ping');
    log.startTurn(p).startStep(p).reply('PONG').endStep().endTurn();
    const text = encodeJsonl(log.session.header, log.events);
    const replay = new ReplayAdapter(text);
    expect(replay.recording.attempts.map((a) => a.chunks)).toEqual([textChunks('PONG')]);
  });
});
