/**
 * Surface rules: surfaceOp placement, sourceEventSeqs, and replaces.
 */
import { describe, expect, it } from 'vitest';
import { deepEqual, foldSurface, type SessionEvent } from '../../src/session/index.js';
import {
  assistantMsg,
  expectRefused,
  expectSessionError,
  fullTurn,
  newSession,
  openStep,
  rawAppend,
  toolResultMsg,
  userMsg,
} from './helpers.js';

describe('surfaceOp placement', () => {
  it('is required on each of the three surface types', () => {
    const s = newSession();
    openStep(s, 1);
    s.append('tool/call', { turn: 1, step: 1, callId: 'c', name: 'n', arguments: '{}' });
    const payloads: [string, unknown][] = [
      ['user/message', userMsg('u')],
      ['assistant/message', { turn: 1, step: 1, message: assistantMsg('a') }],
      ['tool/result', { turn: 1, step: 1, message: toolResultMsg('r', 'c') }],
    ];
    for (const [type, data] of payloads) {
      for (const opts of [undefined, {}, { sourceEventSeqs: [0] }]) {
        const err = expectRefused(s, () => rawAppend(s, type, data, opts), 'SURFACE_OP_REQUIRED');
        expect(err.details).toMatchObject({ eventType: type, seq: 3, rule: 'surface-op' });
        expect(err.message).toContain(`event "${type}" at seq 3 breaks the surface-op rule`);
      }
    }
  });
  it('is refused on every other type, and so is sourceEventSeqs', () => {
    const s = newSession();
    openStep(s, 1);
    const others: [string, unknown][] = [
      ['turn/end', { turn: 1, reason: { kind: 'completed' } }],
      ['step/end', { turn: 1, step: 1 }],
      ['assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } }],
      ['tool/call', { turn: 1, step: 1, callId: 'c', name: 'n', arguments: '{}' }],
      ['todo/write', { todos: [] }],
      ['session/end-seed', {}],
      ['agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [] }],
      ['my/plugin', { x: 1 }],
    ];
    for (const [type, data] of others) {
      const e1 = expectRefused(s, () => rawAppend(s, type, data, { surfaceOp: 'append' }), 'SURFACE_OP_FORBIDDEN');
      expect(e1.details).toMatchObject({ eventType: type, seq: 2, rule: 'surface-op' });
      const e2 = expectRefused(s, () => rawAppend(s, type, data, { sourceEventSeqs: [0] }), 'SURFACE_OP_FORBIDDEN');
      expect(e2.details).toMatchObject({ eventType: type, seq: 2, rule: 'source-seqs' });
      expectRefused(s, () => rawAppend(s, type, data, { surfaceOp: { op: 'replace', start: 0, end: 0 } }), 'SURFACE_OP_FORBIDDEN');
    }
  });
  it('must be "append" or {op:"replace", start, end} with integer seqs and nothing else', () => {
    const s = newSession();
    openStep(s, 1);
    s.append('user/message', userMsg('u0'), { surfaceOp: 'append' });
    for (const op of [
      'prepend',
      'APPEND',
      1,
      null,
      [],
      { op: 'append' },
      { op: 'replace', start: 2 },
      { op: 'replace', start: '2', end: 2 },
      { op: 'replace', start: 2, end: 2.5 },
      { op: 'replace', start: 2, end: 2, extra: true },
      { start: 2, end: 2 },
    ]) {
      const err = expectRefused(
        s,
        () => rawAppend(s, 'user/message', userMsg('u1'), { surfaceOp: op, sourceEventSeqs: [2] }),
        'INVALID_SURFACE_OP',
      );
      expect(err.details).toMatchObject({ eventType: 'user/message', seq: 3, rule: 'surface-op' });
    }
  });
});

describe('sourceEventSeqs', () => {
  it('refuses a seq listed twice in a row ([x, x]), not only out of order', () => {
    const s = newSession();
    openStep(s, 1);
    const err = expectRefused(
      s,
      () => s.append('user/message', userMsg('u'), { surfaceOp: 'append', sourceEventSeqs: [0, 0] }),
      'INVALID_SOURCE_SEQS',
    );
    expect(err.message).toMatch(/duplicate|twice|more than once/);
  });
  function ready() {
    const s = newSession();
    openStep(s, 1); // seqs 0, 1
    s.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } }); // 2
    return s;
  }
  const cases: [string, unknown, RegExp][] = [
    ['not an array (number)', 5, /must be an array/],
    ['not an array (object)', { 0: 1 }, /must be an array/],
    ['a negative entry', [-1], /non-negative integers/],
    ['a fractional entry', [1.5], /non-negative integers/],
    ['a string entry', ['1'], /non-negative integers/],
    ['an unsafe integer', [2 ** 53], /non-negative integers/],
    ['a duplicate', [0, 2, 0], /lists 0 twice/],
    ['its own seq', [0, 3], /does not precede/],
    ['a later seq', [4], /does not precede/],
  ];
  for (const [name, seqs, why] of cases) {
    it(`refuses ${name}`, () => {
      const s = ready();
      const err = expectRefused(
        s,
        () =>
          rawAppend(
            s,
            'assistant/message',
            { turn: 1, step: 1, message: assistantMsg('a') },
            { surfaceOp: 'append', sourceEventSeqs: seqs },
          ),
        'INVALID_SOURCE_SEQS',
      );
      expect(err.details).toMatchObject({ eventType: 'assistant/message', seq: 3, rule: 'source-seqs' });
      expect(err.message).toMatch(why);
    });
  }
  it('may be empty only on assistant/message', () => {
    const s = ready();
    s.append('tool/call', { turn: 1, step: 1, callId: 'c', name: 'n', arguments: '{}' }); // 3
    expectRefused(s, () => s.append('user/message', userMsg('u'), { surfaceOp: 'append', sourceEventSeqs: [] }), 'INVALID_SOURCE_SEQS');
    expectRefused(
      s,
      () => s.append('tool/result', { turn: 1, step: 1, message: toolResultMsg('r', 'c') }, { surfaceOp: 'append', sourceEventSeqs: [] }),
      'INVALID_SOURCE_SEQS',
    );
    const a = s.append('assistant/message', { turn: 1, step: 1, message: assistantMsg('a') }, { surfaceOp: 'append', sourceEventSeqs: [] });
    expect(a.sourceEventSeqs).toEqual([]);
  });
  it('may be absent (unknown sources), and may name any earlier event, in any order', () => {
    const s = ready();
    const u = s.append('user/message', userMsg('u'), { surfaceOp: 'append' });
    expect('sourceEventSeqs' in u).toBe(false);
    const a = s.append(
      'assistant/message',
      { turn: 1, step: 1, message: assistantMsg('a') },
      { surfaceOp: 'append', sourceEventSeqs: [3, 0, 2] },
    );
    expect(a.sourceEventSeqs).toEqual([3, 0, 2]);
  });
});

