/**
 * What compaction needs to know about a log, folded incrementally (each event is read once per
 * session, however often pressure is checked): where the request headers are, and which
 * compaction holds the lock.
 *
 * The lock is the log itself: a `compaction/start` without its `compaction/end` means a compaction
 * is running, unless a `session/end-seed` came after it; then it is a leftover of an earlier
 * process (a crash mid-compaction) and blocks nothing.
 */
import type { CompactionStartData, EpochHeader, SessionEvent } from '../session/events.js';
import type { Session } from '../session/session.js';

class LogIndex {
  private cursor = 0;
  readonly headerSeqs: number[] = [];
  readonly open = new Map<string, SessionEvent<'compaction/start'>>();

  constructor(private readonly session: Session) {}

  update(): this {
    if (this.cursor === this.session.length) return this;
    // Only these four types: a resumed log's chunk runs are stepped over, not materialised.
    for (const e of this.session.eventsOfType(['request/header', 'compaction/start', 'compaction/end', 'session/end-seed'], this.cursor)) {
      switch (e.type) {
        case 'request/header':
          this.headerSeqs.push(e.seq);
          break;
        case 'compaction/start':
          this.open.set(e.data.compactionId, e);
          break;
        case 'compaction/end':
          this.open.delete(e.data.compactionId);
          break;
        case 'session/end-seed':
          this.open.clear();
          break;
        default:
          break;
      }
    }
    this.cursor = this.session.length;
    return this;
  }
}

const indexes = new WeakMap<Session, LogIndex>();

function index(session: Session): LogIndex {
  let i = indexes.get(session);
  if (!i) indexes.set(session, (i = new LogIndex(session)));
  return i.update();
}

/** The compaction holding the lock, if any. */
export function openCompaction(session: Session): { seq: number; data: CompactionStartData } | undefined {
  const open = index(session).open;
  let latest: SessionEvent<'compaction/start'> | undefined;
  for (const e of open.values()) if (!latest || e.seq > latest.seq) latest = e;
  return latest && { seq: latest.seq, data: latest.data };
}

/** The request header in force for a request made just before `seq`. */
export function headerBefore(session: Session, seq: number): EpochHeader | undefined {
  const seqs = index(session).headerSeqs;
  let lo = 0;
  let hi = seqs.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (seqs[mid]! < seq) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  if (found < 0) return undefined;
  return (session.at(seqs[found]!) as SessionEvent<'request/header'>).data.header;
}
