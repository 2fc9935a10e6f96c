/**
 * `replayCompactions(recording)`: a plugin for `replaySession` that re-enacts the recording's
 * compactions where the recording made them, so a compacted session replays with no model:
 *
 * - a bracket written after a failed attempt (overflow recovery) is re-enacted in
 *   `agent/request-error` after the same attempt of the same step, and the step is retried when
 *   it replaced history, as the recorded loop did;
 * - a bracket written between steps (pressure) is re-enacted at the same step's `agent/pre-step`;
 * - a bracket written between turns (manual, `turn: null`) when the agent goes idle after the
 *   same number of turns (or, before the first turn, when it starts).
 *
 * Re-enacting means appending the recorded events again, the summary and checkpoint verbatim,
 * with the shadowed span mapped by surface position onto the live surface (live seqs differ from
 * recorded ones). No summariser runs: the recording holds its output. A recorded span that the
 * live surface does not have, or whose messages differ, is reported in `notes`; the replay
 * adapter then reports the requests that follow as divergent.
 */
import { randomUUID } from 'node:crypto';
import type { Plugin } from '../agent/context.js';
import '../agent/hooks.js';
import type { Message } from '../model/message.js';
import type { SessionEvent } from '../session/events.js';
import { deriveEventMessage } from '../session/derive.js';
import { SurfaceState } from '../session/surface.js';
import { firstDifference, withoutIds } from '../session/json-diff.js';
import { recordedEvents } from '../llm/replay-adapter.js';

/** BracketPlace a recorded bracket was written; turns are counted in log order from 1. */
export type BracketPlace =
  /** After the `attempt`-th attempt of a step failed (overflow recovery). */
  | { kind: 'attempt'; turn: number; step: number; attempt: number }
  /** Before `step/start` of a step (pressure). */
  | { kind: 'pre-step'; turn: number; step: number }
  /** Between turns, after `afterTurns` had ended (manual). */
  | { kind: 'idle'; afterTurns: number };

export interface RecordedBracket {
  where: BracketPlace;
  start: SessionEvent<'compaction/start'>;
  summary?: SessionEvent<'compaction/summary'>;
  replace?: SessionEvent<'user/message'>;
  end?: SessionEvent<'compaction/end'>;
  /** Surface positions of the shadowed span, and its messages, as recorded. */
  span?: { first: number; last: number; messages: Message[] };
}

/** Turns are numbered by their order in the log (1 = the first turn the log holds). */
export function recordedBrackets(events: readonly SessionEvent[]): RecordedBracket[] {
  const out: RecordedBracket[] = [];
  const byId = new Map<string, RecordedBracket>();
  const surface = new SurfaceState();
  let turns = 0;
  let ended = 0;
  let inTurn = false;
  let step: number | undefined;
  let lastStep = 0;
  let finishes = 0;
  for (const e of events) {
    switch (e.type) {
      case 'turn/start':
        turns++;
        inTurn = true;
        lastStep = 0;
        break;
      case 'turn/end':
        ended++;
        inTurn = false;
        step = undefined;
        break;
      case 'step/start':
        step = e.data.step;
        lastStep = e.data.step;
        finishes = 0;
        break;
      case 'step/end':
        step = undefined;
        break;
      case 'assistant/chunk':
        if (e.data.chunk.type === 'finish') finishes++;
        break;
      case 'compaction/start': {
        const where: BracketPlace = !inTurn
          ? { kind: 'idle', afterTurns: ended }
          : step !== undefined
            ? { kind: 'attempt', turn: turns, step, attempt: finishes }
            : { kind: 'pre-step', turn: turns, step: lastStep + 1 };
        const b: RecordedBracket = { where, start: e };
        out.push(b);
        byId.set(e.data.compactionId, b);
        break;
      }
      case 'compaction/summary': {
        const b = byId.get(e.data.compactionId);
        if (b) b.summary = e;
        break;
      }
      case 'compaction/end': {
        const b = byId.get(e.data.compactionId);
        if (b) b.end = e;
        byId.delete(e.data.compactionId);
        break;
      }
      case 'user/message': {
        const op = e.surfaceOp;
        const id = e.data.source.kind === 'plugin' ? e.data.source.compactionId : undefined;
        const b = typeof id === 'string' ? byId.get(id) : undefined;
        if (b && typeof op === 'object') {
          const first = surface.nodes.indexOf(op.start);
          const last = surface.nodes.indexOf(op.end);
          const messages = surface.nodes
            .slice(first, last + 1)
            .map((s) => deriveEventMessage(events[s]!))
            .filter((m): m is Message => m !== null);
          b.replace = e;
          b.span = { first, last, messages };
        }
        break;
      }
      default:
        break;
    }
    surface.apply(e);
  }
  return out;
}

