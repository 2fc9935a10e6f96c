/**
 * Seed, restore and fork (issue 2 item 5): seeds are validated exactly like
 * appends, with errors naming the seq and rule; the session/end-seed marker; firstLiveSeq; fork
 * at an inclusive between-turn boundary.
 */
import { describe, expect, it } from 'vitest';
import { deriveMessagesFrom, Session, type SessionErrorCode } from '../../src/session/index.js';
import { T0, closeTurn, expectRefused, expectSessionError, fixedClock, fullTurn, newSession, openStep, userMsg } from './helpers.js';

/** Plain (unfrozen) JSON copies of a complete two-turn log: 26 events, turns closed. */
function seedEvents(): Record<string, unknown>[] {
  const s = newSession();
  fullTurn(s, 1);
  fullTurn(s, 2);
  return JSON.parse(JSON.stringify(s.events)) as Record<string, unknown>[];
}

describe('Session.create with a seed', () => {
  it('copies and validates the seed, then marks its end', () => {
    const seed = seedEvents();
    const s = Session.create({ id: 'child', seed, clock: fixedClock(T0 + 1000) });
    expect(s.length).toBe(27);
    expect(s.firstLiveSeq).toBe(26);
    expect(s.events.slice(0, 26)).toEqual(seed);
    expect(s.events[0]).not.toBe(seed[0]);
    expect(Object.isFrozen(seed[0])).toBe(false);
    const marker = s.events[26]!;
    expect(marker).toEqual({ type: 'session/end-seed', seq: 26, time: T0 + 1001, data: {} });
    // The seed's trace carries on: the next turn is 3.
    expect(s.trace).toEqual({ openTurn: undefined, openStep: undefined, lastTurn: 2, lastStep: 2 });
    expectRefused(s, () => s.append('turn/start', { turn: 1 }), 'TRACE_VIOLATION');
    expect(s.append('turn/start', { turn: 3 }).seq).toBe(27);
    // Mutating the caller's seed afterwards changes nothing.
    (seed[0]!.data as { turn: number }).turn = 42;
    expect((s.events[0]!.data as { turn: number }).turn).toBe(1);
  });
  it('derives the same history as the original', () => {
    const orig = newSession();
    fullTurn(orig, 1);
    openStep(orig, 2);
    orig.append('user/message', userMsg('sum'), { surfaceOp: { op: 'replace', start: 2, end: 7 }, sourceEventSeqs: [2, 5, 7] });
    const s = Session.create({ seed: JSON.parse(JSON.stringify(orig.events)) as unknown[] });
    expect(s.deriveMessages().toArray()).toEqual(orig.deriveMessages().toArray());
    expect(s.surface.nodes).toEqual(orig.surface.nodes);
    expect(s.surface.replaceGeneration).toBe(1);
  });
  it('does not add a second marker when the seed already ends with one', () => {
    const seed = [...seedEvents(), { type: 'session/end-seed', seq: 26, time: T0, data: {} }];
    const s = Session.create({ seed });
    expect(s.length).toBe(27);
    expect(s.firstLiveSeq).toBe(27);
    expect(s.events.filter((e) => e.type === 'session/end-seed').length).toBe(1);
  });
  it('an explicitly empty seed gets the marker at seq 0', () => {
    const s = Session.create({ seed: [], clock: fixedClock() });
    expect(s.events).toEqual([{ type: 'session/end-seed', seq: 0, time: T0 + 1, data: {} }]);
    expect(s.firstLiveSeq).toBe(0);
  });
  it('a fresh session has no marker', () => {
    const s = Session.create();
    expect(s.length).toBe(0);
    expect(s.firstLiveSeq).toBe(0);
  });
  it('the marker is written before anyone can subscribe, so it is never published', () => {
    const seen: unknown[] = [];
    const s = Session.create({ seed: seedEvents() });
    s.subscribe((e) => {
      seen.push(e.type);
    });
    s.append('turn/start', { turn: 3 });
    expect(seen).toEqual(['turn/start']);
  });
  it('a seed ending inside an open turn is accepted; the marker sits in it', () => {
    const seed = seedEvents().slice(0, 8); // turn 1 open, step 1 open, call answered
    const s = Session.create({ seed });
    expect(s.events[8]!.type).toBe('session/end-seed');
    expect(s.trace.openStep).toBe(1);
  });

  const broken: [string, (seed: Record<string, unknown>[]) => unknown[], SessionErrorCode, number, string][] = [
    ['a seq gap', (e) => [...e.slice(0, 3), ...e.slice(4)], 'SEQ_GAP', 3, 'seq-contiguity'],
    ['a repeated seq', (e) => [...e.slice(0, 4), e[3]!], 'SEQ_GAP', 4, 'seq-contiguity'],
    ['an unknown envelope key', (e) => ((e[2]!.note = 'x'), e), 'INVALID_EVENT', 2, 'envelope'],
    ['a fractional time', (e) => ((e[5]!.time = 1.5), e), 'INVALID_EVENT', 5, 'envelope'],
    ['non-JSON data', (e) => (((e[3]!.data as Record<string, unknown>).x = NaN), e), 'NON_JSON', 3, 'lossless-json'],
    ['a malformed payload', (e) => (((e[2]!.data as Record<string, unknown>).role = 'assistant'), e), 'INVALID_EVENT', 2, 'event-shape'],
    ['a missing surfaceOp', (e) => (delete e[2]!.surfaceOp, e), 'SURFACE_OP_REQUIRED', 2, 'surface-op'],
    ['a surfaceOp on a chunk', (e) => ((e[3]!.surfaceOp = 'append'), e), 'SURFACE_OP_FORBIDDEN', 3, 'surface-op'],
    ['a forward source seq', (e) => ((e[5]!.sourceEventSeqs = [3, 9]), e), 'INVALID_SOURCE_SEQS', 5, 'source-seqs'],
    [
      'a bad replace',
      (e) => [
        ...e,
        { type: 'turn/start', seq: 26, time: 0, data: { turn: 3 } },
        {
          type: 'user/message',
          seq: 27,
          time: 0,
          data: userMsg('x'),
          surfaceOp: { op: 'replace', start: 3, end: 5 },
          sourceEventSeqs: [3, 5],
        },
      ],
      'INVALID_REPLACE',
      27,
      'replace-range',
    ],
    ['a turn numbering error', (e) => (((e[13]!.data as Record<string, unknown>).turn = 3), e), 'TRACE_VIOLATION', 13, 'turn-numbering'],
    [
      'a turn opened twice',
      (e) => [...e.slice(0, 13), { type: 'turn/start', seq: 13, time: 0, data: { turn: 1 } }],
      'TRACE_VIOLATION',
      13,
      'turn-numbering',
    ],
    [
      'a result without its call',
      (e) => [...e.slice(0, 6), { ...e[7]!, seq: 6, sourceEventSeqs: [5] }],
      'TRACE_VIOLATION',
      6,
      'tool-result-pairing',
    ],
    [
      'legacy vocabulary',
      (e) => [...e.slice(0, 2), { type: 'request/header-delta', seq: 2, time: 0, data: {} }],
      'LEGACY_VOCABULARY',
      2,
      'legacy-vocabulary',
    ],
    ['not an event', (e) => [...e.slice(0, 2), 'turn/end'], 'INVALID_EVENT', 2, 'envelope'],
  ];
  for (const [name, spoil, code, seq, rule] of broken) {
    it(`refuses ${name}, naming seq ${seq} and the rule`, () => {
      const err = expectSessionError(() => Session.create({ seed: spoil(seedEvents()) }), code);
      expect(err.details.seq).toBe(seq);
      expect(err.details.rule).toBe(rule);
      expect(err.message).toMatch(/^seed /);
      expect(err.message).toMatch(new RegExp(`(seq|index) ${seq}\\b`));
    });
  }
});

