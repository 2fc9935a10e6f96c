/**
 * The log → span mapping on sessions built by hand through the Session API, with every event
 * time set by the test, so the expected spans (names, kinds, parents, attributes, statuses and
 * times) are written out here and not computed by the code under test.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { encodeJsonl, loadJsonl } from '../../src/session/index.js';
import { mapSession, type DshSpan } from '../../src/observability/index.js';
import { assistant, clockedSession, header, toolResult, user, type Clocked } from './support/build.js';

/** Everything but the ids, which are checked through their relations. */
function withoutIds(spans: readonly DshSpan[]): Omit<DshSpan, 'traceId' | 'spanId' | 'parentSpanId'>[] {
  return spans.map(({ traceId: _t, spanId: _s, parentSpanId: _p, ...rest }) => rest);
}

/** Turn 1 of the reference session: a tool step, then an answer step. */
export function twoStepTurn(c: Clocked): void {
  c.at(1000).append('turn/start', { turn: 1 });
  c.at(1010).append('step/start', { turn: 1, step: 1 });
  c.at(1010).append('user/message', user('List the files'), { surfaceOp: 'append' });
  c.at(1011).append('request/header', header({ provider: 'deepseek', model: 'deepseek-chat', maxTokens: 4096, temperature: 0.5 }, 'Be brief.'));
  const call = { type: 'tool-call' as const, id: 'call_1', name: 'ls', arguments: '{"path":"."}' };
  c.at(1100).append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'block-start', index: 0, blockType: 'tool-call' } });
  c.at(1110).append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'tool-call-delta', index: 0, id: 'call_1', name: 'ls', argumentsDelta: '{"path":"."}' } });
  c.at(1120).append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'block-end', index: 0, block: call } });
  const usage1 = { inputTokens: 100, outputTokens: 20, cacheReadTokens: 300, cacheWriteTokens: 50, reasoningTokens: 5 };
  c.at(1130).append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'usage', usage: usage1 } });
  c.at(1140).append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'finish', reason: { kind: 'tool-calls' } } });
  c.at(1150).append('assistant/message', { turn: 1, step: 1, message: assistant([call]), usage: usage1 }, { surfaceOp: 'append', sourceEventSeqs: [4, 5, 6, 7, 8] });
  c.at(1200).append('tool/call', { turn: 1, step: 1, callId: 'call_1', name: 'ls', arguments: '{"path":"."}' });
  c.at(1300).append('tool/result', { turn: 1, step: 1, message: toolResult('call_1', 'a.txt\nb.txt') }, { surfaceOp: 'append', sourceEventSeqs: [10] });
  c.at(1300).append('step/end', { turn: 1, step: 1 });
  c.at(1310).append('step/start', { turn: 1, step: 2 });
  c.at(1400).append('assistant/chunk', { turn: 1, step: 2, chunk: { type: 'block-start', index: 0, blockType: 'text' } });
  c.at(1410).append('assistant/chunk', { turn: 1, step: 2, chunk: { type: 'text-delta', index: 0, text: 'Two files.' } });
  c.at(1420).append('assistant/chunk', { turn: 1, step: 2, chunk: { type: 'block-end', index: 0, block: { type: 'text', text: 'Two files.' } } });
  const usage2 = { inputTokens: 30, outputTokens: 10, cacheReadTokens: 420 };
  c.at(1430).append('assistant/chunk', { turn: 1, step: 2, chunk: { type: 'usage', usage: usage2 } });
  c.at(1440).append('assistant/chunk', { turn: 1, step: 2, chunk: { type: 'finish', reason: { kind: 'stop' } } });
  c.at(1450).append('assistant/message', { turn: 1, step: 2, message: assistant([{ type: 'text', text: 'Two files.' }]), usage: usage2 }, { surfaceOp: 'append', sourceEventSeqs: [14, 15, 16, 17, 18] });
  c.at(1450).append('step/end', { turn: 1, step: 2 });
  c.at(1460).append('turn/end', { turn: 1, reason: { kind: 'completed' } });
}

export const SESSION = 'sess-map-1';
const base = { 'gen_ai.conversation.id': SESSION, 'session.id': SESSION };

