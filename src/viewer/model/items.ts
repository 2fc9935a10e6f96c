/**
 * Events as the page shows them: one item per event worth a row, with each run of stream chunks
 * collapsed to counts and merged into the assistant message it assembled, and each tool call
 * carrying its result (paired results are not repeated). Built for a seq range on demand, a
 * page of items at a time; nothing is kept.
 */
import { deepEqual, type SessionEvent } from '../../session/index.js';
import type { LogSource } from '../source/source.js';
import { contentText, endReason, finishLabel, floorIndex, type LogIndex } from './log-index.js';
import { cap, compactJson, prettyArgs, str, type Text } from './text.js';
import type { BlockView, Item, ItemsPage, SourceView, StreamView, ToolResultView } from './views.js';

export interface Caps {
  text: number;
  args: number;
  name: number;
  json: number;
}

export const PREVIEW_CAPS: Caps = { text: 4000, args: 4000, name: 200, json: 400 };
/** `full=1`: the whole text, for the page's "show all" (still bounded, against absurd logs). */
export const FULL_CAPS: Caps = { text: 32 << 20, args: 32 << 20, name: 10_000, json: 1 << 20 };

type Obj = Record<string, unknown>;

function obj(v: unknown): Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {};
}

export function sourceView(source: unknown, caps: Caps): SourceView {
  const s = obj(source);
  const kind = typeof s.kind === 'string' ? s.kind.slice(0, caps.name) : 'unknown';
  switch (kind) {
    case 'plugin': {
      const v: SourceView = { kind, name: str(s.plugin).slice(0, caps.name) };
      if (typeof s.form === 'string') v.form = s.form.slice(0, caps.name);
      return v;
    }
    case 'model':
      return { kind, name: `${str(s.provider)}/${str(s.model)}`.slice(0, caps.name) };
    case 'tool':
      return { kind, name: str(s.callId).slice(0, caps.name) };
    default:
      return { kind };
  }
}

export function blocksView(content: unknown, caps: Caps): BlockView[] {
  if (!Array.isArray(content)) return [{ type: 'other', json: cap(compactJson(content, caps.json), caps.json) }];
  return content.map((b) => blockView(b, caps));
}

function blockView(b: unknown, caps: Caps): BlockView {
  const o = obj(b);
  switch (o.type) {
    case 'text':
    case 'reasoning':
      return { type: o.type, text: cap(str(o.text), caps.text) };
    case 'tool-call':
      return {
        type: 'tool-call',
        id: str(o.id).slice(0, caps.name),
        name: str(o.name).slice(0, caps.name),
        args: prettyArgs(str(o.arguments), caps.args),
      };
    case 'tool-result':
      return {
        type: 'tool-result',
        callId: str(o.toolCallId).slice(0, caps.name),
        isError: o.isError === true,
        content: Array.isArray(o.content) ? o.content.map((c) => blockView(c, caps)) : [],
      };
    case 'image': {
      const a = obj(o.attachment);
      const dims = typeof a.width === 'number' && typeof a.height === 'number' ? ` ${a.width}×${a.height}` : '';
      return { type: 'image', ref: `${str(a.mediaType)}${dims} ${str(a.name ?? a.attachmentId)}`.slice(0, caps.name) };
    }
    default:
      return { type: 'other', json: cap(compactJson(b, caps.json), caps.json) };
  }
}

const DELTA_KIND: Readonly<Record<string, string | undefined>> = {
  'text-delta': 'text',
  'reasoning-delta': 'reasoning',
  'tool-call-delta': 'tool-call',
};