describe('replace', () => {
  /** Turn 1 complete: surface [2 user, 5 a1, 7 result, 10 a2]; turn 2 open with a step. */
  function ready() {
    const s = newSession();
    const t = fullTurn(s, 1);
    expect(t).toEqual({ user: 2, a1: 5, call: 6, result: 7, a2: 10 });
    openStep(s, 2); // 13, 14
    return s;
  }
  const summary = (id = 'sum') => userMsg(id, 'summary of the conversation');

  it('a user/message replace splices the span out and puts itself there', () => {
    const s = ready();
    const r = s.append('user/message', summary(), { surfaceOp: { op: 'replace', start: 2, end: 7 }, sourceEventSeqs: [2, 5, 7] });
    expect(s.surface.nodes).toEqual([15, 10]);
    expect(s.surface.replaceGeneration).toBe(1);
    expect(s.surface.replacements).toEqual([{ seq: 15, start: 2, end: 7, shadowedSeqs: [2, 5, 7] }]);
    expect(r.surfaceOp).toEqual({ op: 'replace', start: 2, end: 7 });
    expect(
      s
        .deriveMessages()
        .toArray()
        .map((m) => m.id),
    ).toEqual(['sum', 'a1.2']);
  });
  it('a single-node replace and a whole-surface replace', () => {
    const s = ready();
    s.append('user/message', summary('s1'), { surfaceOp: { op: 'replace', start: 5, end: 5 }, sourceEventSeqs: [5] });
    expect(s.surface.nodes).toEqual([2, 15, 7, 10]);
    s.append('user/message', summary('s2'), { surfaceOp: { op: 'replace', start: 2, end: 10 }, sourceEventSeqs: [2, 15, 7, 10] });
    expect(s.surface.nodes).toEqual([16]);
    expect(s.surface.replaceGeneration).toBe(2);
  });
  it('extra earlier seqs in sourceEventSeqs are allowed', () => {
    const s = ready();
    s.append('user/message', summary(), { surfaceOp: { op: 'replace', start: 5, end: 7 }, sourceEventSeqs: [0, 3, 5, 6, 7] });
    expect(s.surface.nodes).toEqual([2, 15, 10]);
  });
  it('refuses a replace that does not list every shadowed node', () => {
    const s = ready();
    const err = expectRefused(
      s,
      () => s.append('user/message', summary(), { surfaceOp: { op: 'replace', start: 2, end: 10 }, sourceEventSeqs: [2, 5, 10] }),
      'INVALID_REPLACE',
    );
    expect(err.details).toMatchObject({ eventType: 'user/message', seq: 15, rule: 'replace-provenance' });
    expect(err.message).toContain('[7]');
  });
  it('refuses a replace without sourceEventSeqs', () => {
    const s = ready();
    const err = expectRefused(
      s,
      () => s.append('user/message', summary(), { surfaceOp: { op: 'replace', start: 2, end: 2 } }),
      'INVALID_REPLACE',
    );
    expect(err.details.rule).toBe('replace-provenance');
  });
  it('refuses an empty sourceEventSeqs on an assistant/message replace', () => {
    const s = ready();
    const err = expectRefused(
      s,
      () =>
        s.append(
          'assistant/message',
          { turn: 2, step: 1, message: assistantMsg('x') },
          { surfaceOp: { op: 'replace', start: 5, end: 5 }, sourceEventSeqs: [] },
        ),
      'INVALID_REPLACE',
    );
    expect(err.details.rule).toBe('replace-provenance');
  });
  it('refuses start or end that is not a current surface node', () => {
    const s = ready();
    const notNodes = [0, 3, 6, 13, 99, -1];
    for (const bad of notNodes) {
      const e1 = expectRefused(
        s,
        () => s.append('user/message', summary(), { surfaceOp: { op: 'replace', start: bad, end: 10 }, sourceEventSeqs: [2, 5, 7, 10] }),
        'INVALID_REPLACE',
      );
      expect(e1.details.rule).toBe('replace-range');
      expect(e1.message).toContain(`start ${bad} is not a current surface node`);
      const e2 = expectRefused(
        s,
        () => s.append('user/message', summary(), { surfaceOp: { op: 'replace', start: 2, end: bad }, sourceEventSeqs: [2, 5, 7, 10] }),
        'INVALID_REPLACE',
      );
      expect(e2.message).toContain(`end ${bad} is not a current surface node`);
    }
  });
  it('refuses a node that an earlier replace shadowed', () => {
    const s = ready();
    s.append('user/message', summary(), { surfaceOp: { op: 'replace', start: 5, end: 7 }, sourceEventSeqs: [5, 7] });
    expectRefused(
      s,
      () => s.append('user/message', summary('x'), { surfaceOp: { op: 'replace', start: 5, end: 5 }, sourceEventSeqs: [5] }),
      'INVALID_REPLACE',
    );
    expectRefused(
      s,
      () => s.append('user/message', summary('x'), { surfaceOp: { op: 'replace', start: 2, end: 7 }, sourceEventSeqs: [2, 7, 15] }),
      'INVALID_REPLACE',
    );
  });
  it('the span is by position on the surface, not by seq', () => {
    const s = ready();
    // Replace node 5 by 15: the surface becomes [2, 15, 7, 10], so 15 now precedes 7 by position.
    s.append('user/message', summary('s1'), { surfaceOp: { op: 'replace', start: 5, end: 5 }, sourceEventSeqs: [5] });
    const err = expectRefused(
      s,
      () => s.append('user/message', summary('s2'), { surfaceOp: { op: 'replace', start: 7, end: 15 }, sourceEventSeqs: [7, 15] }),
      'INVALID_REPLACE',
    );
    expect(err.message).toContain('replace start 7 comes after end 15 on the surface');
    s.append('user/message', summary('s2'), { surfaceOp: { op: 'replace', start: 15, end: 7 }, sourceEventSeqs: [7, 15] });
    expect(s.surface.nodes).toEqual([2, 16, 10]);
    expect(s.surface.replacements[1]).toEqual({ seq: 16, start: 15, end: 7, shadowedSeqs: [15, 7] });
  });
  it('an assistant/message may replace', () => {
    const s = ready();
    s.append(
      'assistant/message',
      { turn: 2, step: 1, message: assistantMsg('a-new') },
      { surfaceOp: { op: 'replace', start: 10, end: 10 }, sourceEventSeqs: [10] },
    );
    expect(s.surface.nodes).toEqual([2, 5, 7, 15]);
  });

  describe('tool/result replace', () => {
    const original = () => toolResultMsg('r1', 'call-1', 'a.txt');
    const pruned = (text = '[pruned]') => {
      const m = original();
      return { ...m, content: [{ ...m.content[0], content: [{ type: 'text' as const, text }] }] as typeof m.content };
    };
    it('may change only the tool-result content; it shadows exactly that one result', () => {
      const s = ready();
      const r = s.append(
        'tool/result',
        { turn: 1, step: 1, message: pruned() },
        { surfaceOp: { op: 'replace', start: 7, end: 7 }, sourceEventSeqs: [7] },
      );
      expect(s.surface.nodes).toEqual([2, 5, 15, 10]);
      expect(s.deriveMessages().toArray()[2]).toBe((r as SessionEvent<'tool/result'>).data.message);
      // An empty content list is a change of content too.
      s.append(
        'tool/result',
        { turn: 1, step: 1, message: { ...pruned(), content: [{ ...pruned().content[0], content: [] }] } },
        { surfaceOp: { op: 'replace', start: 15, end: 15 }, sourceEventSeqs: [15] },
      );
      expect(s.surface.nodes).toEqual([2, 5, 16, 10]);
    });
    it('refuses shadowing more than one node', () => {
      const s = ready();
      const err = expectRefused(
        s,
        () =>
          s.append(
            'tool/result',
            { turn: 1, step: 1, message: pruned() },
            { surfaceOp: { op: 'replace', start: 7, end: 10 }, sourceEventSeqs: [7, 10] },
          ),
        'INVALID_REPLACE',
      );
      expect(err.details.rule).toBe('tool-result-replace');
      expect(err.message).toContain('exactly one node, not 2');
    });
    it('refuses targeting something other than a tool/result', () => {
      const s = ready();
      const err = expectRefused(
        s,
        () =>
          s.append(
            'tool/result',
            { turn: 1, step: 1, message: pruned() },
            { surfaceOp: { op: 'replace', start: 5, end: 5 }, sourceEventSeqs: [5] },
          ),
        'INVALID_REPLACE',
      );
      expect(err.message).toContain('not assistant/message');
    });
    const changes: [string, (d: Record<string, unknown>) => void][] = [
      ['the message id', (d) => ((d.message as Record<string, unknown>).id = 'other')],
      ['isError', (d) => ((d.message as { content: Record<string, unknown>[] }).content[0]!.isError = true)],
      ['the error field', (d) => (d.error = { name: 'E', code: 'X' })],
      ['meta', (d) => (d.meta = { pruned: true })],
      ['the turn', (d) => (d.turn = 2)],
      ['the step', (d) => (d.step = 2)],
      ['an extra message field', (d) => ((d.message as Record<string, unknown>).extra = 1)],
    ];
    for (const [what, change] of changes) {
      it(`refuses changing ${what}`, () => {
        const s = ready();
        const data = JSON.parse(JSON.stringify({ turn: 1, step: 1, message: pruned() })) as Record<string, unknown>;
        change(data);
        const err = expectRefused(
          s,
          () => rawAppend(s, 'tool/result', data, { surfaceOp: { op: 'replace', start: 7, end: 7 }, sourceEventSeqs: [7] }),
          'INVALID_REPLACE',
        );
        expect(err.message).toContain('may change only the tool-result block content');
      });
    }
    it('compares meta structurally, and copes with meta nested 100,000 deep', () => {
      const s = newSession();
      openStep(s, 1);
      s.append('tool/call', { turn: 1, step: 1, callId: 'c', name: 'n', arguments: '{}' });
      let meta: unknown = 'leaf';
      for (let i = 0; i < 100_000; i++) meta = { m: meta };
      s.append('tool/result', { turn: 1, step: 1, message: toolResultMsg('r', 'c', 'long'), meta: meta as never }, { surfaceOp: 'append' });
      let meta2: unknown = 'leaf';
      for (let i = 0; i < 100_000; i++) meta2 = { m: meta2 };
      s.append(
        'tool/result',
        { turn: 1, step: 1, message: toolResultMsg('r', 'c', 'short'), meta: meta2 as never },
        { surfaceOp: { op: 'replace', start: 3, end: 3 }, sourceEventSeqs: [3] },
      );
      expect(s.surface.nodes).toEqual([4]);
      let meta3: unknown = 'other leaf';
      for (let i = 0; i < 100_000; i++) meta3 = { m: meta3 };
      // (observe() cannot JSON.stringify this deep a log, so check the state piecemeal.)
      const events = s.events;
      expectSessionError(
        () =>
          s.append(
            'tool/result',
            { turn: 1, step: 1, message: toolResultMsg('r', 'c', 'x'), meta: meta3 as never },
            { surfaceOp: { op: 'replace', start: 4, end: 4 }, sourceEventSeqs: [4] },
          ),
        'INVALID_REPLACE',
      );
      expect(s.events).toBe(events);
      expect(s.surface.nodes).toEqual([4]);
    });
  });
});

