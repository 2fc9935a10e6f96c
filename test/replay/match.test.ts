/**
 * The one matcher of the conformance runners (src/replay/match.ts; the ACP, SDK and headless
 * runners all use it): every expected message in order, extras allowed, generated ids normalised,
 * seqs paired consistently, the first differing message reported with its path.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { firstDifference, matchInOrder, normalize, oneOf } from '../../src/replay/match.js';

const ev = (seq: number, type: string, data: unknown, extra: Record<string, unknown> = {}) => ({
  method: 'session.event',
  params: { sessionId: 's', event: { type, seq, time: 0, data, ...extra } },
});

describe('matchInOrder', () => {
  const expected = [
    ev(0, 'turn/start', { turn: 1 }),
    ev(1, 'user/message', { text: 'hi' }, { surfaceOp: 'append' }),
    ev(2, 'title', { messageSeqs: [1] }),
  ];

  it('matches with extra messages between, seqs shifted consistently', () => {
    const actual = [
      ev(0, 'sandbox/mode', {}),
      ev(1, 'turn/start', { turn: 1 }),
      ev(2, 'x', {}),
      ev(3, 'user/message', { text: 'hi' }, { surfaceOp: 'append' }),
      ev(4, 'title', { messageSeqs: [3] }),
    ];
    expect(matchInOrder(expected, actual)).toEqual({ matched: 3, total: 3 });
  });

  it('refuses a seq list that does not cite the paired event', () => {
    const actual = [
      ev(1, 'turn/start', { turn: 1 }),
      ev(3, 'user/message', { text: 'hi' }, { surfaceOp: 'append' }),
      ev(4, 'title', { messageSeqs: [1] }),
    ];
    const r = matchInOrder(expected, actual);
    expect(r.matched).toBe(2);
    expect(r.failure?.nearest?.difference.path).toBe('$.params.event.data.messageSeqs[0]');
  });

  it('refuses changed content, naming the path, and a wrong order', () => {
    const changed = [
      ev(0, 'turn/start', { turn: 1 }),
      ev(1, 'user/message', { text: 'HI' }, { surfaceOp: 'append' }),
      ev(2, 'title', { messageSeqs: [1] }),
    ];
    const r = matchInOrder(expected, changed);
    expect(r.failure?.index).toBe(1);
    expect(r.failure?.nearest?.difference).toEqual({ path: '$.params.event.data.text', expected: 'hi', actual: 'HI' });
    const swapped = [expected[1], expected[0], expected[2]];
    expect(matchInOrder(expected, swapped).matched).toBeLessThan(3);
  });

  it('treats scrubbed tokens as wildcards, but not the normalised ids', () => {
    expect(matchInOrder([{ system: '{{system}}' }], [{ system: 'anything at all' }]).failure).toBeUndefined();
    expect(matchInOrder([{ id: '{{sessionId}}' }], [{ id: 'not-an-id' }]).failure).toBeDefined();
    const ctx = { sessionIds: ['kept'], cwd: '/tmp/ws' };
    const ours = normalize(
      { id: 'c0ffee00-1234-4abc-8def-0123456789ab', s: 'kept', p: '/tmp/ws/a.txt', e: { type: 't', seq: 3, time: 99, data: {} } },
      ctx,
    );
    expect(ours).toEqual({ id: '{{sessionId}}', s: '{{sessionId}}', p: '{{cwd}}/a.txt', e: { type: 't', seq: 3, time: 0, data: {} } });
  });

  it('allows keys only we write, but not a missing key', () => {
    expect(matchInOrder([{ a: 1 }], [{ a: 1, meta: { exitCode: 0 } }]).failure).toBeUndefined();
    expect(matchInOrder([{ a: 1, b: 2 }], [{ a: 1 }]).failure?.nearest?.difference.path).toBe('$.b');
  });

  it('property: any interleaving of extras matches; dropping one expected message does not', () => {
    const msg = fc.record({ kind: fc.constantFrom('a', 'b', 'c'), v: fc.string({ maxLength: 4 }) });
    fc.assert(
      fc.property(fc.array(msg, { minLength: 1, maxLength: 8 }), fc.array(fc.nat(), { maxLength: 8 }), (exp, gaps) => {
        const actual: unknown[] = [];
        exp.forEach((m, i) => {
          for (let k = 0; k < (gaps[i] ?? 0) % 3; k++) actual.push({ kind: 'extra', v: `${i}.${k}` });
          actual.push(m);
        });
        expect(matchInOrder(exp, actual).failure).toBeUndefined();
        // Every expected message left out of ours (one at a time): refused, unless an identical
        // message elsewhere can stand in for it (then the order is still honoured).
        exp.forEach((m, i) => {
          const without = actual.filter((a) => a !== m);
          const twin = exp.some((o, j) => j !== i && o.kind === m.kind && o.v === m.v);
          if (!twin) expect(matchInOrder(exp, without).failure?.index).toBe(i);
        });
      }),
    );
  });

  it('reports the first expected message not found, and the nearest message of its kind with the first differing path', () => {
    const upd = (kind: string, text: string) => ({
      method: 'session/update',
      params: { update: { sessionUpdate: kind, content: { text } } },
    });
    const r = matchInOrder(
      [upd('agent_message_chunk', 'a'), upd('agent_message_chunk', 'b'), upd('plan', 'c')],
      [upd('agent_message_chunk', 'a'), upd('tool_call', 'b'), upd('agent_message_chunk', 'B'), upd('plan', 'c')],
    );
    expect(r.matched).toBe(1);
    expect(r.failure?.index).toBe(1);
    // The tool_call at index 1 is of another kind: the nearest is our message 3 (index 2).
    expect(r.failure?.nearest?.index).toBe(2);
    expect(r.failure?.nearest?.difference).toEqual({ path: '$.params.update.content.text', expected: 'b', actual: 'B' });
    // Responses are of a kind by their id.
    const resp = matchInOrder(
      [{ id: 2, result: { x: 1 } }],
      [
        { id: 1, result: { x: 9 } },
        { id: 2, result: { x: 8 } },
      ],
    );
    expect(resp.failure?.nearest?.index).toBe(1);
  });
});

describe('arrays', () => {
  const seqs = new Map<number, number>();
  it('exact (default): same length, item by item', () => {
    expect(firstDifference([1, 2], [1, 2], seqs, new Map())).toBeUndefined();
    expect(firstDifference([1, 3], [1, 2, 3], seqs, new Map())).toMatchObject({ path: '$' });
    expect(firstDifference([{ a: 1 }], [{ a: 2 }], seqs, new Map())).toEqual({ path: '$[0].a', expected: 1, actual: 2 });
  });

  it('in-order: the expected items in order among ours, extras between allowed, order kept', () => {
    const o = { arrays: 'in-order' as const };
    expect(firstDifference([1, 3], [1, 2, 3], seqs, new Map(), '$', o)).toBeUndefined();
    expect(firstDifference([3, 1], [1, 2, 3], seqs, new Map(), '$', o)).toBeDefined();
    expect(
      firstDifference([{ kind: 'allow_once' }], [{ kind: 'allow_always' }, { kind: 'allow_once', id: 'x' }], seqs, new Map(), '$', o),
    ).toBeUndefined();
    expect(firstDifference({ 'a-b': ['x'] }, { 'a-b': ['y'] }, seqs, new Map(), '$', o)?.path).toBe('$["a-b"][0]');
    expect(matchInOrder([{ opts: [1, 3] }], [{ opts: [1, 2, 3] }]).failure).toBeDefined();
    expect(matchInOrder([{ opts: [1, 3] }], [{ opts: [1, 2, 3] }], o).failure).toBeUndefined();
  });
});

describe('oneOf', () => {
  it('accepts either form; reports the first form when neither is there', () => {
    const want = oneOf({ stopReason: 'end_turn' }, { stopReason: 'max_tokens' });
    expect(matchInOrder([want], [{ stopReason: 'max_tokens' }]).failure).toBeUndefined();
    expect(matchInOrder([want], [{ stopReason: 'end_turn' }]).failure).toBeUndefined();
    const r = matchInOrder([want], [{ stopReason: 'cancelled' }]);
    expect(r.failure?.expected).toEqual({ stopReason: 'end_turn' });
    expect(r.failure?.nearest?.difference.path).toBe('$.stopReason');
  });
});
