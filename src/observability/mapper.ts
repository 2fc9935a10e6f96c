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
import type { AssistantMessage, Message, ToolResultMessage, UserMessage } from '../model/message.js';
import type { FinishReason } from '../model/stream.js';
import { toOtelUsage, type TokenUsage } from '../model/usage.js';
import type { LlmFailure } from '../model/failure.js';
import type { EpochHeader, LlmRetryData, RequestContext, SessionEvent, SessionHeader, TurnEndReason } from '../session/events.js';
import { SurfaceState } from '../session/surface.js';
import { MessageProjection } from '../session/derive.js';
import { toolResultCallId } from '../session/trace.js';
import { spanIdFor, traceIdFor } from './ids.js';
import { blocksText, capJsonArray, capMessages, capString, toOtelMessage } from './content.js';
import { applyRedaction } from './redact.js';
import { DEFAULT_MAX_CONTENT_LENGTH, type DshSpan, type MappedTurn, type MappingOptions, type SpanAttributes } from './spans.js';

/** Who the log belongs to: the session id (and the header, for fork lineage). */
export interface SessionIdentity {
  id: string;
  header?: Readonly<SessionHeader>;
}

interface Attempt {
  firstSeq: number;
  lastSeq: number;
  start: number;
  end: number;
  step: number;
  /** 1-based position among the step's attempts. */
  number: number;
  /** The retry number from the `llm/retry-started` that preceded it. */
  retry?: number;
  header?: EpochHeader;
  context?: RequestContext;
  usage?: TokenUsage;
  finish?: FinishReason;
  message?: AssistantMessage;
  interrupted: boolean;
  retryEvent?: { time: number; data: LlmRetryData };
  /** No more chunks belong to it (its message, a retry decision, a tool call or step end came). */
  done: boolean;
  input?: readonly Message[];
}

interface ToolUnit {
  firstSeq: number;
  lastSeq: number;
  start: number;
  end: number;
  step: number;
  callId: string;
  name?: string;
  arguments?: string;
  callRecorded: boolean;
  result?: { message: ToolResultMessage; error?: { name: string; code: string } };
}

interface TurnBuild {
  turn: number;
  startSeq: number;
  start: number;
  lastSeq: number;
  lastTime: number;
  steps: number;
  step: number;
  units: (Attempt | ToolUnit)[];
  attempt: Attempt | undefined;
  lastAttempt: Attempt | undefined;
  attemptsInStep: number;
  pendingRetry: number | undefined;
  /** The step's tool-call blocks by id, for names of results that have no recorded call. */
  blockNames: Map<string, { name: string; arguments: string }>;
  openTools: Map<string, ToolUnit>;
  userMessages: UserMessage[];
  lastOutput: AssistantMessage | undefined;
}

const isAttempt = (u: Attempt | ToolUnit): u is Attempt => 'interrupted' in u;

/**
 * Still open when the log stops: an attempt with no finish that nothing closed yet (its message,
 * a retry, a tool call, step end), or a tool call without a result. Only a turn without
 * `turn/end` can hold one.
 */
function unitOpen(u: Attempt | ToolUnit): boolean {
  return isAttempt(u) ? !u.done && u.finish === undefined : u.result === undefined;
}

/** dsh finish kinds in the GenAI vocabulary (`gen_ai.response.finish_reasons`). */
const FINISH_REASON: Record<string, string> = { stop: 'stop', 'tool-calls': 'tool_call', 'max-tokens': 'length', error: 'error' };

/** dsh provider routes whose GenAI provider name is well known; other routes pass through. */
const PROVIDER_NAME: Record<string, string> = { deepseek: 'deepseek', 'deepseek-official': 'deepseek', openai: 'openai', anthropic: 'anthropic' };

function failureText(f: LlmFailure): string {
  return `${f.code}: ${f.message}`;
}

