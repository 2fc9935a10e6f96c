/**
 * Crash repair. A log whose last turn never closed (the process died) is
 * closed deterministically, in this order:
 *
 * 1. every tool-call block of the open step's assistant message that has no result gets one:
 *    `TOOL_OUTCOME_UNKNOWN` when its `tool/call` was recorded (it may have run), with
 *    `sourceEventSeqs: [callSeq]`; `TOOL_NOT_STARTED` when it was not (it cannot have run);
 * 2. `step/end`, if a step is open;
 * 3. `turn/end {kind:'interrupted'}`.
 *
 * Closers reuse the last event's `time`, so repairing twice gives the same bytes. Nothing already
 * in the log is changed or dropped.
 */
import type { ToolCallBlock, ToolResultMessage } from '../model/message.js';
import type { SessionEvent, SessionEventMap, SessionEventType, SurfaceOp } from './events.js';
import { toolResultCallId } from './trace.js';

export interface EventDraft<K extends SessionEventType = SessionEventType> {
  type: K;
  seq: number;
  time: number;
  data: SessionEventMap[K];
  surfaceOp?: SurfaceOp;
  sourceEventSeqs?: number[];
}

export const TOOL_OUTCOME_UNKNOWN_TEXT =
  'This tool call was interrupted: the harness stopped before its result was recorded. It may or may not have taken effect. Check ' +
  'the state before relying on it, and repeat it only if it is safe to run twice.';
export const TOOL_NOT_STARTED_TEXT = 'This tool call never started: the harness stopped before dispatching it, so it had no effect.';

/**
 * Closers for the turn left open at the end of `events`: the whole log, or any suffix of it that
 * starts at or before that turn's turn/start. Empty when every turn is closed.
 */
export function interruptedTurnClosers(events: readonly SessionEvent[]): EventDraft[] {
  let openTurn: number | undefined;
  let openStep: number | undefined;
  let stepStartIndex = -1;
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    if (e.type === 'turn/start') {
      openTurn = e.data.turn;
      openStep = undefined;
    } else if (e.type === 'turn/end') {
      openTurn = undefined;
      openStep = undefined;
    } else if (e.type === 'step/start') {
      openStep = e.data.step;
      stepStartIndex = i;
    } else if (e.type === 'step/end') {
      openStep = undefined;
    }
  }
  if (openTurn === undefined) return [];

  const out: EventDraft[] = [];
  // The whole log, or any suffix of it that starts at or before the open turn's turn/start.
  let seq = events.length > 0 ? events[events.length - 1]!.seq + 1 : 0;
  const time = events.length > 0 ? events[events.length - 1]!.time : 0;

  if (openStep !== undefined) {
    let lastAssistant: SessionEvent<'assistant/message'> | undefined;
    const callSeqs = new Map<string, number>();
    const answered = new Set<string>();
    for (let i = stepStartIndex + 1; i < events.length; i++) {
      const e = events[i]!;
      if (e.type === 'assistant/message') lastAssistant = e;
      else if (e.type === 'tool/call') callSeqs.set(e.data.callId, e.seq);
      else if (e.type === 'tool/result' && (e.surfaceOp === 'append' || e.surfaceOp === undefined)) {
        const id = toolResultCallId(e.data);
        if (id) answered.add(id);
      }
    }
    const blocks = (lastAssistant?.data.message.content ?? []).filter((b): b is ToolCallBlock => b.type === 'tool-call');
    // Calls recorded without a block (not produced by the loop, but possible) are closed too.
    const pending: { id: string; name: string }[] = blocks.map((b) => ({ id: b.id, name: b.name }));
    for (let i = stepStartIndex + 1; i < events.length; i++) {
      const e = events[i]!;
      if (e.type === 'tool/call' && !pending.some((p) => p.id === e.data.callId)) pending.push({ id: e.data.callId, name: e.data.name });
    }
    for (const call of pending) {
      if (answered.has(call.id)) continue;
      answered.add(call.id);
      const callSeq = callSeqs.get(call.id);
      const started = callSeq !== undefined;
      const message: ToolResultMessage = {
        id: `interrupted-tool-result-${call.id}-${seq}`,
        role: 'user',
        content: [
          {
            type: 'tool-result',
            toolCallId: call.id,
            content: [{ type: 'text', text: started ? TOOL_OUTCOME_UNKNOWN_TEXT : TOOL_NOT_STARTED_TEXT }],
            isError: true,
          },
        ],
        source: { kind: 'tool', callId: call.id },
      };
      const draft: EventDraft<'tool/result'> = {
        type: 'tool/result',
        seq: seq++,
        time,
        data: {
          turn: openTurn,
          step: openStep,
          message,
          error: started
            ? { name: 'ToolOutcomeUnknownError', code: 'TOOL_OUTCOME_UNKNOWN' }
            : { name: 'ToolNotStartedError', code: 'TOOL_NOT_STARTED' },
        },
        surfaceOp: 'append',
      };
      if (started) draft.sourceEventSeqs = [callSeq];
      out.push(draft as EventDraft);
    }
    out.push({ type: 'step/end', seq: seq++, time, data: { turn: openTurn, step: openStep } } as EventDraft);
  }
  out.push({ type: 'turn/end', seq: seq++, time, data: { turn: openTurn, reason: { kind: 'interrupted' } } } as EventDraft);
  return out;
}
