/**
 * The model-visible history as an immutable snapshot that costs O(1) to take.
 *
 * A session's history only grows between replaces (compaction, pruning), and a replace starts a
 * new list. So a snapshot is a shared list plus a length: the list's first `length` messages
 * never change, and later appends are past the snapshot's end. Taking one allocates one small
 * object, whatever the history's size; a fresh array per step (the old contract) copied the whole
 * history every step, and at thousands of messages the copies kept the young generation busy
 * with collections that landed inside the calls.
 *
 * Read it with `for…of`, `length`, `at(i)`; `toArray()` copies when an array is needed.
 */
import type { Message } from './message.js';

/** A snapshot of a growing list (for `HistoryBuilder` only: the list must never change below `length`). */
let viewOf: (items: readonly Message[], length: number) => MessageHistory;

export class MessageHistory implements Iterable<Message> {
  readonly #items: readonly Message[];
  readonly length: number;

  /** The empty history. */
  static readonly EMPTY: MessageHistory = new MessageHistory([], 0);

  static {
    viewOf = (items, length) => (length === 0 ? MessageHistory.EMPTY : new MessageHistory(items, length));
  }

  private constructor(items: readonly Message[], length: number) {
    this.#items = items;
    this.length = length;
    Object.freeze(this);
  }

  /** A history holding these messages (copied: later changes to `messages` do not show). */
  static of(messages: Iterable<Message>): MessageHistory {
    const items = Object.freeze([...messages]);
    return items.length === 0 ? MessageHistory.EMPTY : new MessageHistory(items, items.length);
  }

  /** The message at `index` (negative counts from the end, as `Array.prototype.at`). */
  at(index: number): Message | undefined {
    const i = Math.trunc(index) < 0 ? this.length + Math.trunc(index) : Math.trunc(index);
    return i >= 0 && i < this.length ? this.#items[i] : undefined;
  }

  *[Symbol.iterator](): IterableIterator<Message> {
    const items = this.#items;
    for (let i = 0; i < this.length; i++) yield items[i]!;
  }

  /** A new array of the messages (O(n)). */
  toArray(): Message[] {
    return this.#items.slice(0, this.length);
  }

  /** Messages from `start` to `end` (exclusive), as `Array.prototype.slice` takes them. */
  slice(start?: number, end?: number): Message[] {
    return this.toArray().slice(start, end);
  }

  /** Array-like readers (each O(n), as on an array). */
  map<T>(f: (m: Message, i: number) => T): T[] {
    return this.toArray().map((m, i) => f(m, i));
  }
  flatMap<T>(f: (m: Message, i: number) => T | readonly T[]): T[] {
    return this.toArray().flatMap((m, i) => f(m, i));
  }
  filter(f: (m: Message, i: number) => boolean): Message[] {
    return this.toArray().filter((m, i) => f(m, i));
  }
  some(f: (m: Message, i: number) => boolean): boolean {
    return this.toArray().some((m, i) => f(m, i));
  }
  find(f: (m: Message, i: number) => boolean): Message | undefined {
    return this.toArray().find((m, i) => f(m, i));
  }

  /** `JSON.stringify` writes the messages as an array. */
  toJSON(): Message[] {
    return this.toArray();
  }
}

/**
 * An append-only list of messages handing out `MessageHistory` snapshots: each snapshot sees the
 * messages pushed before it, and is the same object until the next push.
 */
export class HistoryBuilder {
  private readonly items: Message[] = [];
  private view: MessageHistory = MessageHistory.EMPTY;

  get length(): number {
    return this.items.length;
  }

  push(message: Message): void {
    this.items.push(message);
  }

  snapshot(): MessageHistory {
    if (this.view.length !== this.items.length) this.view = viewOf(this.items, this.items.length);
    return this.view;
  }
}

/** The history a request carries: a session's snapshot, or messages a caller assembled. */
export type MessageList = MessageHistory | readonly Message[];

/** `list` as an array (the array itself when it is one; a copy of a snapshot). */
export function messageArray(list: MessageList): readonly Message[] {
  return list instanceof MessageHistory ? list.toArray() : list;
}
