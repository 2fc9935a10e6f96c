/**
 * Packed chunk rows (issue 2 item 6): runs of three or more same-block deltas
 * are written as one row and decoded back to exactly the same events.
 */
import { describe, expect, it } from 'vitest';
import { expandRow, packChunkRuns, RowError, type RowTag, type SessionEvent } from '../../src/session/index.js';

const T = 1_755_000_000_000;

function chunkEvent(seq: number, time: number, chunk: Record<string, unknown>, turn = 1, step = 1): SessionEvent {
  return { type: 'assistant/chunk', seq, time, data: { turn, step, chunk } } as unknown as SessionEvent;
}
const text = (seq: number, time: number, t: string, index = 0) => chunkEvent(seq, time, { type: 'text-delta', index, text: t });
const reasoning = (seq: number, time: number, t: string) => chunkEvent(seq, time, { type: 'reasoning-delta', index: 0, text: t });
const call = (seq: number, time: number, a: string, extra: Record<string, unknown> = {}) =>
  chunkEvent(seq, time, { type: 'tool-call-delta', index: 1, id: 'call_1', ...extra, argumentsDelta: a });
const named = (seq: number, time: number, a: string, name = 'bash') =>
  chunkEvent(seq, time, { type: 'tool-call-delta', index: 1, id: 'call_1', name, argumentsDelta: a });

function decode(records: unknown[]): SessionEvent[] {
  const out: SessionEvent[] = [];
  for (const r of JSON.parse(JSON.stringify(records)) as Record<string, unknown>[]) {
    if (r.type === 'text-chunks' || r.type === 'reasoning-chunks' || r.type === 'tool-call-chunks') expandRow(r, r.type as RowTag, out);
    else out.push(r as unknown as SessionEvent);
  }
  return out;
}

