/**
 * The mapping from a session log to OpenTelemetry GenAI spans, as a fold over events in seq
 * order. Offline export feeds it a whole log; the live plugin feeds it each event as it is
 * appended. Both therefore produce the same spans for the same log, by construction.
 *
 * Per turn (one trace each, so a long session never becomes one huge trace):
 *
 *   invoke_agent {agent}        INTERNAL  turn/start … turn/end
 *   ├─ chat {model}             CLIENT    one per model attempt (a retried attempt is its own span)
 *   └─ execute_tool {name}      INTERNAL  tool/call … tool/result
 *
 * Steps are attributes (`dsh.step`), not spans: the GenAI conventions make inference and tool
 * spans siblings under the agent span, and backends render that shape; a step span would add one
 * level and one span per step without carrying anything the attribute does not.
 *
 * Times: `time` is a wall clock and may go backwards; `seq` is the order. Each event's time is
 * taken as the running maximum of the times up to it, so every span ends at or after it starts
 * and children sit inside their parent.
 */
import type { SessionEvent, SessionHeader, EpochHeader, RequestContext } from '../session/events.js';
import { SurfaceState } from '../session/surface.js';
import { MessageProjection } from '../session/derive.js';
import { toolResultCallId } from '../session/trace.js';
import { SpanBuilder } from './span-builder.js';
import type { Attempt, ToolUnit, TurnBuild } from './units.js';
import { DEFAULT_ENDPOINTS, DEFAULT_MAX_CONTENT_LENGTH, type DshSpan, type MappedTurn, type MappingOptions } from './spans.js';

/** Who the log belongs to: the session id (and the header, for fork lineage). */
export interface SessionIdentity {
  id: string;
  header?: Readonly<SessionHeader>;
}

/**
 * The response identity an adapter kept in `replayState.response` (ours: `{id, model}`; dsh's:
 * `{kind, model, …}`), when it is there.
 */
function responseOf(state: unknown): { id?: string; model?: string } | undefined {
  const r = (state as { response?: unknown } | undefined)?.response;
  if (typeof r !== 'object' || r === null || Array.isArray(r)) return undefined;
  const { id, model } = r as { id?: unknown; model?: unknown };
  const out: { id?: string; model?: string } = {};
  if (typeof id === 'string' && id !== '') out.id = id;
  if (typeof model === 'string' && model !== '') out.model = model;
  return out.id === undefined && out.model === undefined ? undefined : out;
}

export class SpanMapper {
  private readonly builder: SpanBuilder;
  private readonly full: boolean;

  private lastTime = Number.NEGATIVE_INFINITY;
  private prevTime = 0;
  private header: EpochHeader | undefined;
  private context: RequestContext | undefined;
  private turn: TurnBuild | undefined;

  // Content capture only: the surface, to derive what the model saw at each attempt.
  private readonly surface = new SurfaceState();
  private readonly surfaceEvents = new Map<number, SessionEvent>();
  private readonly projection = new MessageProjection();

  constructor(identity: SessionIdentity, opts: MappingOptions = {}) {
    this.full = opts.content === 'full';
    this.builder = new SpanBuilder({
      sessionId: identity.id,
      seedLength: identity.header?.seedLength ?? 0,
      parentId: identity.header?.parentSession,
      agentName: opts.agentName ?? 'dsh',
      traces: opts.traces ?? 'turn',
      endpoints: { ...DEFAULT_ENDPOINTS, ...opts.endpoints },
      full: this.full,
      cap: opts.maxContentLength ?? DEFAULT_MAX_CONTENT_LENGTH,
      redact: opts.redact,
    });
  }

  /** Take the next event (in seq order); returns the turns it completed (at most one in a valid log). */
  push(e: SessionEvent): MappedTurn[] {
    // The seed marker carries the time a log was loaded or resumed, not a time of the session's
    // own work: it would stretch an open turn up to the moment of reading.
    if (e.type === 'session/end-seed') return [];
    const t = Math.max(this.lastTime, e.time);
    this.lastTime = t;
    const out: MappedTurn[] = [];
    if (this.full && e.surfaceOp !== undefined) {
      this.surface.apply(e);
      this.surfaceEvents.set(e.seq, e);
    }
    if (e.type === 'request/header') this.header = e.data.header;
    else if (e.type === 'request/context') this.context = e.data;

    if (e.type === 'turn/start') {
      // A valid log never opens a turn inside another; if one does, close the old one as found.
      if (this.turn) out.push(this.builder.turn(this.turn, undefined));
      this.turn = this.newTurn(e.data.turn, e.seq, t);
    } else if (this.turn) {
      const turn = this.turn;
      turn.lastSeq = e.seq;
      turn.lastTime = t;
      this.onTurnEvent(turn, e, t);
      if (e.type === 'turn/end') {
        out.push(this.builder.turn(turn, e.data.reason));
        this.turn = undefined;
      }
    }
    this.prevTime = t;
    return out;
  }

  /**
   * One trace per session (`traces: 'session'`): the session span over the turns given (those
   * exported), from the first one's start to the latest end; undefined without turns.
   */
  sessionSpan(turns: readonly MappedTurn[]): DshSpan | undefined {
    if (turns.length === 0) return undefined;
    const roots = turns.map((t) => t.spans[0]!);
    const seqOf = (s: DshSpan, k: string, dflt: number): number =>
      typeof s.attributes[k] === 'number' ? (s.attributes[k] as number) : dflt;
    return this.builder.sessionSpan({
      startSeq: seqOf(roots[0]!, 'dsh.seq.start', 0),
      endSeq: Math.max(...roots.map((r) => seqOf(r, 'dsh.seq.end', 0))),
      start: Math.min(...roots.map((r) => r.startTime)),
      end: Math.max(...roots.map((r) => r.endTime)),
      turns: turns.length,
      incomplete: turns.some((t) => t.incomplete),
    });
  }

