/**
 * Trace invariants checked before commit: turn and step
 * enclosure and numbering, tool/result pairing.
 */
import { describe, expect, it } from 'vitest';
import type { Session } from '../../src/session/index.js';
import { assistantMsg, closeTurn, expectRefused, newSession, openStep, toolResultMsg, userMsg } from './helpers.js';

function refused(s: Session, fn: () => unknown, rule: string, why: RegExp): void {
  const seq = s.length;
  const err = expectRefused(s, fn, 'TRACE_VIOLATION');
  expect(err.details.rule).toBe(rule);
  expect(err.details.seq).toBe(seq);
  expect(err.message).toContain(`at seq ${seq} breaks the ${rule} rule`);
  expect(err.message).toMatch(why);
}

const chunk = (turn: number, step: number) => ({ turn, step, chunk: { type: 'text-delta' as const, index: 0, text: 'x' } });
const amsg = (turn: number, step: number) => ({ turn, step, message: assistantMsg('a') });
const call = (turn: number, step: number, callId = 'c') => ({ turn, step, callId, name: 'bash', arguments: '{}' });
const result = (turn: number, step: number, callId = 'c', code?: string) => ({
  turn,
  step,
  message: toolResultMsg(`r-${callId}`, callId),
  ...(code ? { error: { name: 'E', code } } : {}),
});

describe('turns', () => {
  it('turn/start refused while a turn is open', () => {
    const s = newSession();
    s.append('turn/start', { turn: 1 });
    refused(s, () => s.append('turn/start', { turn: 2 }), 'turn-nesting', /turn 1 is still open/);
  });
  it('turns are numbered 1, 2, … with no gap or repeat', () => {
    const s = newSession();
    refused(s, () => s.append('turn/start', { turn: 2 }), 'turn-numbering', /next turn is 1, not 2/);
    s.append('turn/start', { turn: 1 });
    closeTurn(s, 1);
    refused(s, () => s.append('turn/start', { turn: 1 }), 'turn-numbering', /next turn is 2, not 1/);
    refused(s, () => s.append('turn/start', { turn: 3 }), 'turn-numbering', /next turn is 2, not 3/);
    s.append('turn/start', { turn: 2 });
    expect(s.trace).toEqual({ openTurn: 2, openStep: undefined, lastTurn: 2, lastStep: 0 });
  });
  it('turn/end refused with no open turn', () => {
    const s = newSession();
    refused(s, () => s.append('turn/end', { turn: 1, reason: { kind: 'completed' } }), 'turn-enclosure', /no turn is open/);
  });
  it('turn/end must name the open turn', () => {
    const s = newSession();
    s.append('turn/start', { turn: 1 });
    refused(
      s,
      () => s.append('turn/end', { turn: 2, reason: { kind: 'completed' } }),
      'turn-enclosure',
      /closes turn 2, but the open turn is 1/,
    );
  });
  it('turn/end refused while a step is open', () => {
    const s = newSession();
    openStep(s, 1);
    refused(s, () => s.append('turn/end', { turn: 1, reason: { kind: 'completed' } }), 'turn-nesting', /step 1 is still open/);
  });
  it('a turn with no steps is fine', () => {
    const s = newSession();
    s.append('turn/start', { turn: 1 });
    s.append('turn/end', { turn: 1, reason: { kind: 'blocked' } });
    expect(s.trace.openTurn).toBeUndefined();
  });
});

describe('steps', () => {
  it('step/start refused outside a turn', () => {
    const s = newSession();
    refused(s, () => s.append('step/start', { turn: 1, step: 1 }), 'turn-enclosure', /no turn is open/);
  });
  it('step/start must name the open turn', () => {
    const s = newSession();
    s.append('turn/start', { turn: 1 });
    refused(s, () => s.append('step/start', { turn: 2, step: 1 }), 'turn-enclosure', /names turn 2, but the open turn is 1/);
  });
  it('step/start refused while a step is open', () => {
    const s = newSession();
    openStep(s, 1);
    refused(s, () => s.append('step/start', { turn: 1, step: 2 }), 'turn-nesting', /step 1 is still open/);
  });
  it('steps are numbered 1, 2, … afresh in every turn', () => {
    const s = newSession();
    s.append('turn/start', { turn: 1 });
    refused(s, () => s.append('step/start', { turn: 1, step: 2 }), 'step-numbering', /next step of turn 1 is 1, not 2/);
    s.append('step/start', { turn: 1, step: 1 });
    s.append('step/end', { turn: 1, step: 1 });
    refused(s, () => s.append('step/start', { turn: 1, step: 1 }), 'step-numbering', /is 2, not 1/);
    refused(s, () => s.append('step/start', { turn: 1, step: 3 }), 'step-numbering', /is 2, not 3/);
    s.append('step/start', { turn: 1, step: 2 });
    closeTurn(s, 1, 2);
    s.append('turn/start', { turn: 2 });
    refused(s, () => s.append('step/start', { turn: 2, step: 3 }), 'step-numbering', /next step of turn 2 is 1, not 3/);
    s.append('step/start', { turn: 2, step: 1 });
    expect(s.trace).toEqual({ openTurn: 2, openStep: 1, lastTurn: 2, lastStep: 1 });
  });
  it('step/end needs the open step, by turn and number', () => {
    const s = newSession();
    s.append('turn/start', { turn: 1 });
    refused(s, () => s.append('step/end', { turn: 1, step: 1 }), 'step-enclosure', /no step is open/);
    s.append('step/start', { turn: 1, step: 1 });
    refused(
      s,
      () => s.append('step/end', { turn: 1, step: 2 }),
      'step-enclosure',
      /names turn 1 step 2, but the open step is turn 1 step 1/,
    );
    refused(s, () => s.append('step/end', { turn: 2, step: 1 }), 'turn-enclosure', /names turn 2/);
  });
});

