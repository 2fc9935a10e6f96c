/**
 * An index of a recorded session log for replay: its turns, their steps, each step's model
 * attempts, entered input, assistant messages and tool calls, and the request headers in force.
 *
 * A pure reading of the events (no agent, no model), shared by the replay adapter, the replay
 * harness and the log comparison, so all three agree on what "turn 2, step 1, attempt 2" is.
 *
 * Attempts: one provider attempt is the run of `assistant/chunk`s of one step up to and including
 * its `finish`. A failed attempt ends with an error `finish`, usually followed by `llm/retry`; the
 * next chunk of the step starts the next attempt. An attempt without a `finish` was cut off by a
 * cancel mid-stream. A step of an aborted turn whose request went out but streamed nothing (no
 * chunk at all, or a retry that started and never produced one) gets an empty unfinished attempt,
 * so a replay reaches the same waiting point.
 */
import type { StreamChunk, FinishReason } from '../model/stream.js';
import type { UserMessage } from '../model/message.js';
import type { EpochHeader, InboxTarget, LlmRetryData, SessionEvent, TodoItem, TurnEndReason } from './events.js';

export interface RecordedAttempt {
  turn: number;
  step: number;
  /** 1-based within its step. */
  attempt: number;
  /**
   * Seq of the first chunk (or, for an attempt that streamed nothing, of the event that ended
   * its step): the recorded request is what the log held just before it.
   */
  firstSeq: number;
  chunks: StreamChunk[];
  chunkSeqs: number[];
  /** Absent when the attempt was cut off mid-stream (the turn was cancelled). */
  finish?: FinishReason;
  /** An `llm/retry` followed this attempt. */
  retried: boolean;
}

export interface RecordedToolCall {
  callId: string;
  name: string;
  arguments: string;
  callSeq: number;
  result?: SessionEvent<'tool/result'>;
  /** `todo/write` events the call's tool wrote while it ran. */
  todos: TodoItem[][];
  /** It ran beside another call of its step (their call/result spans overlap). */
  overlapped: boolean;
}

export interface RecordedStep {
  turn: number;
  step: number;
  startSeq: number;
  endSeq?: number;
  /** What the step entered: the `user/message`s appended after `step/start`, before the model call. */
  entered: UserMessage[];
  /** Seqs of `user/message`s appended later in the step (a plugin wrote them mid-step). */
  lateInputs: number[];
  attempts: RecordedAttempt[];
  assistant: SessionEvent<'assistant/message'>[];
  toolCalls: RecordedToolCall[];
  /** Tool results whose call is not in this step (crash repair, `TOOL_NOT_STARTED`). */
  strayResults: SessionEvent<'tool/result'>[];
  retries: LlmRetryData[];
  /** How many of those retries logged `llm/retry-started` (their wait ended and the request went out). */
  retriesStarted: number;
  todos: TodoItem[][];
}

export interface InboxClaim {
  /** The step the claim fed (the claim precedes its `step/start`). */
  step: number;
  target: InboxTarget;
  messages: UserMessage[];
}

export interface RecordedTurn {
  turn: number;
  startSeq: number;
  endSeq?: number;
  reason?: TurnEndReason;
  steps: RecordedStep[];
  claims: InboxClaim[];
}

export interface RecordedHeader {
  seq: number;
  header: EpochHeader;
}

export interface RecordedLog {
  events: readonly SessionEvent[];
  turns: RecordedTurn[];
  /** Every attempt in log order. */
  attempts: RecordedAttempt[];
  headers: RecordedHeader[];
  /** Provider routes the log names (headers, route contexts, assistant sources), first seen first. */
  providers: string[];
  /** `user/message`s outside any step (seed material, hand-written logs). */
  outsideInputs: number[];
  /** Seqs of surface events placed by `replace` (compaction, pruning). */
  replacements: number[];
  /** Seq of a `session/end-seed` that later turns follow (the log continues a seeded session). */
  seedEnd?: number;
  step(turn: number, step: number): RecordedStep | undefined;
  turn(turn: number): RecordedTurn | undefined;
  attempt(turn: number, step: number, attempt: number): RecordedAttempt | undefined;
  /** The header in force for a request made just before `seq`. */
  headerBefore(seq: number): RecordedHeader | undefined;
}

