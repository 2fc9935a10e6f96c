/**
 * Spans from a finished (or cut-off) turn's units: the `invoke_agent` span, then one span per
 * attempt and per tool call, with the GenAI attributes, statuses, optional content and the
 * redaction hook applied.
 */
import { toOtelUsage } from '../model/usage.js';
import type { LlmFailure } from '../model/failure.js';
import type { TurnEndReason } from '../session/events.js';
import { sessionSpanIdFor, sessionTraceIdFor, spanIdFor, traceIdFor } from './ids.js';
import { blocksText, capJsonArray, capMessages, capString, toOtelMessage } from './content.js';
import { applyRedaction } from './redact.js';
import { isAttempt, unitOpen, type Attempt, type ToolUnit, type TurnBuild } from './units.js';
import type { DshSpan, MappedTurn, Redactor, SpanAttributes } from './spans.js';

export interface BuilderConfig {
  sessionId: string;
  /** Turns starting before this seq came with a fork's seed. */
  seedLength: number;
  parentId: string | undefined;
  agentName: string;
  full: boolean;
  cap: number;
  redact: Redactor | undefined;
  traces: 'turn' | 'session';
  endpoints: Readonly<Record<string, string>>;
}

/** `server.address` and `server.port` of a base URL (the scheme's port when none is written). */
export function serverOf(url: string | undefined): { address: string; port: number } | undefined {
  if (url === undefined) return undefined;
  try {
    const u = new URL(url);
    const port = u.port !== '' ? Number(u.port) : u.protocol === 'https:' ? 443 : u.protocol === 'http:' ? 80 : undefined;
    if (port === undefined || u.hostname === '') return undefined;
    return { address: u.hostname.replace(/^\[(.*)\]$/, '$1'), port };
  } catch {
    return undefined;
  }
}

/** dsh finish kinds in the GenAI vocabulary (`gen_ai.response.finish_reasons`). */
const FINISH_REASON: Record<string, string> = { stop: 'stop', 'tool-calls': 'tool_call', 'max-tokens': 'length', error: 'error' };

/** dsh provider routes whose GenAI provider name is well known; other routes pass through. */
const PROVIDER_NAME: Record<string, string> = {
  deepseek: 'deepseek',
  'deepseek-official': 'deepseek',
  openai: 'openai',
  anthropic: 'anthropic',
};

function failureText(f: LlmFailure): string {
  return `${f.code}: ${f.message}`;
}

export class SpanBuilder {
  constructor(private readonly cfg: BuilderConfig) {}

  private base(): SpanAttributes {
    return { 'gen_ai.conversation.id': this.cfg.sessionId, 'session.id': this.cfg.sessionId };
  }

  /** The turn's spans; `reason` is undefined while the turn has no `turn/end` (incomplete). */
  turn(turn: TurnBuild, reason: TurnEndReason | undefined): MappedTurn {
    const incomplete = reason === undefined;
    const perSession = this.cfg.traces === 'session';
    const traceId = perSession ? sessionTraceIdFor(this.cfg.sessionId) : traceIdFor(this.cfg.sessionId, turn.startSeq);
    const turnSpanId = spanIdFor(this.cfg.sessionId, turn.startSeq);
    const truncated: string[] = [];

    const attrs: SpanAttributes = {
      ...this.base(),
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': this.cfg.agentName,
      'dsh.turn': turn.turn,
      'dsh.turn.steps': turn.steps,
      'dsh.seq.start': turn.startSeq,
      'dsh.seq.end': turn.lastSeq,
    };
    if (this.cfg.parentId !== undefined) attrs['dsh.session.parent_id'] = this.cfg.parentId;
    const status: DshSpan['status'] = { code: 'UNSET' };
    if (reason) {
      attrs['dsh.turn.end_reason'] = reason.kind;
      if (reason.kind === 'aborted')
        attrs['dsh.turn.cancel_cause'] = reason.reason.kind === 'hook' ? `hook: ${reason.reason.reason}` : reason.reason.kind;
      if (reason.kind === 'error') {
        attrs['error.type'] = reason.error.code;
        status.code = 'ERROR';
        status.message = failureText(reason.error);
      }
    } else attrs['dsh.incomplete'] = true;
    if (this.cfg.full) {
      if (turn.userMessages.length > 0)
        this.putJson(
          attrs,
          'gen_ai.input.messages',
          turn.userMessages.map((m) => toOtelMessage(m)),
          truncated,
        );
      if (turn.lastOutput) this.putJson(attrs, 'gen_ai.output.messages', [toOtelMessage(turn.lastOutput)], truncated);
    }
    if (truncated.length > 0) attrs['dsh.truncated'] = truncated;

    const turnSpan: DshSpan = {
      traceId,
      spanId: turnSpanId,
      name: `invoke_agent ${this.cfg.agentName}`,
      kind: 'INTERNAL',
      startTime: turn.start,
      endTime: turn.lastTime,
      attributes: attrs,
      events: [],
      status,
    };
    if (perSession) turnSpan.parentSpanId = sessionSpanIdFor(this.cfg.sessionId);
    const spans: DshSpan[] = [turnSpan];
    for (const u of turn.units) {
      const span = isAttempt(u) ? this.attemptSpan(turn, u) : this.toolSpan(turn, u);
      span.traceId = traceId;
      span.parentSpanId = turnSpanId;
      spans.push(span);
    }
    const redact = this.cfg.redact;
    return {
      turn: turn.turn,
      traceId,
      incomplete,
      inherited: turn.startSeq < this.cfg.seedLength,
      spans: redact ? spans.map((s) => applyRedaction(s, redact)) : spans,
    };
  }

