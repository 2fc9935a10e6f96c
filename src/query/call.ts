/**
 * `callOf`: one tool call's round trip, put back together from the log: the `assistant/message`
 * that issued it and the stream chunks that carried its arguments, the `tool/call`, the hook and
 * approval decisions taken on it, its `tool/result` (and any later replacement of that result),
 * and the times between them.
 *
 * A call id is unique within its step, not within the session (providers number calls `call_1`,
 * `call_2`, … afresh), so one id can name several round trips; each is returned, in log order.
 *
 * Hook events carry no call id. A hook event is attributed to a call when it falls between that
 * call's `tool/call` and its `tool/result`: `exact` when no other call of the step was in flight
 * then, `overlapping` when others were (parallel calls).
 */
import { toolResultCallId } from '../session/trace.js';
import { QueryError } from './errors.js';
import { isChunkRun, num, obj, str, viewOf, type EventRef, type LogView, type QueryInput, refOf } from './input.js';

export interface IssuedBy {
  /** The `assistant/message` holding the tool-call block. */
  message: EventRef;
  /** Index of the block in the message's content. */
  block: number;
  name: string;
  /** The block's argument text (what the model produced). */
  arguments: string;
  /** The message's chunks that carried this call (block start, argument deltas, block end). */
  chunks: number[];
}

export interface HookDecision {
  invoked?: EventRef & { point?: string; handlerId?: string; matcher?: string };
  result?: EventRef & { point?: string; handlerId?: string; decision?: string; exitCode?: number; summary?: string; durationMs?: number };
  /** `exact`: the only call in flight; `overlapping`: other calls of the step were in flight too. */
  attribution: 'exact' | 'overlapping';
}

export interface ApprovalDecision {
  id: string;
  asked: EventRef & { toolName?: string; reason?: string };
  decided?: EventRef & { outcome?: string };
}

export interface CallResult {
  event: EventRef;
  isError: boolean;
  /** `tool/result.error`: the pipeline's error name and code. */
  error?: { name?: string; code?: string };
  /** Later events that replaced this result on the surface (pruning, compaction). */
  replacedBy: EventRef[];
}

export interface CallTimings {
  /** From the first to the last chunk of the call's arguments. */
  argumentsStreamMs?: number;
  /** From the message that issued it to `tool/call` (queued behind other calls, hooks). */
  dispatchMs?: number;
  /** From `tool/call` to `tool/result`: the tool's own time, hooks and approvals included. */
  durationMs?: number;
  /** From the first chunk of its arguments (or the message) to its result. */
  totalMs?: number;
}

export interface CallRoundTrip {
  callId: string;
  name: string | undefined;
  turn: number | undefined;
  step: number | undefined;
  issuedBy?: IssuedBy;
  call?: EventRef & { arguments: string };
  hooks: HookDecision[];
  approvals: ApprovalDecision[];
  result?: CallResult;
  /**
   * `answered`: call and result; `unanswered`: a call (or an issued block) with no result yet;
   * `not-started`: a result with no `tool/call` (crash repair's TOOL_NOT_STARTED).
   */
  state: 'answered' | 'unanswered' | 'not-started';
  timings: CallTimings;
}

interface Build {
  trip: CallRoundTrip;
  /** Event times of the parts. */
  t: { firstChunk?: number; lastChunk?: number; message?: number; call?: number; result?: number };
  chunkCandidates: { seq: number; t: number }[];
  callSeq?: number;
  resultSeq?: number;
}

function newTrip(callId: string, turn: number | undefined, step: number | undefined): Build {
  return {
    trip: { callId, name: undefined, turn, step, hooks: [], approvals: [], state: 'unanswered', timings: {} },
    t: {},
    chunkCandidates: [],
  };
}

