/**
 * Lossless JSON at the source (issue 2 item 3): what `Session.append`
 * refuses, with the error naming the event type, seq, JSON path and rule; what it accepts and how
 * it copies and freezes.
 */
import { describe, expect, it } from 'vitest';
import { freezeJsonInPlace, isLosslessJson, Session, snapshotJson, stringifyJson, type SessionError } from '../../src/session/index.js';
import { expectRefused, expectSessionError, fixedClock, newSession, openStep, toolResultMsg, userMsg } from './helpers.js';

// A plugin event type whose payload is free-form JSON, so every value shape reaches the JSON check.
const FREE = 'session/title' as const;

function refuse(value: unknown, path: string, why: RegExp): SessionError {
  const s = newSession();
  s.append('turn/start', { turn: 1 });
  const err = expectRefused(s, () => s.append(FREE, { v: value } as never), 'NON_JSON');
  expect(err.details).toMatchObject({ eventType: FREE, seq: 1, path, rule: 'lossless-json' });
  expect(err.message).toContain(`session event "${FREE}" at seq 1 carries non-JSON-serializable data at ${path}`);
  expect(err.message).toMatch(why);
  return err;
}

class Point {
  constructor(
    public x: number,
    public y: number,
  ) {}
}

describe('refused values, each with its JSON path', () => {
  it('BigInt', () => refuse(10n, '$.data.v', /BigInt/));
  it('function', () => refuse(() => 1, '$.data.v', /function/));
  it('symbol', () => refuse(Symbol('s'), '$.data.v', /symbol/));
  it('undefined as a property value', () => refuse(undefined, '$.data.v', /undefined/));
  it('NaN', () => refuse(NaN, '$.data.v', /NaN/));
  it('Infinity', () => refuse(Infinity, '$.data.v', /Infinity/));
  it('-Infinity', () => refuse(-Infinity, '$.data.v', /-Infinity/));
  it('-0', () => refuse(-0, '$.data.v', /-0/));
  it('-0 nested in an array', () => refuse([1, [2, -0]], '$.data.v[1][1]', /-0/));
  it('undefined nested in an object', () => refuse({ a: { b: undefined } }, '$.data.v.a.b', /undefined/));
  it('undefined as an array element', () => refuse([1, undefined, 3], '$.data.v[1]', /undefined/));
  it('a function deep in arrays and objects', () => refuse({ list: [{ ok: 1 }, { fn: Math.max }] }, '$.data.v.list[1].fn', /function/));
  it('BigInt in an array', () => refuse([0n], '$.data.v[0]', /BigInt/));
  it('a key that is not an identifier is quoted in the path', () => refuse({ 'a b': NaN }, '$.data.v["a b"]', /NaN/));
  it('sparse array hole', () => {
    // biome-ignore lint/suspicious/noSparseArray: the hole is the input under test
    refuse([1, , 3], '$.data.v[1]', /sparse/);
  });
  it('sparse array made by length', () => {
    const a: unknown[] = [];
    a.length = 2;
    refuse(a, '$.data.v[0]', /sparse/);
  });
  it('direct cycle', () => {
    const o: Record<string, unknown> = { a: 1 };
    o.self = o;
    refuse(o, '$.data.v.self', /cycle/);
  });
  it('deep cycle', () => {
    const root: Record<string, unknown> = {};
    let cur = root;
    for (let i = 0; i < 10; i++) {
      const next: Record<string, unknown> = {};
      cur.n = next;
      cur = next;
    }
    cur.back = root;
    refuse(root, `$.data.v${'.n'.repeat(10)}.back`, /cycle/);
  });
  it('cycle through an array', () => {
    const a: unknown[] = [];
    a.push({ up: a });
    refuse(a, '$.data.v[0].up', /cycle/);
  });
  it('Map', () => refuse(new Map([['a', 1]]), '$.data.v', /Map/));
  it('Set', () => refuse(new Set([1]), '$.data.v', /Set/));
  it('Date', () => refuse(new Date(0), '$.data.v', /Date/));
  it('RegExp', () => refuse(/x/g, '$.data.v', /RegExp/));
  it('class instance', () => refuse(new Point(1, 2), '$.data.v', /Point/));
  it('boxed string', () => refuse(new String('s'), '$.data.v', /String/));
  it('boxed number', () => refuse(new Number(1), '$.data.v', /Number/));
  it('boxed boolean', () => refuse(new Boolean(true), '$.data.v', /Boolean/));
  it('typed array', () => refuse(new Uint8Array([1, 2]), '$.data.v', /Uint8Array/));
  it('ArrayBuffer', () => refuse(new ArrayBuffer(4), '$.data.v', /ArrayBuffer/));
  it('array subclass', () => {
    class MyArray extends Array<number> {}
    refuse(MyArray.from([1, 2]), '$.data.v', /array subclass/);
  });
  it('an Error object', () => refuse(new Error('x'), '$.data.v', /Error/));
  it('a Promise', () => refuse(Promise.resolve(1), '$.data.v', /Promise/));
  it('the data itself not being JSON', () => {
    const s = newSession();
    const err = expectRefused(s, () => s.append(FREE, new Map() as never), 'NON_JSON');
    expect(err.details.path).toBe('$.data');
  });
  it('a bad value 100,000 levels deep is refused with its path, without a stack overflow', () => {
    let v: unknown = NaN;
    for (let i = 0; i < 100_000; i++) v = [v];
    const s = newSession();
    const err = expectRefused(s, () => s.append(FREE, { v } as never), 'NON_JSON');
    expect(err.details.path).toBe(`$.data.v${'[0]'.repeat(100_000)}`);
  });
  it('a cycle 100,000 levels deep is refused without a stack overflow', () => {
    const root: Record<string, unknown> = {};
    let cur = root;
    for (let i = 0; i < 100_000; i++) {
      const next: Record<string, unknown> = {};
      cur.d = next;
      cur = next;
    }
    cur.loop = root;
    const s = newSession();
    const err = expectRefused(s, () => s.append(FREE, { v: root } as never), 'NON_JSON');
    expect(err.message).toMatch(/cycle/);
  });
  it('surface metadata is checked the same way', () => {
    const s = newSession();
    openStep(s, 1);
    const err = expectRefused(
      s,
      () => s.append('user/message', userMsg('u1'), { surfaceOp: 'append', sourceEventSeqs: [0, NaN] }),
      'NON_JSON',
    );
    expect(err.details.path).toBe('$.sourceEventSeqs[1]');
    const err2 = expectRefused(
      s,
      () => s.append('user/message', userMsg('u1'), { surfaceOp: { op: 'replace', start: 0, end: 1n } as never }),
      'NON_JSON',
    );
    expect(err2.details.path).toBe('$.surfaceOp.end');
  });
  it('a bad value in a surface event names that event type', () => {
    const s = newSession();
    openStep(s, 1);
    s.append('tool/call', { turn: 1, step: 1, callId: 'c', name: 'bash', arguments: '{}' });
    const err = expectRefused(
      s,
      () =>
        s.append(
          'tool/result',
          { turn: 1, step: 1, message: toolResultMsg('r', 'c'), meta: { when: new Date() } as never },
          { surfaceOp: 'append' },
        ),
      'NON_JSON',
    );
    expect(err.details).toMatchObject({ eventType: 'tool/result', seq: 3, path: '$.data.meta.when' });
  });
  it('inherited enumerable properties are never copied into the log', () => {
    const proto = Object.prototype as Record<string, unknown>;
    proto.polluted = 'yes';
    try {
      const s = newSession();
      const e = s.append(FREE, { a: { b: 1 } } as never);
      expect(Object.keys(e.data)).toEqual(['a']);
      expect(Object.prototype.hasOwnProperty.call((e.data as Record<string, object>).a, 'polluted')).toBe(false);
    } finally {
      delete proto.polluted;
    }
  });
});