describe('Session.restore', () => {
  it('takes ownership: validates and freezes the very objects, and marks the seed end', () => {
    const events = seedEvents();
    const s = Session.restore({ version: 0, id: 'r', createdAt: 5, cwd: '/tmp/x', delegationDepth: 0 }, events, { clock: fixedClock() });
    expect(s.id).toBe('r');
    expect(s.header).toEqual({ version: 0, id: 'r', createdAt: 5, cwd: '/tmp/x', delegationDepth: 0 });
    expect(s.events[4]).toBe(events[4]);
    expect(Object.isFrozen(events[4]!.data)).toBe(true);
    expect(s.length).toBe(27);
    expect(s.firstLiveSeq).toBe(26);
  });
  it('an empty restore also gets the marker', () => {
    const s = Session.restore({ version: 0, id: 'r', createdAt: 0 }, []);
    expect(s.events.map((e) => e.type)).toEqual(['session/end-seed']);
  });
  it('refuses a bad header', () => {
    for (const h of [
      { version: 1, id: 'r', createdAt: 0 },
      { version: 0, id: '', createdAt: 0 },
      { version: 0, id: 'r', createdAt: -1 },
      { version: 0, id: 'r', createdAt: 0, cwd: 'rel/path' },
      { version: 0, id: 'r', createdAt: 0, extra: 1 },
      null,
    ]) {
      expectSessionError(() => Session.restore(h, []), 'INVALID_HEADER');
    }
  });
  it('refuses a bad event with its seq', () => {
    const events = seedEvents();
    events[9]!.seq = 10;
    const err = expectSessionError(() => Session.restore({ version: 0, id: 'r', createdAt: 0 }, events), 'SEQ_GAP');
    expect(err.details.seq).toBe(9);
  });
});