export function indexRecording(events: readonly SessionEvent[]): RecordedLog {
  const turns: RecordedTurn[] = [];
  const attempts: RecordedAttempt[] = [];
  const headers: RecordedHeader[] = [];
  const providers: string[] = [];
  const outsideInputs: number[] = [];
  const replacements: number[] = [];
  const inbox: Record<InboxTarget, UserMessage[]> = { 'next-turn': [], 'next-step': [] };
  let seedMarker: number | undefined;
  let seedEnd: number | undefined;
  let turn: RecordedTurn | undefined;
  let step: RecordedStep | undefined;
  // The model call has begun in the open step: later user messages are mid-step input.
  let busy = false;
  // The current attempt is closed (finish seen, or a retry logged): the next chunk opens another.
  let attemptClosed = true;

  const provider = (p: unknown): void => {
    if (typeof p === 'string' && p !== '' && !providers.includes(p)) providers.push(p);
  };
  const openCall = (): RecordedToolCall | undefined => {
    if (!step) return undefined;
    for (let i = step.toolCalls.length - 1; i >= 0; i--) if (!step.toolCalls[i]!.result) return step.toolCalls[i];
    return undefined;
  };

  for (const e of events) {
    if (e.surfaceOp !== undefined && e.surfaceOp !== 'append') replacements.push(e.seq);
    switch (e.type) {
      case 'turn/start':
        turn = { turn: e.data.turn, startSeq: e.seq, steps: [], claims: [] };
        turns.push(turn);
        if (seedMarker !== undefined) seedEnd = seedMarker;
        step = undefined;
        break;
      case 'turn/end':
        if (turn && turn.turn === e.data.turn) {
          turn.endSeq = e.seq;
          turn.reason = e.data.reason;
          closeAbortedTurn(turn, e.seq, attempts);
        }
        turn = undefined;
        step = undefined;
        break;
      case 'step/start':
        step = {
          turn: e.data.turn,
          step: e.data.step,
          startSeq: e.seq,
          entered: [],
          lateInputs: [],
          attempts: [],
          assistant: [],
          toolCalls: [],
          strayResults: [],
          retries: [],
          retriesStarted: 0,
          todos: [],
        };
        turn?.steps.push(step);
        busy = false;
        attemptClosed = true;
        break;
      case 'step/end':
        if (step) step.endSeq = e.seq;
        step = undefined;
        break;
      case 'user/message':
        if (!step) outsideInputs.push(e.seq);
        else if (busy || e.surfaceOp !== 'append') step.lateInputs.push(e.seq);
        else step.entered.push(e.data);
        break;
      case 'assistant/chunk': {
        if (!step) break;
        busy = true;
        let a = step.attempts[step.attempts.length - 1];
        if (!a || attemptClosed) {
          a = {
            turn: step.turn,
            step: step.step,
            attempt: step.attempts.length + 1,
            firstSeq: e.seq,
            chunks: [],
            chunkSeqs: [],
            retried: false,
          };
          step.attempts.push(a);
          attempts.push(a);
          attemptClosed = false;
        }
        a.chunks.push(e.data.chunk);
        a.chunkSeqs.push(e.seq);
        if (e.data.chunk.type === 'finish') {
          a.finish = e.data.chunk.reason;
          attemptClosed = true;
        }
        break;
      }
      case 'llm/retry': {
        if (!step) break;
        busy = true;
        step.retries.push(e.data);
        const last = step.attempts[step.attempts.length - 1];
        if (last) last.retried = true;
        attemptClosed = true;
        break;
      }
      case 'llm/retry-started':
        if (!step) break;
        busy = true;
        step.retriesStarted++;
        break;
      case 'assistant/message':
        if (!step) break;
        busy = true;
        step.assistant.push(e);
        provider(e.data.message.source.provider);
        break;
      case 'tool/call':
        if (!step) break;
        busy = true;
        step.toolCalls.push({
          callId: e.data.callId,
          name: e.data.name,
          arguments: e.data.arguments,
          callSeq: e.seq,
          todos: [],
          overlapped: false,
        });
        break;
      case 'tool/result': {
        if (!step) break;
        busy = true;
        const id = e.data.message.source.callId;
        const call = step.toolCalls.find((c) => c.callId === id && !c.result);
        if (call) call.result = e;
        else step.strayResults.push(e);
        break;
      }
      case 'todo/write':
        if (!step) break;
        step.todos.push(e.data.todos);
        openCall()?.todos.push(e.data.todos);
        break;
      case 'request/header':
        headers.push({ seq: e.seq, header: e.data.header });
        provider(e.data.header.config.provider);
        break;
      case 'request/context':
        provider(e.data.provider);
        break;
      case 'agent/inbox/spliced': {
        const s = e.data;
        // A plugin event: its shape is not validated on load, so a malformed splice is skipped.
        const list = (inbox as Record<string, UserMessage[] | undefined>)[s.target as string];
        if (
          !Array.isArray(list) ||
          !Array.isArray(s.inserted) ||
          !Number.isSafeInteger(s.start) ||
          (s.removedCount !== undefined && !Number.isSafeInteger(s.removedCount))
        )
          break;
        const removed = list.splice(s.start, s.removedCount ?? 0, ...s.inserted);
        // A claim is a pure deletion inside a turn; a cancel or discard carries an outcome.
        if (turn && removed.length > 0 && s.inserted.length === 0 && s.outcome === undefined) {
          turn.claims.push({ step: turn.steps.length + 1, target: s.target, messages: removed });
        }
        break;
      }
      case 'session/end-seed':
        seedMarker = e.seq;
        break;
      default:
        break;
    }
  }
  for (const t of turns) for (const s of t.steps) markOverlaps(s);

  const byTurn = new Map(turns.map((t) => [t.turn, t]));
  const byAttempt = new Map(attempts.map((a) => [`${a.turn}:${a.step}:${a.attempt}`, a]));
  const log: RecordedLog = {
    events,
    turns,
    attempts,
    headers,
    providers,
    outsideInputs,
    replacements,
    turn: (t) => byTurn.get(t),
    step: (t, s) => byTurn.get(t)?.steps.find((x) => x.step === s),
    attempt: (t, s, n) => byAttempt.get(`${t}:${s}:${n}`),
    headerBefore(seq) {
      let found: RecordedHeader | undefined;
      for (const h of headers) {
        if (h.seq >= seq) break;
        found = h;
      }
      return found;
    },
  };
  if (seedEnd !== undefined) log.seedEnd = seedEnd;
  return log;
}