describe('accepted values', () => {
  it('copies plain JSON exactly and leaves the caller its own unfrozen value', () => {
    const s = newSession();
    const input = {
      s: 'x',
      n: 1.5,
      neg: -3,
      zero: 0,
      t: true,
      f: false,
      nil: null,
      arr: [1, 'a', [null], {}],
      obj: { nested: { deep: [] } },
    };
    const e = s.append(FREE, input as never);
    expect(JSON.stringify(e.data)).toBe(
      '{"s":"x","n":1.5,"neg":-3,"zero":0,"t":true,"f":false,"nil":null,"arr":[1,"a",[null],{}],"obj":{"nested":{"deep":[]}}}',
    );
    expect(e.data).not.toBe(input);
    expect(Object.isFrozen(input)).toBe(false);
    input.arr.push(99);
    input.obj.nested.deep = [1] as never;
    expect(JSON.stringify((e.data as unknown as typeof input).arr)).toBe('[1,"a",[null],{}]');
    expect((e.data as unknown as typeof input).obj.nested.deep).toEqual([]);
  });
  it('a shared (acyclic) subtree is not a cycle', () => {
    const shared = { k: [1, 2] };
    const s = newSession();
    const e = s.append(FREE, { a: shared, b: shared, c: [shared, shared] } as never);
    expect(JSON.parse(JSON.stringify(e.data))).toEqual({ a: { k: [1, 2] }, b: { k: [1, 2] }, c: [{ k: [1, 2] }, { k: [1, 2] }] });
  });
  it('a null-prototype object is plain JSON', () => {
    const o = Object.create(null) as Record<string, unknown>;
    o.x = 1;
    const s = newSession();
    const e = s.append(FREE, { o } as never);
    expect(JSON.stringify(e.data)).toBe('{"o":{"x":1}}');
  });
  it('a "__proto__" key survives as an own key, not as a prototype', () => {
    const input = JSON.parse('{"__proto__":{"polluting":true},"a":1}') as Record<string, unknown>;
    const s = newSession();
    const e = s.append(FREE, { wrapper: input } as never);
    const inner = (e.data as unknown as { wrapper: Record<string, unknown> }).wrapper;
    expect(Object.prototype.hasOwnProperty.call(inner, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(inner)).toBe(Object.prototype);
    expect((inner as { polluting?: unknown }).polluting).toBeUndefined();
    expect(JSON.stringify(e.data)).toBe('{"wrapper":{"__proto__":{"polluting":true},"a":1}}');
    expect(Object.isFrozen(inner)).toBe(true);
    expect(Object.isFrozen(Object.getOwnPropertyDescriptor(inner, '__proto__')!.value)).toBe(true);
  });
  it('"__proto__" at the top of data survives too', () => {
    const input = JSON.parse('{"__proto__":[1,2]}') as never;
    const s = newSession();
    const e = s.append(FREE, input);
    expect(JSON.stringify(e.data)).toBe('{"__proto__":[1,2]}');
  });
  it('100,000 levels of arrays: accepted, copied and frozen all the way down', () => {
    let v: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) v = [v];
    const s = newSession();
    const e = s.append(FREE, { v } as never);
    let cur: unknown = (e.data as unknown as { v: unknown }).v;
    let depth = 0;
    let unfrozen = 0;
    while (Array.isArray(cur)) {
      if (!Object.isFrozen(cur)) unfrozen++;
      cur = cur[0];
      depth++;
    }
    expect(depth).toBe(100_000);
    expect(unfrozen).toBe(0);
    expect(cur).toBe('leaf');
  });
  it('100,000 levels of objects: accepted', () => {
    let v: unknown = { end: true };
    for (let i = 0; i < 100_000; i++) v = { d: v };
    const s = newSession();
    const e = s.append(FREE, { v } as never);
    let cur = (e.data as unknown as { v: Record<string, unknown> }).v;
    let depth = 0;
    while (cur.d !== undefined) {
      cur = cur.d as Record<string, unknown>;
      depth++;
    }
    expect(depth).toBe(100_000);
    expect(cur.end).toBe(true);
  });
  it('getters are read once, as values', () => {
    let reads = 0;
    const o = {
      get x() {
        reads++;
        return 7;
      },
    };
    const s = newSession();
    const e = s.append(FREE, { o } as never);
    expect(reads).toBe(1);
    expect(Object.getOwnPropertyDescriptor((e.data as unknown as { o: object }).o, 'x')).toMatchObject({ value: 7, writable: false });
  });
});

