/**
 * The viewer's index of a log, built in one pass and extended as events are appended: the
 * top-level segments (turns, and runs of events outside any turn), each turn's steps, per-step
 * and per-turn counts and token usage, tool call/result pairs, and the seqs that searching and
 * history derivation need. Everything else is read from the log on demand, so the index stays
 * small next to the log (a million-event log has a few thousand turns).
 *
 * Payloads are read defensively: plugin event data is only required to be JSON, and a log's
 * strings may be anything.
 */
import { foldSpaces } from '../../model/unsafe-chars.js';
import { SURFACE_EVENT_TYPES, type SessionEvent } from '../../session/index.js';
import { toolResultCallId } from '../../session/trace.js';
import { cap, str, type Text } from './text.js';
import type { EndReason, Usage } from './views.js';

// The view shapes live with the other views (the page's type check imports them); kept here by name too.
export type { EndReason, Usage };

export interface StepEntry {
  step: number;
  start: number;
  /** Seq of `step/end`; absent while the step is open. */
  end?: number;
  startTime: number;
  endTime?: number;
  chunks: number;
  /** Events other than chunks, step/start and step/end included. */
  others: number;
  toolCalls: number;
  toolErrors: number;
  retries: number;
  usage: Usage;
  /** The last stream's finish reason: `stop`, `tool-calls`, `error RATE_LIMIT`, … */
  finish?: string;
}

export interface TurnSegment {
  kind: 'turn';
  index: number;
  turn: number;
  start: number;
  /** Seq of `turn/end`; absent while the turn is open. */
  end?: number;
  startTime: number;
  endTime?: number;
  steps: StepEntry[];
  toolCalls: number;
  toolErrors: number;
  retries: number;
  usage: Usage;
  reason?: EndReason;
  /** The turn's first user message (a prompt, or else any user message). */
  prompt?: { seq: number; text: Text; fromUser: boolean };
  model?: string;
}

export interface OutsideSegment {
  kind: 'outside';
  index: number;
  start: number;
  /** Inclusive; grows while events keep arriving outside a turn. */
  end: number;
}

export type Segment = TurnSegment | OutsideSegment;

export function emptyUsage(): Usage {
  return { messages: 0, input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 };
}

