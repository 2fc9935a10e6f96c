/**
 * The queries on hand-built sessions whose every time and figure is written out here: a turn's
 * events, round trips (repeated ids, parallel calls and their hooks), provenance through a
 * compaction, timings, billing of attempts, and the errors that name what the log does have.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { encodeJsonl, loadJsonl, Session, type SessionEvent } from '../../src/session/index.js';
import { callOf, provenance, stats, turnOf, viewOf, QueryError, StatsFold, nearestIds } from '../../src/query/index.js';
import { PriceTable } from '../../src/llm/pricing.js';
import type { ToolResultMessage } from '../../src/model/message.js';
import { describeShared, sharedPath } from '../support/shared.js';

const prices = new PriceTable({ defaults: false, config: { m: { input: 1, cacheRead: 0.1, output: 2 } } });

function clocked(): { s: Session; at: (t: number) => Session } {
  let now = 0;
  const s = Session.create({ id: 'q', clock: () => now, header: { createdAt: 0 } });
  return { s, at: (t) => ((now = t), s) };
}

const model = { kind: 'model' as const, provider: 'p', model: 'm' };
const asst = (id: string, content: any[]) => ({ id, role: 'assistant' as const, content, source: model });
const result = (id: string, callId: string, isError = false): ToolResultMessage => ({
  id,
  role: 'user',
  content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text: 'out' }], ...(isError ? { isError: true } : {}) }],
  source: { kind: 'tool', callId },
});

/** Two turns; turn 1 step 1 streams two parallel calls (call_1, call_2) and runs them with hooks. */
function build(): Session {
  const { s, at } = clocked();
  at(1000).append('turn/start', { turn: 1 });
  at(1000).append('step/start', { turn: 1, step: 1 }); // 1
  at(1010).append('request/context', { provider: 'p', model: 'm' }); // 2
  // 3: first delta, 90 ms after seq 2
  const c3 = at(1100).append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'hi' } }).seq;
  const c4 = at(1150).append('assistant/chunk', {
    turn: 1,
    step: 1,
    chunk: { type: 'tool-call-delta', index: 1, id: 'call_1', name: 'read', argumentsDelta: '{}' },
  }).seq;
  const c5 = at(1160).append('assistant/chunk', {
    turn: 1,
    step: 1,
    chunk: { type: 'tool-call-delta', index: 2, id: 'call_2', name: 'bash', argumentsDelta: '{}' },
  }).seq;
  const c6 = at(1170).append('assistant/chunk', {
    turn: 1,
    step: 1,
    chunk: { type: 'usage', usage: { inputTokens: 100, cacheReadTokens: 900, outputTokens: 50, reasoningTokens: 10 } },
  }).seq;
  // decode 1100 → 1300
  const c7 = at(1300).append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'finish', reason: { kind: 'tool-calls' } } }).seq;
  at(1300).append(
    'assistant/message',
    {
      turn: 1,
      step: 1,
      message: asst('a1', [
        { type: 'text', text: 'hi' },
        { type: 'tool-call', id: 'call_1', name: 'read', arguments: '{}' },
        { type: 'tool-call', id: 'call_2', name: 'bash', arguments: '{}' },
      ]),
    },
    { surfaceOp: 'append', sourceEventSeqs: [c3, c4, c5, c6, c7] },
  ); // 8
  at(1310).append('tool/call', { turn: 1, step: 1, callId: 'call_1', name: 'read', arguments: '{}' }); // 9
  at(1320).append('tool/call', { turn: 1, step: 1, callId: 'call_2', name: 'bash', arguments: '{}' }); // 10
  at(1330).append('hook/invoked', { turn: 1, point: 'PreToolUse', handlerId: 'h1', matcher: '*' }); // 11: both calls in flight
  at(1340).append('hook/result', { turn: 1, point: 'PreToolUse', handlerId: 'h1', decision: 'pass', exitCode: 0, durationMs: 10 }); // 12
  // 13: 90 ms
  at(1400).append('tool/result', { turn: 1, step: 1, message: result('r1', 'call_1') }, { surfaceOp: 'append', sourceEventSeqs: [9] });
  at(1500).append('hook/invoked', { turn: 1, point: 'PostToolUse', handlerId: 'h2', matcher: 'bash' }); // 14: only call_2 in flight
  at(1520).append('approval/asked', { id: 'ap1', toolName: 'bash', callId: 'call_2', reason: 'why' }); // 15
  at(1530).append('approval/decided', { id: 'ap1', outcome: 'rejected' }); // 16
  at(1600).append(
    'tool/result',
    { turn: 1, step: 1, message: result('r2', 'call_2', true), error: { name: 'E', code: 'APPROVAL_REJECTED' } },
    { surfaceOp: 'append', sourceEventSeqs: [10] },
  ); // 17: 280 ms
  at(1700).append('step/end', { turn: 1, step: 1 }); // 18
  at(1800).append('turn/end', { turn: 1, reason: { kind: 'completed' } }); // 19
  at(2000).append('turn/start', { turn: 2 }); // 20
  at(2000).append('step/start', { turn: 2, step: 1 }); // 21
  at(2100).append(
    'assistant/message',
    {
      turn: 2,
      step: 1,
      message: asst('a2', [{ type: 'tool-call', id: 'call_1', name: 'read', arguments: '{"x":1}' }]),
      usage: { inputTokens: 10, outputTokens: 1 },
    },
    { surfaceOp: 'append', sourceEventSeqs: [] },
  ); // 22
  at(2200).append('tool/call', { turn: 2, step: 1, callId: 'call_1', name: 'read', arguments: '{"x":1}' }); // 23
  at(2300).append('step/end', { turn: 2, step: 1 }); // 24: call_1 of turn 2 never answered
  at(2400).append('turn/end', { turn: 2, reason: { kind: 'error', error: { message: 'x', code: 'RATE_LIMIT', status: 429 } } }); // 25
  return s;
}

