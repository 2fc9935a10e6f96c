/**
 * Torn tails are preserved, never deleted. Before a log is cut back to its last good line, the
 * bytes after it are published (temp file, fsync, link, directory fsync) as a sidecar beside the
 * log, `session.jsonl.torn-<UTC timestamp>`. Only once the sidecar is durable is the log
 * truncated; if preserving fails, the log is left exactly as it was and the open fails.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { publishNew } from './durable.js';
import { StoreError, errnoOf } from './errors.js';
import { TORN_PREFIX } from './layout.js';

function stamp(now: number): string {
  // 2025-01-31T12-00-00.123Z: sortable, and no ':' (not allowed in Windows names).
  return new Date(now).toISOString().replace(/:/g, '-');
}

/** Copy bytes `[from, to)` of `path` into a new sidecar; returns the sidecar's path. */
export function preserveTail(path: string, from: number, to: number, now: number = Date.now()): string {
  try {
    const data = Buffer.allocUnsafe(to - from);
    const fd = openSync(path, 'r');
    try {
      let off = 0;
      while (off < data.length) {
        const n = readSync(fd, data, off, data.length - off, from + off);
        if (n === 0) throw new Error(`${path} shrank while its torn tail was being read`);
        off += n;
      }
    } finally {
      closeSync(fd);
    }
    const base = join(dirname(path), `${TORN_PREFIX}${stamp(now)}`);
    for (let k = 0; ; k++) {
      const sidecar = k === 0 ? base : `${base}-${k}`;
      if (publishNew(sidecar, data)) return sidecar;
    }
  } catch (e) {
    const details: { path: string; errno?: string } = { path };
    const errno = errnoOf(e);
    if (errno !== undefined) details.errno = errno;
    throw new StoreError(
      'TAIL_PRESERVE_FAILED',
      `cannot preserve the torn tail of ${path} (bytes ${from}…${to}) in a sidecar: ${(e as Error).message}; the log was left untouched`,
      details,
      { cause: e },
    );
  }
}
