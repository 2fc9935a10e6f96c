/**
 * `provenance`: where an event comes from and where it went. Three relations, read from the log:
 *
 * - **cites / cited by**: `sourceEventSeqs`. An `assistant/message` cites the chunks it was
 *   assembled from, a `tool/result` its `tool/call`, a replacing event the nodes it shadows.
 *   Symmetric by construction: b is in cites(a) exactly when a is in citedBy(b).
 * - **replaces / replaced by**: the surface. A surface event with `{op: 'replace'}` (a compaction
 *   summary, a pruned tool result) takes the place of a span of surface nodes; folding the
 *   surface in log order says exactly which nodes each replace shadowed. The chains are followed
 *   both ways: what the replaced nodes had themselves replaced, and what later replaced the
 *   replacement (a summary compacted again).
 * - **related**: links that are not citations but that one reads the same way: the message that
 *   issued a tool call and the calls a message issued (by call id), and the `compaction/*` events
 *   bracketing a compaction summary or a pruning (by compaction id, or by the seqs they shadow).
 */
import type { SessionEvent } from '../session/events.js';
import { isChunkRun, num, obj, refOf, requireSeq, str, viewOf, type EventRef, type LogView, type QueryInput } from './input.js';

export interface ChainLink extends EventRef {
  /** Steps away from the event asked about (1 = a direct replacement). */
  depth: number;
  /** The event this one replaced (backwards) or was replaced by (forwards) on the way. */
  via: number;
}

export interface RelatedRef extends EventRef {
  relation: 'issued-by' | 'issued' | 'compaction' | 'prune' | 'describes';
}

export interface Provenance {
  event: EventRef;
  /** `sourceEventSeqs`, as listed. */
  cites: EventRef[];
  /** Events whose `sourceEventSeqs` list this seq. */
  citedBy: EventRef[];
  /** Surface nodes this event shadowed (a replace). */
  replaces: EventRef[];
  /** The event that shadowed this one on the surface. */
  replacedBy?: EventRef;
  /** Everything this event's replacements had replaced before, transitively. */
  chainBack: ChainLink[];
  /** This event's replacement, that one's replacement, and so on. */
  chainForward: ChainLink[];
  /** Surface events: still in the model-visible history at the end of the log, or shadowed. */
  surface: 'visible' | 'shadowed' | 'not-surface';
  related: RelatedRef[];
}

/** The surface as the log builds it, kept as the relations provenance needs. */
class SurfaceFold {
  nodes: number[] = [];
  /** Replacing seq → the nodes it shadowed. */
  readonly replaced = new Map<number, number[]>();
  /** Shadowed seq → the replacing seq. */
  readonly shadowedBy = new Map<number, number>();

  apply(e: SessionEvent): void {
    const op = e.surfaceOp;
    if (op === undefined) return;
    if (op === 'append') {
      this.nodes.push(e.seq);
      return;
    }
    const i = this.nodes.indexOf(op.start);
    const j = this.nodes.indexOf(op.end);
    // A loaded log never holds a bad range; a foreign one might, and then it replaces nothing.
    if (i < 0 || j < i) {
      this.nodes.push(e.seq);
      return;
    }
    const shadowed = this.nodes.splice(i, j - i + 1, e.seq);
    this.replaced.set(e.seq, shadowed);
    for (const s of shadowed) this.shadowedBy.set(s, e.seq);
  }
}

function chainBack(fold: SurfaceFold, seq: number, ref: (s: number) => EventRef): ChainLink[] {
  const out: ChainLink[] = [];
  let level = (fold.replaced.get(seq) ?? []).map((s) => ({ s, via: seq }));
  const seen = new Set<number>();
  for (let depth = 2; level.length > 0; depth++) {
    const next: { s: number; via: number }[] = [];
    for (const { s } of level) {
      for (const t of fold.replaced.get(s) ?? []) {
        if (seen.has(t)) continue;
        seen.add(t);
        out.push({ ...ref(t), depth, via: s });
        next.push({ s: t, via: s });
      }
    }
    level = next;
  }
  return out;
}

function chainForward(fold: SurfaceFold, seq: number, ref: (s: number) => EventRef): ChainLink[] {
  const out: ChainLink[] = [];
  let via = seq;
  for (let next = fold.shadowedBy.get(seq), depth = 1; next !== undefined; next = fold.shadowedBy.get(next), depth++) {
    out.push({ ...ref(next), depth, via });
    via = next;
  }
  return out;
}

