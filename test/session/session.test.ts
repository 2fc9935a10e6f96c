/**
 * `Session.append` and the log's public surface (issue 2 item 3): seq and time,
 * envelope options, legacy vocabulary, reentrancy, deep freeze, the `events` snapshot, subscribers.
 */
import { describe, expect, it, vi } from 'vitest';
import { Session, SessionError, type SessionEvent } from '../../src/session/index.js';
import {
  T0,
  assistantMsg,
  closeTurn,
  rawAppend,
  expectRefused,
  fixedClock,
  fullTurn,
  newSession,
  observe,
  openStep,
  toolResultMsg,
  userMsg,
} from './helpers.js';

describe('seq and time', () => {
  it('seq is the log length, contiguous from 0, and time comes from the clock', () => {
    const s = Session.create({ id: 's', clock: fixedClock(T0, 10) });
    // The header's createdAt took the first tick.
    expect(s.header.createdAt).toBe(T0);
    const a = s.append('turn/start', { turn: 1 });
    const b = s.append('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [] });
    const c = s.append('step/start', { turn: 1, step: 1 });
    expect([a.seq, b.seq, c.seq]).toEqual([0, 1, 2]);
    expect([a.time, b.time, c.time]).toEqual([T0 + 10, T0 + 20, T0 + 30]);
    expect(s.seq).toBe(3);
    expect(s.length).toBe(3);
  });
  it('a refused append does not consume a seq', () => {
    const s = newSession();
    s.append('turn/start', { turn: 1 });
    expectRefused(s, () => s.append('turn/start', { turn: 2 }), 'TRACE_VIOLATION');
    expect(s.append('step/start', { turn: 1, step: 1 }).seq).toBe(1);
  });
  it('the default clock is Date.now', () => {
    const before = Date.now();
    const s = Session.create();
    const e = s.append('turn/start', { turn: 1 });
    expect(e.time).toBeGreaterThanOrEqual(before);
    expect(e.time).toBeLessThanOrEqual(Date.now());
  });
  it('time is not required to be monotonic (a wall clock may step back)', () => {
    const times = [T0, T0 + 100, T0 + 50];
    const s = Session.create({ clock: () => times.shift() ?? T0 });
    s.append('turn/start', { turn: 1 });
    expect(s.append('step/start', { turn: 1, step: 1 }).time).toBe(T0 + 50);
  });
  it('a clock that returns a non-integer is refused and changes nothing', () => {
    for (const bad of [1.5, NaN, Infinity, '1' as unknown as number]) {
      let t: number = T0;
      let broken = false;
      const s = Session.create({ clock: () => (broken ? bad : t++) });
      s.append('turn/start', { turn: 1 });
      broken = true;
      const err = expectRefused(s, () => s.append('step/start', { turn: 1, step: 1 }), 'INVALID_EVENT');
      expect(err.details).toMatchObject({ eventType: 'step/start', seq: 1, rule: 'envelope' });
    }
  });
});

describe('envelope options', () => {
  it('the event carries exactly type, seq, time, data (+ surface fields / ignorable when given)', () => {
    const s = newSession();
    const e = s.append('turn/start', { turn: 1 });
    expect(Object.keys(e)).toEqual(['type', 'seq', 'time', 'data']);
    const p = s.append('feedback/record', { text: 'hi' }, { ignorable: true });
    expect(Object.keys(p)).toEqual(['type', 'seq', 'time', 'data', 'ignorable']);
    expect(p.ignorable).toBe(true);
    s.append('step/start', { turn: 1, step: 1 });
    const u = s.append('user/message', userMsg('u'), { surfaceOp: 'append', sourceEventSeqs: [0] });
    expect(JSON.stringify(u)).toBe(
      `{"type":"user/message","seq":3,"time":${T0 + 4},"data":{"id":"u","role":"user","content":[{"type":"text","text":"text of ` +
        'u"}],"source":{"kind":"user"}},"surfaceOp":"append","sourceEventSeqs":[0]}',
    );
  });
  it('ignorable must be true when given', () => {
    const s = newSession();
    const err = expectRefused(s, () => s.append('feedback/record', { text: 'x' }, { ignorable: false as never }), 'INVALID_EVENT');
    expect(err.details).toMatchObject({ eventType: 'feedback/record', seq: 0, rule: 'envelope' });
  });
  it('the type must be a non-empty string', () => {
    const s = newSession();
    expectRefused(s, () => rawAppend(s, '', {}), 'INVALID_EVENT');
    expectRefused(s, () => rawAppend(s, 42, {}), 'INVALID_EVENT');
  });
  it('a plugin type outside the built-in vocabulary is logged as opaque JSON', () => {
    const s = newSession();
    const e = rawAppend(s, 'my/plugin-event', { any: ['json'] });
    expect(e.type).toBe('my/plugin-event');
    expect(s.deriveMessages().toArray()).toEqual([]);
  });
});

describe('legacy vocabulary is refused at the source', () => {
  it('request/header-delta', () => {
    const s = newSession();
    openStep(s, 1);
    const err = expectRefused(s, () => rawAppend(s, 'request/header-delta', { delta: {} }), 'LEGACY_VOCABULARY');
    expect(err.details).toMatchObject({ eventType: 'request/header-delta', seq: 2, rule: 'legacy-vocabulary' });
    expect(err.message).toContain('request/header-delta');
  });
  it('request/header with reason "fallback"', () => {
    const s = newSession();
    openStep(s, 1);
    const err = expectRefused(
      s,
      () => s.append('request/header', { header: { config: { provider: 'p', model: 'm' } }, reason: 'fallback' as never }),
      'LEGACY_VOCABULARY',
    );
    expect(err.details).toMatchObject({ path: '$.data.reason', rule: 'legacy-vocabulary' });
  });
  it('steering/message (a reload would turn it into a user/message and change the history)', () => {
    const s = newSession();
    openStep(s, 1);
    const err = expectRefused(s, () => rawAppend(s, 'steering/message', { role: 'user', content: [] }), 'LEGACY_VOCABULARY');
    expect(err.details.eventType).toBe('steering/message');
  });
  it('a turn/start trigger (a reload would drop it)', () => {
    const s = newSession();
    const err = expectRefused(s, () => s.append('turn/start', { turn: 1, trigger: { kind: 'user' } } as never), 'LEGACY_VOCABULARY');
    expect(err.details).toMatchObject({ path: '$.data.trigger', rule: 'legacy-vocabulary' });
  });
});

describe('reentrancy', () => {
  it('an append from a session/event listener is refused; the outer append stands', () => {
    const errors: unknown[] = [];
    const s = Session.create({ clock: fixedClock(), onListenerError: (e) => errors.push(e) });
    let inner: unknown;
    s.subscribe((e) => {
      if (e.type === 'turn/start') {
        try {
          s.append('step/start', { turn: 1, step: 1 });
        } catch (err) {
          inner = err;
          throw err;
        }
      }
    });
    const e = s.append('turn/start', { turn: 1 });
    expect(inner).toBeInstanceOf(SessionError);
    expect((inner as SessionError).code).toBe('REENTRANT_APPEND');
    expect((inner as SessionError).details).toMatchObject({ eventType: 'step/start', seq: 1, rule: 'reentrancy' });
    expect(errors).toEqual([inner]);
    expect(s.events).toEqual([e]);
    // Once publishing is over, appending works again.
    expect(s.append('step/start', { turn: 1, step: 1 }).seq).toBe(1);
  });
  it('an append from a pre-commit check is refused and vetoes the outer append', () => {
    const s = newSession();
    s.append('turn/start', { turn: 1 });
    let inner: unknown;
    s.addPreCommitCheck(() => {
      try {
        s.append('feedback/record', { text: 'sneaky' });
      } catch (err) {
        inner = err;
        throw err;
      }
    });
    expectRefused(s, () => s.append('step/start', { turn: 1, step: 1 }), 'REENTRANT_APPEND');
    expect((inner as SessionError).code).toBe('REENTRANT_APPEND');
    expect(s.length).toBe(1);
  });
  it('an append from a getter inside the data is refused', () => {
    const s = newSession();
    const data = {
      get text() {
        s.append('turn/start', { turn: 1 });
        return 'x';
      },
    };
    expectRefused(s, () => s.append('feedback/record', data as never), 'REENTRANT_APPEND');
    expect(s.length).toBe(0);
    expect(s.append('turn/start', { turn: 1 }).seq).toBe(0);
  });
});

describe('deep freeze', () => {
  it('a logged event is frozen all the way down; mutation throws in strict mode', () => {
    const s = newSession();
    fullTurn(s, 1);
    const e = s.events.find((x) => x.type === 'tool/result') as SessionEvent<'tool/result'>;
    expect(() => {
      (e as { seq: number }).seq = 99;
    }).toThrow(TypeError);
    expect(() => {
      (e.data as { turn: number }).turn = 5;
    }).toThrow(TypeError);
    expect(() => {
      (e.data.message.content as unknown[]).push({});
    }).toThrow(TypeError);
    expect(() => {
      (e.data.message.content[0].content[0] as { text: string }).text = 'changed';
    }).toThrow(TypeError);
    expect(() => {
      (e.sourceEventSeqs as number[])[0] = 0;
    }).toThrow(TypeError);
    expect(() => {
      delete (e.data.message.source as { callId?: string }).callId;
    }).toThrow(TypeError);
    const a = s.events.find((x) => x.type === 'assistant/message' && x.surfaceOp !== 'append') ?? s.events[3]!;
    expect(Object.isFrozen(a)).toBe(true);
  });
  it('a replace surfaceOp is frozen too', () => {
    const s = newSession();
    const t = fullTurn(s, 1);
    openStep(s, 2);
    const r = s.append('user/message', userMsg('sum'), {
      surfaceOp: { op: 'replace', start: t.user, end: t.a2 },
      sourceEventSeqs: [t.user, t.a1, t.result, t.a2],
    });
    expect(() => {
      (r.surfaceOp as { start: number }).start = 0;
    }).toThrow(TypeError);
  });
  it('the returned event is the logged one', () => {
    const s = newSession();
    const e = s.append('turn/start', { turn: 1 });
    expect(s.at(0)).toBe(e);
    expect(s.events[0]).toBe(e);
  });
  it('derived messages are frozen, and so is the array', () => {
    const s = newSession();
    fullTurn(s, 1);
    const history = s.deriveMessages();
    expect(Object.isFrozen(history)).toBe(true);
    expect(() => {
      (history as unknown as { length: number }).length = 0;
    }).toThrow(TypeError);
    expect(() => {
      (history.at(0)!.content as unknown[]).length = 0;
    }).toThrow(TypeError);
    expect(history.length).toBe(4);
  });
});

describe('the events snapshot', () => {
  it('is frozen and reused until the next append', () => {
    const s = newSession();
    s.append('turn/start', { turn: 1 });
    const a = s.events;
    expect(Object.isFrozen(a)).toBe(true);
    expect(s.events).toBe(a);
    expect(() => (a as SessionEvent[]).push(a[0]!)).toThrow(TypeError);
    s.append('step/start', { turn: 1, step: 1 });
    const b = s.events;
    expect(b).not.toBe(a);
    expect(a.length).toBe(1);
    expect(b.length).toBe(2);
    expect(b[0]).toBe(a[0]);
  });
  it('a refused append keeps the same snapshot', () => {
    const s = newSession();
    s.append('turn/start', { turn: 1 });
    const a = s.events;
    expectRefused(s, () => s.append('turn/end', { turn: 2, reason: { kind: 'completed' } }), 'TRACE_VIOLATION');
    expect(s.events).toBe(a);
  });
  it('since() yields the suffix without copying the log', () => {
    const s = newSession();
    fullTurn(s, 1);
    expect([...s.since(10)].map((e) => e.seq)).toEqual([10, 11, 12]);
    expect([...s.since(-5)].length).toBe(13);
    expect([...s.since(13)]).toEqual([]);
  });
});

describe('subscribers', () => {
  it('get each committed event once, in order; refused events are not published', () => {
    const s = newSession();
    const seen: number[] = [];
    s.subscribe((e) => {
      seen.push(e.seq);
    });
    s.append('turn/start', { turn: 1 });
    expect(() => s.append('turn/start', { turn: 2 })).toThrow(SessionError);
    s.append('step/start', { turn: 1, step: 1 });
    expect(seen).toEqual([0, 1]);
  });
  it('receive the frozen logged event itself', () => {
    const s = newSession();
    let got: SessionEvent | undefined;
    s.subscribe((e) => {
      got = e;
    });
    const e = s.append('turn/start', { turn: 1 });
    expect(got).toBe(e);
  });
  it('a throwing subscriber neither undoes the append nor stops the others', () => {
    const errors: [unknown, number][] = [];
    const s = Session.create({ clock: fixedClock(), onListenerError: (err, ev) => errors.push([err, ev.seq]) });
    const calls: string[] = [];
    const boom = new Error('boom');
    s.subscribe(() => {
      calls.push('first');
    });
    s.subscribe(() => {
      calls.push('thrower');
      throw boom;
    });
    s.subscribe(() => {
      calls.push('last');
    });
    const e = s.append('turn/start', { turn: 1 });
    expect(calls).toEqual(['first', 'thrower', 'last']);
    expect(s.events).toEqual([e]);
    expect(errors).toEqual([[boom, 0]]);
  });
  it('an async subscriber that rejects is contained and reported', async () => {
    const errors: unknown[] = [];
    const s = Session.create({ clock: fixedClock(), onListenerError: (err) => errors.push(err) });
    const later: number[] = [];
    s.subscribe(async () => {
      await Promise.resolve();
      throw new Error('async boom');
    });
    s.subscribe((e) => {
      later.push(e.seq);
    });
    s.append('turn/start', { turn: 1 });
    s.append('step/start', { turn: 1, step: 1 });
    await new Promise((r) => setTimeout(r, 0));
    expect(later).toEqual([0, 1]);
    expect(errors.map((e) => (e as Error).message)).toEqual(['async boom', 'async boom']);
    expect(s.length).toBe(2);
  });
  it('the default error sink is stderr, and the append still stands', () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const s = Session.create({ clock: fixedClock() });
      s.subscribe(() => {
        throw new Error('x');
      });
      s.append('turn/start', { turn: 1 });
      expect(spy).toHaveBeenCalledTimes(1);
      expect(String(spy.mock.calls[0]![0])).toContain('turn/start #0');
      expect(s.length).toBe(1);
    } finally {
      spy.mockRestore();
    }
  });
  it('the listener list is taken before publishing; unsubscribe stops later deliveries', () => {
    const s = newSession();
    const seen: string[] = [];
    let off2: () => void = () => {};
    s.subscribe((e) => {
      seen.push(`a${e.seq}`);
      if (e.seq === 0) {
        off2();
        s.subscribe((x) => {
          seen.push(`c${x.seq}`);
        });
      }
    });
    off2 = s.subscribe((e) => {
      seen.push(`b${e.seq}`);
    });
    s.append('turn/start', { turn: 1 });
    s.append('step/start', { turn: 1, step: 1 });
    expect(seen).toEqual(['a0', 'b0', 'a1', 'c1']);
  });
  it('a pre-commit check can veto; the log is untouched and nothing is published', () => {
    const s = newSession();
    const seen: number[] = [];
    s.subscribe((e) => {
      seen.push(e.seq);
    });
    s.append('turn/start', { turn: 1 });
    const off = s.addPreCommitCheck((c) => {
      if (c.type === 'step/start') throw new SessionError('TRACE_VIOLATION', 'vetoed', { seq: c.seq, rule: 'companion' });
    });
    expectRefused(s, () => s.append('step/start', { turn: 1, step: 1 }), 'TRACE_VIOLATION');
    expect(seen).toEqual([0]);
    off();
    s.append('step/start', { turn: 1, step: 1 });
    expect(seen).toEqual([0, 1]);
  });
  it('a pre-commit check sees the candidate with its final seq and time', () => {
    const s = newSession();
    const seen: unknown[] = [];
    s.addPreCommitCheck((c) => seen.push({ type: c.type, seq: c.seq, time: c.time }));
    s.append('turn/start', { turn: 1 });
    expect(seen).toEqual([{ type: 'turn/start', seq: 0, time: T0 + 1 }]);
  });
});

