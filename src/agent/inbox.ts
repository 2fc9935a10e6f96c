/**
 * The durable inbox. Two ordered lists: `next-turn` (prompts, one per turn)
 * and `next-step` (steering and injected context, all consumed at the next step boundary).
 *
 * Every change is first recorded as an `agent/inbox/spliced` event and only then applied to the
 * in-memory lists, so pending input survives a crash or resume: a new Inbox rebuilds the lists by
 * replaying the splices (from the header's `seedLength`, so a fork child starts empty).
 */
import { CodedError } from '../model/coded-error.js';
import type { UserMessage } from '../model/message.js';
import type { InboxSplice, InboxTarget } from '../session/events.js';
import type { Session } from '../session/session.js';

export class InboxError extends CodedError<'DUPLICATE_MESSAGE_ID' | 'NOT_FOUND'> {
  constructor(code: 'DUPLICATE_MESSAGE_ID' | 'NOT_FOUND', message: string) {
    super(code, message);
    this.name = 'InboxError';
  }
}

export interface InboxEvents {
  inserted(message: UserMessage, target: InboxTarget): void;
  claimed(message: UserMessage, turn: number): void;
  discarded(message: UserMessage): void;
}

export class Inbox {
  private readonly lists: Record<InboxTarget, UserMessage[]> = { 'next-turn': [], 'next-step': [] };

  constructor(
    private readonly session: Session,
    private readonly events?: Partial<InboxEvents>,
  ) {
    const from = session.header.seedLength ?? 0;
    // Splices only: a resumed log's chunk runs are stepped over, not materialised.
    for (const e of session.eventsOfType(['agent/inbox/spliced'], from)) this.apply(e.data);
  }

  get nextTurn(): readonly UserMessage[] {
    return this.lists['next-turn'];
  }
  get nextStep(): readonly UserMessage[] {
    return this.lists['next-step'];
  }
  get size(): number {
    return this.lists['next-turn'].length + this.lists['next-step'].length;
  }

  private apply(s: InboxSplice): UserMessage[] {
    return this.lists[s.target].splice(s.start, s.removedCount ?? 0, ...s.inserted);
  }

  /** Record, then apply. The frozen logged payload is what the lists hold. */
  private splice(s: InboxSplice): UserMessage[] {
    const logged = this.session.append('agent/inbox/spliced', s);
    return this.apply(logged.data);
  }

  private assertNew(id: string): void {
    if (this.lists['next-turn'].some((m) => m.id === id) || this.lists['next-step'].some((m) => m.id === id)) {
      throw new InboxError('DUPLICATE_MESSAGE_ID', `message id "${id}" is already in the inbox`);
    }
  }

  append(target: InboxTarget, message: UserMessage): UserMessage {
    this.assertNew(message.id);
    this.splice({ target, start: this.lists[target].length, inserted: [message] });
    const stored = this.lists[target][this.lists[target].length - 1]!;
    this.events?.inserted?.(stored, target);
    return stored;
  }

  prepend(target: InboxTarget, message: UserMessage): UserMessage {
    this.assertNew(message.id);
    this.splice({ target, start: 0, inserted: [message] });
    const stored = this.lists[target][0]!;
    this.events?.inserted?.(stored, target);
    return stored;
  }

  /** Remove one pending message (it will never reach the model). */
  remove(id: string): UserMessage {
    for (const target of ['next-step', 'next-turn'] as const) {
      const i = this.lists[target].findIndex((m) => m.id === id);
      if (i >= 0) {
        const [m] = this.splice({ target, start: i, removedCount: 1, inserted: [], outcome: 'canceled' });
        this.events?.discarded?.(m!);
        return m!;
      }
    }
    throw new InboxError('NOT_FOUND', `no pending message with id "${id}"`);
  }

  /** Drop everything pending (next-step first, then next-turn). */
  clear(): UserMessage[] {
    const dropped: UserMessage[] = [];
    for (const target of ['next-step', 'next-turn'] as const) {
      const n = this.lists[target].length;
      if (n === 0) continue;
      const removed = this.splice({ target, start: 0, removedCount: n, inserted: [], outcome: 'canceled' });
      for (const m of removed) this.events?.discarded?.(m);
      dropped.push(...removed);
    }
    return dropped;
  }

  /**
   * Take what the next step consumes: one `next-turn` message when `target` is `next-turn`, then
   * all of `next-step`. A claim is a pure deletion (no `outcome`): the messages move on to the
   * pre-step decision, which records them as `user/message` or rejects them.
   */
  claim(target: InboxTarget, turn: number): UserMessage[] {
    const claimed: UserMessage[] = [];
    if (target === 'next-turn' && this.lists['next-turn'].length > 0) {
      claimed.push(...this.splice({ target: 'next-turn', start: 0, removedCount: 1, inserted: [] }));
    }
    const n = this.lists['next-step'].length;
    if (n > 0) claimed.push(...this.splice({ target: 'next-step', start: 0, removedCount: n, inserted: [] }));
    for (const m of claimed) this.events?.claimed?.(m, turn);
    return claimed;
  }
}