/** Counts of a run of chunks, gathered one chunk at a time. */
class StreamCounter {
  readonly view: StreamView;
  constructor(first: number) {
    this.view = { first, last: first, chunks: 0, deltas: {}, blocks: 0, usage: 0 };
  }
  add(e: SessionEvent): void {
    const v = this.view;
    v.last = e.seq;
    v.chunks++;
    const c = obj(obj(e.data).chunk);
    const type = str(c.type);
    const delta = DELTA_KIND[type];
    if (delta !== undefined) v.deltas[delta] = (v.deltas[delta] ?? 0) + 1;
    else if (type === 'block-start') v.blocks++;
    else if (type === 'usage') v.usage++;
    else if (type === 'finish') {
      v.finish = finishLabel(c);
      const failure = obj(obj(c.reason).failure);
      if (typeof failure.message === 'string') v.finishMessage = cap(failure.message, 2000);
    } else if (type !== 'block-end') {
      const other = (v.other ??= {});
      const t = type.slice(0, 100);
      other[t] = (other[t] ?? 0) + 1;
    }
  }
}

function replaces(e: SessionEvent): [number, number] | undefined {
  const op = e.surfaceOp;
  return typeof op === 'object' && op !== null ? [op.start, op.end] : undefined;
}

function withReplaces<T extends Item>(item: T, e: SessionEvent): T {
  const r = replaces(e);
  if (r) item.replaces = r;
  return item;
}

function usageView(u: unknown): Record<string, number> | undefined {
  if (typeof u !== 'object' || u === null) return undefined;
  const o = u as Obj;
  const out: Record<string, number> = {};
  for (const [k, name] of [
    ['inputTokens', 'input'],
    ['cacheReadTokens', 'cacheRead'],
    ['cacheWriteTokens', 'cacheWrite'],
    ['outputTokens', 'output'],
    ['reasoningTokens', 'reasoning'],
  ] as const) {
    if (typeof o[k] === 'number') out[name] = o[k] as number;
  }
  return out;
}

function resultStatus(d: Obj): { status: 'ok' | 'error'; code?: string } {
  const first = obj((obj(d.message).content as unknown[] | undefined)?.[0]);
  const err = obj(d.error);
  if (d.error !== undefined) return { status: 'error', code: str(err.code).slice(0, 200) };
  return first.isError === true ? { status: 'error' } : { status: 'ok' };
}

function resultContent(d: Obj, caps: Caps): BlockView[] {
  const first = obj((obj(d.message).content as unknown[] | undefined)?.[0]);
  return Array.isArray(first.content) ? first.content.map((c) => blockView(c, caps)) : [];
}

/** Config fields a header's summary names, in display order. */
const HEADER_FIELDS = ['provider', 'model', 'reasoningEffort', 'maxTokens', 'temperature', 'topP'];

function headerItem(e: SessionEvent<'request/header'>, src: LogSource, index: LogIndex, caps: Caps): Item {
  const h = obj(e.data.header);
  const c = obj(h.config);
  const details: string[] = [];
  if (c.reasoningEffort !== undefined) details.push(`effort ${str(c.reasoningEffort)}`);
  if (typeof c.maxTokens === 'number') details.push(`max ${c.maxTokens} tokens`);
  if (typeof c.temperature === 'number') details.push(`temperature ${c.temperature}`);
  if (typeof h.system === 'string') details.push(`system ${h.system.length} chars`);
  const tools = Array.isArray(h.tools) ? h.tools.map((t) => (typeof t === 'string' ? t : str(obj(t).name)).slice(0, caps.name)) : [];
  // What changed since the previous header: the reason to look at a `change` header at all.
  const changed: string[] = [];
  const k = floorIndex(index.headerSeqs, e.seq - 1);
  if (k >= 0) {
    const prev = obj(obj(src.at(index.headerSeqs[k]!).data).header);
    const pc = obj(prev.config);
    const keys = new Set([...HEADER_FIELDS, ...Object.keys(c), ...Object.keys(pc)]);
    for (const key of keys) if (!deepEqual(c[key], pc[key])) changed.push(key.slice(0, caps.name));
    if (!deepEqual(h.system, prev.system)) changed.push('system');
    if (!deepEqual(h.tools, prev.tools)) changed.push('tools');
    if (!deepEqual(h.adapterDefaults, prev.adapterDefaults)) changed.push('adapterDefaults');
  }
  const item: Item = {
    kind: 'header',
    seq: e.seq,
    provider: str(c.provider).slice(0, caps.name),
    model: str(c.model).slice(0, caps.name),
    reason: str(e.data.reason).slice(0, caps.name),
    details,
    changed,
    tools: tools.slice(0, 100),
    toolCount: tools.length,
  };
  if (typeof h.system === 'string') item.system = cap(h.system, caps.text);
  return item;
}