describe('snapshotJson / freezeJsonInPlace / isLosslessJson', () => {
  it('snapshotJson copies and freezes; the root path defaults to $', () => {
    const v = { a: [1, { b: 'c' }] };
    const out = snapshotJson(v, { eventType: 'x' });
    expect(out).toEqual(v);
    expect(out).not.toBe(v);
    expect(Object.isFrozen(out) && Object.isFrozen(out.a) && Object.isFrozen(out.a[1])).toBe(true);
    const err = expectSessionError(() => snapshotJson({ a: [undefined] }, { eventType: 'x' }), 'NON_JSON');
    expect(err.details.path).toBe('$.a[0]');
  });
  it('freezeJsonInPlace freezes the very value it is given', () => {
    const v = { a: [1, { b: 'c' }] };
    const out = freezeJsonInPlace(v, { eventType: 'x' });
    expect(out).toBe(v);
    expect(Object.isFrozen(v.a[1])).toBe(true);
  });
  it('freezeJsonInPlace refuses what snapshotJson refuses, with the path', () => {
    for (const [bad, path] of [
      [{ a: NaN }, '$.a'],
      [{ a: [1, -0] }, '$.a[1]'],
      [{ a: new Set() }, '$.a'],
      [{ a: { b: () => 0 } }, '$.a.b'],
    ] as const) {
      const err = expectSessionError(() => freezeJsonInPlace(bad, { eventType: 'x', seq: 4 }), 'NON_JSON');
      expect(err.details).toMatchObject({ path, seq: 4 });
    }
    const cyc: Record<string, unknown> = {};
    cyc.me = cyc;
    expect(expectSessionError(() => freezeJsonInPlace(cyc, { eventType: 'x' }), 'NON_JSON').message).toMatch(/cycle/);
  });
  it('freezeJsonInPlace keeps "__proto__" own keys from JSON.parse', () => {
    const v = JSON.parse('{"x":{"__proto__":{"y":1}}}') as { x: object };
    freezeJsonInPlace(v, { eventType: 'x' });
    expect(Object.prototype.hasOwnProperty.call(v.x, '__proto__')).toBe(true);
    expect(Object.isFrozen(v.x)).toBe(true);
  });
  it('isLosslessJson', () => {
    expect(isLosslessJson({ a: [1, 'x', null, true, { b: {} }] })).toBe(true);
    expect(isLosslessJson(0)).toBe(true);
    for (const bad of [undefined, NaN, -0, 1n, () => 0, Symbol('x'), new Date(), [1, undefined], { a: new Map() }]) {
      expect(isLosslessJson(bad), String(bad)).toBe(false);
    }
  });
  it('a restored (ownership-transfer) seed is refused at the bad event with its seq and path', () => {
    const events = [
      { type: 'turn/start', seq: 0, time: 1, data: { turn: 1 } },
      { type: FREE, seq: 1, time: 2, data: { x: [1, Infinity] } },
    ];
    const err = expectSessionError(
      () => Session.restore({ version: 0, id: 's', createdAt: 0 }, events, { clock: fixedClock() }),
      'NON_JSON',
    );
    expect(err.details).toMatchObject({ seq: 1, path: '$.data.x[1]', eventType: FREE });
  });
});