describe('request header and context folds', () => {
  it('the latest request/header wins, in canonical form, frozen', () => {
    const s = newSession();
    expect(s.requestHeader()).toBeUndefined();
    expect(s.requestContext()).toBeUndefined();
    openStep(s, 1);
    s.append('request/header', { header: { config: { provider: 'p', model: 'm1' }, system: '', tools: [] }, reason: 'initial' });
    expect(s.requestHeader()).toEqual({ config: { provider: 'p', model: 'm1' } });
    s.append('request/context', { provider: 'p', model: 'm1', contextWindow: 1000 });
    s.append('request/header', { header: { config: { provider: 'p', model: 'm2' }, system: 'be brief' }, reason: 'change' });
    const h = s.requestHeader()!;
    expect(h).toEqual({ config: { provider: 'p', model: 'm2' }, system: 'be brief' });
    expect(Object.isFrozen(h)).toBe(true);
    expect(s.requestHeader()).toBe(h);
    expect(s.requestContext()).toEqual({ provider: 'p', model: 'm1', contextWindow: 1000 });
  });
});

describe('a refused append leaves everything untouched', () => {
  it('across a full session with replaces, for refusals of every kind', () => {
    const s = newSession();
    const t = fullTurn(s, 1);
    openStep(s, 2);
    s.append('user/message', userMsg('sum'), { surfaceOp: { op: 'replace', start: t.user, end: t.a1 }, sourceEventSeqs: [t.user, t.a1] });
    const before = observe(s);
    expectRefused(s, () => s.append('feedback/record', { x: NaN } as never), 'NON_JSON');
    expectRefused(
      s,
      () => s.append('user/message', { ...userMsg('x'), role: 'assistant' } as never, { surfaceOp: 'append' }),
      'INVALID_EVENT',
    );
    expectRefused(s, () => s.append('user/message', userMsg('x'), {} as never), 'SURFACE_OP_REQUIRED');
    expectRefused(s, () => s.append('step/end', { turn: 2, step: 1 }, { surfaceOp: 'append' } as never), 'SURFACE_OP_FORBIDDEN');
    expectRefused(s, () => s.append('user/message', userMsg('x'), { surfaceOp: 'append', sourceEventSeqs: [99] }), 'INVALID_SOURCE_SEQS');
    expectRefused(
      s,
      () => s.append('user/message', userMsg('x'), { surfaceOp: { op: 'replace', start: t.user, end: t.user }, sourceEventSeqs: [t.user] }),
      'INVALID_REPLACE',
    );
    expectRefused(s, () => s.append('turn/end', { turn: 2, reason: { kind: 'completed' } }), 'TRACE_VIOLATION');
    expectRefused(
      s,
      () => s.append('tool/result', { turn: 2, step: 1, message: toolResultMsg('r', 'nope') }, { surfaceOp: 'append' }),
      'TRACE_VIOLATION',
    );
    expectRefused(
      s,
      () => s.append('assistant/message', { turn: 2, step: 1, message: assistantMsg('x') }, { surfaceOp: { op: 'splice' } as never }),
      'INVALID_SURFACE_OP',
    );
    expect(observe(s)).toBe(before);
    closeTurn(s, 2, 1);
    expect(s.trace.openTurn).toBeUndefined();
  });
});

