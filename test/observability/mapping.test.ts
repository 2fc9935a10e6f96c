/**
 * The log → span mapping on sessions built by hand through the Session API, with every event
 * time set by the test, so the expected spans (names, kinds, parents, attributes, statuses and
 * times) are written out here and not computed by the code under test.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { encodeJsonl, loadJsonl } from '../../src/session/index.js';
import { mapSession, type DshSpan } from '../../src/observability/index.js';
import { assistant, clockedSession, header, user, type Clocked } from './support/build.js';
import { EXPECTED_TWO_STEP, SESSION, twoStepTurn } from './support/reference.js';

/** Everything but the ids, which are checked through their relations. */
function withoutIds(spans: readonly DshSpan[]): Omit<DshSpan, 'traceId' | 'spanId' | 'parentSpanId'>[] {
  return spans.map(({ traceId: _t, spanId: _s, parentSpanId: _p, ...rest }) => rest);
}

describe('a completed turn with a tool step', () => {
  const c = clockedSession(SESSION);
  twoStepTurn(c);
  const mapped = mapSession(c.session);

  it('gives one invoke_agent span, then one span per attempt and per tool call, in log order', () => {
    expect(withoutIds(mapped.spans)).toEqual(EXPECTED_TWO_STEP);
    expect(mapped).toMatchObject({ sessionId: SESSION, incompleteTurns: 0, skippedTurns: 0 });
    expect(mapped.turns.map((t) => [t.turn, t.incomplete, t.spans.length])).toEqual([[1, false, 4]]);
  });

  it('puts every span in the turn trace, children directly under the turn span', () => {
    const [root, ...children] = mapped.spans;
    expect(root!.parentSpanId).toBeUndefined();
    expect(root!.traceId).toMatch(/^[0-9a-f]{32}$/);
    for (const s of children) {
      expect(s.traceId).toBe(root!.traceId);
      expect(s.parentSpanId).toBe(root!.spanId);
      expect(s.spanId).toMatch(/^[0-9a-f]{16}$/);
    }
    expect(new Set(mapped.spans.map((s) => s.spanId)).size).toBe(4);
  });
});

describe('usage in the OTel shape', () => {
  it('sums, over the chat spans, to the provider totals computed independently from the log', () => {
    const c = clockedSession(SESSION);
    twoStepTurn(c);
    // Independent: every assistant/message usage, cache reads and writes added to input by hand.
    let input = 0;
    let cacheRead = 0;
    let output = 0;
    for (const e of c.session.events) {
      if (e.type !== 'assistant/message' || !e.data.usage) continue;
      const u = e.data.usage;
      input += u.inputTokens + (u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0);
      cacheRead += u.cacheReadTokens ?? 0;
      output += u.outputTokens;
    }
    expect([input, cacheRead, output]).toEqual([900, 720, 30]);
    const chats = mapSession(c.session).spans.filter((s) => s.kind === 'CLIENT');
    const sum = (k: string): number => chats.reduce((n, s) => n + ((s.attributes[k] as number | undefined) ?? 0), 0);
    expect([sum('gen_ai.usage.input_tokens'), sum('gen_ai.usage.cache_read.input_tokens'), sum('gen_ai.usage.output_tokens')]).toEqual([
      900, 720, 30,
    ]);
  });

  it('never puts usage on the turn span (a backend summing all spans would count it twice)', () => {
    const c = clockedSession(SESSION);
    twoStepTurn(c);
    const root = mapSession(c.session).spans[0]!;
    expect(Object.keys(root.attributes).filter((k) => k.startsWith('gen_ai.usage'))).toEqual([]);
  });
});

describe('an error turn', () => {
  it('marks the failed attempt and the turn as errors, with the failure code and message', () => {
    const c = clockedSession('sess-err');
    c.at(100).append('turn/start', { turn: 1 });
    c.at(110).append('step/start', { turn: 1, step: 1 });
    c.at(110).append('user/message', user('hi'), { surfaceOp: 'append' });
    c.at(120).append('request/header', header({ provider: 'anthropic', model: 'claude-x' }));
    const failure = { code: 'AUTH', message: 'invalid x-api-key', status: 401 };
    c.at(180).append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'finish', reason: { kind: 'error', failure } } });
    c.at(181).append('step/end', { turn: 1, step: 1 });
    c.at(182).append('turn/end', { turn: 1, reason: { kind: 'error', error: failure } });
    const spans = mapSession(c.session).spans;
    expect(spans.map((s) => [s.name, s.kind, s.startTime, s.endTime, s.status])).toEqual([
      ['invoke_agent dsh', 'INTERNAL', 100, 182, { code: 'ERROR', message: 'AUTH: invalid x-api-key' }],
      ['chat claude-x', 'CLIENT', 120, 180, { code: 'ERROR', message: 'AUTH: invalid x-api-key' }],
    ]);
    expect(spans[0]!.attributes).toMatchObject({ 'dsh.turn.end_reason': 'error', 'error.type': 'AUTH' });
    expect(spans[1]!.attributes).toMatchObject({
      'gen_ai.provider.name': 'anthropic',
      'error.type': 'AUTH',
      'dsh.llm.finish': 'error',
      'gen_ai.response.finish_reasons': ['error'],
    });
    expect(spans[1]!.attributes['gen_ai.usage.input_tokens']).toBeUndefined();
  });
});