/** `source`: the recording as JSONL text, a session, or its events; `notes` collects what did not map. */
export function replayCompactions(
  source: string | readonly SessionEvent[] | { readonly events: readonly SessionEvent[] },
  notes: string[] = [],
): Plugin {
  const brackets = recordedBrackets(recordedEvents(source));
  return (host) => {
    const session = host.session;
    const ordinal = new Map<number, number>();
    let liveTurns = 0;
    let liveEnded = 0;
    const unsubscribe = session.subscribe((e) => {
      if (e.type === 'turn/start') ordinal.set(e.data.turn, ++liveTurns);
      else if (e.type === 'turn/end') liveEnded++;
    });

    const done = new Set<RecordedBracket>();
    const reenact = (b: RecordedBracket, liveTurn: number | null): void => {
      done.add(b);
      const start = session.append('compaction/start', { ...b.start.data, turn: liveTurn });
      let shadowed: number[] | undefined;
      if (b.span) {
        const nodes = session.surface.nodes;
        if (b.span.last >= nodes.length || b.span.first < 0) {
          notes.push(
            `compaction ${b.start.data.compactionId}: the recorded span (surface positions ${b.span.first}…${b.span.last}` +
              `) is beyond the live surface of ${nodes.length} node(s)`,
          );
        } else {
          shadowed = nodes.slice(b.span.first, b.span.last + 1);
          const live = shadowed.map((s) => deriveEventMessage(session.at(s)!)).filter((m): m is Message => m !== null);
          const d = firstDifference(withoutIds(b.span.messages), withoutIds(live), { path: 'span' });
          if (d) notes.push(`compaction ${b.start.data.compactionId}: the live span differs from the recorded one at ${d.path}`);
        }
      }
      let summarySeq: number | undefined;
      if (b.summary) {
        const data = { ...b.summary.data };
        if (shadowed) {
          data.shadowedRange = { start: shadowed[0]!, end: shadowed[shadowed.length - 1]! };
          data.shadowedSeqs = shadowed;
        }
        summarySeq = session.append('compaction/summary', data).seq;
      }
      if (b.replace && shadowed) {
        session.append(
          'user/message',
          { ...b.replace.data, id: randomUUID() },
          {
            surfaceOp: { op: 'replace', start: shadowed[0]!, end: shadowed[shadowed.length - 1]! },
            sourceEventSeqs: [start.seq, ...(summarySeq !== undefined ? [summarySeq] : []), ...shadowed],
          },
        );
      }
      if (b.end) session.append('compaction/end', { ...b.end.data, turn: liveTurn });
    };
    const due = (match: (w: BracketPlace) => boolean): RecordedBracket[] => brackets.filter((b) => !done.has(b) && match(b.where));

    host.on(
      'agent/pre-step',
      async (p, next) => {
        const decision = await next(p);
        const t = ordinal.get(p.turn);
        for (const b of due((w) => w.kind === 'pre-step' && w.turn === t && w.step === p.step)) reenact(b, p.turn);
        return decision;
      },
      { name: 'dsh:compaction/replay-pre-step' },
    );
    host.on(
      'agent/request-error',
      async (p, next) => {
        const t = ordinal.get(p.turn);
        let attempt = 0;
        for (let seq = session.length - 1; seq >= 0; seq--) {
          const e = session.at(seq)!;
          if (e.type === 'step/start') break;
          if (e.type === 'assistant/chunk' && e.data.chunk.type === 'finish') attempt++;
        }
        const generation = session.surface.replaceGeneration;
        for (const b of due((w) => w.kind === 'attempt' && w.turn === t && w.step === p.step && w.attempt === attempt)) reenact(b, p.turn);
        if (session.surface.replaceGeneration > generation && !p.signal.aborted) return { kind: 'retry' };
        return next(p);
      },
      { name: 'dsh:compaction/replay-overflow' },
    );
    host.on('agent/status', ({ status }) => {
      const idle = status === 'idle' || liveTurns === 0;
      if (!idle) return;
      for (const b of due((w) => w.kind === 'idle' && w.afterTurns === liveEnded)) reenact(b, null);
    });
    return unsubscribe;
  };
}