describe('stringifyJson', () => {
  it('writes exactly what JSON.stringify writes', () => {
    const values: unknown[] = [
      null,
      0,
      -1.5e-7,
      1e21,
      'quote " backslash \\ newline \n tab \t nul \u0000 lone \ud800 emoji 😀',
      [],
      {},
      [1, [2, [3, {}]], { a: [] }],
      JSON.parse('{"__proto__":{"x":1},"b":[true,false,null],"":"empty key","é":"ü"}'),
    ];
    for (const v of values) expect(stringifyJson(v)).toBe(JSON.stringify(v));
  });
  it('writes values deeper than JSON.stringify can go, and they parse back', () => {
    let v: unknown = { k: ['x', 1] };
    for (let i = 0; i < 50_000; i++) v = i % 2 ? { a: v, b: 1 } : [0, v];
    expect(() => JSON.stringify(v)).toThrow(RangeError);
    const text = stringifyJson(v);
    expect(text.startsWith('{"a":[0,{"a":[0,')).toBe(true);
    expect(text.endsWith('}],"b":1}],"b":1}')).toBe(true);
    // The native parser has no depth limit; compare a shallow prefix of its result structurally.
    let back = JSON.parse(text) as unknown;
    for (let i = 0; i < 50_000; i++) back = i % 2 ? (back as unknown[])[1] : (back as { a: unknown }).a;
    expect(back).toEqual({ k: ['x', 1] });
  });
  it('past the native limit, values JSON.stringify leaves out are left out the same way; an indent asked for is dropped there', () => {
    const leaf = { keep: 1, gone: undefined, fn: () => 1, arr: [undefined, () => 1, 2] };
    expect(stringifyJson(leaf, 2)).toBe(JSON.stringify(leaf, null, 2));
    let v: unknown = leaf;
    for (let i = 0; i < 20_000; i++) v = [v];
    const text = stringifyJson(v, 2);
    expect(text).toBe(`${'['.repeat(20_000)}{"keep":1,"arr":[null,null,2]}${']'.repeat(20_000)}`);
  });
});