describe('packChunkRuns', () => {
  it('packs a run of three text deltas into one text-chunks row', () => {
    const events = [text(5, T, 'a'), text(6, T + 3, 'b'), text(7, T + 10, 'c')];
    expect(packChunkRuns(events)).toEqual([
      { type: 'text-chunks', seq0: 5, time0: T, data: { turn: 1, step: 1, index: 0, dt: [3, 7], texts: ['a', 'b', 'c'] } },
    ]);
    expect(JSON.stringify(packChunkRuns(events)[0])).toBe(
      `{"type":"text-chunks","seq0":5,"time0":${T},"data":{"turn":1,"step":1,"index":0,"dt":[3,7],"texts":["a","b","c"]}}`,
    );
  });
  it('leaves a run of two as two events', () => {
    const events = [text(0, T, 'a'), text(1, T, 'b')];
    expect(packChunkRuns(events)).toEqual(events);
    expect(packChunkRuns(events)[0]).toBe(events[0]);
  });
  it('packs reasoning deltas into reasoning-chunks', () => {
    const rows = packChunkRuns([reasoning(0, T, 'x'), reasoning(1, T, 'y'), reasoning(2, T, 'z'), reasoning(3, T + 1, 'w')]);
    expect(rows).toEqual([
      { type: 'reasoning-chunks', seq0: 0, time0: T, data: { turn: 1, step: 1, index: 0, dt: [0, 0, 1], texts: ['x', 'y', 'z', 'w'] } },
    ]);
  });
  it('tool-call rows carry the id, and the name only when every member has the same one', () => {
    const withName = packChunkRuns([named(0, T, '{"a"'), named(1, T, ':'), named(2, T, '1}')]);
    expect(JSON.stringify(withName)).toBe(
      `[{"type":"tool-call-chunks","seq0":0,"time0":${T},"data":{"turn":1,"step":1,"index":1,"dt":[0,0],"id":"call_1",` +
        '"name":"bash","args":["{\\"a\\"",":","1}"]}}]',
    );
    const without = packChunkRuns([call(0, T, '{'), call(1, T, '}'), call(2, T, '')]);
    expect(without).toEqual([
      { type: 'tool-call-chunks', seq0: 0, time0: T, data: { turn: 1, step: 1, index: 1, dt: [0, 0], id: 'call_1', args: ['{', '}', ''] } },
    ]);
    expect('name' in (without[0]!.data as object)).toBe(false);
  });
  it('does not pack a run mixing named and unnamed members, or different names', () => {
    const mixed = [named(0, T, 'a'), call(1, T, 'b'), call(2, T, 'c'), named(3, T, 'd')];
    expect(packChunkRuns(mixed)).toEqual(mixed);
    const differing = [named(0, T, 'a', 'x'), named(1, T, 'b', 'y'), named(2, T, 'c', 'x')];
    expect(packChunkRuns(differing)).toEqual(differing);
    // A uniform sub-run of three inside a mixed stretch still packs on its own.
    const tail = [named(0, T, 'a'), call(1, T, 'b'), call(2, T, 'c'), call(3, T, 'd')];
    expect(packChunkRuns(tail).map((r) => r.type)).toEqual(['assistant/chunk', 'tool-call-chunks']);
  });
  it('splits runs at a change of block index, call id, step, turn, or kind, and at a seq gap', () => {
    const splits: SessionEvent[][] = [
      [text(0, T, 'a'), text(1, T, 'b'), text(2, T, 'c', 1)],
      [call(0, T, 'a'), call(1, T, 'b'), chunkEvent(2, T, { type: 'tool-call-delta', index: 1, id: 'call_2', argumentsDelta: 'c' })],
      [text(0, T, 'a'), text(1, T, 'b'), chunkEvent(2, T, { type: 'text-delta', index: 0, text: 'c' }, 1, 2)],
      [text(0, T, 'a'), text(1, T, 'b'), chunkEvent(2, T, { type: 'text-delta', index: 0, text: 'c' }, 2, 1)],
      [text(0, T, 'a'), text(1, T, 'b'), reasoning(2, T, 'c')],
      [text(0, T, 'a'), text(1, T, 'b'), text(3, T, 'c')],
    ];
    for (const events of splits) expect(packChunkRuns(events)).toEqual(events);
  });
  it('packs a negative gap (the wall clock stepped back) and decodes it exactly', () => {
    const events = [text(0, T, 'a'), text(1, T - 5, 'b'), text(2, T + 2, 'c')];
    const rows = packChunkRuns(events);
    expect((rows[0] as { data: { dt: number[] } }).data.dt).toEqual([-5, 7]);
    expect(decode(rows)).toEqual(events);
  });
  it('writes anything it does not recognise exactly verbatim', () => {
    const odd: SessionEvent[] = [
      { ...text(0, T, 'a'), ignorable: true } as SessionEvent,
      chunkEvent(1, T, { type: 'text-delta', index: 0, text: 'b', extra: 1 }),
      chunkEvent(2, T, { type: 'text-delta', index: '0', text: 'c' }),
      chunkEvent(3, T, { type: 'block-start', index: 0, blockType: 'text' }),
      {
        type: 'assistant/chunk',
        seq: 4,
        time: T,
        data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'd' }, more: true },
      } as unknown as SessionEvent,
      chunkEvent(5, T, { type: 'tool-call-delta', index: 0, argumentsDelta: 'e' }),
    ];
    expect(packChunkRuns([...odd, ...odd.map((e) => ({ ...e }))])).toHaveLength(12);
  });
  it('does not pack members whose keys are out of the canonical order (decoding would reorder them)', () => {
    const reordered = [0, 1, 2].map((i) => chunkEvent(i, T, { text: String(i), type: 'text-delta', index: 0 }));
    const records = packChunkRuns(reordered);
    expect(JSON.stringify(decode(records))).toBe(JSON.stringify(reordered));
    const envelope = [0, 1, 2].map(
      (i) =>
        ({
          seq: i,
          type: 'assistant/chunk',
          time: T,
          data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } },
        }) as unknown as SessionEvent,
    );
    expect(JSON.stringify(decode(packChunkRuns(envelope)))).toBe(JSON.stringify(envelope));
  });
  it('interleaves rows with other events in log order', () => {
    const events: SessionEvent[] = [
      { type: 'step/start', seq: 0, time: T, data: { turn: 1, step: 1 } } as SessionEvent,
      text(1, T, 'a'),
      text(2, T, 'b'),
      text(3, T, 'c'),
      chunkEvent(4, T, { type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } }),
      named(5, T, 'x'),
      named(6, T, 'y'),
      named(7, T, 'z'),
    ];
    const rows = packChunkRuns(events);
    expect(rows.map((r) => r.type)).toEqual(['step/start', 'text-chunks', 'assistant/chunk', 'tool-call-chunks']);
    expect(JSON.stringify(decode(rows))).toBe(JSON.stringify(events));
  });
});

