/**
 * Trace invariants, checked before an event commits:
 *
 * - `turn/start` only when no turn is open, numbered one past the last turn (1, 2, …; numbering
 *   continues across resume and fork because the prefix is in the log).
 * - `turn/end` names the open turn, and no step is open.
 * - `step/start` inside the open turn, no step open, numbered 1, 2, … afresh in each turn.
 * - `step/end`, `assistant/chunk`, `assistant/message`, `tool/call` name the open turn and step;
 *   a `tool/call`'s `callId` is new in its step.
 * - an appended `tool/result` names the open turn and step and answers a `tool/call` with the
 *   same `callId` earlier in that step (crash repair's `TOOL_NOT_STARTED` results are exempt:
 *   their call was never recorded), at most once per call id, exempt or not; a replacing
 *   `tool/result` needs only an open turn.
 * - `todo/write`, `request/header`, `request/context` sit inside an open turn.
 * - `user/message`, `session/end-seed` and plugin events are unconstrained.
 *
 * `check` throws and changes nothing; `apply` commits.
 */
import type { SurfaceOp } from './events.js';
import { SessionError } from './errors.js';

interface Candidate {
  type: string;
  seq: number;
  data: unknown;
  surfaceOp?: SurfaceOp | undefined;
}

type Num = number | undefined;

function num(d: unknown, k: string): Num {
  if (typeof d !== 'object' || d === null) return undefined;
  const v = (d as Record<string, unknown>)[k];
  return typeof v === 'number' ? v : undefined;
}

export function toolResultCallId(data: unknown): string | undefined {
  const msg = (data as { message?: { source?: { callId?: unknown }; content?: { toolCallId?: unknown }[] } } | null)?.message;
  const fromSource = msg?.source?.callId;
  if (typeof fromSource === 'string') return fromSource;
  const fromBlock = Array.isArray(msg?.content) ? msg.content[0]?.toolCallId : undefined;
  return typeof fromBlock === 'string' ? fromBlock : undefined;
}

/** The trace rule an event broke; `SessionError.details.rule` and part of the message. */
export type TraceRule =
  | 'turn-nesting'
  | 'turn-numbering'
  | 'turn-enclosure'
  | 'step-numbering'
  | 'step-enclosure'
  | 'tool-call-unique'
  | 'tool-result-pairing';

/** Crash repair's synthetic result for a call that was never recorded (so never dispatched). */
function notStarted(data: unknown): boolean {
  return (data as { error?: { code?: unknown } } | null)?.error?.code === 'TOOL_NOT_STARTED';
}

/** Types that need an open turn, and of those, the ones that need an open step too. */
const NEEDS_TURN: ReadonlySet<string> = new Set(['turn/end', 'step/start', 'todo/write', 'request/header', 'request/context']);
const NEEDS_STEP: ReadonlySet<string> = new Set(['step/end', 'assistant/chunk', 'assistant/message', 'tool/call', 'tool/result']);

export class TraceState {
  /**
   * Storage mode: dsh restores a log without checking turn enclosure, so an event that needs an
   * open turn (or step) while none is open is let through, counted, and left out of the trace
   * (seed logs written without turn brackets). Live appends never take this path.
   */
  lenient = false;
  /** Lenient mode: the first event let through outside its turn or step, and how many were. */
  outside: { seq: number; type: string; count: number } | undefined;
  openTurn: number | undefined;
  /** Seq of the open turn's turn/start. */
  openTurnSeq: number | undefined;
  openStep: number | undefined;
  /** Highest turn number seen; the next turn must be lastTurn + 1. */
  lastTurn = 0;
  /** Highest step number seen in the open turn. */
  lastStep = 0;
  /**
   * Call ids answered or recorded in the open step: a `tool/call` adds an unanswered entry, a
   * result marks it answered (a `TOOL_NOT_STARTED` result for an unrecorded call adds an answered
   * entry with no call seq, so it cannot be answered twice either).
   */
  private calls = new Map<string, { seq: number | undefined; answered: boolean }>();

  private fail(c: Candidate, rule: TraceRule, why: string): never {
    throw new SessionError('TRACE_VIOLATION', `event "${c.type}" at seq ${c.seq} breaks the ${rule} rule: ${why}`, {
      eventType: c.type,
      seq: c.seq,
      rule,
    });
  }

  private requireTurn(c: Candidate): void {
    if (this.openTurn === undefined) this.fail(c, 'turn-enclosure', `"${c.type}" must sit inside an open turn, and no turn is open`);
    const t = num(c.data, 'turn');
    if (t !== undefined && t !== this.openTurn) {
      this.fail(c, 'turn-enclosure', `it names turn ${t}, but the open turn is ${this.openTurn}`);
    }
  }

  private requireStep(c: Candidate): void {
    this.requireTurn(c);
    if (this.openStep === undefined) this.fail(c, 'step-enclosure', `"${c.type}" must sit inside an open step, and no step is open`);
    const t = num(c.data, 'turn');
    const s = num(c.data, 'step');
    if (t !== this.openTurn || s !== this.openStep) {
      this.fail(c, 'step-enclosure', `it names turn ${t} step ${s}, but the open step is turn ${this.openTurn} step ${this.openStep}`);
    }
  }