describe('events that must sit in the open step', () => {
  const kinds: [string, (s: Session, t: number, st: number) => unknown][] = [
    ['assistant/chunk', (s, t, st) => s.append('assistant/chunk', chunk(t, st))],
    ['assistant/message', (s, t, st) => s.append('assistant/message', amsg(t, st), { surfaceOp: 'append' })],
    ['tool/call', (s, t, st) => s.append('tool/call', call(t, st))],
  ];
  for (const [type, add] of kinds) {
    it(`${type}: outside any turn, outside a step, or naming another step`, () => {
      const s = newSession();
      refused(s, () => add(s, 1, 1), 'turn-enclosure', /must sit inside an open turn/);
      s.append('turn/start', { turn: 1 });
      refused(s, () => add(s, 1, 1), 'step-enclosure', /must sit inside an open step/);
      s.append('step/start', { turn: 1, step: 1 });
      refused(s, () => add(s, 1, 2), 'step-enclosure', /names turn 1 step 2/);
      refused(s, () => add(s, 2, 1), 'turn-enclosure', /names turn 2/);
      add(s, 1, 1);
      expect(s.events.at(-1)!.type).toBe(type);
    });
  }
});

describe('events that must sit in an open turn', () => {
  const kinds: [string, (s: Session) => unknown][] = [
    ['todo/write', (s) => s.append('todo/write', { todos: [] })],
    ['request/header', (s) => s.append('request/header', { header: { config: { provider: 'p', model: 'm' } }, reason: 'initial' })],
    ['request/context', (s) => s.append('request/context', { provider: 'p', model: 'm' })],
  ];
  for (const [type, add] of kinds) {
    it(`${type}: refused between turns, accepted in a turn with or without a step`, () => {
      const s = newSession();
      refused(s, () => add(s), 'turn-enclosure', /must sit inside an open turn/);
      s.append('turn/start', { turn: 1 });
      add(s);
      s.append('step/start', { turn: 1, step: 1 });
      add(s);
      expect(s.length).toBe(4);
    });
  }
});