/** Every round trip of `callId`, in log order (empty when the log has none). */
export function roundTrips(view: LogView, callId: string): CallRoundTrip[] {
  const done: Build[] = [];
  let cur: Build | undefined;
  let turn: number | undefined;
  let step: number | undefined;
  let t = 0;
  /** Calls of the open step in flight (call recorded, no result yet). */
  const inFlight = new Set<string>();
  /** block-start chunks of the current stream by block index, until a delta names the block's call. */
  const blockStarts = new Map<number, { seq: number; t: number }>();
  const approvalIds = new Map<string, ApprovalDecision>();
  const resultSeqs = new Map<number, CallResult>();
  const hookByHandler = new Map<string, HookDecision>();

  const closeTrip = (): void => {
    if (cur) done.push(cur);
    cur = undefined;
  };
  const tripHere = (): Build => {
    if (!cur) cur = newTrip(callId, turn, step);
    return cur;
  };

  for (const e of view.records()) {
    if (isChunkRun(e)) {
      // Runs hold only deltas of one block: a tool call's argument deltas, or text.
      t = e.time(e.length - 1);
      if (e.kind !== 'tool-call-delta' || e.id !== callId) continue;
      const b = tripHere();
      const start = blockStarts.get(e.index);
      if (start) {
        b.chunkCandidates.push(start);
        blockStarts.delete(e.index);
      }
      for (let k = 0; k < e.length; k++) b.chunkCandidates.push({ seq: e.seq0 + k, t: e.time(k) });
      continue;
    }
    t = e.time;
    const d = obj(e.data);
    switch (e.type) {
      case 'turn/start':
        closeTrip();
        turn = num(d.turn);
        step = undefined;
        inFlight.clear();
        continue;
      case 'step/start':
        closeTrip();
        step = num(d.step);
        inFlight.clear();
        blockStarts.clear();
        continue;
      case 'turn/end':
      case 'step/end':
        continue;
      case 'assistant/chunk': {
        const c = obj(d.chunk);
        if (c.type === 'block-start' && c.blockType === 'tool-call') {
          const i = num(c.index);
          if (i !== undefined) blockStarts.set(i, { seq: e.seq, t });
        } else if (c.type === 'tool-call-delta' && c.id === callId) {
          const b = tripHere();
          const i = num(c.index);
          const start = i === undefined ? undefined : blockStarts.get(i);
          if (start) {
            b.chunkCandidates.push(start);
            blockStarts.delete(i!);
          }
          b.chunkCandidates.push({ seq: e.seq, t });
        } else if (c.type === 'block-end' && obj(c.block).type === 'tool-call' && obj(c.block).id === callId) {
          tripHere().chunkCandidates.push({ seq: e.seq, t });
        }
        continue;
      }
      case 'assistant/message': {
        const content = obj(d.message).content;
        if (!Array.isArray(content)) continue;
        const k = content.findIndex((b) => obj(b).type === 'tool-call' && obj(b).id === callId);
        if (k < 0) continue;
        const b = tripHere();
        const block = obj(content[k]);
        const cited = new Set(e.sourceEventSeqs ?? []);
        // A failed attempt before this one may have streamed the same id: keep the chunks this message cites.
        const chunks = b.chunkCandidates.filter((c) => cited.has(c.seq));
        b.trip.issuedBy = {
          message: refOf(e),
          block: k,
          name: str(block.name) ?? '',
          arguments: str(block.arguments) ?? '',
          chunks: chunks.map((c) => c.seq),
        };
        b.trip.name ??= str(block.name);
        if (chunks.length) {
          b.t.firstChunk = chunks[0]!.t;
          b.t.lastChunk = chunks[chunks.length - 1]!.t;
        }
        b.t.message = t;
        continue;
      }
      case 'tool/call': {
        const id = str(d.callId);
        if (id === undefined) continue;
        if (id !== callId) {
          inFlight.add(id);
          continue;
        }
        const b = tripHere();
        b.trip.call = { ...refOf(e), arguments: str(d.arguments) ?? '' };
        b.trip.name = str(d.name) ?? b.trip.name;
        b.t.call = t;
        b.callSeq = e.seq;
        inFlight.add(id);
        continue;
      }
      case 'tool/result': {
        const id = toolResultCallId(e.data);
        const replacing = e.surfaceOp !== undefined && e.surfaceOp !== 'append';
        if (replacing) {
          // A pruned result replaces the earlier one it cites.
          for (const s of e.sourceEventSeqs ?? []) resultSeqs.get(s)?.replacedBy.push(refOf(e));
          continue;
        }
        if (id === undefined) continue;
        inFlight.delete(id);
        if (id !== callId) continue;
        const b = tripHere();
        const first = obj((obj(d.message).content as unknown[] | undefined)?.[0]);
        const err = obj(d.error);
        const result: CallResult = { event: refOf(e), isError: d.error !== undefined || first.isError === true, replacedBy: [] };
        if (d.error !== undefined) {
          result.error = {};
          if (str(err.name) !== undefined) result.error.name = str(err.name)!;
          if (str(err.code) !== undefined) result.error.code = str(err.code)!;
        }
        b.trip.result = result;
        b.resultSeq = e.seq;
        b.t.result = t;
        resultSeqs.set(e.seq, result);
        continue;
      }
      case 'approval/asked': {
        if (d.callId !== callId) continue;
        const id = str(d.id) ?? '';
        const a: ApprovalDecision = { id, asked: { ...refOf(e), ...opt('toolName', str(d.toolName)), ...opt('reason', str(d.reason)) } };
        tripHere().trip.approvals.push(a);
        approvalIds.set(id, a);
        continue;
      }
      case 'approval/decided': {
        const a = approvalIds.get(str(d.id) ?? '');
        if (a && a.decided === undefined) a.decided = { ...refOf(e), ...opt('outcome', str(d.outcome)) };
        continue;
      }
      case 'hook/invoked':
      case 'hook/result': {
        // Between our call and its result, in the same turn.
        if (!cur || cur.callSeq === undefined || cur.resultSeq !== undefined) continue;
        if (num(d.turn) !== undefined && num(d.turn) !== turn) continue;
        const attribution = inFlight.size > 1 ? 'overlapping' : 'exact';
        const handler = str(d.handlerId) ?? '';
        if (e.type === 'hook/invoked') {
          const h: HookDecision = {
            invoked: {
              ...refOf(e),
              ...opt('point', str(d.point)),
              ...opt('handlerId', str(d.handlerId)),
              ...opt('matcher', str(d.matcher)),
            },
            attribution,
          };
          cur.trip.hooks.push(h);
          hookByHandler.set(handler, h);
        } else {
          const r = {
            ...refOf(e),
            ...opt('point', str(d.point)),
            ...opt('handlerId', str(d.handlerId)),
            ...opt('decision', str(d.decision)),
            ...opt('exitCode', num(d.exitCode)),
            ...opt('summary', str(d.stderrSummary)),
            ...opt('durationMs', num(d.durationMs)),
          };
          const h = hookByHandler.get(handler);
          if (h && h.result === undefined) h.result = r;
          else cur.trip.hooks.push({ result: r, attribution });
          hookByHandler.delete(handler);
        }
        continue;
      }
      default: {
        // A surface replace (compaction) that shadows our result.
        if (e.surfaceOp !== undefined && e.surfaceOp !== 'append')
          for (const s of e.sourceEventSeqs ?? []) resultSeqs.get(s)?.replacedBy.push(refOf(e));
      }
    }
  }
  closeTrip();
  return done.map(finish);
}

