/**
 * The projection from log to model-visible history. `deriveEventMessage` is the single per-event
 * rule, shared by `Session.deriveMessages()`, the runtime invariant and any external
 * reconstructor:
 *
 *   user/message       → the user message, verbatim (`data` is the message)
 *   assistant/message  → the assistant message, unless its content is empty: such an event
 *                        records usage (max-tokens, empty finish) but must not reach a provider
 *   tool/result        → its user-role message holding one tool-result block
 *   anything else      → nothing (chunks, tool calls, boundaries, plugin events)
 *
 * The projection is the frozen event data itself: no copy, no wrapping.
 */
import type { Message } from '../model/message.js';
import { HistoryBuilder, type MessageHistory } from '../model/history.js';
import type { SessionEvent } from './events.js';
import { SurfaceState } from './surface.js';

export function deriveEventMessage(event: SessionEvent): Message | null {
  switch (event.type) {
    case 'user/message':
      return event.data;
    case 'assistant/message':
      return event.data.message.content.length === 0 ? null : event.data.message;
    case 'tool/result':
      return event.data.message;
    default:
      return null;
  }
}

/**
 * Cold derivation over a whole event list, or its prefix through `throughSeq` (inclusive): the
 * history as the model would have seen it at that point.
 */
export function deriveMessagesFrom(events: readonly SessionEvent[], throughSeq?: number): Message[] {
  const end = throughSeq === undefined ? events.length : Math.min(events.length, throughSeq + 1);
  const surface = new SurfaceState();
  for (let i = 0; i < end; i++) surface.apply(events[i]!);
  const out: Message[] = [];
  for (const seq of surface.nodes) {
    const m = deriveEventMessage(events[seq]!);
    if (m) out.push(m);
  }
  return out;
}

/**
 * Incremental projection: each surface node is projected once when it first appears, into an
 * append-only list that hands out O(1) `MessageHistory` snapshots (the same snapshot until the
 * history grows). A replace (which bumps `replaceGeneration`) starts a new list, so a snapshot
 * taken before it keeps the history it had. Its messages are the frozen event payloads.
 */
export class MessageProjection {
  private history = new HistoryBuilder();
  private consumedNodes = 0;
  private generation = 0;

  derive(surface: { nodes: readonly number[]; replaceGeneration: number }, at: (seq: number) => SessionEvent): MessageHistory {
    if (surface.replaceGeneration !== this.generation) {
      this.history = new HistoryBuilder();
      this.consumedNodes = 0;
      this.generation = surface.replaceGeneration;
    }
    const nodes = surface.nodes;
    for (let i = this.consumedNodes; i < nodes.length; i++) {
      const m = deriveEventMessage(at(nodes[i]!));
      if (m) this.history.push(m);
    }
    this.consumedNodes = nodes.length;
    return this.history.snapshot();
  }
}