describe('unconstrained events', () => {
  it('user/message, session/end-seed and plugin events may sit anywhere', () => {
    const s = newSession();
    s.append('user/message', userMsg('between'), { surfaceOp: 'append' });
    s.append('session/end-seed', {});
    s.append('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [userMsg('queued')] });
    s.append('command/run', { commandId: 'c', name: 'compact', source: 'user' });
    s.append('llm/retry-started', { retryId: 'r', turn: 9, step: 9, retry: 1 });
    openStep(s, 1);
    s.append('user/message', userMsg('in-step'), { surfaceOp: 'append' });
    expect(s.length).toBe(8);
  });
});

describe('tool/result pairing', () => {
  it('needs a tool/call with the same callId earlier in the same step', () => {
    const s = newSession();
    openStep(s, 1);
    refused(
      s,
      () => s.append('tool/result', result(1, 1), { surfaceOp: 'append' }),
      'tool-result-pairing',
      /no tool\/call with callId "c" precedes it in step 1/,
    );
    s.append('tool/call', call(1, 1, 'other'));
    refused(s, () => s.append('tool/result', result(1, 1), { surfaceOp: 'append' }), 'tool-result-pairing', /callId "c"/);
    s.append('tool/call', call(1, 1, 'c')); // 3
    s.append('tool/result', result(1, 1), { surfaceOp: 'append', sourceEventSeqs: [3] });
    expect(s.surface.nodes).toEqual([4]);
  });
  it('a call from an earlier step of the same turn does not count', () => {
    const s = newSession();
    openStep(s, 1);
    s.append('tool/call', call(1, 1, 'c'));
    s.append('step/end', { turn: 1, step: 1 });
    s.append('step/start', { turn: 1, step: 2 });
    refused(s, () => s.append('tool/result', result(1, 2, 'c'), { surfaceOp: 'append' }), 'tool-result-pairing', /precedes it in step 2/);
  });
  it('a result must name the open step', () => {
    const s = newSession();
    openStep(s, 1);
    s.append('tool/call', call(1, 1, 'c'));
    refused(s, () => s.append('tool/result', result(1, 2, 'c'), { surfaceOp: 'append' }), 'step-enclosure', /step 2/);
  });
  it('refuses outside a step', () => {
    const s = newSession();
    s.append('turn/start', { turn: 1 });
    refused(s, () => s.append('tool/result', result(1, 1), { surfaceOp: 'append' }), 'step-enclosure', /open step/);
  });
  it('refuses a second result for the same call', () => {
    const s = newSession();
    openStep(s, 1);
    s.append('tool/call', call(1, 1, 'c'));
    s.append('tool/result', result(1, 1, 'c'), { surfaceOp: 'append' });
    refused(
      s,
      () => s.append('tool/result', result(1, 1, 'c'), { surfaceOp: 'append' }),
      'tool-result-pairing',
      /tool call "c" \(seq 2\) already has a result/,
    );
    // Not even dressed up as TOOL_NOT_STARTED.
    refused(
      s,
      () => s.append('tool/result', result(1, 1, 'c', 'TOOL_NOT_STARTED'), { surfaceOp: 'append' }),
      'tool-result-pairing',
      /already has a result/,
    );
  });
  it('a call id is recorded once per step, so a call cannot be re-opened for a second result', () => {
    const s = newSession();
    openStep(s, 1);
    s.append('tool/call', call(1, 1, 'c'));
    refused(s, () => s.append('tool/call', call(1, 1, 'c')), 'tool-call-unique', /callId "c" was already used in step 1 \(seq 2\)/);
    s.append('tool/result', result(1, 1, 'c'), { surfaceOp: 'append' });
    refused(s, () => s.append('tool/call', call(1, 1, 'c')), 'tool-call-unique', /already used/);
    s.append('tool/result', result(1, 1, 'gone', 'TOOL_NOT_STARTED'), { surfaceOp: 'append' });
    refused(s, () => s.append('tool/call', call(1, 1, 'gone')), 'tool-call-unique', /already used/);
    // The same id in the next step is a different call.
    s.append('step/end', { turn: 1, step: 1 });
    s.append('step/start', { turn: 1, step: 2 });
    s.append('tool/call', call(1, 2, 'c'));
    expect(s.length).toBe(8);
  });
  it('parallel calls are answered in any order', () => {
    const s = newSession();
    openStep(s, 1);
    s.append('tool/call', call(1, 1, 'a'));
    s.append('tool/call', call(1, 1, 'b'));
    s.append('tool/result', result(1, 1, 'b'), { surfaceOp: 'append' });
    s.append('tool/result', result(1, 1, 'a'), { surfaceOp: 'append' });
    expect(
      s
        .deriveMessages()
        .toArray()
        .map((m) => m.id),
    ).toEqual(['r-b', 'r-a']);
  });
  it('TOOL_NOT_STARTED results are exempt (their call was never recorded), but only once per call', () => {
    const s = newSession();
    openStep(s, 1);
    s.append('tool/result', result(1, 1, 'never', 'TOOL_NOT_STARTED'), { surfaceOp: 'append' });
    refused(
      s,
      () => s.append('tool/result', result(1, 1, 'never', 'TOOL_NOT_STARTED'), { surfaceOp: 'append' }),
      'tool-result-pairing',
      /"never".*already has a result/,
    );
    // Another error code gets no exemption.
    refused(
      s,
      () => s.append('tool/result', result(1, 1, 'other', 'TOOL_OUTCOME_UNKNOWN'), { surfaceOp: 'append' }),
      'tool-result-pairing',
      /no tool\/call/,
    );
  });
  it('a replacing tool/result needs only an open turn', () => {
    const s = newSession();
    openStep(s, 1);
    s.append('tool/call', call(1, 1, 'c'));
    s.append('tool/result', result(1, 1, 'c'), { surfaceOp: 'append' }); // 3
    closeTurn(s, 1, 1);
    const pruned = (id: string) => {
      const d = result(1, 1, 'c');
      return {
        ...d,
        message: {
          ...d.message,
          content: [{ ...d.message.content[0], content: [{ type: 'text' as const, text: id }] }] as typeof d.message.content,
        },
      };
    };
    refused(
      s,
      () => s.append('tool/result', pruned('p'), { surfaceOp: { op: 'replace', start: 3, end: 3 }, sourceEventSeqs: [3] }),
      'turn-enclosure',
      /open turn/,
    );
    s.append('turn/start', { turn: 2 });
    // No step open, and the payload names turn 1 step 1 (it must equal the original's).
    s.append('tool/result', pruned('p'), { surfaceOp: { op: 'replace', start: 3, end: 3 }, sourceEventSeqs: [3] });
    expect(s.surface.nodes).toEqual([7]);
  });
});