describe('after a refusal the next append lands at its seq', () => {
  it('for a refusal by every layer (value, data, surface, trace, pre-commit check): the log holds exactly what was committed', () => {
    const s = newSession();
    openStep(s, 1);
    let veto = false;
    s.addPreCommitCheck(() => {
      if (veto) throw new Error('vetoed');
    });
    const refusals: (() => unknown)[] = [
      () => s.append('feedback/record', { x: NaN } as never),
      () => s.append('user/message', { ...userMsg('x'), role: 'assistant' } as never, { surfaceOp: 'append' }),
      () => s.append('user/message', userMsg('x'), { surfaceOp: 'append', sourceEventSeqs: [99] }),
      () => s.append('turn/end', { turn: 1, reason: { kind: 'completed' } }),
      () => {
        veto = true;
        try {
          return s.append('feedback/record', { ok: 1 });
        } finally {
          veto = false;
        }
      },
    ];
    for (const refuse of refusals) {
      const seq = s.length;
      expect(refuse).toThrow();
      const e = s.append('feedback/record', { after: seq });
      expect(e.seq).toBe(seq);
      expect(s.at(seq)).toBe(e);
      expect(s.events[seq]).toBe(e);
      expect(s.events).toHaveLength(seq + 1);
      expect([...s.since(seq)]).toEqual([e]);
    }
  });
});

