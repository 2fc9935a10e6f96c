/**
 * Summaries of segments and steps from the index, and the parts of a turn (its steps, and the
 * events between them) a page at a time.
 */
import type { LogSource } from '../source/source.js';
import { buildItems, type Caps } from './items.js';
import type { LogIndex, Segment, StepEntry, TurnSegment } from './log-index.js';
import type { Item, SegmentView, StepView, TurnPart, TurnView } from './views.js';

/** Outside segments up to this many events come with their items. */
const OUTSIDE_INLINE = 5;
/** A turn's steps come with their items when the turn has at most this many steps… */
const INLINE_STEPS = 30;
/** …and the step at most this many events besides chunks. */
const INLINE_STEP_EVENTS = 300;
const INLINE_STEP_ITEMS = 400;

export function stepView(s: StepEntry, index: LogIndex): StepView {
  const end = index.stepEnd(s);
  const v: StepView = {
    step: s.step,
    start: s.start,
    events: end - s.start + 1,
    chunks: s.chunks,
    toolCalls: s.toolCalls,
    toolErrors: s.toolErrors,
    retries: s.retries,
    usage: s.usage,
  };
  if (s.end !== undefined) v.end = s.end;
  if (s.endTime !== undefined) v.durationMs = s.endTime - s.startTime;
  if (s.finish !== undefined) v.finish = s.finish;
  return v;
}

export function turnView(t: TurnSegment, index: LogIndex): TurnView {
  const v: TurnView = {
    kind: 'turn',
    index: t.index,
    turn: t.turn,
    start: t.start,
    events: index.segmentEnd(t) - t.start + 1,
    steps: t.steps.length,
    toolCalls: t.toolCalls,
    toolErrors: t.toolErrors,
    retries: t.retries,
    usage: t.usage,
  };
  if (t.end !== undefined) v.end = t.end;
  if (t.endTime !== undefined) v.durationMs = t.endTime - t.startTime;
  if (t.reason) v.reason = t.reason;
  if (t.prompt) v.prompt = t.prompt.text;
  if (t.model) v.model = t.model;
  return v;
}

export function segmentView(s: Segment, src: LogSource, index: LogIndex, caps: Caps): SegmentView {
  if (s.kind === 'turn') return turnView(s, index);
  const events = s.end - s.start + 1;
  const v: SegmentView = { kind: 'outside', index: s.index, start: s.start, end: s.end, events };
  if (events <= OUTSIDE_INLINE) v.items = buildItems(src, index, s.start, s.end, { limit: OUTSIDE_INLINE, caps }).items;
  return v;
}

type PartRef = { kind: 'gap'; from: number; to: number } | { kind: 'step'; step: StepEntry };

/**
 * A turn as parts: each step, and each event between steps (inbox splices, plugin events, the
 * `turn/end`). Between steps every event is one item: chunks, tool pairs and step boundaries
 * only occur inside steps, so parts can be counted without building them.
 */
function partRefs(t: TurnSegment, index: LogIndex): PartRef[] {
  const refs: PartRef[] = [];
  let cursor = t.start + 1;
  for (const s of t.steps) {
    if (s.start > cursor) refs.push({ kind: 'gap', from: cursor, to: s.start - 1 });
    refs.push({ kind: 'step', step: s });
    cursor = index.stepEnd(s) + 1;
  }
  const end = index.segmentEnd(t);
  if (cursor <= end) refs.push({ kind: 'gap', from: cursor, to: end });
  return refs;
}

export function turnParts(
  t: TurnSegment,
  src: LogSource,
  index: LogIndex,
  from: number,
  limit: number,
  caps: Caps,
): { total: number; parts: TurnPart[] } {
  const refs = partRefs(t, index);
  const total = refs.reduce((n, r) => n + (r.kind === 'step' ? 1 : r.to - r.from + 1), 0);
  const parts: TurnPart[] = [];
  const inline = t.steps.length <= INLINE_STEPS;
  let k = 0;
  for (const r of refs) {
    if (parts.length >= limit) break;
    const size = r.kind === 'step' ? 1 : r.to - r.from + 1;
    if (k + size <= from) {
      k += size;
      continue;
    }
    if (r.kind === 'step') {
      const part: TurnPart = { kind: 'step', step: stepView(r.step, index) };
      if (inline && r.step.others <= INLINE_STEP_EVENTS) {
        const page = buildItems(src, index, r.step.start, index.stepEnd(r.step), { limit: INLINE_STEP_ITEMS, caps });
        part.items = page.items;
        if (page.next !== undefined) part.next = page.next;
      }
      parts.push(part);
      k++;
      continue;
    }
    const a = r.from + Math.max(0, from - k);
    const b = Math.min(r.to, a + (limit - parts.length) - 1);
    const items: Item[] = buildItems(src, index, a, b, { limit: b - a + 1, caps }).items;
    for (const item of items) parts.push({ kind: 'item', item });
    k += size;
  }
  return { total, parts };
}