function toolItem(e: SessionEvent<'tool/call'>, src: LogSource, index: LogIndex, caps: Caps): Item {
  const d = e.data as unknown as Obj;
  const item: Item = {
    kind: 'tool',
    seq: e.seq,
    name: str(d.name).slice(0, caps.name),
    callId: str(d.callId).slice(0, caps.name),
    args: prettyArgs(str(d.arguments), caps.args),
  };
  const rs = index.resultOf.get(e.seq);
  if (rs !== undefined && rs < src.length()) {
    const r = src.at(rs);
    const rd = obj(r.data);
    const result: ToolResultView = { seq: rs, ...resultStatus(rd), durationMs: r.time - e.time, content: resultContent(rd, caps) };
    item.result = result;
    item.last = rs;
  }
  return item;
}

/** The item for one event other than a chunk, or undefined when the event has no row of its own. */
export function eventItem(e: SessionEvent, src: LogSource, index: LogIndex, caps: Caps): Item | undefined {
  switch (e.type) {
    case 'turn/start':
    case 'step/start':
    case 'step/end':
      return undefined;
    case 'turn/end':
      return { kind: 'turn-end', seq: e.seq, turn: Number(e.data.turn), reason: endReason(e.data.reason) };
    case 'user/message': {
      const m = e.data as unknown as Obj;
      return withReplaces(
        {
          kind: 'user',
          seq: e.seq,
          id: str(m.id).slice(0, caps.name),
          source: sourceView(m.source, caps),
          blocks: blocksView(m.content, caps),
        },
        e,
      );
    }
    case 'assistant/message':
      return assistantItem(e as SessionEvent<'assistant/message'>, undefined, caps);
    case 'tool/call':
      return toolItem(e as SessionEvent<'tool/call'>, src, index, caps);
    case 'tool/result': {
      if (index.callOf.has(e.seq)) return undefined; // shown with its call
      const d = e.data as unknown as Obj;
      const first = obj((obj(d.message).content as unknown[] | undefined)?.[0]);
      return withReplaces(
        {
          kind: 'result',
          seq: e.seq,
          callId: str(first.toolCallId ?? obj(obj(d.message).source).callId).slice(0, caps.name),
          ...resultStatus(d),
          content: resultContent(d, caps),
        },
        e,
      );
    }
    case 'request/header':
      return headerItem(e as SessionEvent<'request/header'>, src, index, caps);
    case 'request/context': {
      const d = e.data as unknown as Obj;
      const item: Item = {
        kind: 'context',
        seq: e.seq,
        provider: str(d.provider).slice(0, caps.name),
        model: str(d.model).slice(0, caps.name),
      };
      if (typeof d.contextWindow === 'number') item.window = d.contextWindow;
      return item;
    }
    case 'llm/retry': {
      const d = obj(e.data);
      const f = obj(d.failure);
      const item: Item = {
        kind: 'retry',
        seq: e.seq,
        retry: `${str(d.retry)}${typeof d.maxRetries === 'number' ? `/${d.maxRetries}` : ''}`.slice(0, 100),
        mode: str(d.mode).slice(0, 100),
        delayMs: typeof d.delayMs === 'number' ? d.delayMs : 0,
        failure: `${str(f.code)}${typeof f.status === 'number' ? ` (HTTP ${f.status})` : ''}`.slice(0, caps.name),
      };
      if (typeof f.message === 'string') item.message = cap(f.message, caps.text);
      return item;
    }
    case 'llm/retry-started':
      return { kind: 'retry-started', seq: e.seq, retry: str(obj(e.data).retry).slice(0, 100) };
    case 'agent/inbox/spliced': {
      const d = obj(e.data);
      const ins = Array.isArray(d.inserted) ? d.inserted : [];
      const item: Item = {
        kind: 'inbox',
        seq: e.seq,
        target: str(d.target).slice(0, 100),
        at: str(d.start).slice(0, 100),
        removed: typeof d.removedCount === 'number' ? d.removedCount : 0,
        inserted: ins.length,
      };
      if (ins.length > 0) item.preview = cap(contentText(obj(ins[0]).content), Math.min(caps.text, 2000));
      if (d.outcome !== undefined) item.outcome = str(d.outcome).slice(0, 100);
      return item;
    }
    case 'todo/write': {
      const todos = Array.isArray(obj(e.data).todos) ? (obj(e.data).todos as unknown[]) : [];
      return {
        kind: 'todo',
        seq: e.seq,
        todos: todos.slice(0, 200).map((t) => ({ status: str(obj(t).status).slice(0, 50), content: cap(str(obj(t).content), 500) })),
      };
    }
    case 'session/end-seed': {
      // A fork's seed is its parent's events; any other seed (a resume, a replay) is this
      // session's own earlier run, which nothing was inherited from.
      const h = src.header;
      const fork = h.parentSession !== undefined && (h.seedLength === undefined || h.seedLength === e.seq);
      return fork
        ? { kind: 'seed-end', seq: e.seq, inherited: e.seq, from: 'fork', parent: h.parentSession!.slice(0, 200) }
        : { kind: 'seed-end', seq: e.seq, inherited: e.seq, from: 'resume' };
    }
    default: {
      const item: Item = {
        kind: 'event',
        seq: e.seq,
        type: e.type.slice(0, caps.name),
        ignorable: e.ignorable === true,
        payload: cap(compactJson(e.data, caps.json), caps.json),
      };
      if (e.type === 'approval/asked') item.tone = 'warn';
      return item;
    }
  }
}

