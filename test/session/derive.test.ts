/**
 * Projection (issue 2 item 4): deriveEventMessage's per-event rule and the
 * cached deriveMessages().
 */
import { describe, expect, it } from 'vitest';
import { deriveEventMessage, deriveMessagesFrom, MessageProjection, type SessionEvent } from '../../src/session/index.js';
import { assistantMsg, closeTurn, fullTurn, newSession, openStep, toolResultMsg, userMsg } from './helpers.js';

describe('deriveEventMessage', () => {
  const s = newSession();
  const t = fullTurn(s, 1);
  const ev = s.events;

  it('user/message projects its data, as is', () => {
    const e = ev[t.user] as SessionEvent<'user/message'>;
    expect(deriveEventMessage(e)).toBe(e.data);
  });
  it('assistant/message projects its message', () => {
    const e = ev[t.a1] as SessionEvent<'assistant/message'>;
    expect(deriveEventMessage(e)).toBe(e.data.message);
    expect(deriveEventMessage(e)!.role).toBe('assistant');
  });
  it('tool/result projects its user-role message with one tool-result block', () => {
    const e = ev[t.result] as SessionEvent<'tool/result'>;
    const m = deriveEventMessage(e)!;
    expect(m).toBe(e.data.message);
    expect(m.role).toBe('user');
    expect(m.content).toEqual([{ type: 'tool-result', toolCallId: 'call-1', content: [{ type: 'text', text: 'a.txt' }] }]);
  });
  it('every other event projects nothing', () => {
    const others = ev.filter((e) => !['user/message', 'assistant/message', 'tool/result'].includes(e.type));
    expect(others.map((e) => e.type)).toEqual([
      'turn/start',
      'step/start',
      'assistant/chunk',
      'assistant/chunk',
      'tool/call',
      'step/end',
      'step/start',
      'step/end',
      'turn/end',
    ]);
    for (const e of others) expect(deriveEventMessage(e)).toBeNull();
    const plugin = { type: 'session/title', seq: 0, time: 0, data: { title: 'x' } } as SessionEvent;
    expect(deriveEventMessage(plugin)).toBeNull();
  });
  it('an assistant/message with empty content projects nothing (it only carries usage)', () => {
    const e = {
      type: 'assistant/message',
      seq: 3,
      time: 0,
      data: { turn: 1, step: 1, message: assistantMsg('empty', []), usage: { inputTokens: 5, outputTokens: 0 } },
      surfaceOp: 'append',
      sourceEventSeqs: [],
    } as SessionEvent;
    expect(deriveEventMessage(e)).toBeNull();
  });
});

describe('deriveMessages', () => {
  it('projects the surface in order, skipping empty assistant messages that stay in the log', () => {
    const s = newSession();
    openStep(s, 1);
    s.append('user/message', userMsg('u1'), { surfaceOp: 'append' });
    const empty = s.append(
      'assistant/message',
      { turn: 1, step: 1, message: assistantMsg('a-empty', []), usage: { inputTokens: 9, outputTokens: 0 } },
      { surfaceOp: 'append', sourceEventSeqs: [] },
    );
    closeTurn(s, 1, 1);
    openStep(s, 2);
    s.append('user/message', userMsg('u2'), { surfaceOp: 'append' });
    s.append('assistant/message', { turn: 2, step: 1, message: assistantMsg('a2') }, { surfaceOp: 'append' });
    expect(s.deriveMessages().map((m) => m.id)).toEqual(['u1', 'u2', 'a2']);
    expect(s.events[empty.seq]).toBe(empty);
    expect(s.surface.nodes).toContain(empty.seq);
  });
  it('returns the same frozen array while nothing on the surface changed', () => {
    const s = newSession();
    fullTurn(s, 1);
    const a = s.deriveMessages();
    expect(Object.isFrozen(a)).toBe(true);
    expect(s.deriveMessages()).toBe(a);
    // Non-surface events do not change the history.
    s.append('turn/start', { turn: 2 });
    s.append('step/start', { turn: 2, step: 1 });
    s.append('assistant/chunk', { turn: 2, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } });
    s.append('session/title', { title: 't' });
    expect(s.deriveMessages()).toBe(a);
    // An empty assistant message joins the surface but not the history: same array.
    s.append('assistant/message', { turn: 2, step: 1, message: assistantMsg('e', []) }, { surfaceOp: 'append', sourceEventSeqs: [] });
    expect(s.deriveMessages()).toBe(a);
  });
  it('a new surface node gives a new array; the old one is unchanged and the messages are shared', () => {
    const s = newSession();
    fullTurn(s, 1);
    const a = s.deriveMessages();
    openStep(s, 2);
    const u = s.append('user/message', userMsg('u2'), { surfaceOp: 'append' });
    const b = s.deriveMessages();
    expect(b).not.toBe(a);
    expect(a.length).toBe(4);
    expect(b.length).toBe(5);
    for (let i = 0; i < a.length; i++) expect(b.at(i)).toBe(a.at(i));
    expect(b.at(4)).toBe(u.data);
  });
  it('is rebuilt after a replace bumps replaceGeneration', () => {
    const s = newSession();
    const t = fullTurn(s, 1);
    const a = s.deriveMessages();
    openStep(s, 2);
    const r = s.append('user/message', userMsg('summary'), {
      surfaceOp: { op: 'replace', start: t.user, end: t.result },
      sourceEventSeqs: [t.user, t.a1, t.result],
    });
    const b = s.deriveMessages();
    expect(b.map((m) => m.id)).toEqual(['summary', 'a1.2']);
    expect(b.at(0)).toBe(r.data);
    expect(b.at(1)).toBe(a.at(3));
    expect(a.map((m) => m.id)).toEqual(['u1', 'a1.1', 'r1', 'a1.2']);
  });
  it('equals cold derivation after appends and replaces, including a tool/result content replace', () => {
    const s = newSession();
    const t1 = fullTurn(s, 1);
    const t2 = fullTurn(s, 2);
    openStep(s, 3);
    const m = toolResultMsg('r2', 'call-2', 'a.txt');
    s.append(
      'tool/result',
      { turn: 2, step: 1, message: { ...m, content: [{ ...m.content[0], content: [{ type: 'text', text: '[pruned]' }] }] } },
      { surfaceOp: { op: 'replace', start: t2.result, end: t2.result }, sourceEventSeqs: [t2.result] },
    );
    expect(s.deriveMessages().toArray()).toEqual(deriveMessagesFrom(s.events));
    s.append('user/message', userMsg('sum'), {
      surfaceOp: { op: 'replace', start: t1.user, end: t1.a2 },
      sourceEventSeqs: [t1.user, t1.a1, t1.result, t1.a2],
    });
    expect(s.deriveMessages().toArray()).toEqual(deriveMessagesFrom(s.events));
    expect(s.deriveMessages().map((x) => x.id)).toEqual(['sum', 'u2', 'a2.1', 'r2', 'a2.2']);
    expect((s.deriveMessages().at(3)!.content[0] as { content: unknown }).content).toEqual([{ type: 'text', text: '[pruned]' }]);
  });
});

