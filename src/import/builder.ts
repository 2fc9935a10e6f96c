/**
 * Builds an ordinary dsh session from another agent's records. Every importer speaks to this one
 * builder in the source's terms (a prompt, context input, one model response with its tool calls,
 * a tool result by call id, a compaction, how a turn ended), and the builder places them on the
 * dsh trace: turns and steps nest and number, each model response is one step, a result lands in
 * the step of its call, input waits for the next step, a model change is a `request/context`.
 * What cannot be placed is counted as a loss (per field) instead of being dropped in silence.
 *
 * The events are validated by `Session.restore` exactly as a stored log is: a mapping bug can
 * never produce a log that dsh itself would refuse.
 */
import type { AssistantMessage, ContentBlock, PluginSource, ToolCallBlock, ToolResultMessage, UserMessage } from '../model/message.js';
import type { TokenUsage } from '../model/usage.js';
import type { ToolSchema } from '../model/request.js';
import { Session, type SessionEventType, type SessionHeader, type SurfaceOp, type TurnEndReason } from '../session/index.js';
import { LossLedger, type Loss } from './losses.js';

/** The recorded facts of an import, written as the first event (log-only, ignorable). */
export const IMPORT_SOURCE_EVENT = 'import/source';
/** A cost the source recorded for one model response or the whole session (log-only, ignorable). */
export const IMPORT_COST_EVENT = 'import/cost';
/** Usage the source recorded only as session totals (no per-response figures; log-only, ignorable). */
export const IMPORT_USAGE_EVENT = 'import/usage';
/** A child session (a sidechain, a subagent) started by a call of this session (log-only, ignorable). */
export const IMPORT_CHILD_EVENT = 'import/child-session';

interface Draft {
  type: string;
  seq: number;
  time: number;
  data: unknown;
  surfaceOp?: SurfaceOp;
  sourceEventSeqs?: number[];
  ignorable?: true;
}

export interface Route {
  provider: string;
  model: string;
  contextWindow?: number;
}

export interface HeaderFields {
  id: string;
  createdAt?: number;
  cwd?: string;
  parentSession?: string;
  origin?: 'subagent';
  delegationDepth?: number;
}

export interface SourceFacts {
  format: string;
  sourceId?: string | undefined;
  tool?: string | undefined;
  toolVersion?: string | undefined;
  [extra: string]: unknown;
}

export interface AssistantInput {
  content: ContentBlock[];
  route?: Route;
  usage?: TokenUsage;
  /** Cost the source recorded for this response, in USD. */
  costUsd?: number;
  time?: number;
  id?: string;
  /** The response was cut off (cancelled mid-stream). */
  interrupted?: boolean;
}

export interface ResultInput {
  callId: string;
  content: ContentBlock[];
  isError?: boolean;
  time?: number;
  id?: string;
}

export interface BuiltSession {
  session: Session;
  header: SessionHeader;
  /** Events mapped from the source (the session also holds the seed marker after them). */
  eventCount: number;
  /** Source line of the record each event came from. */
  lineOf(seq: number): number | undefined;
  losses: Loss[];
  notes: string[];
  /** Source records read (a document's entries have no lines to count). */
  records?: number;
}

const ZERO_WIDTH = 0;

export class SessionBuilder {
  readonly losses = new LossLedger();
  readonly notes: string[] = [];
  /** The source line the next events come from; importers set it per record. */
  line: number | undefined;
  /** Source records read, when they are not lines (the entries of a JSON document). */
  records: number | undefined;

  private readonly drafts: Draft[] = [];
  private readonly lines: (number | undefined)[] = [];
  private readonly surface: number[] = [];
  private turn = 0;
  private turnOpen = false;
  private step = 0;
  private stepOpen = false;
  /** Tool calls of the open step: call id → its tool/call seq and whether it has a result. */
  private calls = new Map<string, { seq: number; name: string; answered: boolean }>();
  /** Call ids of earlier steps of the open turn (a late result for one of them cannot be placed). */
  private turnCalls = new Set<string>();
  private pending: { message: UserMessage; time: number; line: number | undefined }[] = [];
  private route: Route = { provider: 'unknown', model: 'unknown' };
  private loggedRoute: string | undefined;
  private pendingHeader: { system?: string; tools?: ToolSchema[] } | undefined;
  private headerCount = 0;
  private turnReason: TurnEndReason | undefined;
  private lastTime = 0;
  private ids = 0;
  private compactions = 0;
  private readonly facts: SourceFacts;
  private readonly children: { sessionId: string; callId?: string; label?: string }[] = [];

