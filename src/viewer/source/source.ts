/**
 * What the viewer reads: a session log addressed by seq, which may grow while it is shown. Three
 * kinds: a log file followed as its writer appends to it (`file.ts`), a session in PostgreSQL
 * followed from any host (`postgres.ts`), and a `Session` in this process (`SessionSource`),
 * whose appends arrive through `subscribe`.
 */
import type { LogWarning, Session, SessionEvent, SessionHeader } from '../../session/index.js';

export interface FollowState {
  /** `following`: new events will appear; `stopped`: they will not (see `problem`). */
  state: 'following' | 'stopped';
  problem?: { code: string; message: string };
  /** Bytes of an unterminated last line, held back until its newline arrives. */
  pendingBytes?: number;
}

export interface LogSource {
  readonly kind: 'file' | 'session' | 'postgres';
  /** The file path, the database location, or the session id. */
  readonly label: string;
  readonly header: Readonly<SessionHeader>;
  /** What the loader reported (torn tail, placeholders, legacy imports, …). */
  readonly warnings: readonly LogWarning[];
  /** Events available now; seqs 0 … length − 1. */
  length(): number;
  /** The event at `seq` (0 ≤ seq < length). */
  at(seq: number): SessionEvent;
  /** Events from `from` up to the length at the time of the call. */
  since(from: number): Iterable<SessionEvent>;
  follow(): FollowState;
  /** Batches of newly available events, in seq order. Returns the disposer. */
  subscribe(listener: (batch: readonly SessionEvent[]) => void): () => void;
  close(): void;
}

/** A `Session` of this process (say, the one a chat is writing): its appends arrive by subscription. */
export class SessionSource implements LogSource {
  readonly kind = 'session';
  readonly label: string;
  readonly header: Readonly<SessionHeader>;
  readonly warnings: readonly LogWarning[];
  private readonly unsubscribers: (() => void)[] = [];
  private closed = false;

  constructor(
    private readonly session: Session,
    opts: { label?: string; warnings?: readonly LogWarning[] } = {},
  ) {
    this.label = opts.label ?? session.id;
    this.header = session.header;
    this.warnings = opts.warnings ?? [];
  }

  length(): number {
    return this.session.length;
  }

  at(seq: number): SessionEvent {
    const e = this.session.at(seq);
    if (e === undefined) throw new RangeError(`seq ${seq} is outside the log (0 … ${this.session.length - 1})`);
    return e;
  }

  *since(from: number): Iterable<SessionEvent> {
    // Bounded by the length now: a listener may append while the caller iterates.
    const end = this.session.length;
    for (const e of this.session.since(from)) {
      if (e.seq >= end) return;
      yield e;
    }
  }

  follow(): FollowState {
    return this.closed ? { state: 'stopped', problem: { code: 'CLOSED', message: 'the viewer was closed' } } : { state: 'following' };
  }

  subscribe(listener: (batch: readonly SessionEvent[]) => void): () => void {
    const off = this.session.subscribe((e) => listener([e]));
    this.unsubscribers.push(off);
    return off;
  }

  close(): void {
    this.closed = true;
    for (const off of this.unsubscribers.splice(0)) off();
  }
}