function assistantItem(e: SessionEvent<'assistant/message'>, stream: StreamView | undefined, caps: Caps): Item {
  const d = e.data as unknown as Obj;
  const m = obj(d.message);
  const item: Item = {
    kind: 'assistant',
    seq: stream ? stream.first : e.seq,
    source: sourceView(m.source, caps),
    blocks: blocksView(m.content, caps),
  };
  if (stream) {
    item.stream = stream;
    item.last = e.seq;
  }
  const u = usageView(d.usage);
  if (u) item.usage = u;
  if (d.interrupted === true) item.interrupted = true;
  if (Array.isArray(m.content) && m.content.length === 0) item.empty = true;
  return withReplaces(item, e);
}

export interface ItemsOptions {
  limit: number;
  caps: Caps;
}

/** Items for the events `from` … `to` (inclusive), at most about `limit` of them. */
export function buildItems(src: LogSource, index: LogIndex, from: number, to: number, opts: ItemsOptions): ItemsPage {
  const items: Item[] = [];
  let stream: StreamCounter | undefined;
  let next: number | undefined;
  const flush = (): void => {
    if (stream) items.push({ kind: 'stream', seq: stream.view.first, last: stream.view.last, stream: stream.view });
    stream = undefined;
  };
  for (const e of src.since(from)) {
    if (e.seq > to) break;
    if (e.type === 'assistant/chunk') {
      if (stream === undefined) {
        if (items.length >= opts.limit) {
          next = e.seq;
          break;
        }
        stream = new StreamCounter(e.seq);
      }
      stream.add(e);
      continue;
    }
    if (e.type === 'assistant/message' && stream) {
      items.push(assistantItem(e as SessionEvent<'assistant/message'>, stream.view, opts.caps));
      stream = undefined;
      continue;
    }
    flush();
    const item = eventItem(e, src, index, opts.caps);
    if (item === undefined) continue;
    if (items.length >= opts.limit) {
      next = e.seq;
      break;
    }
    items.push(item);
  }
  flush();
  return next === undefined ? { items } : { items, next };
}

export type { Text };