describe('turnOf', () => {
  it('returns the turn, its steps and its end; names the range otherwise', () => {
    const s = build();
    const t = turnOf(s, 2);
    expect(t).toMatchObject({ turn: 2, start: 20, end: 25, last: 25, repaired: false, steps: [{ step: 1, start: 21, end: 24 }] });
    expect(t.events.map((e) => e.seq)).toEqual([20, 21, 22, 23, 24, 25]);
    expect(() => turnOf(s, 3)).toThrow(/no turn 3: its turns are 1…2/);
    expect(() => turnOf(Session.create({ id: 'e' }), 1)).toThrow(/it has no turns/);
    try {
      turnOf(s, 9);
    } catch (e) {
      expect(e).toBeInstanceOf(QueryError);
      expect((e as QueryError).code).toBe('TURN_NOT_FOUND');
      expect((e as QueryError).details.turns).toEqual({ first: 1, last: 2 });
    }
  });
});

describe('callOf', () => {
  it('returns each round trip of a repeated id, with its parts and timings', () => {
    const s = build();
    const [first, second] = callOf(s, 'call_1');
    expect(first).toMatchObject({
      turn: 1,
      step: 1,
      name: 'read',
      state: 'answered',
      call: { seq: 9 },
      result: { event: { seq: 13 }, isError: false },
    });
    expect(first!.issuedBy).toMatchObject({ message: { seq: 8 }, block: 1, chunks: [4] });
    // Chunk at 1150; message 1300; call 1310; result 1400.
    expect(first!.timings).toEqual({ argumentsStreamMs: 0, dispatchMs: 10, durationMs: 90, totalMs: 250 });
    expect(first!.hooks).toEqual([
      expect.objectContaining({
        attribution: 'overlapping',
        invoked: expect.objectContaining({ seq: 11 }),
        result: expect.objectContaining({ seq: 12, decision: 'pass' }),
      }),
    ]);
    expect(second).toMatchObject({ turn: 2, step: 1, state: 'unanswered', call: { seq: 23, arguments: '{"x":1}' } });
    expect(second!.result).toBeUndefined();
  });

  it('attributes hooks and approvals to the call in flight', () => {
    const [t] = callOf(build(), 'call_2');
    expect(t!.hooks.map((h) => [h.invoked?.seq, h.attribution])).toEqual([
      [11, 'overlapping'],
      [14, 'exact'],
    ]);
    expect(t!.approvals).toEqual([
      expect.objectContaining({
        id: 'ap1',
        asked: expect.objectContaining({ seq: 15, reason: 'why' }),
        decided: expect.objectContaining({ seq: 16, outcome: 'rejected' }),
      }),
    ]);
    expect(t!.result).toMatchObject({ isError: true, error: { name: 'E', code: 'APPROVAL_REJECTED' } });
    expect(t!.timings.durationMs).toBe(280);
  });

  it('lists the nearest ids when the id is unknown', () => {
    const s = build();
    expect(() => callOf(s, 'call_3')).toThrow(/no tool call "call_3" in the log; nearest: call_1, call_2/);
    expect(() => callOf(Session.create({ id: 'e' }), 'x')).toThrow(/the log has no tool calls/);
    expect(nearestIds(['call_00_abc', 'toolu_1', 'call_01_xyz'], 'abc')[0]).toBe('call_00_abc');
    expect(nearestIds(['call_01_grep', 'call_02_read', 'call_04_read', 'toolu_9'], 'call_4')).toEqual([
      'call_04_read',
      'call_01_grep',
      'call_02_read',
      'toolu_9',
    ]);
  });
});