describe('values that throw while being read', () => {
  it('a getter that throws and a revoked Proxy are NON_JSON with their path, not a raw error; the log is untouched', () => {
    const s = newSession();
    const getter = expectRefused(
      s,
      () =>
        rawAppend(s, 'feedback/record', {
          a: {
            get b(): number {
              throw new Error('boom');
            },
          },
        }),
      'NON_JSON',
    );
    expect(getter.details.path).toBe('$.data.a.b');
    expect(getter.message).toContain('reading it threw (Error: boom)');
    const r = Proxy.revocable({}, {});
    r.revoke();
    const revoked = expectRefused(s, () => rawAppend(s, 'feedback/record', { a: [1, r.proxy] }), 'NON_JSON');
    expect(revoked.details.path).toBe('$.data.a[1]');
    expect(revoked.message).toMatch(/reading it threw \(TypeError: .*revoked/);
  });
});

describe('names the JSONL format reserves', () => {
  it('the header and packed-row tags are refused as event types at append and at seed (they could not be read back)', () => {
    for (const type of ['session', 'text-chunks', 'reasoning-chunks', 'tool-call-chunks']) {
      const s = newSession();
      const err = expectRefused(s, () => rawAppend(s, type, { a: 1 }), 'INVALID_EVENT');
      expect(err.details).toMatchObject({ rule: 'reserved-type', eventType: type });
      expect(err.message).toContain(`event types take a namespace, e.g. "myplugin/${type}"`);
      let seedErr: unknown;
      try {
        Session.create({ id: 's', header: { cwd: '/w' }, seed: [{ type, seq: 0, time: T0, data: {} }] as never });
      } catch (e) {
        seedErr = e;
      }
      expect(seedErr).toBeInstanceOf(SessionError);
      expect((seedErr as SessionError).details.rule).toBe('reserved-type');
    }
    // A slash-less type that is not reserved stays a plugin's business.
    expect(rawAppend(newSession(), 'metrics', { a: 1 }).type).toBe('metrics');
  });

  it('append options that are not an object are INVALID_EVENT, not a TypeError', () => {
    const s = newSession();
    for (const bad of [null, 'append', 3, ['append']]) {
      const err = expectRefused(s, () => rawAppend(s, 'feedback/record', {}, bad), 'INVALID_EVENT');
      expect(err.message).toContain('append options must be an object');
    }
  });
});
