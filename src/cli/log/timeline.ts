/**
 * The timeline model behind `dsh log show`: one entry per event worth a line, with runs of
 * stream chunks collapsed to counts, indented by turn and step. Built separately from its
 * rendering so a later `dsh view` can draw the same entries differently. Every string in an
 * entry is already safe to print.
 */
import { isChunkRun, stringifyJson, type ChunkRunView, type SessionEvent } from '../../session/index.js';
import type { StreamChunk } from '../../model/stream.js';
import type { JsonValue } from '../../model/json.js';
import type { ContentBlock } from '../../model/message.js';
import type { LlmFailure } from '../../model/failure.js';
import {
  argsPreview,
  blockLine,
  flattenText,
  formatFailure,
  formatImageRef,
  formatSource,
  formatTurnEnd,
  formatUsage,
  type Widths,
} from '../format.js';
import { count, oneLine, plural, preview, truncate } from '../text.js';

export type Tone = 'strong' | 'ok' | 'warn' | 'error' | 'dim';

export interface Entry {
  seq: number;
  /** Last seq of a collapsed run. */
  lastSeq?: number | undefined;
  /** 0 outside turns, 1 inside a turn, 2 inside a step. */
  depth: number;
  head: string;
  details?: string[] | undefined;
  tone?: Tone | undefined;
  /** Written by crash repair at load, not read from the file. */
  repaired?: boolean | undefined;
}

export interface TimelineOptions {
  widths: Widths;
  /** Events with seq ≥ this were added by crash repair. */
  fileEventCount: number;
}

/** The delta chunk types, and the names a stream's line gives their counts. */
const DELTA_TYPES = ['text-delta', 'reasoning-delta', 'tool-call-delta'] as const;
const DELTA_NAMES = ['text', 'reasoning', 'tool-call'] as const;

/**
 * Counts of one stream's chunks, fed one chunk at a time or a compact run at a time (a loaded
 * log's runs are counted by their kind and length, never materialised as events). The three
 * delta kinds are counted in fixed slots, named in the order each was first seen.
 */
class ChunkTally {
  private readonly deltas = [0, 0, 0];
  /** Delta kinds (indices of DELTA_TYPES) in the order first seen. */
  private readonly order: number[] = [];
  blocks = 0;
  usage = 0;
  readonly finishes: string[] = [];
  readonly other = new Map<string, number>();
  /** Chunks counted. */
  n = 0;

  add(chunk: StreamChunk): void {
    this.n++;
    // Only `chunk.type` is validated on load; the rest is read defensively.
    const c = obj(chunk);
    const type = String(c.type);
    const k = (DELTA_TYPES as readonly string[]).indexOf(type);
    if (k >= 0) this.addDeltas(k, 1);
    else if (type === 'block-start') this.blocks++;
    else if (type === 'block-end') return;
    else if (type === 'usage') this.usage++;
    else if (type === 'finish') {
      const r = obj(c.reason);
      this.finishes.push(
        r.kind === 'error' || r.kind === 'aborted' ? `finish ${str(r.kind)} ${failureOf(r.failure)}` : `finish ${str(r.kind)}`,
      );
    } else {
      const t = oneLine(type);
      this.other.set(t, (this.other.get(t) ?? 0) + 1);
    }
  }

  /** `length` deltas of one kind (a compact run: its members are all deltas of `kind`). */
  addRun(kind: string, length: number): void {
    this.n += length;
    this.addDeltas((DELTA_TYPES as readonly string[]).indexOf(kind), length);
  }

  private addDeltas(k: number, n: number): void {
    if (!this.order.includes(k)) this.order.push(k);
    this.deltas[k]! += n;
  }

  /** Back to no chunks: one tally serves every stream of a timeline. */
  reset(): void {
    this.deltas.fill(0);
    this.order.length = 0;
    this.blocks = 0;
    this.usage = 0;
    this.finishes.length = 0;
    this.other.clear();
    this.n = 0;
  }

  text(): string {
    let deltas = '';
    for (const k of this.order) {
      const n = this.deltas[k]!;
      deltas += `${deltas ? ', ' : ''}${DELTA_NAMES[k]} ×${count(n)} ${n === 1 ? 'delta' : 'deltas'}`;
    }
    const parts = this.order.length > 0 ? [deltas] : [];
    if (this.blocks > 0) parts.push(plural(this.blocks, 'block'));
    if (this.usage > 0) parts.push(this.usage === 1 ? 'usage' : `usage ×${this.usage}`);
    for (const [t, n] of this.other) parts.push(n === 1 ? t : `${t} ×${n}`);
    for (const f of this.finishes) parts.push(f);
    return parts.join(' · ');
  }
}

