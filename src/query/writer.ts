/**
 * Who is writing a log now. A turn the log leaves open is either still being written (a live
 * process holds the session's lock, and the turn will end) or dangling (its writer died, and
 * nothing will close it until the session is resumed). The store's lock file beside the log says
 * which; its liveness check is the store's own (pid, boot id and process start time), so a lock
 * left by a dead process, or by one whose pid was reused, does not count.
 */
import { dirname, join } from 'node:path';
// The lock's two modules, not the store's index: that would link the whole store (~75 KB) into
// every `dsh log` command that reads a file.
import { LOCK_FILE } from '../store/layout.js';
import { lockHolder } from '../store/lock.js';
import type { WriterState } from './stats.js';

/** The writer of the log at `path` (a store's `session.jsonl`, or any log with a lock beside it). */
export function writerOf(path: string): WriterState {
  try {
    const holder = lockHolder(join(dirname(path), LOCK_FILE));
    return holder ? { state: 'live', holder: { pid: holder.pid, host: holder.host, since: holder.since } } : { state: 'none' };
  } catch {
    // An unreadable lock (permissions): nobody can be shown to hold it.
    return { state: 'unknown' };
  }
}