export class SpanMapper {
  private readonly sessionId: string;
  private readonly seedLength: number;
  private readonly parentId: string | undefined;
  private readonly opts: MappingOptions;
  private readonly agentName: string;
  private readonly full: boolean;
  private readonly cap: number;

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
    this.sessionId = identity.id;
    this.seedLength = identity.header?.seedLength ?? 0;
    this.parentId = identity.header?.parentSession;
    this.opts = opts;
    this.agentName = opts.agentName ?? 'dsh';
    this.full = opts.content === 'full';
    this.cap = opts.maxContentLength ?? DEFAULT_MAX_CONTENT_LENGTH;
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
      if (this.turn) out.push(this.finish(this.turn, undefined));
      this.turn = this.newTurn(e.data.turn, e.seq, t);
    } else if (this.turn) {
      const turn = this.turn;
      turn.lastSeq = e.seq;
      turn.lastTime = t;
      this.onTurnEvent(turn, e, t);
      if (e.type === 'turn/end') {
        out.push(this.finish(turn, e.data.reason));
        this.turn = undefined;
      }
    }
    this.prevTime = t;
    return out;
  }

  /** The in-flight turn's spans, ended at its last event and marked incomplete (nothing consumed). */
  openTurn(): MappedTurn | undefined {
    return this.turn ? this.finish(this.turn, undefined) : undefined;
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
        else if (c.type === 'finish') a.finish = c.reason;
        break;
      }
      case 'assistant/message': {
        let a = turn.attempt;
        // A message with no chunks (a known empty stream) is an attempt of its own.
        if (!a || a.done || a.message) a = this.newAttempt(turn, e.seq);
        a.lastSeq = e.seq;
        a.end = t;
        a.message = e.data.message;
        if (e.data.usage) a.usage = e.data.usage;
        if (e.data.interrupted) a.interrupted = true;
        a.done = true;
        for (const b of e.data.message.content) if (b.type === 'tool-call') turn.blockNames.set(b.id, { name: b.name, arguments: b.arguments });
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
        const u: ToolUnit = { firstSeq: e.seq, lastSeq: e.seq, start: t, end: t, step: turn.step, callId: e.data.callId, name: e.data.name, arguments: e.data.arguments, callRecorded: true };
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
    const a: Attempt = { firstSeq: seq, lastSeq: seq, start: this.prevTime, end: this.prevTime, step: turn.step, number: turn.attemptsInStep, interrupted: false, done: false };
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

  // -------------------------------------------------------------------------------------------
  // Spans

  private base(): SpanAttributes {
    return { 'gen_ai.conversation.id': this.sessionId, 'session.id': this.sessionId };
  }

  private finish(turn: TurnBuild, reason: TurnEndReason | undefined): MappedTurn {
    const incomplete = reason === undefined;
    const traceId = traceIdFor(this.sessionId, turn.startSeq);
    const turnSpanId = spanIdFor(this.sessionId, turn.startSeq);
    const truncated: string[] = [];

    const attrs: SpanAttributes = {
      ...this.base(),
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': this.agentName,
      'dsh.turn': turn.turn,
      'dsh.turn.steps': turn.steps,
      'dsh.seq.start': turn.startSeq,
      'dsh.seq.end': turn.lastSeq,
    };
    if (this.parentId !== undefined) attrs['dsh.session.parent_id'] = this.parentId;
    const status: DshSpan['status'] = { code: 'UNSET' };
    if (reason) {
      attrs['dsh.turn.end_reason'] = reason.kind;
      if (reason.kind === 'aborted') attrs['dsh.turn.cancel_cause'] = reason.reason.kind === 'hook' ? `hook: ${reason.reason.reason}` : reason.reason.kind;
      if (reason.kind === 'error') {
        attrs['error.type'] = reason.error.code;
        status.code = 'ERROR';
        status.message = failureText(reason.error);
      }
    } else attrs['dsh.incomplete'] = true;
    if (this.full) {
      if (turn.userMessages.length > 0) this.putJson(attrs, 'gen_ai.input.messages', turn.userMessages.map((m) => toOtelMessage(m)), truncated);
      if (turn.lastOutput) this.putJson(attrs, 'gen_ai.output.messages', [toOtelMessage(turn.lastOutput)], truncated);
    }
    if (truncated.length > 0) attrs['dsh.truncated'] = truncated;

    const spans: DshSpan[] = [
      {
        traceId,
        spanId: turnSpanId,
        name: `invoke_agent ${this.agentName}`,
        kind: 'INTERNAL',
        startTime: turn.start,
        endTime: turn.lastTime,
        attributes: attrs,
        events: [],
        status,
      },
    ];
    for (const u of turn.units) {
      const span = isAttempt(u) ? this.attemptSpan(turn, u) : this.toolSpan(turn, u);
      span.traceId = traceId;
      span.parentSpanId = turnSpanId;
      spans.push(span);
    }
    const redact = this.opts.redact;
    return {
      turn: turn.turn,
      traceId,
      incomplete,
      inherited: turn.startSeq < this.seedLength,
      spans: redact ? spans.map((s) => applyRedaction(s, redact)) : spans,
    };
  }

  private attemptSpan(turn: TurnBuild, a: Attempt): DshSpan {
    const truncated: string[] = [];
    const config = a.header?.config;
    const model = config?.model ?? a.context?.model ?? a.message?.source.model ?? 'unknown';
    const route = config?.provider ?? a.context?.provider ?? a.message?.source.provider;
    const attrs: SpanAttributes = { ...this.base(), 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': model };
    if (route !== undefined) {
      attrs['gen_ai.provider.name'] = PROVIDER_NAME[route] ?? route;
      attrs['dsh.provider.route'] = route;
    }
    if (config?.maxTokens !== undefined) attrs['gen_ai.request.max_tokens'] = config.maxTokens;
    if (config?.temperature !== undefined) attrs['gen_ai.request.temperature'] = config.temperature;
    if (config?.stop !== undefined && Array.isArray(config.stop)) attrs['gen_ai.request.stop_sequences'] = [...config.stop];
    if (config?.reasoningEffort !== undefined) attrs['dsh.request.reasoning_effort'] = config.reasoningEffort;
    attrs['dsh.turn'] = turn.turn;
    attrs['dsh.step'] = a.step;
    attrs['dsh.llm.attempt'] = a.number;
    if (a.retry !== undefined) attrs['dsh.llm.retry'] = a.retry;
    attrs['dsh.seq.start'] = a.firstSeq;
    attrs['dsh.seq.end'] = a.lastSeq;
    if (a.usage) Object.assign(attrs, toOtelUsage(a.usage));

    const status: DshSpan['status'] = { code: 'UNSET' };
    const f = a.finish;
    if (f) {
      attrs['dsh.llm.finish'] = f.kind;
      const mapped = FINISH_REASON[f.kind];
      if (mapped !== undefined) attrs['gen_ai.response.finish_reasons'] = [mapped];
      if (f.kind === 'error') {
        attrs['error.type'] = f.failure.code;
        status.code = 'ERROR';
        status.message = failureText(f.failure);
      }
    }
    if (a.interrupted) attrs['dsh.llm.interrupted'] = true;
    if (unitOpen(a)) attrs['dsh.incomplete'] = true;

    if (this.full) {
      if (a.header?.system !== undefined && typeof a.header.system === 'string') {
        this.putJson(attrs, 'gen_ai.system_instructions', [{ type: 'text', content: a.header.system }], truncated);
      }
      if (a.input) {
        const r = capMessages(a.input, this.cap);
        attrs['gen_ai.input.messages'] = r.value;
        if (r.truncated) truncated.push('gen_ai.input.messages');
      }
      if (a.message) {
        const reason = f ? (FINISH_REASON[f.kind] ?? f.kind) : a.interrupted ? 'interrupted' : 'unknown';
        this.putJson(attrs, 'gen_ai.output.messages', [toOtelMessage(a.message, reason)], truncated);
      }
    }
    if (truncated.length > 0) attrs['dsh.truncated'] = truncated;

    const events: DshSpan['events'] = [];
    if (a.retryEvent) {
      const r = a.retryEvent.data;
      const ev: SpanAttributes = { 'dsh.retry.number': r.retry, 'dsh.retry.delay_ms': r.delayMs, 'dsh.retry.mode': r.mode, 'error.type': r.failure.code, 'dsh.retry.failure_message': r.failure.message };
      if (r.maxRetries !== undefined) ev['dsh.retry.max_retries'] = r.maxRetries;
      events.push({ name: 'llm/retry', time: a.retryEvent.time, attributes: ev });
    }
    return {
      traceId: '',
      spanId: spanIdFor(this.sessionId, a.firstSeq),
      name: `chat ${model}`,
      kind: 'CLIENT',
      startTime: a.start,
      endTime: this.unitEnd(turn, a),
      attributes: attrs,
      events,
      status,
    };
  }

  private toolSpan(turn: TurnBuild, u: ToolUnit): DshSpan {
    const truncated: string[] = [];
    const attrs: SpanAttributes = { ...this.base(), 'gen_ai.operation.name': 'execute_tool' };
    if (u.name !== undefined) attrs['gen_ai.tool.name'] = u.name;
    attrs['gen_ai.tool.call.id'] = u.callId;
    attrs['gen_ai.tool.type'] = 'function';
    attrs['dsh.turn'] = turn.turn;
    attrs['dsh.step'] = u.step;
    attrs['dsh.seq.start'] = u.firstSeq;
    attrs['dsh.seq.end'] = u.lastSeq;
    if (!u.callRecorded) attrs['dsh.tool.call_recorded'] = false;
    const status: DshSpan['status'] = { code: 'UNSET' };
    const r = u.result;
    if (r) {
      const isError = r.error !== undefined || r.message.content[0]?.isError === true;
      if (isError) {
        const code = r.error?.code ?? '_OTHER';
        attrs['error.type'] = code;
        if (r.error) attrs['dsh.tool.error_name'] = r.error.name;
        status.code = 'ERROR';
        status.message = code;
      }
    } else attrs['dsh.incomplete'] = true;
    if (this.full) {
      if (u.arguments !== undefined) this.putString(attrs, 'gen_ai.tool.call.arguments', u.arguments, truncated);
      if (r) this.putString(attrs, 'gen_ai.tool.call.result', blocksText(r.message.content[0]?.content ?? []), truncated);
    }
    if (truncated.length > 0) attrs['dsh.truncated'] = truncated;
    return {
      traceId: '',
      spanId: spanIdFor(this.sessionId, u.firstSeq),
      name: u.name !== undefined ? `execute_tool ${u.name}` : 'execute_tool',
      kind: 'INTERNAL',
      startTime: u.start,
      endTime: this.unitEnd(turn, u),
      attributes: attrs,
      events: [],
      status,
    };
  }

  /** A unit the log never closed ends at the turn's last event (never left open). */
  private unitEnd(turn: TurnBuild, u: Attempt | ToolUnit): number {
    return unitOpen(u) ? turn.lastTime : u.end;
  }

  private putJson(attrs: SpanAttributes, key: string, items: readonly unknown[], truncated: string[]): void {
    const r = capJsonArray(items, this.cap);
    attrs[key] = r.value;
    if (r.truncated) truncated.push(key);
  }

  private putString(attrs: SpanAttributes, key: string, s: string, truncated: string[]): void {
    const r = capString(s, this.cap);
    attrs[key] = r.value;
    if (r.truncated) truncated.push(key);
  }
}