describe('stats', () => {
  it('computes times, tokens, cost, tools, reasons and errors from the events', () => {
    const st = stats(build(), { prices });
    // Step 1: request/context at 1010 → first delta at 1100 (ttft 90), decode 1100 → 1300 (200).
    expect(st.ttft).toMatchObject({ count: 1, total: 90, p50: 90 });
    expect(st.decode).toMatchObject({ count: 1, total: 200 });
    expect(st.tool).toMatchObject({ count: 2, total: 90 + 280, min: 90, max: 280 });
    // Step 1 billed from its usage chunk (the message had none), turn 2 from its message.
    expect(st.tokens).toEqual({
      calls: 2,
      input: 110,
      inputWithCache: 1010,
      cacheRead: 900,
      cacheWrite: 0,
      output: 51,
      reasoning: 10,
      cacheHitRatio: 900 / 1010,
    });
    expect(st.cost.byCurrency.USD).toBeCloseTo((110 * 1 + 900 * 0.1 + 51 * 2) / 1e6, 15);
    expect(st.reasons).toEqual({ completed: 1, error: 1 });
    expect(st.errors).toEqual({ model: {}, tool: { APPROVAL_REJECTED: 1 }, turn: { RATE_LIMIT: 1 } });
    expect(st.tools.map((t) => [t.name, t.calls, t.failures, t.unanswered])).toEqual([
      ['read', 2, 0, 1],
      ['bash', 1, 1, 0],
    ]);
    expect(st.unanswered).toEqual([{ callId: 'call_1', name: 'read', turn: 2, step: 1, seq: 23 }]);
    const [t1, t2] = st.perTurn!;
    expect(t1).toMatchObject({ turn: 1, state: 'ended', reason: 'completed', wallMs: 800, toolMs: 370 });
    expect(t1!.steps[0]).toMatchObject({
      step: 1,
      attempts: 1,
      finish: 'tool-calls',
      ttftMs: 90,
      decodeMs: 200,
      toolMs: 370,
      wallMs: 700,
      toolCalls: 2,
      toolFailures: 1,
    });
    expect(t2).toMatchObject({ turn: 2, state: 'ended', reason: 'error', reasonDetail: 'RATE_LIMIT' });
  });

  it('bills a failed attempt with usage once, counts an unpriced model by name, and reads newer formats’ attempts', () => {
    const events = [
      { type: 'turn/start', seq: 0, time: 0, data: { turn: 1 } },
      { type: 'step/start', seq: 1, time: 0, data: { turn: 1, step: 1 } },
      { type: 'request/context', seq: 2, time: 0, data: { provider: 'p', model: 'unknown-model' } },
      {
        type: 'assistant/chunk',
        seq: 3,
        time: 5,
        data: { turn: 1, step: 1, chunk: { type: 'usage', usage: { inputTokens: 7, outputTokens: 0 } } },
      },
      {
        type: 'assistant/chunk',
        seq: 4,
        time: 6,
        data: { turn: 1, step: 1, chunk: { type: 'finish', reason: { kind: 'error', failure: { message: 'x', code: 'SERVER' } } } },
      },
      {
        type: 'llm/retry',
        seq: 5,
        time: 7,
        data: {
          retryId: 'r',
          turn: 1,
          step: 1,
          provider: 'p',
          mode: 'normal',
          policyKey: 'k',
          retry: 1,
          delayMs: 1,
          failure: { message: 'x', code: 'SERVER' },
        },
      },
      {
        type: 'assistant/attempt',
        seq: 6,
        time: 8,
        data: { turn: 1, step: 1, provider: 'p', model: 'm', usage: { inputTokens: 3, outputTokens: 1 } },
      },
    ] as unknown as SessionEvent[];
    const st = stats({ id: 'x', events }, { prices });
    expect(st.tokens.calls).toBe(2);
    expect(st.tokens.input).toBe(10);
    expect(st.retries).toEqual({ count: 1, byCode: { SERVER: 1 } });
    expect(st.errors.model).toEqual({ SERVER: 1 });
    expect(st.cost.pricedCalls).toBe(1);
    expect(st.cost.unpriced).toEqual([expect.objectContaining({ model: 'p:unknown-model', calls: 1, reason: 'unknown-model' })]);
    expect(st.reasons).toEqual({ dangling: 1 });
  });

  it('counts usage reported at the end of a growing log once, before and after its message arrives', () => {
    const { s, at } = clocked();
    at(0).append('turn/start', { turn: 1 });
    at(0).append('step/start', { turn: 1, step: 1 });
    at(1).append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'usage', usage: { inputTokens: 5, outputTokens: 5 } } });
    at(2).append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'finish', reason: { kind: 'stop' } } });
    const fold = new StatsFold({ prices });
    for (const e of s.events) fold.push(e);
    expect(fold.result({ id: 'q' }, { state: 'live' }).stats.tokens.calls).toBe(1);
    expect(fold.result({ id: 'q' }, { state: 'live' }).stats.perTurn![0]!.steps[0]!.tokens.calls).toBe(1);
    const m = at(3).append(
      'assistant/message',
      { turn: 1, step: 1, message: asst('a', [{ type: 'text', text: 'x' }]), usage: { inputTokens: 5, outputTokens: 5 } },
      { surfaceOp: 'append', sourceEventSeqs: [2, 3] },
    );
    fold.push(m);
    const st = fold.result({ id: 'q' }, { state: 'live' }).stats;
    expect(st.tokens.calls).toBe(1);
    expect(st.reasons).toEqual({ live: 1 });
  });
});

