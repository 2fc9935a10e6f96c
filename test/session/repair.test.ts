/**
 * Crash repair (issue 2 item 5): interruptedTurnClosers closes a dangling turn
 * deterministically, and the repaired log passes validation.
 */
import { describe, expect, it } from 'vitest';
import {
  interruptedTurnClosers,
  Session,
  TOOL_NOT_STARTED_TEXT,
  TOOL_OUTCOME_UNKNOWN_TEXT,
  type SessionEvent,
} from '../../src/session/index.js';
import { T0, assistantMsg, fixedClock, fullTurn, newSession, openStep, toolResultMsg, userMsg } from './helpers.js';

const interruptedResult = (callId: string, seq: number, started: boolean) => ({
  id: `interrupted-tool-result-${callId}-${seq}`,
  role: 'user',
  content: [
    {
      type: 'tool-result',
      toolCallId: callId,
      content: [{ type: 'text', text: started ? TOOL_OUTCOME_UNKNOWN_TEXT : TOOL_NOT_STARTED_TEXT }],
      isError: true,
    },
  ],
  source: { kind: 'tool', callId },
});

/** Seeding validates exactly like append: the repaired log must be a valid session. */
function assertValid(events: readonly SessionEvent[], closers: unknown[]): Session {
  const s = Session.create({ seed: JSON.parse(JSON.stringify([...events, ...closers])) as unknown[] });
  expect(s.trace.openTurn).toBeUndefined();
  expect(s.trace.openStep).toBeUndefined();
  return s;
}

describe('interruptedTurnClosers', () => {
  it('returns nothing when every turn is closed, or the log is empty', () => {
    const s = newSession();
    expect(interruptedTurnClosers(s.events)).toEqual([]);
    fullTurn(s, 1);
    s.append('session/title', { title: 'after' });
    expect(interruptedTurnClosers(s.events)).toEqual([]);
  });
  it('a turn with no open step gets turn/end {interrupted}, at the last event time', () => {
    const s = Session.create({ clock: fixedClock(T0, 100) });
    fullTurn(s, 1);
    s.append('turn/start', { turn: 2 });
    s.append('session/title', { title: 't' }); // the last event: seq 14, time T0 + 1400 (createdAt took T0)
    const closers = interruptedTurnClosers(s.events);
    expect(closers).toEqual([{ type: 'turn/end', seq: 15, time: T0 + 1500, data: { turn: 2, reason: { kind: 'interrupted' } } }]);
    assertValid(s.events, closers);
  });
  it('an open step with no tool calls gets step/end then turn/end', () => {
    const s = newSession();
    openStep(s, 1);
    s.append('user/message', userMsg('u'), { surfaceOp: 'append' });
    s.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'hal' } });
    const last = s.events[3]!;
    expect(interruptedTurnClosers(s.events)).toEqual([
      { type: 'step/end', seq: 4, time: last.time, data: { turn: 1, step: 1 } },
      { type: 'turn/end', seq: 5, time: last.time, data: { turn: 1, reason: { kind: 'interrupted' } } },
    ]);
  });
  it('closes every unanswered tool call of the open step: OUTCOME_UNKNOWN when recorded, NOT_STARTED when not', () => {
    const s = newSession();
    fullTurn(s, 1); // 0-12
    openStep(s, 2); // 13, 14
    s.append('user/message', userMsg('u2'), { surfaceOp: 'append' }); // 15
    s.append(
      'assistant/message',
      {
        turn: 2,
        step: 1,
        message: assistantMsg('a', [
          { type: 'text', text: 'three calls' },
          { type: 'tool-call', id: 'A', name: 'bash', arguments: '{}' },
          { type: 'tool-call', id: 'B', name: 'read', arguments: '{}' },
          { type: 'tool-call', id: 'C', name: 'write', arguments: '{}' },
        ]),
      },
      { surfaceOp: 'append' },
    ); // 16
    s.append('tool/call', { turn: 2, step: 1, callId: 'A', name: 'bash', arguments: '{}' }); // 17
    s.append('tool/call', { turn: 2, step: 1, callId: 'B', name: 'read', arguments: '{}' }); // 18
    s.append('tool/result', { turn: 2, step: 1, message: toolResultMsg('rA', 'A') }, { surfaceOp: 'append', sourceEventSeqs: [17] }); // 19
    const time = s.events[19]!.time;
    const closers = interruptedTurnClosers(s.events);
    expect(closers).toEqual([
      {
        type: 'tool/result',
        seq: 20,
        time,
        data: {
          turn: 2,
          step: 1,
          message: interruptedResult('B', 20, true),
          error: { name: 'ToolOutcomeUnknownError', code: 'TOOL_OUTCOME_UNKNOWN' },
        },
        surfaceOp: 'append',
        sourceEventSeqs: [18],
      },
      {
        type: 'tool/result',
        seq: 21,
        time,
        data: {
          turn: 2,
          step: 1,
          message: interruptedResult('C', 21, false),
          error: { name: 'ToolNotStartedError', code: 'TOOL_NOT_STARTED' },
        },
        surfaceOp: 'append',
      },
      { type: 'step/end', seq: 22, time, data: { turn: 2, step: 1 } },
      { type: 'turn/end', seq: 23, time, data: { turn: 2, reason: { kind: 'interrupted' } } },
    ]);
    const repaired = assertValid(s.events, closers);
    // The model sees a result for every call it made.
    expect(
      repaired
        .deriveMessages()
        .toArray()
        .slice(-3)
        .map((m) => m.id),
    ).toEqual(['rA', 'interrupted-tool-result-B-20', 'interrupted-tool-result-C-21']);
  });
  it('a recorded call with no tool-call block is closed too', () => {
    const s = newSession();
    openStep(s, 1);
    s.append('tool/call', { turn: 1, step: 1, callId: 'X', name: 'bash', arguments: '{}' }); // 2
    const closers = interruptedTurnClosers(s.events);
    expect(closers.map((c) => [c.type, c.sourceEventSeqs, (c.data as { error?: { code: string } }).error?.code])).toEqual([
      ['tool/result', [2], 'TOOL_OUTCOME_UNKNOWN'],
      ['step/end', undefined, undefined],
      ['turn/end', undefined, undefined],
    ]);
    assertValid(s.events, closers);
  });
  it('only the open step counts: calls of an earlier, closed step are left alone', () => {
    const s = newSession();
    openStep(s, 1);
    s.append(
      'assistant/message',
      { turn: 1, step: 1, message: assistantMsg('a', [{ type: 'tool-call', id: 'old', name: 'n', arguments: '{}' }]) },
      { surfaceOp: 'append' },
    );
    s.append('step/end', { turn: 1, step: 1 });
    s.append('step/start', { turn: 1, step: 2 });
    const closers = interruptedTurnClosers(s.events);
    expect(closers.map((c) => c.type)).toEqual(['step/end', 'turn/end']);
    expect(closers[0]!.data).toEqual({ turn: 1, step: 2 });
  });
  it('is deterministic: the same log gives the same closers, byte for byte', () => {
    const s = newSession();
    openStep(s, 1);
    s.append(
      'assistant/message',
      { turn: 1, step: 1, message: assistantMsg('a', [{ type: 'tool-call', id: 'q', name: 'n', arguments: '{}' }]) },
      { surfaceOp: 'append' },
    );
    const a = JSON.stringify(interruptedTurnClosers(s.events));
    const copy = Session.create({ seed: JSON.parse(JSON.stringify(s.events)) as unknown[], clock: () => 0 });
    expect(JSON.stringify(interruptedTurnClosers(copy.events.slice(0, s.length)))).toBe(a);
  });
});