  constructor(
    private readonly head: HeaderFields,
    facts: SourceFacts,
  ) {
    this.facts = facts;
    if (head.createdAt !== undefined) this.lastTime = head.createdAt;
    // The import's own record comes first; its losses are filled in by finish().
    this.push(IMPORT_SOURCE_EVENT, {}, { ignorable: true });
  }

  // ---------------------------------------------------------------------------------------------
  // Times and ids

  /** An event time: the source's when it has a usable one, else the previous event's. */
  time(t: number | undefined): number {
    if (t !== undefined && Number.isFinite(t) && t >= 0) this.lastTime = Math.min(Math.round(t), Number.MAX_SAFE_INTEGER);
    return this.lastTime;
  }

  private messageId(given: string | undefined, prefix: string): string {
    return given !== undefined && given !== '' ? given : `${prefix}-${++this.ids}`;
  }

  private push(type: SessionEventType | string, data: unknown, extra: Partial<Draft> = {}, time?: number): number {
    const seq = this.drafts.length;
    this.drafts.push({ type, seq, time: time ?? this.lastTime, data, ...extra });
    this.lines.push(this.line);
    if (extra.surfaceOp === 'append') this.surface.push(seq);
    return seq;
  }

  // ---------------------------------------------------------------------------------------------
  // Structure

  get openTurn(): number | undefined {
    return this.turnOpen ? this.turn : undefined;
  }

  /** Start a turn, ending an open one first (as it ended, or completed). */
  beginTurn(time?: number): void {
    const t = this.time(time);
    if (this.turnOpen) this.endTurn(undefined, t);
    this.turn += 1;
    this.turnOpen = true;
    this.step = 0;
    this.turnReason = undefined;
    this.turnCalls.clear();
    this.push('turn/start', { turn: this.turn });
  }

  /**
   * How the open turn ended, when the source says so before the turn is over (an aborted or
   * failed response, a truncated one). The first non-completed reason sticks, like dsh's
   * max-tokens.
   */
  setTurnReason(reason: TurnEndReason): void {
    if (this.turnReason === undefined || this.turnReason.kind === 'completed') this.turnReason = reason;
  }

  endTurn(reason?: TurnEndReason, time?: number): void {
    if (!this.turnOpen) return;
    const t = this.time(time);
    this.closeStep();
    // Input that never reached a model call still entered the turn.
    this.flushPending();
    this.push('turn/end', { turn: this.turn, reason: reason ?? this.turnReason ?? { kind: 'completed' } }, {}, t);
    this.turnOpen = false;
    this.turnReason = undefined;
  }

  private closeStep(): void {
    if (!this.stepOpen) return;
    this.push('step/end', { turn: this.turn, step: this.step });
    this.stepOpen = false;
    for (const id of this.calls.keys()) this.turnCalls.add(id);
    this.calls.clear();
  }

  private openStep(): void {
    if (!this.turnOpen) this.beginTurn();
    this.closeStep();
    this.step += 1;
    this.stepOpen = true;
    this.push('step/start', { turn: this.turn, step: this.step });
    this.flushPending();
  }

