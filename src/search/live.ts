/**
 * The search index kept current from the write path. While a session runs, its log is indexed
 * again (from the offset indexing reached: its new lines only, never a rescan of the store) a
 * moment after each step and turn ends, and once more when it closes; so what a running
 * `dsh run` or `dsh chat` wrote is searchable without a search having to read it first.
 *
 * What is indexed is read back from the log file, not taken from the events in memory: the file
 * is what the index describes (its byte offsets are where snippets are read), and only its
 * complete lines are indexed. Each update is one SQLite transaction (the log's new documents and
 * its new offset together, WAL journal), so a process killed at any point leaves the index as it
 * was before that update or after it, never between; the next update or search continues from the
 * offset it holds.
 *
 * The write path never waits for the index: when another process holds its write lock (a search
 * bringing it up to date, another session's update, a first open creating the file) the update
 * is put off and tried again a little later on a timer, a bounded number of times; the session
 * goes on meanwhile. Retrying matters: the update after a chat's last step may be the last one
 * for a long while (the user is reading), and a skipped one would leave that turn unindexed until
 * a search reads it. After the last retry the next update, or the next search, catches up from
 * the same offset. Nothing here throws into the session: the index is a cache of the logs.
 */
import { IndexDb, isBusy } from './index-db.js';
import { indexStoredLog, noStats, type RefreshStats } from './search.js';

export type UpdateOutcome =
  | { kind: 'indexed'; stats: RefreshStats }
  /** Another process was writing the index: nothing done, nothing lost. */
  | { kind: 'busy' }
  | { kind: 'failed'; error: Error };

/** One update of one stored log's entry in the index at `index`. */
export function updateIndex(index: string, path: string, busyMs = 0): UpdateOutcome {
  let db: IndexDb | undefined;
  try {
    db = IndexDb.open(index, { busyMs });
    return { kind: 'indexed', stats: indexStoredLog(db, path, noStats()) };
  } catch (e) {
    if (isBusy(e)) return { kind: 'busy' };
    return { kind: 'failed', error: e instanceof Error ? e : new Error(String(e)) };
  } finally {
    try {
      db?.close();
    } catch {
      // closing a connection that failed to open
    }
  }
}

/** After a step ends, the update waits this long: the writer puts the step's lines in the file first. */
export const UPDATE_DELAY_MS = 50;
/** A busy index is tried again after this long, up to BUSY_RETRIES times (about 5 s in all). */
export const BUSY_RETRY_MS = 200;
export const BUSY_RETRIES = 25;
/** The last update (the session is closing) waits this long for a busy index. */
export const CLOSE_BUSY_MS = 1000;

/**
 * Updates of one log, coalesced: `poke()` asks for one (at most one is pending at a time),
 * `close()` runs the last one at once. Timers are unref'd: they never keep a process alive.
 */
export class LiveIndex {
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Busy updates in a row since the last one that ran. */
  private busyInARow = 0;
  /** The first update that failed (not a busy index): the caller says so once. */
  failure: Error | undefined;
  updates = 0;

  constructor(
    readonly index: string,
    readonly path: string,
  ) {}

  poke(): void {
    if (this.closed || this.timer) return;
    this.schedule(UPDATE_DELAY_MS);
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.run(0).kind !== 'busy') this.busyInARow = 0;
      else if (++this.busyInARow <= BUSY_RETRIES) this.schedule(BUSY_RETRY_MS);
      else this.busyInARow = 0;
    }, ms);
    this.timer.unref();
  }

  close(): UpdateOutcome | undefined {
    if (this.closed) return undefined;
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    return this.run(CLOSE_BUSY_MS);
  }

  private run(busyMs: number): UpdateOutcome {
    const r = updateIndex(this.index, this.path, busyMs);
    if (r.kind === 'indexed') this.updates++;
    if (r.kind === 'failed') this.failure ??= r.error;
    return r;
  }
}