/** The expected spans of `twoStepTurn`, written by hand. */
export const EXPECTED_TWO_STEP: Omit<DshSpan, 'traceId' | 'spanId' | 'parentSpanId'>[] = [
  {
    name: 'invoke_agent dsh',
    kind: 'INTERNAL',
    startTime: 1000,
    endTime: 1460,
    attributes: {
      ...base,
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'dsh',
      'dsh.turn': 1,
      'dsh.turn.steps': 2,
      'dsh.seq.start': 0,
      'dsh.seq.end': 21,
      'dsh.turn.end_reason': 'completed',
    },
    events: [],
    status: { code: 'UNSET' },
  },
  {
    name: 'chat deepseek-chat',
    kind: 'CLIENT',
    // The request left after the request/header (seq 3): the span covers the wait for the first chunk.
    startTime: 1011,
    endTime: 1150,
    attributes: {
      ...base,
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'deepseek-chat',
      'gen_ai.provider.name': 'deepseek',
      'dsh.provider.route': 'deepseek',
      'gen_ai.request.max_tokens': 4096,
      'gen_ai.request.temperature': 0.5,
      'dsh.turn': 1,
      'dsh.step': 1,
      'dsh.llm.attempt': 1,
      'dsh.seq.start': 4,
      'dsh.seq.end': 9,
      // 100 uncached + 300 cache reads + 50 cache writes: OTel input counts all three.
      'gen_ai.usage.input_tokens': 450,
      'gen_ai.usage.output_tokens': 20,
      'gen_ai.usage.cache_read.input_tokens': 300,
      'gen_ai.usage.cache_creation.input_tokens': 50,
      'gen_ai.usage.reasoning.output_tokens': 5,
      'dsh.llm.finish': 'tool-calls',
      'gen_ai.response.finish_reasons': ['tool_call'],
    },
    events: [],
    status: { code: 'UNSET' },
  },
  {
    name: 'execute_tool ls',
    kind: 'INTERNAL',
    startTime: 1200,
    endTime: 1300,
    attributes: {
      ...base,
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'ls',
      'gen_ai.tool.call.id': 'call_1',
      'gen_ai.tool.type': 'function',
      'dsh.turn': 1,
      'dsh.step': 1,
      'dsh.seq.start': 10,
      'dsh.seq.end': 11,
    },
    events: [],
    status: { code: 'UNSET' },
  },
  {
    name: 'chat deepseek-chat',
    kind: 'CLIENT',
    startTime: 1310,
    endTime: 1450,
    attributes: {
      ...base,
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'deepseek-chat',
      'gen_ai.provider.name': 'deepseek',
      'dsh.provider.route': 'deepseek',
      'gen_ai.request.max_tokens': 4096,
      'gen_ai.request.temperature': 0.5,
      'dsh.turn': 1,
      'dsh.step': 2,
      'dsh.llm.attempt': 1,
      'dsh.seq.start': 14,
      'dsh.seq.end': 19,
      'gen_ai.usage.input_tokens': 450,
      'gen_ai.usage.output_tokens': 10,
      'gen_ai.usage.cache_read.input_tokens': 420,
      'dsh.llm.finish': 'stop',
      'gen_ai.response.finish_reasons': ['stop'],
    },
    events: [],
    status: { code: 'UNSET' },
  },
];

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
    expect([sum('gen_ai.usage.input_tokens'), sum('gen_ai.usage.cache_read.input_tokens'), sum('gen_ai.usage.output_tokens')]).toEqual([900, 720, 30]);
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
    expect(spans[1]!.attributes).toMatchObject({ 'gen_ai.provider.name': 'anthropic', 'error.type': 'AUTH', 'dsh.llm.finish': 'error', 'gen_ai.response.finish_reasons': ['error'] });
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
    c.at(3000).append('assistant/message', { turn: 1, step: 1, message: assistant([]), usage: { inputTokens: 1, outputTokens: 0 } }, { surfaceOp: 'append', sourceEventSeqs: [3] });
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
    c.at(160).append('assistant/message', { turn: 1, step: 1, message: assistant([a, b], 'gpt-x', 'openai') }, { surfaceOp: 'append', sourceEventSeqs: [4] });
    c.at(170).append('tool/call', { turn: 1, step: 1, callId: 'call_a', name: 'write', arguments: '{"path":"a"}' });
    return encodeJsonl(c.session.header, c.session.events);
  }

  it('repaired on load: the interrupted turn ends at the last event, the started call outcome-unknown, the other never started', () => {
    const loaded = loadJsonl(crashedLog());
    expect(loaded.repaired.map((d) => d.type)).toEqual(['tool/result', 'tool/result', 'step/end', 'turn/end']);
    const m = mapSession(loaded);
    expect(m.incompleteTurns).toBe(0);
    expect(m.spans.map((s) => [s.name, s.startTime, s.endTime, s.status, s.attributes['error.type'], s.attributes['dsh.tool.call_recorded']])).toEqual([
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
    const h = (kind: string, seq: number): string => createHash('sha256').update(`dsh/${kind}/v1\n${SESSION.length}:${SESSION}\n${seq}\n0`).digest('hex');
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
    expect(m.spans[0]!.attributes).toMatchObject({ 'dsh.turn.end_reason': 'blocked', 'dsh.session.parent_id': 'sess-parent', 'gen_ai.conversation.id': 'sess-child' });
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
