/**
 * Builders for session tests: valid messages and event payloads, a fixed clock, and a snapshot of
 * everything a refused append must leave untouched. Expectations in tests are written by hand or
 * computed here independently of the code under test.
 */
import { expect } from 'vitest';
import { Session, SessionError, type SessionErrorCode, type SessionEvent, type SessionOptions } from '../../src/session/index.js';
import type { AssistantMessage, ContentBlock, ToolResultMessage, UserMessage } from '../../src/model/index.js';

export const T0 = 1_755_000_000_000;

/** A clock that returns T0, T0+1, T0+2, … */
export function fixedClock(start = T0, stepMs = 1): () => number {
  let t = start - stepMs;
  return () => (t += stepMs);
}

export function newSession(opts: SessionOptions = {}): Session {
  return Session.create({ id: 'test-session', clock: fixedClock(), onListenerError: () => {}, ...opts });
}

export function userMsg(id: string, text = `text of ${id}`): UserMessage {
  return { id, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } };
}

export function assistantMsg(id: string, content: ContentBlock[] = [{ type: 'text', text: `answer ${id}` }]): AssistantMessage {
  return { id, role: 'assistant', content, source: { kind: 'model', provider: 'deepseek', model: 'deepseek-chat' } };
}

export function toolResultMsg(id: string, callId: string, text = `result of ${callId}`): ToolResultMessage {
  return {
    id,
    role: 'user',
    content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text }] }],
    source: { kind: 'tool', callId },
  };
}

/** Open turn `turn` and step `step` (append turn/start only when step is 1). */
export function openStep(s: Session, turn: number, step = 1): void {
  if (step === 1) s.append('turn/start', { turn });
  s.append('step/start', { turn, step });
}

export function closeTurn(s: Session, turn: number, step?: number): void {
  if (step !== undefined) s.append('step/end', { turn, step });
  s.append('turn/end', { turn, reason: { kind: 'completed' } });
}

/**
 * One complete turn: prompt, assistant text + tool call, tool/call, tool/result, second step with
 * a plain answer. Returns the seqs of its surface events.
 */
export function fullTurn(
  s: Session,
  turn: number,
  callId = `call-${turn}`,
): { user: number; a1: number; result: number; a2: number; call: number } {
  openStep(s, turn, 1);
  const user = s.append('user/message', userMsg(`u${turn}`), { surfaceOp: 'append' }).seq;
  const c1 = s.append('assistant/chunk', { turn, step: 1, chunk: { type: 'text-delta', index: 0, text: 'Let me ' } }).seq;
  const c2 = s.append('assistant/chunk', { turn, step: 1, chunk: { type: 'text-delta', index: 0, text: 'look.' } }).seq;
  const a1 = s.append(
    'assistant/message',
    {
      turn,
      step: 1,
      message: assistantMsg(`a${turn}.1`, [
        { type: 'text', text: 'Let me look.' },
        { type: 'tool-call', id: callId, name: 'bash', arguments: '{"command":"ls"}' },
      ]),
      usage: { inputTokens: 10, outputTokens: 5 },
    },
    { surfaceOp: 'append', sourceEventSeqs: [c1, c2] },
  ).seq;
  const call = s.append('tool/call', { turn, step: 1, callId, name: 'bash', arguments: '{"command":"ls"}' }).seq;
  const result = s.append(
    'tool/result',
    { turn, step: 1, message: toolResultMsg(`r${turn}`, callId, 'a.txt') },
    { surfaceOp: 'append', sourceEventSeqs: [call] },
  ).seq;
  s.append('step/end', { turn, step: 1 });
  s.append('step/start', { turn, step: 2 });
  const a2 = s.append(
    'assistant/message',
    { turn, step: 2, message: assistantMsg(`a${turn}.2`), usage: { inputTokens: 20, outputTokens: 3 } },
    { surfaceOp: 'append', sourceEventSeqs: [] },
  ).seq;
  closeTurn(s, turn, 2);
  return { user, a1, result, a2, call };
}

/** Everything observable about a session, as plain JSON text (taken independently of caches). */
export function observe(s: Session): string {
  return JSON.stringify({
    length: s.length,
    seq: s.seq,
    events: s.events,
    messages: s.deriveMessages().toArray(),
    nodes: s.surface.nodes,
    generation: s.surface.replaceGeneration,
    replacements: s.surface.replacements,
    trace: {
      openTurn: s.trace.openTurn ?? null,
      openStep: s.trace.openStep ?? null,
      lastTurn: s.trace.lastTurn,
      lastStep: s.trace.lastStep,
    },
  });
}

/** Run `fn`, expect a SessionError with `code`, and return it. */
export function expectSessionError(fn: () => unknown, code: SessionErrorCode): SessionError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught, `expected a SessionError ${code}`).toBeInstanceOf(SessionError);
  const err = caught as SessionError;
  expect(err.code, err.message).toBe(code);
  return err;
}

/**
 * Expect the append to be refused with `code` and to leave the session exactly as it was (as
 * observed from outside: length, events, surface, trace). That the next append then lands at its
 * seq is tested once per refusal layer in session.test.ts.
 */
export function expectRefused(s: Session, fn: () => unknown, code: SessionErrorCode): SessionError {
  const before = observe(s);
  const eventsRef = s.events;
  const err = expectSessionError(fn, code);
  expect(observe(s)).toBe(before);
  expect(s.events).toBe(eventsRef);
  return err;
}

/** `append` as a JavaScript caller sees it: no compile-time checks on type, data or options. */
export function rawAppend(s: Session, type: unknown, data: unknown, opts?: unknown): SessionEvent {
  return (s.append as unknown as (t: unknown, d: unknown, o?: unknown) => SessionEvent).call(s, type, data, opts);
}