  /** In lenient mode: does `c` sit outside the turn or step it needs (and so skip the trace)? */
  private isOutside(c: Candidate): boolean {
    if (!this.lenient) return false;
    if (NEEDS_STEP.has(c.type)) {
      if (c.type === 'tool/result' && c.surfaceOp !== undefined && c.surfaceOp !== 'append') return this.openTurn === undefined;
      return this.openStep === undefined;
    }
    return NEEDS_TURN.has(c.type) && this.openTurn === undefined;
  }

  check(c: Candidate): void {
    if (this.isOutside(c)) {
      if (this.outside === undefined) this.outside = { seq: c.seq, type: c.type, count: 1 };
      else this.outside.count++;
      return;
    }
    switch (c.type) {
      case 'turn/start': {
        if (this.openTurn !== undefined) this.fail(c, 'turn-nesting', `turn ${this.openTurn} is still open`);
        const t = num(c.data, 'turn');
        if (t !== this.lastTurn + 1) this.fail(c, 'turn-numbering', `the next turn is ${this.lastTurn + 1}, not ${t}`);
        return;
      }
      case 'turn/end': {
        if (this.openTurn === undefined) this.fail(c, 'turn-enclosure', 'no turn is open');
        const t = num(c.data, 'turn');
        if (t !== this.openTurn) this.fail(c, 'turn-enclosure', `it closes turn ${t}, but the open turn is ${this.openTurn}`);
        if (this.openStep !== undefined) this.fail(c, 'turn-nesting', `step ${this.openStep} is still open`);
        return;
      }
      case 'step/start': {
        this.requireTurn(c);
        if (this.openStep !== undefined) this.fail(c, 'turn-nesting', `step ${this.openStep} is still open`);
        const s = num(c.data, 'step');
        if (s !== this.lastStep + 1)
          this.fail(c, 'step-numbering', `the next step of turn ${this.openTurn} is ${this.lastStep + 1}, not ${s}`);
        return;
      }
      case 'step/end':
      case 'assistant/chunk':
      case 'assistant/message':
        this.requireStep(c);
        return;
      case 'tool/call': {
        this.requireStep(c);
        const id = (c.data as { callId?: unknown }).callId;
        const prior = typeof id === 'string' ? this.calls.get(id) : undefined;
        if (prior !== undefined) {
          const where = prior.seq === undefined ? 'by a TOOL_NOT_STARTED result' : `(seq ${prior.seq})`;
          this.fail(
            c,
            'tool-call-unique',
            `callId "${String(id)}" was already used in step ${this.openStep} ${where}; a second call would let one call id carry ` +
              'two results',
          );
        }
        return;
      }
      case 'tool/result': {
        if (c.surfaceOp !== undefined && c.surfaceOp !== 'append') {
          if (this.openTurn === undefined) this.fail(c, 'turn-enclosure', 'a replacing tool/result must sit inside an open turn');
          return;
        }
        this.requireStep(c);
        const callId = toolResultCallId(c.data);
        if (callId === undefined) this.fail(c, 'tool-result-pairing', 'the result names no callId');
        const call = this.calls.get(callId);
        if (call === undefined) {
          if (notStarted(c.data)) return;
          this.fail(c, 'tool-result-pairing', `no tool/call with callId "${callId}" precedes it in step ${this.openStep}`);
        }
        if (call.answered) {
          const where = call.seq === undefined ? 'a TOOL_NOT_STARTED result' : `seq ${call.seq}`;
          this.fail(c, 'tool-result-pairing', `tool call "${callId}" (${where}) already has a result`);
        }
        return;
      }
      case 'todo/write':
      case 'request/header':
      case 'request/context':
        this.requireTurn(c);
        return;
      default:
        return;
    }
  }

  apply(c: Candidate): void {
    if (this.isOutside(c)) return;
    switch (c.type) {
      case 'turn/start':
        this.openTurn = num(c.data, 'turn');
        this.openTurnSeq = c.seq;
        this.lastTurn = this.openTurn ?? this.lastTurn;
        this.lastStep = 0;
        return;
      case 'turn/end':
        this.openTurn = undefined;
        this.openTurnSeq = undefined;
        this.calls.clear();
        return;
      case 'step/start':
        this.openStep = num(c.data, 'step');
        this.lastStep = this.openStep ?? this.lastStep;
        this.calls.clear();
        return;
      case 'step/end':
        this.openStep = undefined;
        return;
      case 'tool/call': {
        const id = (c.data as { callId?: unknown }).callId;
        if (typeof id === 'string') this.calls.set(id, { seq: c.seq, answered: false });
        return;
      }
      case 'tool/result': {
        if (c.surfaceOp !== undefined && c.surfaceOp !== 'append') return;
        const id = toolResultCallId(c.data);
        if (id === undefined) return;
        const call = this.calls.get(id);
        if (call) call.answered = true;
        else this.calls.set(id, { seq: undefined, answered: true });
        return;
      }
      default:
        return;
    }
  }

  /** Calls recorded in the open step that have no result yet, in record order. */
  unansweredCalls(): { callId: string; seq: number }[] {
    const out: { callId: string; seq: number }[] = [];
    for (const [callId, v] of this.calls) if (!v.answered && v.seq !== undefined) out.push({ callId, seq: v.seq });
    return out;
  }
}