describe('the surface as seen from outside', () => {
  it('cannot be mutated to corrupt the session', () => {
    const s = newSession();
    fullTurn(s, 1);
    const view = s.surface;
    expect(() => (view.nodes as number[]).push(99)).toThrow(TypeError);
    expect(() => {
      (view as { replaceGeneration: number }).replaceGeneration = 5;
    }).toThrow(TypeError);
    expect(s.surface.nodes).toEqual([2, 5, 7, 10]);
    const trace = s.trace;
    expect(() => {
      (trace as { openTurn: number | undefined }).openTurn = 1;
    }).toThrow(TypeError);
    expect(s.trace.openTurn).toBeUndefined();
  });
  it('a surface view is a snapshot: it does not change under a later append', () => {
    const s = newSession();
    fullTurn(s, 1);
    const view = s.surface;
    openStep(s, 2);
    s.append('user/message', userMsg('x'), { surfaceOp: { op: 'replace', start: 2, end: 5 }, sourceEventSeqs: [2, 5] });
    expect(view.nodes).toEqual([2, 5, 7, 10]);
    expect(view.replaceGeneration).toBe(0);
    expect(view.replacements).toEqual([]);
    expect(s.surface.nodes).toEqual([15, 7, 10]);
    expect(() => (s.surface.replacements[0]!.shadowedSeqs as number[]).push(1)).toThrow(TypeError);
  });
});