function opt<K extends string, V>(k: K, v: V | undefined): { [P in K]?: V } {
  return (v === undefined ? {} : { [k]: v }) as { [P in K]?: V };
}

function finish(b: Build): CallRoundTrip {
  const { trip, t } = b;
  trip.state = trip.result ? (trip.call ? 'answered' : 'not-started') : 'unanswered';
  const tm: CallTimings = {};
  // Differences of wall-clock times; a clock that went backwards gives 0.
  const span = (a: number, b: number): number => Math.max(0, b - a);
  if (t.firstChunk !== undefined && t.lastChunk !== undefined) tm.argumentsStreamMs = span(t.firstChunk, t.lastChunk);
  if (t.message !== undefined && t.call !== undefined) tm.dispatchMs = span(t.message, t.call);
  if (t.call !== undefined && t.result !== undefined) tm.durationMs = span(t.call, t.result);
  const from = t.firstChunk ?? t.message ?? t.call;
  if (from !== undefined && t.result !== undefined) tm.totalMs = span(from, t.result);
  trip.timings = tm;
  return trip;
}

/** Every call id the log names (tool calls, tool-call blocks, results), in first-seen order. */
export function callIds(view: LogView): string[] {
  const seen = new Set<string>();
  for (const e of view.records()) {
    if (isChunkRun(e)) continue;
    if (e.type === 'tool/call') {
      const id = str(obj(e.data).callId);
      if (id !== undefined) seen.add(id);
    } else if (e.type === 'tool/result') {
      const id = toolResultCallId(e.data);
      if (id !== undefined) seen.add(id);
    } else if (e.type === 'assistant/message') {
      const content = obj(obj(e.data).message).content;
      if (Array.isArray(content))
        for (const b of content) if (obj(b).type === 'tool-call' && typeof obj(b).id === 'string') seen.add(obj(b).id as string);
    }
  }
  return [...seen];
}

/** Edit distance, cut off at `max` (callers only rank close ids). */
function distance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      row.push(v);
      if (v < best) best = v;
    }
    if (best > max) return max + 1;
    prev = row;
  }
  return prev[b.length]!;
}

/** Length of the longest common subsequence: how much of a mistyped id survives in a real one. */
function common(a: string, b: string): number {
  let prev = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    const row = [0];
    for (let j = 1; j <= b.length; j++) row.push(a[i - 1] === b[j - 1] ? prev[j - 1]! + 1 : Math.max(prev[j]!, row[j - 1]!));
    prev = row;
  }
  return prev[b.length]!;
}

/**
 * The ids of `ids` most like `wanted`, best first: ids containing it (or contained in it) first,
 * then by how much of it they share (longest common subsequence), then by edit distance. Always
 * some, when the log has ids: a near miss is worth showing.
 */
export function nearestIds(ids: readonly string[], wanted: string, limit = 5): string[] {
  const w = wanted.toLowerCase().slice(0, 256);
  const scored = ids.map((id) => {
    const l = id.toLowerCase().slice(0, 256);
    return { id, contains: l.includes(w) || (w.length >= 3 && w.includes(l)), shared: common(w, l), dist: distance(w, l, 256) };
  });
  scored.sort(
    (a, b) => Number(b.contains) - Number(a.contains) || b.shared - a.shared || a.dist - b.dist || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  return scored.slice(0, limit).map((s) => s.id);
}

/**
 * The round trips of `callId` (usually one). CALL_NOT_FOUND when the log names no such call; the
 * error lists the nearest ids it does name.
 */
export function callOf(input: QueryInput, callId: string): CallRoundTrip[] {
  const view = viewOf(input);
  const trips = roundTrips(view, callId);
  if (trips.length > 0) return trips;
  const ids = callIds(view);
  const nearest = nearestIds(ids, callId);
  const hint =
    ids.length === 0
      ? 'the log has no tool calls'
      : `nearest: ${nearest.join(', ')}${ids.length > nearest.length ? ` (of ${ids.length})` : ''}`;
  throw new QueryError('CALL_NOT_FOUND', `no tool call "${callId}" in the log; ${hint}`, { callId, nearest });
}
