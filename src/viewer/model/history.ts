/**
 * The model view: the history the model saw as of a seq, derived from the log with the session
 * library's own rules. `deriveMessagesFrom(events, seq)` folds the surface over every event up
 * to `seq` and projects its nodes; chunks and other log-only events never touch the surface, so
 * the same fold (`foldSurface`) over the surface events alone, projected with the same
 * `deriveEventMessage`, gives the same messages without materialising a million chunks. It also
 * keeps each message's seq, which the page shows. (The tests check the two agree at every seq.)
 */
import type { Message } from '../../model/message.js';
import { deriveEventMessage, foldSurface, type SessionEvent } from '../../session/index.js';
import type { LogSource } from '../source/source.js';
import { blocksView, sourceView, type Caps } from './items.js';
import { floorIndex, type LogIndex } from './log-index.js';
import type { HistoryView, MessageView } from './views.js';

export interface DerivedHistory {
  seq: number;
  messages: { seq: number; message: Message }[];
}

export class HistoryCache {
  private last: DerivedHistory | undefined;

  constructor(
    private readonly src: LogSource,
    private readonly index: LogIndex,
  ) {}

  /** The history after the event at `seq` (inclusive). The page pages through one seq's history, so the last one is kept. */
  at(seq: number): DerivedHistory {
    if (this.last?.seq === seq) return this.last;
    const k = floorIndex(this.index.surfaceSeqs, seq);
    const events: SessionEvent[] = [];
    for (let i = 0; i <= k; i++) events.push(this.src.at(this.index.surfaceSeqs[i]!));
    const { nodes } = foldSurface(events);
    const messages: DerivedHistory['messages'] = [];
    for (const node of nodes) {
      const m = deriveEventMessage(this.src.at(node));
      if (m) messages.push({ seq: node, message: m });
    }
    this.last = { seq, messages };
    return this.last;
  }

  view(seq: number, from: number, limit: number, caps: Caps): HistoryView {
    const h = this.at(seq);
    const e = this.src.at(seq);
    const d = e.data as { turn?: unknown; step?: unknown } | null;
    const at: HistoryView['at'] = { type: e.type };
    const where = this.index.locate(seq);
    if (where?.segment.kind === 'turn') at.turn = where.segment.turn;
    else if (typeof d?.turn === 'number') at.turn = d.turn;
    if (where?.step) at.step = where.step.step;
    const messages: MessageView[] = h.messages.slice(from, from + limit).map(({ seq: s, message: m }, i) => ({
      index: from + i,
      seq: s,
      id: String(m.id).slice(0, caps.name),
      role: String(m.role).slice(0, 50),
      source: sourceView(m.source, caps),
      blocks: blocksView(m.content, caps),
    }));
    return { seq, at, total: h.messages.length, from, messages };
  }
}