describe('foldSurface', () => {
  it('folds a whole log the same way, replaces included', () => {
    const s = newSession();
    fullTurn(s, 1);
    openStep(s, 2);
    s.append('user/message', userMsg('x'), { surfaceOp: { op: 'replace', start: 5, end: 7 }, sourceEventSeqs: [5, 7] });
    s.append('user/message', userMsg('y'), { surfaceOp: 'append' });
    const f = foldSurface(s.events);
    expect(f.nodes).toEqual([2, 15, 10, 16]);
    expect(f.replaceGeneration).toBe(1);
    expect(f.replacements).toEqual([{ seq: 15, start: 5, end: 7, shadowedSeqs: [5, 7] }]);
  });
});

describe('deepEqual', () => {
  it('is structural over JSON values', () => {
    expect(deepEqual({ a: [1, { b: 'x' }] }, { a: [1, { b: 'x' }] })).toBe(true);
    expect(deepEqual({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(true);
    expect(deepEqual({ a: 1 }, { a: 1, b: undefined })).toBe(false);
    expect(deepEqual([1, 2], [2, 1])).toBe(false);
    expect(deepEqual([], {})).toBe(false);
    expect(deepEqual(null, {})).toBe(false);
    expect(deepEqual('1', 1)).toBe(false);
    expect(deepEqual({ a: [1] }, { a: [1, 2] })).toBe(false);
  });
});
