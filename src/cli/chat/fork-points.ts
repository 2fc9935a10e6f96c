/**
 * Where `/fork` can cut a session: after each ended turn (a seq between turns is the only valid
 * boundary; see Session.fork), each with what that turn was about, for a list to pick from.
 */
import type { SessionEvent } from '../../session/index.js';
import type { PickItem } from '../../terminal/chat/picker.js';
import { flatten, oneLine, truncate } from '../text.js';

export interface ForkPoint {
  /** The turn's `turn/end`: the fork holds everything through it. */
  seq: number;
  turn: number;
  /** The turn's first prompt and last answer text, when it had them. */
  prompt?: string;
  answer?: string;
}

const textOf = (blocks: readonly { type: string }[]): string =>
  blocks
    .filter((b): b is { type: 'text'; text: string } => b.type === 'text')
    .map((b) => b.text)
    .join(' ');

export function forkPoints(events: Iterable<SessionEvent>): ForkPoint[] {
  const out: ForkPoint[] = [];
  let prompt: string | undefined;
  let answer: string | undefined;
  for (const e of events) {
    if (e.type === 'user/message' && e.data.source.kind === 'user' && prompt === undefined) prompt = textOf(e.data.content);
    else if (e.type === 'assistant/message') {
      const t = textOf(e.data.message.content);
      if (t.trim() !== '') answer = t;
    } else if (e.type === 'turn/end') {
      out.push({ seq: e.seq, turn: e.data.turn, ...(prompt !== undefined ? { prompt } : {}), ...(answer !== undefined ? { answer } : {}) });
      prompt = undefined;
      answer = undefined;
    }
  }
  return out;
}

/** `seq 12 · after turn 2: the prompt → the answer`, one line. */
export function forkPointLine(p: ForkPoint): string {
  const what = [p.prompt, p.answer].filter((t) => t !== undefined).map((t) => oneLine(truncate(t, 60)));
  return `seq ${p.seq} · after turn ${p.turn}${what.length > 0 ? `: ${what.join(' → ')}` : ''}`;
}

/** Newest first, as the list shows them; folded to one line, not escaped (the picker escapes what it draws, once). */
export function forkItems(points: readonly ForkPoint[]): PickItem[] {
  return [...points].reverse().map((p) => ({
    value: String(p.seq),
    title: `after turn ${p.turn} (seq ${p.seq})${p.prompt !== undefined ? `: ${flatten(p.prompt, 120)}` : ''}`,
    ...(p.answer !== undefined ? { detail: `→ ${flatten(p.answer, 200)}` } : {}),
  }));
}