describe('times', () => {
  it('are clamped to the running maximum: a clock that goes backwards never ends a span before it starts', () => {
    const c = clockedSession('sess-clock');
    c.at(5000).append('turn/start', { turn: 1 });
    c.at(4000).append('step/start', { turn: 1, step: 1 });
    c.at(4000).append('user/message', user('hi'), { surfaceOp: 'append' });
    c.at(6000).append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'finish', reason: { kind: 'stop' } } });
    c.at(3000).append(
      'assistant/message',
      { turn: 1, step: 1, message: assistant([]), usage: { inputTokens: 1, outputTokens: 0 } },
      { surfaceOp: 'append', sourceEventSeqs: [3] },
    );
    c.at(7000).append('step/end', { turn: 1, step: 1 });
    c.at(100).append('turn/end', { turn: 1, reason: { kind: 'completed' } });
    const spans = mapSession(c.session).spans;
    // turn: 5000 → max(…, 100) = 7000; chat: starts at the user/message (4000 → 5000), ends at its message (3000 → 6000).
    // No request/header in this log: the model name comes from the assistant message's source.
    expect(spans.map((s) => [s.name, s.startTime, s.endTime])).toEqual([
      ['invoke_agent dsh', 5000, 7000],
      ['chat deepseek-chat', 5000, 6000],
    ]);
  });
});

describe('a crash', () => {
  /** A turn cut off after the first of two tool calls started. */
  function crashedLog(): string {
    const c = clockedSession('sess-crash');
    c.at(100).append('turn/start', { turn: 1 });
    c.at(110).append('step/start', { turn: 1, step: 1 });
    c.at(110).append('user/message', user('write two files'), { surfaceOp: 'append' });
    c.at(111).append('request/header', header({ provider: 'openai', model: 'gpt-x' }));
    const a = { type: 'tool-call' as const, id: 'call_a', name: 'write', arguments: '{"path":"a"}' };
    const b = { type: 'tool-call' as const, id: 'call_b', name: 'write', arguments: '{"path":"b"}' };
    c.at(150).append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'finish', reason: { kind: 'tool-calls' } } });
    c.at(160).append(
      'assistant/message',
      { turn: 1, step: 1, message: assistant([a, b], 'gpt-x', 'openai') },
      { surfaceOp: 'append', sourceEventSeqs: [4] },
    );
    c.at(170).append('tool/call', { turn: 1, step: 1, callId: 'call_a', name: 'write', arguments: '{"path":"a"}' });
    return encodeJsonl(c.session.header, c.session.events);
  }

  it('repaired on load: the interrupted turn ends at the last event, the started call outcome-unknown, the other never started', () => {
    const loaded = loadJsonl(crashedLog());
    expect(loaded.repaired.map((d) => d.type)).toEqual(['tool/result', 'tool/result', 'step/end', 'turn/end']);
    const m = mapSession(loaded);
    expect(m.incompleteTurns).toBe(0);
    expect(
      m.spans.map((s) => [s.name, s.startTime, s.endTime, s.status, s.attributes['error.type'], s.attributes['dsh.tool.call_recorded']]),
    ).toEqual([
      ['invoke_agent dsh', 100, 170, { code: 'UNSET' }, undefined, undefined],
      ['chat gpt-x', 111, 160, { code: 'UNSET' }, undefined, undefined],
      ['execute_tool write', 170, 170, { code: 'ERROR', message: 'TOOL_OUTCOME_UNKNOWN' }, 'TOOL_OUTCOME_UNKNOWN', undefined],
      ['execute_tool write', 170, 170, { code: 'ERROR', message: 'TOOL_NOT_STARTED' }, 'TOOL_NOT_STARTED', false],
    ]);
    expect(m.spans[0]!.attributes['dsh.turn.end_reason']).toBe('interrupted');
    expect(m.spans[3]!.attributes['gen_ai.tool.call.id']).toBe('call_b');
    expect(m.spans.some((s) => 'dsh.incomplete' in s.attributes)).toBe(false);
  });

  it('not repaired: the open turn and its open call end at the last event, marked incomplete', () => {
    const loaded = loadJsonl(crashedLog(), { repair: false });
    const m = mapSession(loaded);
    expect(m.incompleteTurns).toBe(1);
    expect(m.turns[0]!.incomplete).toBe(true);
    expect(m.spans.map((s) => [s.name, s.startTime, s.endTime, s.attributes['dsh.incomplete']])).toEqual([
      ['invoke_agent dsh', 100, 170, true],
      ['chat gpt-x', 111, 160, undefined],
      ['execute_tool write', 170, 170, true],
    ]);
    expect(m.spans[0]!.attributes['dsh.turn.end_reason']).toBeUndefined();
  });
});