/** `reasoning ×46 deltas, tool-call ×13 deltas · 2 blocks · usage · finish tool-calls`. */
export function summarizeChunks(chunks: readonly StreamChunk[]): string {
  const tally = new ChunkTally();
  for (const chunk of chunks) tally.add(chunk);
  return tally.text();
}

function obj(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** Text of an unvalidated content array. */
function textOf(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return flattenText(content.filter((b) => typeof obj(b).type === 'string') as ContentBlock[]);
}

function failureOf(f: unknown): string {
  const o = obj(f);
  return typeof o.code === 'string' ? formatFailure(o as unknown as LlmFailure) : str(f);
}

/** Short JSON of an opaque plugin payload. */
function compactJson(v: JsonValue | undefined, max: number | undefined): string {
  if (v === undefined) return '';
  const s = stringifyJson(v);
  return oneLine(max === undefined ? s : truncate(s, max));
}

function str(v: unknown): string {
  // A number is its JSON text (a logged one is finite), which is printable ASCII: no JSON writer
  // and no escaping (an inbox line's start, a retry count).
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null';
  return oneLine(typeof v === 'string' ? v : v === undefined ? 'undefined' : stringifyJson(v));
}

function surfaceNote(e: SessionEvent): string {
  const op = e.surfaceOp;
  return op !== undefined && op !== 'append' ? ` (replaces #${op.start}${op.end !== op.start ? `–${op.end}` : ''})` : '';
}

/**
 * The timeline of `records`: events, or (from `Session.records()`) compact chunk runs, which are
 * counted whole, so a loaded million-chunk log is shown without an object per chunk.
 */
export function buildTimeline(records: Iterable<SessionEvent | ChunkRunView>, opts: TimelineOptions): Entry[] {
  const out: Entry[] = [];
  eachEntry(records, opts, (e) => out.push(e));
  return out;
}

/**
 * The seq of the last entry `eachEntry` gives for a log, from its records last first
 * (`Session.recordsBack(end)`: the entries at or before `end`), or undefined when it gives none:
 * the seq column's width before any entry is made, so `dsh log show` can print each entry as it
 * is made instead of holding ~30,000 of them (a large log's timeline otherwise survives every
 * young-generation collection while it is built, and is copied by each). Read from the end, it
 * stops at the last event worth a line (or the first chunk of the stream before it).
 */
export function lastEntrySeq(recordsBack: Iterable<SessionEvent | ChunkRunView>, opts: TimelineOptions): number | undefined {
  // A run of stream chunks is one entry at its first seq; an event ends the stream before it.
  let streamStart: number | undefined;
  for (const r of recordsBack) {
    if (isChunkRun(r)) streamStart = r.seq0;
    else if (r.type === 'assistant/chunk') streamStart = r.seq;
    else if (streamStart !== undefined) return streamStart;
    else if (!(r.type === 'session/end-seed' && r.seq >= opts.fileEventCount)) return r.seq;
  }
  return streamStart;
}

/** `buildTimeline`, handing each entry to `emit` as soon as it is made (in seq order). */
export function eachEntry(records: Iterable<SessionEvent | ChunkRunView>, opts: TimelineOptions, emit: (entry: Entry) => void): void {
  const w = opts.widths;
  const callNames = new Map<string, string>();
  let depth = 0;
  const fileEventCount = opts.fileEventCount;
  // Every entry of one shape (absent fields undefined), made in one literal: no spread.
  const at = (e: { seq: number }, entry: Omit<Entry, 'seq' | 'depth'>, d = depth): Entry => ({
    seq: e.seq,
    lastSeq: entry.lastSeq,
    depth: d,
    head: entry.head,
    details: entry.details,
    tone: entry.tone,
    repaired: e.seq >= fileEventCount ? true : undefined,
  });
  /** The stream chunks read since the last other event: first and last seq (first < 0: none), and their counts. */
  let first = -1;
  let last = -1;
  const tally = new ChunkTally();
  const streamEntry = (): Entry =>
    at(
      { seq: first },
      {
        head: `stream: ${tally.text()}  ${`[${plural(tally.n, 'chunk')}${last > first ? `, #${first}–${last}` : ''}]`}`,
        tone: 'dim',
        lastSeq: last > first ? last : undefined,
      },
    );

  // Each event worth a line, in a function of its own: the loop over the records (mostly chunk
  // runs and chunk events) stays small, so it is optimised early and cheaply. Its cases return
  // their entry and the loop alone hands entries on: `emit` (the writer, in `dsh log show`) is
  // then compiled into three call sites, not into each of the twenty-odd cases.
  const onEvent = (e: SessionEvent): Entry | undefined => {
    switch (e.type) {
      case 'turn/start':
        depth = 1;
        return at(e, { head: `turn ${e.data.turn}`, tone: 'strong' }, 0);
      case 'turn/end': {
        const k = e.data.reason.kind;
        depth = 0;
        return at(
          e,
          {
            head: `turn ${e.data.turn} end: ${formatTurnEnd(e.data.reason)}`,
            tone: k === 'completed' ? 'ok' : k === 'error' ? 'error' : 'warn',
          },
          0,
        );
      }
      case 'step/start':
        depth = 2;
        return at(e, { head: `step ${e.data.step}`, tone: 'strong' }, 1);
      case 'step/end':
        depth = 1;
        return at(e, { head: `step ${e.data.step} end`, tone: 'dim' }, 1);
      case 'user/message': {
        const m = e.data;
        const images = m.content.filter((b) => b.type === 'image').map((b) => formatImageRef((b as { attachment: unknown }).attachment));
        const text = flattenText(m.content.filter((b) => b.type !== 'image'));
        return at(e, {
          head: `user (${formatSource(m.source)}): ${preview(text, w.text)}${surfaceNote(e)}`,
          ...(images.length ? { details: images } : {}),
        });
      }
      case 'assistant/message': {
        const d = e.data;
        const src = d.message.source as { provider?: unknown; model?: unknown } | undefined;
        const who = src && src.provider !== undefined ? ` ${str(src.provider)}/${str(src.model)}` : '';
        const flags: string[] = [];
        if (d.interrupted) flags.push('interrupted');
        if (d.message.content.length === 0) flags.push('empty: not in history');
        return at(e, {
          head: `assistant${who} · ${formatUsage(d.usage)}${flags.length ? ` · ${flags.join(' · ')}` : ''}${surfaceNote(e)}`,
          details: d.message.content.map((b) => blockLine(b, w)),
        });
      }
      case 'tool/call':
        callNames.set(e.data.callId, e.data.name);
        return at(e, { head: `tool call ${oneLine(e.data.name)} [${oneLine(e.data.callId)}] ${argsPreview(e.data.arguments, w.args)}` });
      case 'tool/result': {
        const d = e.data;
        const block = d.message.content[0];
        const callId = block?.toolCallId ?? (d.message.source as { callId?: string }).callId ?? '?';
        const name = callNames.get(callId);
        const failed = d.error !== undefined || block?.isError === true;
        const status = d.error ? `error ${oneLine(d.error.code)}` : failed ? 'error' : 'ok';
        return at(e, {
          head:
            `tool result${name !== undefined ? ` ${oneLine(name)}` : ''} [${oneLine(callId)}] ${status}: ` +
            `${preview(flattenText(block?.content ?? []), w.text)}${surfaceNote(e)}`,
          tone: failed ? 'error' : 'ok',
        });
      }
      case 'request/header': {
        const h = e.data.header;
        const c = h.config;
        const parts = [`request header ${str(c.provider)}/${str(c.model)} (${str(e.data.reason)})`];
        if (c.reasoningEffort !== undefined) parts.push(`effort ${str(c.reasoningEffort)}`);
        if (c.maxTokens !== undefined) parts.push(`max ${count(c.maxTokens)} tokens`);
        if (c.temperature !== undefined) parts.push(`temperature ${c.temperature}`);
        const sys = h.system as unknown;
        if (typeof sys === 'string') parts.push(/^\{\{.*\}\}$/.test(sys) ? `system ${oneLine(sys)}` : `system ${count(sys.length)} chars`);
        const tools = h.tools as unknown;
        if (Array.isArray(tools)) {
          const names = tools.map((t) => (typeof t === 'string' ? str(t) : str((t as { name?: unknown }).name)));
          const shown = w.text === undefined || names.length <= 8 ? names : [...names.slice(0, 8), `+${names.length - 8} more`];
          parts.push(`${plural(names.length, 'tool')}${names.length ? `: ${shown.join(', ')}` : ''}`);
        } else if (tools !== undefined) {
          parts.push(`tools ${str(tools)}`);
        }
        return at(e, { head: parts.join(' · ') });
      }
      case 'request/context': {
        const d = e.data;
        return at(e, {
          head:
            `request context ${str(d.provider)}/${str(d.model)}` +
            `${d.contextWindow !== undefined ? ` · window ${count(d.contextWindow)}` : ''}`,
          tone: 'dim',
        });
      }
      // Plugin payloads are not validated by the loader (only required to be JSON), so every
      // field is read defensively.
      case 'llm/retry': {
        const d = obj(e.data);
        const max = typeof d.maxRetries === 'number' ? `/${d.maxRetries}` : '';
        return at(e, {
          head: `llm retry ${str(d.retry)}${max} (${str(d.mode)}) in ${str(d.delayMs)} ms after ${failureOf(d.failure)}`,
          tone: 'warn',
        });
      }
      case 'llm/retry-started':
        return at(e, { head: `llm retry ${str(obj(e.data).retry)} started`, tone: 'warn' });
      case 'agent/inbox/spliced': {
        const d = obj(e.data);
        const removed = typeof d.removedCount === 'number' ? d.removedCount : 0;
        const ins = Array.isArray(d.inserted) ? d.inserted : [];
        const parts = [`inbox ${str(d.target)} @${str(d.start)}:`];
        if (removed) parts.push(`−${removed}`);
        if (ins.length) parts.push(`+${ins.length} ${preview(textOf(obj(ins[0]).content), w.text)}${ins.length > 1 ? ' …' : ''}`);
        if (!removed && !ins.length) parts.push('no change');
        if (d.outcome !== undefined) parts.push(`(${str(d.outcome)})`);
        return at(e, { head: parts.join(' '), tone: 'dim' });
      }
      case 'todo/write': {
        const todos = e.data.todos;
        const by = (s: string): number => todos.filter((t) => t.status === s).length;
        const current = todos.find((t) => t.status === 'in_progress');
        return at(e, {
          head:
            `todo: ${plural(todos.length, 'item')} (${by('completed')} done, ${by('in_progress')} in progress, ${by('pending')}` +
            ` pending)${current ? ` now ${preview(current.content, w.text)}` : ''}`,
        });
      }
      case 'session/title':
        return at(e, { head: `title ${preview(String(obj(e.data).title ?? ''), w.text)}`, tone: 'dim' });
      case 'approval/asked': {
        const d = obj(e.data);
        const call = d.callId !== undefined ? ` [${str(d.callId)}]` : '';
        const why = typeof d.reason === 'string' ? ` ${preview(d.reason, w.text)}` : '';
        return at(e, { head: `approval asked: ${str(d.toolName)}${call}${why}`, tone: 'warn' });
      }
      case 'approval/decided': {
        const d = obj(e.data);
        const why = typeof d.reason === 'string' ? `: ${preview(d.reason, w.text)}` : '';
        return at(e, { head: `approval decided: ${str(d.outcome)}${why}`, tone: d.outcome === 'allowed-once' ? 'ok' : 'warn' });
      }
      case 'approval/rule':
        return at(e, { head: `approval rule for this session: allow ${str(obj(e.data).rule)}`, tone: 'ok' });
      case 'session/end-seed':
        if (e.seq < opts.fileEventCount)
          return at(e, { head: `end of seed: the ${plural(e.seq, 'event')} above were inherited`, tone: 'dim' }, 0);
        return undefined;
      default: {
        // Plugin events: type and a compact payload, so nothing in the log is invisible.
        const data = (e as { data?: JsonValue }).data;
        return at(e, {
          head: (
            `${oneLine(e.type)}${e.ignorable ? ' (ignorable)' : ''} ` + `${compactJson(data, w.text === undefined ? undefined : 100)}`
          ).trimEnd(),
          tone: 'dim',
        });
      }
    }
  };

  for (const r of records) {
    if (isChunkRun(r)) {
      if (first < 0) first = r.seq0;
      tally.addRun(r.kind, r.length);
      last = r.seq0 + r.length - 1;
      continue;
    }
    const e = r;
    if (e.type === 'assistant/chunk') {
      if (first < 0) first = e.seq;
      tally.add((e as SessionEvent<'assistant/chunk'>).data.chunk);
      last = e.seq;
      continue;
    }
    if (first >= 0) {
      emit(streamEntry());
      first = -1;
      tally.reset();
    }
    const entry = onEvent(e);
    if (entry !== undefined) emit(entry);
  }
  if (first >= 0) emit(streamEntry());
}

/**
 * Seq range [start, end] of turn `n`, or undefined when the log has no such turn. `events` needs
 * to hold only the turn boundaries (`Session.eventsOfType(['turn/start', 'turn/end'])`); `lastSeq`
 * ends a turn left open.
 */
export function turnRange(events: Iterable<SessionEvent>, n: number, lastSeq: number): { start: number; end: number } | undefined {
  let start: number | undefined;
  for (const e of events) {
    if (e.type === 'turn/start' && e.data.turn === n) start = e.seq;
    else if (e.type === 'turn/end' && e.data.turn === n && start !== undefined) return { start, end: e.seq };
  }
  return start === undefined ? undefined : { start, end: lastSeq };
}
