/**
 * `eventsOfType` and `lastOfType`: the reads resume's start-up uses to find the few events it
 * needs (inbox splices, plugin messages, request headers, compaction markers) in a loaded log.
 * They must answer exactly what a filter over `since()` answers, on live logs and on loaded
 * ones whose chunks are stored as compact runs, and they must not materialise a run unless
 * chunks are asked for (a resumed million-event log would otherwise build every chunk again).
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { encodeJsonl, loadJsonl, type Session, type SessionEvent, type SessionEventType } from '../../src/session/index.js';
import { ChunkRun } from '../../src/session/chunk-runs.js';
import { Inbox } from '../../src/agent/inbox.js';
import { lastSnapshot, RUNTIME_CONTEXT_PLUGIN } from '../../src/coding/context.js';
import { newSession, closeTurn, openStep, userMsg, assistantMsg } from './helpers.js';

const TYPES: SessionEventType[] = [
  'agent/inbox/spliced',
  'user/message',
  'assistant/chunk',
  'assistant/message',
  'turn/start',
  'step/end',
  'request/header',
];

/** `turns` turns, each with an inbox splice, a prompt (every other one a runtime-context snapshot), `deltas` text deltas and the answer. */
function build(turns: number, deltas: number): Session {
  const s = newSession();
  for (let t = 1; t <= turns; t++) {
    s.append('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [userMsg(`q${t}`)] });
    openStep(s, t, 1);
    s.append('agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: 1, inserted: [] });
    s.append('user/message', userMsg(`u${t}`), { surfaceOp: 'append' });
    if (t % 2 === 0) {
      s.append(
        'user/message',
        {
          id: `ctx${t}`,
          role: 'user',
          content: [{ type: 'text', text: `context ${t}` }],
          source: { kind: 'plugin', plugin: RUNTIME_CONTEXT_PLUGIN, form: 'snapshot', sections: [{ name: 'turn', text: String(t) }] },
        },
        { surfaceOp: 'append' },
      );
    }
    const seqs: number[] = [];
    for (let d = 0; d < deltas; d++)
      seqs.push(s.append('assistant/chunk', { turn: t, step: 1, chunk: { type: 'text-delta', index: 0, text: `d${d} ` } }).seq);
    s.append(
      'assistant/message',
      { turn: t, step: 1, message: assistantMsg(`a${t}`), usage: { inputTokens: 1, outputTokens: 1 } },
      { surfaceOp: 'append', sourceEventSeqs: seqs },
    );
    closeTurn(s, t, 1);
  }
  return s;
}

function loaded(s: Session, pack: boolean): Session {
  return loadJsonl(encodeJsonl({ ...s.header, type: undefined } as never, s.events, { pack })).session;
}

const filtered = (s: Session, types: readonly string[], from: number): SessionEvent[] =>
  [...s.since(from)].filter((e) => types.includes(e.type));

afterEach(() => vi.restoreAllMocks());

describe('eventsOfType and lastOfType', () => {
  const live = build(6, 5);
  const logs: [string, Session][] = [
    ['live', live],
    ['loaded, packed', loaded(live, true)],
    ['loaded, one event per line', loaded(live, false)],
  ];

  it('the loaded logs do hold chunk runs (else the rest proves nothing)', () => {
    const member = vi.spyOn(ChunkRun.prototype, 'member');
    for (const [, s] of logs.slice(1)) expect([...s.since(0)]).toHaveLength(s.length);
    expect(member).toHaveBeenCalled();
  });

  it('since() and records() from every seq hold exactly the events at(seq) gives, in order', () => {
    // They walk the log record by record (one search for the first); a run that starts before
    // `from` gives its remaining members, a run from `from` on comes whole.
    for (const [name, s] of logs) {
      const all = Array.from({ length: s.length }, (_, q) => s.at(q)!);
      for (let from = -1; from <= s.length + 1; from++) {
        const want = all.slice(Math.max(0, from));
        expect([...s.since(from)], `${name} since(${from})`).toEqual(want);
        const flat: SessionEvent[] = [];
        for (const r of s.records(from)) {
          if (r instanceof ChunkRun) {
            expect(r.seq0, `${name} records(${from}): a whole run starts at or after from`).toBeGreaterThanOrEqual(from);
            for (let k = 0; k < r.length; k++) flat.push(r.member(k));
          } else flat.push(r as SessionEvent);
        }
        expect(flat, `${name} records(${from})`).toEqual(want);
      }
    }
  });

  it('equal a filter over since(), from any seq, for any set of types', () => {
    for (const [name, s] of logs) {
      fc.assert(
        fc.property(fc.subarray(TYPES), fc.integer({ min: -2, max: s.length + 2 }), (types, from) => {
          expect(JSON.stringify([...s.eventsOfType(types, from)]), name).toBe(JSON.stringify(filtered(s, types, from)));
        }),
        { numRuns: 200 },
      );
      const plugin = (e: SessionEvent<'user/message'>): boolean => e.data.source.kind === 'plugin';
      const expected = [...s.since(0)]
        .filter((e): e is SessionEvent<'user/message'> => e.type === 'user/message' && plugin(e as SessionEvent<'user/message'>))
        .at(-1);
      expect(s.lastOfType('user/message', plugin)?.seq, name).toBe(expected?.seq);
      expect(s.lastOfType('turn/start')?.data.turn, name).toBe(6);
      expect(s.lastOfType('request/header'), name).toBeUndefined();
    }
  });

  it('step over chunk runs without building a chunk, unless chunks are asked for', () => {
    for (const [name, s] of logs.slice(1)) {
      const member = vi.spyOn(ChunkRun.prototype, 'member');
      expect([...s.eventsOfType(['agent/inbox/spliced', 'user/message'])].length, name).toBe(6 * 2 + 6 + 3);
      s.lastOfType('user/message', () => false);
      expect(member, name).not.toHaveBeenCalled();
      expect([...s.eventsOfType(['assistant/chunk'], 1)].length, name).toBe(6 * 5);
      expect(member, name).toHaveBeenCalled();
      member.mockRestore();
    }
  });
});

describe('resume start-up reads a loaded log without materialising its chunks', () => {
  it('the inbox constructor and the last runtime-context snapshot', () => {
    const s = build(6, 5);
    s.append('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [userMsg('left over')] });
    const log = loaded(s, true);
    const member = vi.spyOn(ChunkRun.prototype, 'member');
    const inbox = new Inbox(log);
    expect(inbox.nextTurn.map((m) => m.id)).toEqual(['left over']);
    expect(lastSnapshot(log)).toEqual([{ name: 'turn', text: '6' }]);
    expect(member).not.toHaveBeenCalled();
  });
});