describe('fork', () => {
  /** Parent: turn 1 (0-12), a plugin event (13), turn 2 (14-26), turn 3 open (27-29). */
  function parent() {
    const s = Session.create({ id: 'parent', header: { cwd: '/work/repo', delegationDepth: 1 }, clock: fixedClock() });
    fullTurn(s, 1);
    s.append('session/title', { title: 'x' });
    fullTurn(s, 2);
    openStep(s, 3);
    s.append('user/message', userMsg('u3'), { surfaceOp: 'append' });
    return s;
  }
  it('takes the prefix through the boundary, inclusive, and marks the seed end', () => {
    const p = parent();
    const c = p.fork(12, { id: 'child' });
    expect(c.length).toBe(14);
    expect(c.events.slice(0, 13)).toEqual(p.events.slice(0, 13));
    expect(c.events[13]!.type).toBe('session/end-seed');
    expect(c.firstLiveSeq).toBe(13);
    expect(c.deriveMessages().toArray()).toEqual(deriveMessagesFrom(p.events, 12));
  });
  it('records its parent, seed length and inherited cwd and depth in the child header', () => {
    const p = parent();
    const c = p.fork(13, { id: 'child' });
    expect(c.header).toMatchObject({
      version: 0,
      id: 'child',
      parentSession: 'parent',
      seedLength: 14,
      cwd: '/work/repo',
      delegationDepth: 1,
    });
    const c2 = p.fork(13, { id: 'child2', header: { cwd: '/elsewhere' } });
    expect(c2.header.cwd).toBe('/elsewhere');
    const grandchild = c.fork(undefined, { id: 'g' });
    expect(grandchild.header).toMatchObject({ parentSession: 'child', seedLength: 15 });
  });
  it('any between-turn seq is a valid cut', () => {
    const p = parent();
    expect(p.fork(13).length).toBe(15);
    expect(p.fork(26).length).toBe(28);
  });
  it('refuses a boundary inside a turn with OPEN_TURN', () => {
    const p = parent();
    for (const b of [0, 1, 5, 11, 14, 20, 27, 29]) {
      const err = expectSessionError(() => p.fork(b), 'OPEN_TURN');
      expect(err.details).toMatchObject({ seq: b, rule: 'fork-boundary' });
      expect(err.message).toMatch(/is still open/);
    }
    // The default boundary is the last event, here inside turn 3.
    expect(expectSessionError(() => p.fork(), 'OPEN_TURN').message).toContain('turn 3 (opened at seq 27)');
  });
  it('refuses a boundary that is not a seq of the session with INVALID_BOUNDARY', () => {
    const p = parent();
    for (const b of [-1, 30, 1.5, NaN, Infinity, '3' as unknown as number]) {
      const err = expectSessionError(() => p.fork(b), 'INVALID_BOUNDARY');
      expect(err.details.rule).toBe('fork-boundary');
    }
    expectSessionError(() => Session.create().fork(0), 'INVALID_BOUNDARY');
  });
  it('an empty session forks an empty child (with only the marker)', () => {
    const c = Session.create({ id: 'p' }).fork();
    expect(c.events.map((e) => e.type)).toEqual(['session/end-seed']);
    expect(c.header).toMatchObject({ parentSession: 'p', seedLength: 0 });
  });
  it('turn numbering continues in the child, and the child never affects the parent', () => {
    const p = parent();
    const before = JSON.stringify({ e: p.events, m: p.deriveMessages().toArray(), n: p.surface });
    const c = p.fork(26);
    expectRefused(c, () => c.append('turn/start', { turn: 1 }), 'TRACE_VIOLATION');
    fullTurn(c, 3);
    c.append('user/message', userMsg('s'), { surfaceOp: { op: 'replace', start: 2, end: 5 }, sourceEventSeqs: [2, 5] });
    expect(c.surface.replaceGeneration).toBe(1);
    expect(JSON.stringify({ e: p.events, m: p.deriveMessages().toArray(), n: p.surface })).toBe(before);
    expect(p.length).toBe(30);
    closeTurn(p, 3, 1);
    expect(c.length).toBe(28 + 13 + 1);
  });
  it('does not inherit listeners or pre-commit checks', () => {
    const p = parent();
    const seen: number[] = [];
    p.subscribe((e) => {
      seen.push(e.seq);
    });
    p.addPreCommitCheck(() => {
      throw new Error('parent only');
    });
    const c = p.fork(13);
    c.append('turn/start', { turn: 2 });
    expect(seen).toEqual([]);
  });
});

describe('seed, restore and fork arguments of the wrong kind', () => {
  it('a seed or restore list that is not an array is INVALID_EVENT saying so (a string is not walked character by character)', () => {
    for (const [what, run] of [
      ['seed', () => Session.create({ id: 's', header: { cwd: '/w' }, seed: 'abc' as never })],
      ['events', () => Session.restore({ version: 0, id: 's', createdAt: 1, delegationDepth: 0 }, null as never)],
    ] as const) {
      const err = expectSessionError(run, 'INVALID_EVENT');
      expect(err.message).toBe(`${what} must be an array of events, got ${what === 'seed' ? 'string' : 'null'}`);
    }
  });
  it('a fork boundary that is not a number says what it was', () => {
    const s = newSession();
    fullTurn(s, 1);
    const err = expectSessionError(() => s.fork('0' as never), 'INVALID_BOUNDARY');
    expect(err.message).toBe(`fork boundary "0" (a string, not a number) is not a seq of this session (0…${s.length - 1})`);
    expect(err.details.seq).toBeUndefined();
  });
});