function toolCallIds(e: SessionEvent): string[] {
  const content = obj(obj(e.data).message).content;
  if (!Array.isArray(content)) return [];
  const ids: string[] = [];
  for (const b of content) if (obj(b).type === 'tool-call' && typeof obj(b).id === 'string') ids.push(obj(b).id as string);
  return ids;
}

/** The provenance of the event at `seq`; SEQ_OUT_OF_RANGE when the log has no such seq. */
export function provenance(input: QueryInput, seq: number): Provenance {
  const view = viewOf(input);
  requireSeq(view, seq);
  return provenanceIn(view, seq);
}

export function provenanceIn(view: LogView, seq: number): Provenance {
  const target = view.at(seq);
  const ref = (s: number): EventRef => refOf(view.at(s));
  const fold = new SurfaceFold();
  const citedBy: EventRef[] = [];
  const related: RelatedRef[] = [];
  const d = obj(target.data);
  const compactionId = str(obj(d.source).compactionId) ?? (target.type.startsWith('compaction/') ? str(d.compactionId) : undefined);
  const myCallIds = target.type === 'assistant/message' ? new Set(toolCallIds(target)) : undefined;
  const myCallId = target.type === 'tool/call' ? str(d.callId) : undefined;
  const step = num(d.step);
  const turn = num(d.turn);
  let stepTurn: number | undefined;
  let stepNo: number | undefined;
  /** compaction/prune events not yet matched to the replaces that carry them out. */
  const prunes: SessionEvent[] = [];

  for (const e of view.records()) {
    // Chunks carry no surface op and cite nothing.
    if (isChunkRun(e)) continue;
    fold.apply(e);
    const ed = obj(e.data);
    if (e.type === 'turn/start') stepTurn = num(ed.turn);
    else if (e.type === 'step/start') stepNo = num(ed.step);
    if (e.seq > seq && e.sourceEventSeqs?.includes(seq)) citedBy.push(refOf(e));
    if (e.seq === seq) continue;
    // The compaction this event belongs to (or, for a compaction event, its summary message).
    if (compactionId !== undefined && (str(ed.compactionId) === compactionId || str(obj(ed.source).compactionId) === compactionId))
      related.push({ ...refOf(e), relation: 'compaction' });
    if (e.type === 'compaction/prune') prunes.push(e);
    // Tool calls: the message that issued them, the calls a message issued, within one step.
    const sameStep = stepTurn === turn && stepNo === step;
    if (myCallIds && sameStep && e.type === 'tool/call' && myCallIds.has(str(ed.callId) ?? ''))
      related.push({ ...refOf(e), relation: 'issued' });
    if (myCallId !== undefined && sameStep && e.type === 'assistant/message' && e.seq < seq && toolCallIds(e).includes(myCallId))
      related.push({ ...refOf(e), relation: 'issued-by' });
  }

  const replaces = (fold.replaced.get(seq) ?? []).map(ref);
  const by = fold.shadowedBy.get(seq);
  // A pruning: the compaction/prune events that name the seqs this replace shadowed (or that
  // name this event, when it is itself shadowed by one).
  const shadowedHere = new Set(fold.replaced.get(seq) ?? []);
  for (const p of prunes) {
    const named = obj(p.data).shadowedSeqs;
    if (!Array.isArray(named)) continue;
    if (named.some((s) => shadowedHere.has(s as number)) || named.includes(seq)) related.push({ ...refOf(p), relation: 'prune' });
  }
  if (target.type === 'compaction/summary' || target.type === 'compaction/prune') {
    const named = d.shadowedSeqs;
    if (Array.isArray(named))
      for (const s of named) if (typeof s === 'number' && s >= 0 && s < view.length) related.push({ ...ref(s), relation: 'describes' });
  }
  related.sort((a, b) => a.seq - b.seq);

  const isSurface = target.surfaceOp !== undefined;
  const out: Provenance = {
    event: refOf(target),
    cites: (target.sourceEventSeqs ?? []).filter((s) => s >= 0 && s < view.length).map(ref),
    citedBy,
    replaces,
    chainBack: chainBack(fold, seq, ref),
    chainForward: chainForward(fold, seq, ref),
    surface: !isSurface ? 'not-surface' : by !== undefined ? 'shadowed' : 'visible',
    related,
  };
  if (by !== undefined) out.replacedBy = ref(by);
  return out;
}