function obj(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function n(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

function addUsage(to: Usage, u: unknown): void {
  if (typeof u !== 'object' || u === null) return;
  const o = u as Record<string, unknown>;
  to.messages++;
  to.input += n(o.inputTokens);
  to.cacheRead += n(o.cacheReadTokens);
  to.cacheWrite += n(o.cacheWriteTokens);
  to.output += n(o.outputTokens);
  to.reasoning += n(o.reasoningTokens);
}

/** Text of a content array (text blocks only), for previews. */
export function contentText(content: unknown): string {
  if (!Array.isArray(content)) return '';
  let s = '';
  for (const b of content) {
    const o = obj(b);
    if (o.type === 'text' && typeof o.text === 'string') s += (s ? '\n' : '') + o.text;
  }
  return s;
}

export function endReason(reason: unknown): EndReason {
  const r = obj(reason);
  const kind = typeof r.kind === 'string' ? r.kind : 'unknown';
  if (kind === 'error') {
    const f = obj(r.error);
    const out: EndReason = { kind, detail: `${str(f.code)}${typeof f.status === 'number' ? ` (HTTP ${f.status})` : ''}` };
    if (typeof f.message === 'string') out.message = cap(f.message, 2000);
    return out;
  }
  if (kind === 'aborted') {
    const c = obj(r.reason);
    return { kind, detail: `${str(c.kind)}${typeof c.reason === 'string' ? `: ${c.reason.slice(0, 200)}` : ''}` };
  }
  return { kind };
}

export function finishLabel(chunk: Record<string, unknown>): string {
  const r = obj(chunk.reason);
  const kind = str(r.kind);
  if (kind === 'error' || kind === 'aborted') return `${kind} ${str(obj(r.failure).code)}`;
  return kind;
}

/** Index of the last element ≤ `x` in an ascending array, or −1. */
export function floorIndex(a: readonly number[], x: number): number {
  let lo = 0;
  let hi = a.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]! <= x) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

export class LogIndex {
  readonly segments: Segment[] = [];
  /** Seqs of events other than chunks, ascending (what search reads). */
  readonly others: number[] = [];
  /** Seqs of surface events (what history derivation reads). */
  readonly surfaceSeqs: number[] = [];
  /** Seqs of `request/header` events. */
  readonly headerSeqs: number[] = [];
  /** Tool call seq → its result's seq, and back. */
  readonly resultOf = new Map<number, number>();
  readonly callOf = new Map<number, number>();
  readonly usage = emptyUsage();
  length = 0;
  turns = 0;
  steps = 0;
  toolCalls = 0;
  toolErrors = 0;
  retries = 0;
  lastTime: number | undefined;
  private segmentStarts: number[] = [];
  private open: TurnSegment | undefined;
  private openStep: StepEntry | undefined;
  /** Unanswered calls of the open step: callId → call seq. */
  private pending = new Map<string, number>();
  /** Segments whose summary changed since the last `takeChanged()`. */
  private changed = new Set<number>();

  add(e: SessionEvent): void {
    if (e.seq !== this.length) throw new RangeError(`the index expected seq ${this.length}, got ${e.seq}`);
    this.length++;
    this.lastTime = e.time;
    const t = e.type;
    const turn = this.open;
    const step = this.openStep;
    if (t !== 'assistant/chunk') {
      this.others.push(e.seq);
      if (SURFACE_EVENT_TYPES.has(t)) this.surfaceSeqs.push(e.seq);
    }
    if (t === 'turn/start') {
      const seg: TurnSegment = {
        kind: 'turn',
        index: this.segments.length,
        turn: n(obj(e.data).turn),
        start: e.seq,
        startTime: e.time,
        steps: [],
        toolCalls: 0,
        toolErrors: 0,
        retries: 0,
        usage: emptyUsage(),
      };
      this.pushSegment(seg);
      this.open = seg;
      this.openStep = undefined;
      this.turns++;
      return;
    }
    if (turn === undefined) {
      const last = this.segments[this.segments.length - 1];
      if (last?.kind === 'outside' && last.end === e.seq - 1) last.end = e.seq;
      else this.pushSegment({ kind: 'outside', index: this.segments.length, start: e.seq, end: e.seq });
      this.changed.add(this.segments.length - 1);
      if (t === 'request/header') this.headerSeqs.push(e.seq);
      return;
    }
    this.changed.add(turn.index);
    if (step) {
      if (t === 'assistant/chunk') step.chunks++;
      else step.others++;
    }
    switch (t) {
      case 'turn/end':
        turn.end = e.seq;
        turn.endTime = e.time;
        turn.reason = endReason(obj(e.data).reason);
        this.open = undefined;
        this.openStep = undefined;
        return;
      case 'step/start': {
        const s: StepEntry = {
          step: n(obj(e.data).step),
          start: e.seq,
          startTime: e.time,
          chunks: 0,
          others: 1,
          toolCalls: 0,
          toolErrors: 0,
          retries: 0,
          usage: emptyUsage(),
        };
        turn.steps.push(s);
        this.openStep = s;
        this.pending.clear();
        this.steps++;
        return;
      }
      case 'step/end':
        if (step) {
          step.end = e.seq;
          step.endTime = e.time;
        }
        this.openStep = undefined;
        return;
      case 'assistant/chunk': {
        const c = obj(obj(e.data).chunk);
        if (c.type === 'finish' && step) step.finish = finishLabel(c);
        return;
      }
      case 'assistant/message': {
        const d = obj(e.data);
        addUsage(turn.usage, d.usage);
        addUsage(this.usage, d.usage);
        if (step) addUsage(step.usage, d.usage);
        const src = obj(obj(d.message).source);
        if (src.provider !== undefined) turn.model = `${str(src.provider)}/${str(src.model)}`.slice(0, 200);
        return;
      }
      case 'user/message':
        if (turn.prompt === undefined || (!turn.prompt.fromUser && obj(obj(e.data).source).kind === 'user')) {
          turn.prompt = {
            seq: e.seq,
            text: cap(foldSpaces(contentText(obj(e.data).content), true), 200),
            fromUser: obj(obj(e.data).source).kind === 'user',
          };
        }
        return;
      case 'tool/call': {
        const id = obj(e.data).callId;
        if (typeof id === 'string') this.pending.set(id, e.seq);
        turn.toolCalls++;
        this.toolCalls++;
        if (step) step.toolCalls++;
        return;
      }
      case 'tool/result': {
        const d = obj(e.data);
        const first = obj((obj(d.message).content as unknown[] | undefined)?.[0]);
        if (d.error !== undefined || first.isError === true) {
          turn.toolErrors++;
          this.toolErrors++;
          if (step) step.toolErrors++;
        }
        if (e.surfaceOp !== undefined && e.surfaceOp !== 'append') return;
        const id = toolResultCallId(e.data);
        const call = id === undefined ? undefined : this.pending.get(id);
        if (call !== undefined && id !== undefined) {
          this.pending.delete(id);
          this.resultOf.set(call, e.seq);
          this.callOf.set(e.seq, call);
        }
        return;
      }
      case 'llm/retry':
        turn.retries++;
        this.retries++;
        if (step) step.retries++;
        return;
      case 'request/header':
        this.headerSeqs.push(e.seq);
        return;
      default:
        return;
    }
  }

  private pushSegment(s: Segment): void {
    this.segments.push(s);
    this.segmentStarts.push(s.start);
    this.changed.add(s.index);
  }

  /** Indexes of segments that were added or changed since the last call. */
  takeChanged(): number[] {
    const out = [...this.changed].sort((a, b) => a - b);
    this.changed.clear();
    return out;
  }

  /** The segment holding `seq`, and the step when it is inside one. */
  locate(seq: number): { segment: Segment; step?: StepEntry } | undefined {
    if (!(seq >= 0 && seq < this.length)) return undefined;
    const i = floorIndex(this.segmentStarts, seq);
    const segment = this.segments[i];
    if (!segment) return undefined;
    if (segment.kind === 'outside') return { segment };
    const steps = segment.steps;
    let lo = 0;
    let hi = steps.length - 1;
    let k = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (steps[mid]!.start <= seq) {
        k = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    const s = k >= 0 ? steps[k]! : undefined;
    if (s && (s.end === undefined || seq <= s.end)) return { segment, step: s };
    return { segment };
  }

  /** Last seq of a segment, or of the log for an open one. */
  segmentEnd(s: Segment): number {
    return s.kind === 'outside' ? s.end : (s.end ?? this.length - 1);
  }

  stepEnd(s: StepEntry): number {
    return s.end ?? this.length - 1;
  }
}