describe('determinism', () => {
  it('maps the same log to the same spans and ids, however often and from whichever form', () => {
    const c = clockedSession(SESSION);
    twoStepTurn(c);
    const fromSession = mapSession(c.session);
    const fromJsonl = mapSession(loadJsonl(encodeJsonl(c.session.header, c.session.events)));
    const fromEvents = mapSession({ id: SESSION, events: c.session.events });
    expect(fromJsonl.spans).toEqual(fromSession.spans);
    expect(fromEvents.spans).toEqual(fromSession.spans);
  });

  it('derives ids as documented: sha256 of (session id, seq), so any tool can recompute them', () => {
    const c = clockedSession(SESSION);
    twoStepTurn(c);
    const spans = mapSession(c.session).spans;
    const h = (kind: string, seq: number): string =>
      createHash('sha256').update(`dsh/${kind}/v1\n${SESSION.length}:${SESSION}\n${seq}\n0`).digest('hex');
    expect(spans[0]!.traceId).toBe(h('trace', 0).slice(0, 32));
    // Each span's id comes from the first event of its unit: turn/start 0, chunk 4, tool/call 10, chunk 14.
    expect(spans.map((s) => s.spanId)).toEqual([0, 4, 10, 14].map((seq) => h('span', seq).slice(0, 16)));
  });

  it('gives another session other ids', () => {
    const a = clockedSession('sess-a');
    const b = clockedSession('sess-b');
    twoStepTurn(a);
    twoStepTurn(b);
    const ids = (c: Clocked): string[] => mapSession(c.session).spans.flatMap((s) => [s.traceId, s.spanId]);
    const shared = ids(a).filter((x) => ids(b).includes(x));
    expect(shared).toEqual([]);
  });
});

describe('forks', () => {
  it('leave inherited turns to the parent by default, and name the parent on their own turns', () => {
    const parent = clockedSession('sess-parent');
    twoStepTurn(parent);
    const child = parent.session.fork(undefined, { id: 'sess-child' });
    child.append('turn/start', { turn: 2 });
    child.append('turn/end', { turn: 2, reason: { kind: 'blocked' } });
    const m = mapSession(child);
    expect(m.skippedTurns).toBe(1);
    expect(m.turns.map((t) => t.turn)).toEqual([2]);
    expect(m.spans[0]!.attributes).toMatchObject({
      'dsh.turn.end_reason': 'blocked',
      'dsh.session.parent_id': 'sess-parent',
      'gen_ai.conversation.id': 'sess-child',
    });
    const all = mapSession(child, { inherited: 'include' });
    expect(all.turns.map((t) => t.turn)).toEqual([1, 2]);
    expect(all.skippedTurns).toBe(0);
  });
});