describe('deriveMessagesFrom', () => {
  it('gives the history as of any seq (inclusive)', () => {
    const s = newSession();
    const t = fullTurn(s, 1);
    openStep(s, 2);
    s.append('user/message', userMsg('sum'), { surfaceOp: { op: 'replace', start: t.user, end: t.a1 }, sourceEventSeqs: [t.user, t.a1] });
    const ids = (n?: number) => deriveMessagesFrom(s.events, n).map((m) => m.id);
    expect(ids(1)).toEqual([]);
    expect(ids(t.user)).toEqual(['u1']);
    expect(ids(t.a1)).toEqual(['u1', 'a1.1']);
    expect(ids(t.result)).toEqual(['u1', 'a1.1', 'r1']);
    expect(ids(14)).toEqual(['u1', 'a1.1', 'r1', 'a1.2']);
    expect(ids(15)).toEqual(['sum', 'r1', 'a1.2']);
    expect(ids()).toEqual(['sum', 'r1', 'a1.2']);
    expect(ids(10_000)).toEqual(['sum', 'r1', 'a1.2']);
  });
});

describe('MessageProjection: each surface node is projected once', () => {
  it('costs O(new nodes) per call and rebuilds only on a new replaceGeneration', () => {
    const s = newSession();
    fullTurn(s, 1); // surface [2, 5, 7, 10]
    const events = s.events;
    const looked: number[] = [];
    const at = (seq: number) => {
      looked.push(seq);
      return events[seq]!;
    };
    const p = new MessageProjection();
    const surface = { nodes: [2, 5], replaceGeneration: 0 };
    const v1 = p.derive(surface, at);
    expect(looked).toEqual([2, 5]);
    expect(v1.map((m) => m.id)).toEqual(['u1', 'a1.1']);
    looked.length = 0;
    expect(p.derive(surface, at)).toBe(v1);
    expect(looked).toEqual([]);
    surface.nodes.push(7, 10);
    const v2 = p.derive(surface, at);
    expect(looked).toEqual([7, 10]);
    expect(v2.map((m) => m.id)).toEqual(['u1', 'a1.1', 'r1', 'a1.2']);
    looked.length = 0;
    // A replace: new generation, the surface is re-projected once from the start.
    const v3 = p.derive({ nodes: [2, 10], replaceGeneration: 1 }, at);
    expect(looked).toEqual([2, 10]);
    expect(v3.map((m) => m.id)).toEqual(['u1', 'a1.2']);
    looked.length = 0;
    p.derive({ nodes: [2, 10], replaceGeneration: 1 }, at);
    expect(looked).toEqual([]);
  });
  it('Session.deriveMessages projects new nodes only (old messages are the same objects, not re-read)', () => {
    // Over many steps the history array grows, and every earlier message is carried over by
    // identity: nothing is re-projected or copied.
    const s = newSession();
    let prev = s.deriveMessages();
    for (let turn = 1; turn <= 20; turn++) {
      fullTurn(s, turn);
      const next = s.deriveMessages();
      expect(next.length).toBe(prev.length + 4);
      for (let i = 0; i < prev.length; i++) if (next.at(i) !== prev.at(i)) throw new Error(`message ${i} was re-projected`);
      prev = next;
    }
  });
});