/**
 * The last step of an aborted turn that sent a request and saw no chunk of its answer still had
 * a model call in flight: give it an empty unfinished attempt to wait on.
 */
function closeAbortedTurn(turn: RecordedTurn, endSeq: number, all: RecordedAttempt[]): void {
  if (turn.reason?.kind !== 'aborted') return;
  const last = turn.steps[turn.steps.length - 1];
  if (!last || last.toolCalls.length > 0 || last.assistant.length > 0) return;
  const tail = last.attempts[last.attempts.length - 1];
  // A retry cancelled during its wait never sent a request; one that logged retry-started did.
  const retryInFlight = tail?.retried === true && last.retriesStarted >= last.retries.length;
  if (tail && !retryInFlight) return;
  const a: RecordedAttempt = {
    turn: last.turn,
    step: last.step,
    attempt: last.attempts.length + 1,
    firstSeq: last.endSeq ?? endSeq,
    chunks: [],
    chunkSeqs: [],
    retried: false,
  };
  last.attempts.push(a);
  all.push(a);
}

/** Calls whose call-to-result spans overlap ran side by side; the rest ran alone. */
function markOverlaps(step: RecordedStep): void {
  const calls = step.toolCalls;
  const end = (c: RecordedToolCall): number => c.result?.seq ?? Number.POSITIVE_INFINITY;
  for (let i = 0; i < calls.length; i++) {
    for (let j = i + 1; j < calls.length; j++) {
      const a = calls[i]!;
      const b = calls[j]!;
      if (a.callSeq < end(b) && b.callSeq < end(a)) {
        a.overlapped = true;
        b.overlapped = true;
      }
    }
  }
}