  /**
   * The root of a one-trace-per-session export: from the first exported turn's start to the
   * last one's end, the parent of every turn span.
   */
  sessionSpan(range: { startSeq: number; endSeq: number; start: number; end: number; turns: number; incomplete: boolean }): DshSpan {
    const attrs: SpanAttributes = {
      ...this.base(),
      'gen_ai.agent.name': this.cfg.agentName,
      'dsh.session.turns': range.turns,
      'dsh.seq.start': range.startSeq,
      'dsh.seq.end': range.endSeq,
    };
    if (this.cfg.parentId !== undefined) attrs['dsh.session.parent_id'] = this.cfg.parentId;
    if (range.incomplete) attrs['dsh.incomplete'] = true;
    const span: DshSpan = {
      traceId: sessionTraceIdFor(this.cfg.sessionId),
      spanId: sessionSpanIdFor(this.cfg.sessionId),
      name: `session ${this.cfg.agentName}`,
      kind: 'INTERNAL',
      startTime: range.start,
      endTime: range.end,
      attributes: attrs,
      events: [],
      status: { code: 'UNSET' },
    };
    return this.cfg.redact ? applyRedaction(span, this.cfg.redact) : span;
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
      const server = serverOf(this.cfg.endpoints[route]);
      if (server) {
        attrs['server.address'] = server.address;
        attrs['server.port'] = server.port;
      }
    }
    if (a.response?.model !== undefined) attrs['gen_ai.response.model'] = a.response.model;
    if (a.response?.id !== undefined) attrs['gen_ai.response.id'] = a.response.id;
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

    if (this.cfg.full) {
      if (a.header?.system !== undefined && typeof a.header.system === 'string') {
        this.putJson(attrs, 'gen_ai.system_instructions', [{ type: 'text', content: a.header.system }], truncated);
      }
      if (a.input) {
        const r = capMessages(a.input, this.cfg.cap);
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
      const ev: SpanAttributes = {
        'dsh.retry.number': r.retry,
        'dsh.retry.delay_ms': r.delayMs,
        'dsh.retry.mode': r.mode,
        'error.type': r.failure.code,
        'dsh.retry.failure_message': r.failure.message,
      };
      if (r.maxRetries !== undefined) ev['dsh.retry.max_retries'] = r.maxRetries;
      events.push({ name: 'llm/retry', time: a.retryEvent.time, attributes: ev });
    }
    return {
      traceId: '',
      spanId: spanIdFor(this.cfg.sessionId, a.firstSeq),
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
    if (this.cfg.full) {
      if (u.arguments !== undefined) this.putString(attrs, 'gen_ai.tool.call.arguments', u.arguments, truncated);
      if (r) this.putString(attrs, 'gen_ai.tool.call.result', blocksText(r.message.content[0]?.content ?? []), truncated);
    }
    if (truncated.length > 0) attrs['dsh.truncated'] = truncated;
    return {
      traceId: '',
      spanId: spanIdFor(this.cfg.sessionId, u.firstSeq),
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
    const r = capJsonArray(items, this.cfg.cap);
    attrs[key] = r.value;
    if (r.truncated) truncated.push(key);
  }

  private putString(attrs: SpanAttributes, key: string, s: string, truncated: string[]): void {
    const r = capString(s, this.cfg.cap);
    attrs[key] = r.value;
    if (r.truncated) truncated.push(key);
  }
}