describe('expandRow', () => {
  const good = () => ({
    type: 'text-chunks',
    seq0: 4,
    time0: T,
    data: { turn: 2, step: 3, index: 0, dt: [1, -1], texts: ['a', 'b', 'c'] },
  });
  const goodCall = () => ({
    type: 'tool-call-chunks',
    seq0: 0,
    time0: T,
    data: { turn: 1, step: 1, index: 2, dt: [0, 0], id: 'c', name: 'n', args: ['a', 'b', 'c'] },
  });

  it('expands to frozen assistant/chunk events with cumulative times', () => {
    const out: SessionEvent[] = [];
    expandRow(good(), 'text-chunks', out);
    expect(out).toEqual([
      { type: 'assistant/chunk', seq: 4, time: T, data: { turn: 2, step: 3, chunk: { type: 'text-delta', index: 0, text: 'a' } } },
      { type: 'assistant/chunk', seq: 5, time: T + 1, data: { turn: 2, step: 3, chunk: { type: 'text-delta', index: 0, text: 'b' } } },
      { type: 'assistant/chunk', seq: 6, time: T, data: { turn: 2, step: 3, chunk: { type: 'text-delta', index: 0, text: 'c' } } },
    ]);
    expect(Object.isFrozen(out[0]) && Object.isFrozen(out[0]!.data) && Object.isFrozen((out[0]!.data as { chunk: object }).chunk)).toBe(
      true,
    );
    const calls: SessionEvent[] = [];
    expandRow(goodCall(), 'tool-call-chunks', calls);
    expect(JSON.stringify(calls[2])).toBe(
      `{"type":"assistant/chunk","seq":2,"time":${T},"data":{"turn":1,"step":1,"chunk":{"type":"tool-call-delta","index":2,` +
        '"id":"c","name":"n","argumentsDelta":"c"}}}',
    );
  });
  it('accepts a short row (one or two members) although the writer never produces one', () => {
    const out: SessionEvent[] = [];
    expandRow(
      { type: 'reasoning-chunks', seq0: 0, time0: 0, data: { turn: 1, step: 1, index: 0, dt: [], texts: ['only'] } },
      'reasoning-chunks',
      out,
    );
    expect(out).toHaveLength(1);
  });
  type Spoil = (r: Record<string, unknown> & { data: Record<string, unknown> }) => void;
  const malformed: [string, Spoil, RegExp][] = [
    ['an extra top-level key', (r) => (r.extra = 1), /exactly type, seq0, time0 and data/],
    ['no seq0', (r) => delete r.seq0, /exactly type, seq0, time0 and data/],
    ['a negative seq0', (r) => (r.seq0 = -1), /seq0 must be a non-negative integer/],
    ['a fractional seq0', (r) => (r.seq0 = 1.5), /seq0/],
    ['a string time0', (r) => (r.time0 = '1'), /time0 must be an integer/],
    ['data not an object', (r) => (r.data = [] as never), /data must be an object/],
    ['an extra data key', (r) => (r.data.more = 1), /data must have exactly/],
    ['no texts', (r) => delete r.data.texts, /data must have exactly/],
    ['a string turn', (r) => (r.data.turn = '1'), /turn, step and index must be numbers/],
    ['texts not an array', (r) => (r.data.texts = 'abc'), /texts must be a non-empty array/],
    ['empty texts', (r) => ((r.data.texts = []), (r.data.dt = [])), /non-empty array/],
    ['dt too short', (r) => (r.data.dt = [1]), /dt must have one entry fewer than the 3 members/],
    ['dt too long', (r) => (r.data.dt = [1, 2, 3]), /dt must have one entry fewer/],
    ['dt not an array', (r) => (r.data.dt = 5), /dt must have one entry fewer/],
    ['a fractional gap', (r) => (r.data.dt = [1, 0.5]), /dt\[1\] must be a safe integer \(and not -0\), got 0\.5/],
    ['a string gap', (r) => (r.data.dt = ['1', 0]), /dt\[0\] must be a safe integer \(and not -0\), got "1"/],
    [
      'a gap beyond safe integers',
      (r) => (r.data.dt = [2 ** 53, 0]),
      /dt\[0\] must be a safe integer \(and not -0\), got 9007199254740992/,
    ],
    ['a -0 gap', (r) => (r.data.dt = [-0, 0]), /dt\[0\] must be a safe integer \(and not -0\)/],
    ['a -0 time0', (r) => (r.time0 = -0), /must not be -0/],
    ['a -0 index', (r) => (r.data.index = -0), /must not be -0/],
    ['a member that is not a string', (r) => (r.data.texts = ['a', 2, 'c']), /member 1 must be a string/],
    ['member seqs beyond safe integers', (r) => (r.seq0 = Number.MAX_SAFE_INTEGER - 1), /safe-integer range/],
    ['member times beyond safe integers', (r) => ((r.time0 = Number.MAX_SAFE_INTEGER), (r.data.dt = [1, 0])), /safe-integer range/],
  ];
  for (const [name, spoil, why] of malformed) {
    it(`refuses ${name}`, () => {
      const r = good() as Record<string, unknown> & { data: Record<string, unknown> };
      spoil(r);
      const out: SessionEvent[] = [];
      let err: unknown;
      try {
        expandRow(r, 'text-chunks', out);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(RowError);
      expect((err as RowError).message).toMatch(/^malformed text-chunks row: /);
      expect((err as RowError).message).toMatch(why);
    });
  }
  const malformedCalls: [string, Spoil, RegExp][] = [
    [
      'no id',
      (r) => delete r.data.id,
      /exactly turn, step, index, id, name\? dt and args|exactly turn, step, index, id, name\?, dt and args/,
    ],
    ['a numeric id', (r) => (r.data.id = 1), /id \(and name, when present\) must be strings/],
    ['a null name', (r) => (r.data.name = null), /must be strings/],
    [
      'texts instead of args',
      (r) => ((r.data.texts = r.data.args), delete r.data.args),
      /exactly turn, step, index, id, name\?, dt and args/,
    ],
  ];
  for (const [name, spoil, why] of malformedCalls) {
    it(`refuses a tool-call row with ${name}`, () => {
      const r = goodCall() as Record<string, unknown> & { data: Record<string, unknown> };
      spoil(r);
      expect(() => expandRow(r, 'tool-call-chunks', [])).toThrow(why);
    });
  }
});