  private flushPending(): void {
    for (const p of this.pending.splice(0)) {
      const saved = this.line;
      this.line = p.line;
      this.push('user/message', p.message, { surfaceOp: 'append' }, p.time);
      this.line = saved;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Input

  /** A user's prompt: a new turn, entered at its first step. */
  prompt(content: ContentBlock[], opts: { time?: number; id?: string } = {}): void {
    const t = this.time(opts.time);
    this.beginTurn(t);
    this.queue(content, { kind: 'user' }, t, opts.id);
  }

  /**
   * Input that is not a prompt (instructions, environment context, a user message while the turn
   * runs): entered at the next step, or the next turn if none is open.
   */
  input(content: ContentBlock[], source: UserMessage['source'], opts: { time?: number; id?: string } = {}): void {
    this.queue(content, source, this.time(opts.time), opts.id);
  }

  private queue(content: ContentBlock[], source: UserMessage['source'], time: number, id: string | undefined): void {
    const message: UserMessage = { id: this.messageId(id, 'user'), role: 'user', content, source };
    this.pending.push({ message, time, line: this.line });
  }

  /** The model in use from now on (a `request/context` at the next response when it changed). */
  setRoute(route: Route): void {
    if (route.provider === '' || route.model === '') return;
    this.route = { ...route };
  }

  /** The system prompt and tools the source recorded (a `request/header` at the next response). */
  setSystem(system: string | undefined, tools?: ToolSchema[]): void {
    this.pendingHeader = { ...(system !== undefined && system !== '' ? { system } : {}), ...(tools?.length ? { tools } : {}) };
  }

  // ---------------------------------------------------------------------------------------------
  // Model output

  /** One model response: a new step holding the message and a `tool/call` per tool-call block. */
  assistant(a: AssistantInput): number {
    const t = this.time(a.time);
    if (a.route) this.setRoute(a.route);
    this.openStep();
    const route = this.route;
    const key = `${route.provider}\u0000${route.model}\u0000${route.contextWindow ?? ''}`;
    if (this.pendingHeader !== undefined) {
      const h = this.pendingHeader;
      this.pendingHeader = undefined;
      this.push(
        'request/header',
        {
          header: { config: { provider: route.provider, model: route.model }, ...h },
          reason: this.headerCount++ === 0 ? 'initial' : 'change',
        },
        {},
        t,
      );
    }
    if (key !== this.loggedRoute) {
      this.loggedRoute = key;
      this.push(
        'request/context',
        {
          provider: route.provider,
          model: route.model,
          ...(route.contextWindow !== undefined ? { contextWindow: route.contextWindow } : {}),
        },
        {},
        t,
      );
    }
    // Call ids must be unique in a step; a source that repeats one gets a suffix (counted).
    const content: ContentBlock[] = [];
    const seen = new Set<string>();
    for (const b of a.content) {
      if (b.type !== 'tool-call') {
        content.push(b);
        continue;
      }
      let id = b.id === '' ? `call-${this.drafts.length}-${seen.size + 1}` : b.id;
      if (seen.has(id)) {
        this.losses.add('tool call id (repeated in one response)', 'renamed with a #n suffix so each call keeps its own result', this.line);
        let n = 2;
        while (seen.has(`${id}#${n}`)) n++;
        id = `${id}#${n}`;
      }
      seen.add(id);
      content.push({ ...b, id });
    }
    const message: AssistantMessage = {
      id: this.messageId(a.id, 'assistant'),
      role: 'assistant',
      content,
      source: { kind: 'model', provider: route.provider, model: route.model },
    };
    const data: Record<string, unknown> = { turn: this.turn, step: this.step, message };
    if (a.usage) data.usage = a.usage;
    if (a.interrupted) data.interrupted = true;
    const seq = this.push('assistant/message', data, { surfaceOp: 'append' }, t);
    if (a.costUsd !== undefined && Number.isFinite(a.costUsd) && a.costUsd >= 0) {
      this.push(IMPORT_COST_EVENT, { turn: this.turn, step: this.step, messageSeq: seq, usd: a.costUsd }, { ignorable: true }, t);
    }
    for (const b of content) {
      if (b.type !== 'tool-call') continue;
      const callSeq = this.push(
        'tool/call',
        { turn: this.turn, step: this.step, callId: b.id, name: b.name, arguments: b.arguments },
        {},
        t,
      );
      this.calls.set(b.id, { seq: callSeq, name: b.name, answered: false });
    }
    return seq;
  }

  /** Is this call id waiting for its result in the open step? */
  awaits(callId: string): boolean {
    const c = this.calls.get(callId);
    return c !== undefined && !c.answered;
  }

  /** Call ids of the open step still waiting for a result, in call order. */
  unanswered(): string[] {
    return [...this.calls].filter(([, c]) => !c.answered).map(([id]) => id);
  }

  /**
   * A tool result, paired with its call by id. A result whose call is not waiting in the open step
   * (unknown id, a call of an earlier step, a second result) cannot be a `tool/result`: its text is
   * kept as a user message from the import (so nothing is hidden) and the pairing is counted lost.
   */
  result(r: ResultInput): void {
    const t = this.time(r.time);
    const call = this.calls.get(r.callId);
    if (call === undefined || call.answered) {
      const why = call?.answered
        ? 'a second result for one call'
        : this.turnCalls.has(r.callId)
          ? 'its call was in an earlier step'
          : 'no call with this id precedes it';
      this.losses.add('tool result pairing', `${why}; kept as a user message from the import`, this.line);
      const source: PluginSource = { kind: 'plugin', plugin: 'import', unpairedToolResult: r.callId };
      const text = r.content.length ? r.content : [{ type: 'text' as const, text: '' }];
      if (this.stepOpen)
        this.push('user/message', { id: this.messageId(r.id, 'user'), role: 'user', content: text, source }, { surfaceOp: 'append' }, t);
      else this.queue(text, source, t, r.id);
      return;
    }
    call.answered = true;
    const message: ToolResultMessage = {
      id: this.messageId(r.id, 'tool'),
      role: 'user',
      content: [{ type: 'tool-result', toolCallId: r.callId, content: r.content, ...(r.isError ? { isError: true } : {}) }],
      source: { kind: 'tool', callId: r.callId },
    };
    const data: Record<string, unknown> = { turn: this.turn, step: this.step, message };
    if (r.isError) data.error = { name: 'ToolError', code: 'TOOL_FAILED' };
    this.push('tool/result', data, { surfaceOp: 'append', sourceEventSeqs: [call.seq] }, t);
  }

  // ---------------------------------------------------------------------------------------------
  // Compaction, children, plugin facts

  /** Seq of the last surface node so far (undefined when the surface is empty). */
  get lastSurfaceSeq(): number | undefined {
    return this.surface[this.surface.length - 1];
  }

  /** Seq of the first surface node mapped from source line `line` or a later one (undefined if none). */
  firstSeqFromLine(line: number): number | undefined {
    return this.surface.find((seq) => (this.lines[seq] ?? -1) >= line);
  }

  /** Seq the next event will get. */
  get nextSeq(): number {
    return this.drafts.length;
  }

  /**
   * A compaction: the summary replaces the surface from its head up to (not including) the node
   * `keepFrom` (a seq), or the whole surface. Recorded as dsh records it: `compaction/start`,
   * `compaction/summary`, the checkpoint `user/message` replacing the span, `compaction/end`.
   */
  compact(summary: ContentBlock[], opts: { time?: number; keepFrom?: number; tokensBefore?: number } = {}): void {
    const t = this.time(opts.time);
    this.flushPendingIfStep();
    let end = this.surface.length;
    if (opts.keepFrom !== undefined) {
      const i = this.surface.findIndex((s) => s >= opts.keepFrom!);
      end = i < 0 ? this.surface.length : i;
    }
    const shadowed = this.surface.slice(0, end);
    const compactionId = `import-compaction-${++this.compactions}`;
    const turn = this.turnOpen ? this.turn : null;
    const startSeq = this.push('compaction/start', { compactionId, turn }, {}, t);
    const source: PluginSource = { kind: 'plugin', plugin: 'compact', compactionId };
    if (shadowed.length === 0) {
      // Nothing before it to replace (the source compacted an empty history): the summary is new input.
      this.push(
        'user/message',
        { id: this.messageId(undefined, 'checkpoint'), role: 'user', content: summary, source },
        { surfaceOp: 'append' },
        t,
      );
    } else {
      const range = { start: shadowed[0]!, end: shadowed[shadowed.length - 1]! };
      const summarySeq = this.push(
        'compaction/summary',
        {
          compactionId,
          summary,
          shadowedRange: range,
          shadowedSeqs: shadowed,
          shadowedTokenCount:
            opts.tokensBefore !== undefined && Number.isSafeInteger(opts.tokensBefore) && opts.tokensBefore >= 0 ? opts.tokensBefore : 0,
          provider: this.route.provider,
          model: this.route.model,
        },
        {},
        t,
      );
      const seq = this.push(
        'user/message',
        { id: this.messageId(undefined, 'checkpoint'), role: 'user', content: summary, source },
        { surfaceOp: { op: 'replace', start: range.start, end: range.end }, sourceEventSeqs: [startSeq, summarySeq, ...shadowed] },
        t,
      );
      this.surface.splice(0, end, seq);
    }
    this.push('compaction/end', { compactionId, turn }, {}, t);
  }

  private flushPendingIfStep(): void {
    if (this.stepOpen) this.flushPending();
  }

  /** A child session started from this one (by the call `callId`, when known). */
  child(sessionId: string, opts: { callId?: string; label?: string; time?: number } = {}): void {
    const entry = {
      sessionId,
      ...(opts.callId !== undefined ? { callId: opts.callId } : {}),
      ...(opts.label !== undefined ? { label: opts.label } : {}),
    };
    this.children.push(entry);
    this.push(IMPORT_CHILD_EVENT, entry, { ignorable: true }, this.time(opts.time));
  }

  /** A log-only event dsh itself writes (`session/title`, …), at the current time. */
  record(type: string, data: unknown, opts: { ignorable?: true; time?: number } = {}): number {
    return this.push(type, data, opts.ignorable ? { ignorable: true } : {}, this.time(opts.time));
  }

  /** Usage the source reports after the response it belongs to (only if that response has none). */
  attachUsage(messageSeq: number, usage: TokenUsage): boolean {
    const d = this.drafts[messageSeq];
    if (d?.type !== 'assistant/message') return false;
    const data = d.data as Record<string, unknown>;
    if (data.usage !== undefined) return false;
    data.usage = usage;
    return true;
  }

  /** Session totals recorded by the source when it records no per-response usage. */
  totals(t: { usage?: TokenUsage; costUsd?: number; apiCalls?: number }): void {
    const data: Record<string, unknown> = {};
    if (t.usage) data.usage = t.usage;
    if (t.costUsd !== undefined && Number.isFinite(t.costUsd) && t.costUsd >= 0) data.usd = t.costUsd;
    if (t.apiCalls !== undefined && Number.isSafeInteger(t.apiCalls) && t.apiCalls >= 0) data.apiCalls = t.apiCalls;
    if (Object.keys(data).length) this.push(IMPORT_USAGE_EVENT, data, { ignorable: true });
  }

  // ---------------------------------------------------------------------------------------------

  /**
   * The session. A turn still open is closed: `interrupted` when the source stopped with calls
   * unanswered or said it was cut off (`cutOff`), otherwise as the source said it ended.
   */
  finish(opts: { cutOff?: boolean } = {}): BuiltSession {
    if (this.turnOpen) {
      const midTurn = opts.cutOff === true || this.unanswered().length > 0;
      if (midTurn) this.notes.push(`the source ends in the middle of turn ${this.turn}; it is closed as interrupted`);
      this.endTurn(midTurn ? { kind: 'interrupted' } : undefined);
    }
    if (this.pending.length) {
      // Input after the last turn (never answered): its own turn, so it is not lost.
      this.beginTurn();
      this.endTurn();
    }
    const losses = this.losses.list();
    this.drafts[0]!.data = {
      ...stripUndefined(this.facts),
      losses: losses.map((l) => ({
        field: l.field,
        count: l.count,
        why: l.why,
        ...(l.firstLine !== undefined ? { firstLine: l.firstLine } : {}),
      })),
      ...(this.children.length ? { children: this.children } : {}),
    };
    const header: SessionHeader = {
      version: 0,
      id: this.head.id,
      createdAt: Math.max(ZERO_WIDTH, Math.round(this.head.createdAt ?? this.drafts[1]?.time ?? 0)),
    };
    if (this.head.cwd !== undefined) header.cwd = this.head.cwd;
    if (this.head.parentSession !== undefined) header.parentSession = this.head.parentSession;
    if (this.head.origin !== undefined) header.origin = this.head.origin;
    if (this.head.delegationDepth !== undefined) header.delegationDepth = this.head.delegationDepth;
    const eventCount = this.drafts.length;
    const session = Session.restore(header, this.drafts as unknown[]);
    const lines = this.lines;
    return {
      session,
      header: session.header,
      eventCount,
      lineOf: (seq) => lines[seq],
      losses,
      notes: this.notes,
      ...(this.records !== undefined ? { records: this.records } : {}),
    };
  }
}

function stripUndefined(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out;
}

/** A tool-call block with arguments as the raw text dsh keeps (objects are serialised). */
export function toolCall(id: string, name: string, args: unknown): ToolCallBlock {
  return { type: 'tool-call', id, name, arguments: typeof args === 'string' ? args : (JSON.stringify(args ?? {}) ?? '{}') };
}