describe('inputs', () => {
  it('takes a Session, a loaded log, an event list and a reader alike; refuses anything else', () => {
    const s = build();
    const loaded = loadJsonl(encodeJsonl(s.header, s.events));
    const list = { id: 'q', header: s.header, events: s.events };
    const reader = { id: 'q', header: s.header, length: () => s.length, at: (i: number) => s.at(i)!, since: (i: number) => s.since(i) };
    const want = stats(s, { prices });
    for (const input of [loaded, list, reader]) expect(stats(input, { prices })).toEqual(want);
    // The loader's end-of-seed marker is not part of the log.
    expect(viewOf(loaded).length).toBe(s.length);
    expect(() => provenance(loaded, s.length)).toThrow(/seq 26 is outside the log: its seqs are 0…25/);
    expect(() => stats(42 as never)).toThrow(QueryError);
    expect(() => stats({ events: 'no' } as never)).toThrow(/expected a Session/);
  });

  it('sees a turn crash repair closed on load as open (the closers are not the log’s)', () => {
    const { s, at } = clocked();
    at(0).append('turn/start', { turn: 1 });
    at(0).append('step/start', { turn: 1, step: 1 });
    at(0).append('tool/call', { turn: 1, step: 1, callId: 'c', name: 'bash', arguments: '{}' });
    const loaded = loadJsonl(encodeJsonl(s.header, s.events));
    expect(loaded.repaired.length).toBeGreaterThan(0);
    const st = stats(loaded);
    expect(st.reasons).toEqual({ dangling: 1 });
    expect(st.unanswered.map((u) => u.callId)).toEqual(['c']);
    const t = turnOf(loaded, 1);
    expect(t.repaired).toBe(true);
    expect(t.reason?.kind).toBe('interrupted');
  });
});

describeShared('provenance through a real compaction', () => {
  it('links the summary, what it replaced and the compaction bracket', () => {
    const log = loadJsonl(readFileSync(sharedPath('fixtures', 'dsh', 'headless-agent__compaction-recovery.jsonl'), 'utf8'), {
      placeholders: 'warn',
    });
    // The raw lines: seq 21 is the summary user/message replacing seq 4 and citing [19, 20, 4];
    // 19, 20 and 22 are its compaction/start, summary and end.
    const summary = provenance(log, 21);
    expect(summary.replaces.map((r) => r.seq)).toEqual([4]);
    expect(summary.cites.map((r) => r.seq)).toEqual([19, 20, 4]);
    expect(summary.related.filter((r) => r.relation === 'compaction').map((r) => r.seq)).toEqual([19, 20, 22]);
    const old = provenance(log, 4);
    expect(old.surface).toBe('shadowed');
    expect(old.replacedBy?.seq).toBe(21);
    expect(old.chainForward.map((l) => [l.seq, l.depth, l.via])).toEqual([[21, 1, 4]]);
    expect(old.citedBy.map((r) => r.seq)).toContain(21);
    const bracket = provenance(log, 20);
    expect(bracket.related.filter((r) => r.relation === 'describes').map((r) => r.seq)).toEqual([4]);
    expect(bracket.related.filter((r) => r.relation === 'compaction').map((r) => r.seq)).toEqual([19, 21, 22]);
  });
});