describe('options', () => {
  it('are checked, with typed errors', () => {
    const c = clockedSession('sess-opt');
    expect(() => mapSession(c.session, { maxContentLength: 10 })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    expect(() => mapSession(c.session, { content: 'all' as never })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    expect(() => mapSession({ events: [] } as never)).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
  });

  it('name the agent', () => {
    const c = clockedSession(SESSION);
    twoStepTurn(c);
    const root = mapSession(c.session, { agentName: 'reviewer' }).spans[0]!;
    expect([root.name, root.attributes['gen_ai.agent.name']]).toEqual(['invoke_agent reviewer', 'reviewer']);
  });
});

describe('one trace per session (traces: session)', () => {
  const c = clockedSession(SESSION);
  twoStepTurn(c);
  c.at(2000).append('turn/start', { turn: 2 });
  c.at(2010).append('step/start', { turn: 2, step: 1 });
  c.at(2010).append('user/message', user('Again'), { surfaceOp: 'append' });
  c.at(2011).append('request/header', header({ provider: 'deepseek', model: 'deepseek-chat' }, 'Be brief.'));
  c.at(2100).append(
    'assistant/message',
    { turn: 2, step: 1, message: assistant([{ type: 'text', text: 'Same.' }]) },
    { surfaceOp: 'append' },
  );
  c.at(2100).append('step/end', { turn: 2, step: 1 });
  // Turn 2 never ends: the session span says the session holds an incomplete turn.
  const perTurn = mapSession(c.session);
  const perSession = mapSession(c.session, { traces: 'session' });

  it('puts a session span first, parent of every turn span, every span in one trace', () => {
    const [root, ...rest] = perSession.spans;
    expect(root!.name).toBe('session dsh');
    expect(root!.parentSpanId).toBeUndefined();
    expect(perSession.sessionSpan).toBe(root);
    expect(new Set(perSession.spans.map((s) => s.traceId))).toEqual(new Set([root!.traceId]));
    const turnRoots = rest.filter((s) => s.name === 'invoke_agent dsh');
    expect(turnRoots).toHaveLength(2);
    for (const t of turnRoots) expect(t.parentSpanId).toBe(root!.spanId);
    // Everything else keeps its place under its turn span, and its span id.
    expect(rest.map((s) => s.spanId)).toEqual(perTurn.spans.map((s) => s.spanId));
  });

  it('spans the session: first turn start to last event, the seq range, the turn count, incomplete', () => {
    const root = perSession.spans[0]!;
    expect([root.startTime, root.endTime]).toEqual([1000, 2100]);
    expect(root.attributes).toMatchObject({
      'dsh.session.turns': 2,
      'dsh.seq.start': 0,
      'dsh.incomplete': true,
      'gen_ai.conversation.id': SESSION,
    });
    expect(root.attributes['dsh.seq.end']).toBe(c.session.length - 1);
  });

  it('derives the ids from the session id alone, never equal to a per-turn id', () => {
    const hex = (kind: string, n: number) =>
      createHash('sha256').update(`dsh/${kind}/v1\n${SESSION.length}:${SESSION}\n0\n0`).digest('hex').slice(0, n);
    const root = perSession.spans[0]!;
    expect([root.traceId, root.spanId]).toEqual([hex('session-trace', 32), hex('session-span', 16)]);
    expect(perTurn.spans.map((s) => s.traceId)).not.toContain(root.traceId);
    expect(mapSession(c.session, { traces: 'session' }).spans[0]).toEqual(root);
  });

  it('is refused for an unknown value, and gives nothing for a session without turns', () => {
    expect(() => mapSession(c.session, { traces: 'day' as never })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    const empty = clockedSession('sess-empty');
    expect(mapSession(empty.session, { traces: 'session' }).spans).toEqual([]);
  });
});

describe('server.address and server.port', () => {
  const portsOf = (opts: Parameters<typeof mapSession>[1]) => {
    const c = clockedSession(SESSION);
    twoStepTurn(c);
    return mapSession(c.session, opts)
      .spans.filter((s) => s.kind === 'CLIENT')
      .map((s) => [s.attributes['server.address'], s.attributes['server.port']]);
  };
  it("come from the route's endpoint: the built-in one, or the one given (its port, or the scheme's)", () => {
    expect(portsOf({})[0]).toEqual(['api.deepseek.com', 443]);
    expect(portsOf({ endpoints: { deepseek: 'http://127.0.0.1:8080/v1' } })[0]).toEqual(['127.0.0.1', 8080]);
    expect(portsOf({ endpoints: { deepseek: 'http://[::1]/' } })[0]).toEqual(['::1', 80]);
  });
  it('are absent for a route without a known endpoint, and a bad endpoint is refused', () => {
    const c = clockedSession('sess-gw');
    c.at(1).append('turn/start', { turn: 1 });
    c.at(2).append('step/start', { turn: 1, step: 1 });
    c.at(3).append('request/header', header({ provider: 'my-gateway', model: 'm' }, 'x'));
    c.at(4).append('assistant/message', { turn: 1, step: 1, message: assistant([{ type: 'text', text: 'ok' }]) }, { surfaceOp: 'append' });
    const chat = mapSession(c.session).spans.find((s) => s.kind === 'CLIENT')!;
    expect(chat.attributes).not.toHaveProperty('server.address');
    expect(() => mapSession(c.session, { endpoints: { x: 'ftp://host' } })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    expect(() => mapSession(c.session, { endpoints: { x: 'not a url' } })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
  });
  it("the built-in endpoints are the adapters' own", async () => {
    const { BUILTIN_PROVIDERS } = await import('../../src/llm/select.js');
    const { DEFAULT_ENDPOINTS } = await import('../../src/observability/index.js');
    for (const [route, p] of Object.entries(BUILTIN_PROVIDERS)) expect(DEFAULT_ENDPOINTS[route]).toBe(p.baseUrl);
    expect(DEFAULT_ENDPOINTS['deepseek-official']).toBe(BUILTIN_PROVIDERS['deepseek']!.baseUrl);
  });
});