  /** The in-flight turn's spans, ended at its last event and marked incomplete (nothing consumed). */
  openTurn(): MappedTurn | undefined {
    return this.turn ? this.builder.turn(this.turn, undefined) : undefined;
  }

  private newTurn(turn: number, seq: number, t: number): TurnBuild {
    return {
      turn,
      startSeq: seq,
      start: t,
      lastSeq: seq,
      lastTime: t,
      steps: 0,
      step: 0,
      units: [],
      attempt: undefined,
      lastAttempt: undefined,
      attemptsInStep: 0,
      pendingRetry: undefined,
      blockNames: new Map(),
      openTools: new Map(),
      userMessages: [],
      lastOutput: undefined,
    };
  }

  private onTurnEvent(turn: TurnBuild, e: SessionEvent, t: number): void {
    switch (e.type) {
      case 'step/start':
        turn.steps++;
        turn.step = e.data.step;
        turn.attempt = undefined;
        turn.lastAttempt = undefined;
        turn.attemptsInStep = 0;
        turn.pendingRetry = undefined;
        turn.blockNames = new Map();
        turn.openTools = new Map();
        break;
      case 'step/end':
        if (turn.attempt) turn.attempt.done = true;
        break;
      case 'user/message':
        if (this.full) turn.userMessages.push(e.data);
        break;
      case 'assistant/chunk': {
        let a = turn.attempt;
        if (!a || a.done || a.finish) a = this.newAttempt(turn, e.seq);
        a.lastSeq = e.seq;
        a.end = t;
        const c = e.data.chunk;
        if (c.type === 'usage') a.usage = c.usage;
        else if (c.type === 'finish') {
          a.finish = c.reason;
          const r = responseOf(c.replayState);
          if (r) a.response = r;
        }
        break;
      }
      case 'assistant/message': {
        let a = turn.attempt;
        // A message with no chunks (a known empty stream) is an attempt of its own.
        if (!a || a.done || a.message) a = this.newAttempt(turn, e.seq);
        a.lastSeq = e.seq;
        a.end = t;
        a.message = e.data.message;
        const response = a.response ?? responseOf(e.data.message.source.replayState);
        if (response) a.response = response;
        if (e.data.usage) a.usage = e.data.usage;
        if (e.data.interrupted) a.interrupted = true;
        a.done = true;
        for (const b of e.data.message.content)
          if (b.type === 'tool-call') turn.blockNames.set(b.id, { name: b.name, arguments: b.arguments });
        if (e.data.message.content.length > 0) turn.lastOutput = e.data.message;
        break;
      }
      case 'llm/retry': {
        const a = turn.lastAttempt;
        if (a && e.data.turn === turn.turn && e.data.step === turn.step) {
          a.retryEvent = { time: t, data: e.data };
          a.lastSeq = e.seq;
          a.end = t;
          a.done = true;
        }
        break;
      }
      case 'llm/retry-started':
        turn.pendingRetry = e.data.retry;
        break;
      case 'tool/call': {
        if (turn.attempt) turn.attempt.done = true;
        const u: ToolUnit = {
          firstSeq: e.seq,
          lastSeq: e.seq,
          start: t,
          end: t,
          step: turn.step,
          callId: e.data.callId,
          name: e.data.name,
          arguments: e.data.arguments,
          callRecorded: true,
        };
        turn.units.push(u);
        turn.openTools.set(e.data.callId, u);
        break;
      }
      case 'tool/result': {
        if (turn.attempt) turn.attempt.done = true;
        const callId = toolResultCallId(e.data) ?? '';
        let u = turn.openTools.get(callId);
        if (u) turn.openTools.delete(callId);
        else {
          // Crash repair answers a tool-call block that never got its tool/call (it never started).
          const block = turn.blockNames.get(callId);
          u = { firstSeq: e.seq, lastSeq: e.seq, start: t, end: t, step: turn.step, callId, callRecorded: false };
          if (block) {
            u.name = block.name;
            u.arguments = block.arguments;
          }
          turn.units.push(u);
        }
        u.lastSeq = e.seq;
        u.end = t;
        u.result = { message: e.data.message };
        if (e.data.error) u.result.error = e.data.error;
        break;
      }
      default:
        break;
    }
  }

  private newAttempt(turn: TurnBuild, seq: number): Attempt {
    if (turn.attempt) turn.attempt.done = true;
    turn.attemptsInStep++;
    // The request left after the event before the attempt's first chunk; the log has no send time.
    const a: Attempt = {
      firstSeq: seq,
      lastSeq: seq,
      start: this.prevTime,
      end: this.prevTime,
      step: turn.step,
      number: turn.attemptsInStep,
      interrupted: false,
      done: false,
    };
    if (turn.pendingRetry !== undefined) a.retry = turn.pendingRetry;
    turn.pendingRetry = undefined;
    if (this.header) a.header = this.header;
    if (this.context) a.context = this.context;
    if (this.full) a.input = this.projection.derive(this.surface, (s) => this.surfaceEvents.get(s)!);
    turn.units.push(a);
    turn.attempt = a;
    turn.lastAttempt = a;
    return a;
  }
}
