/**
 * The listing journal: numbered append-only files under the root (`listing-journal.N`) in which
 * the store's writers say "this session directory is being written" before they write. A listing
 * through the index (listing-index.ts) re-checks every directory named since its snapshot and
 * trusts the others, so a line must never be lost; the protocol:
 *
 * - A writer appends to the highest-numbered journal that exists, one `write` of a whole line
 *   (`\n` first and last, so a line torn by a crash is a line of its own, ignored, and never glues
 *   onto the next). No journal at all means no index is kept: nothing is written.
 * - After its write the writer checks that the file is still linked and that no newer journal
 *   exists; otherwise a compaction may have read the file before the line landed, and the line is
 *   written again to the newest one (a line read twice is harmless: it only asks for a re-check).
 * - A compaction (under the index lock) first creates journal m+1, then reads journals up to m,
 *   then publishes the snapshot saying "through m", then unlinks them. A reader of snapshot
 *   "through u" needs journals u+1, u+2, … with no gap; a gap means a compaction ran meanwhile,
 *   and the reader starts again.
 *
 * A writer that cannot place its line (an unwritable root, a crowd of compactions) removes the
 * snapshot instead, so the next listing rebuilds the index by a full scan.
 */
import { closeSync, fstatSync, readdirSync, readFileSync, unlinkSync, writeSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { isErrno } from './errors.js';
import { openOwnFile } from './own-file.js';

export const JOURNAL_PREFIX = 'listing-journal.';
export const INDEX_FILE = 'listing-index';
const NUMBER = /^listing-journal\.(0|[1-9]\d{0,14})$/;
/**
 * A journal holds the lines announced since the last listing that compacted (~30 bytes each):
 * one larger than this was not written by the store, and is not read (the index is rebuilt).
 */
const MAX_JOURNAL_BYTES = 64 << 20;

/** The session directory a line names: `<project dir>/<id segment>` under the root. */
export type JournalKey = string;

export const journalPath = (root: string, n: number): string => join(root, `${JOURNAL_PREFIX}${n}`);

/** The journals under the root, ascending (none when the root is missing). */
export function journalNumbers(root: string): number[] {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const name of names) {
    const m = NUMBER.exec(name);
    if (m) out.push(Number(m[1]));
  }
  return out.sort((a, b) => a - b);
}

function appendOnce(root: string, n: number, line: Buffer, onAppended?: (n: number) => void): 'done' | 'again' {
  let fd: number;
  try {
    fd = openOwnFile(journalPath(root, n), 'append'); // never through a link out of the root, nor into a FIFO
  } catch (e) {
    if (isErrno(e, 'ENOENT')) return 'again'; // compacted away since it was listed
    throw e; // not a journal the store wrote: the snapshot goes, and the next listing's rebuild drops the file
  }
  try {
    const written = writeSync(fd, line);
    if (written !== line.length) throw new Error(`short append to the listing journal (${written} of ${line.length} bytes)`);
    onAppended?.(n);
    return fstatSync(fd).nlink > 0 && !existsSync(journalPath(root, n + 1)) ? 'done' : 'again';
  } finally {
    closeSync(fd);
  }
}

/**
 * Say that the session directory `key` (project/segment) is about to be written. Synchronous (it
 * runs in exit handlers too) and never throws: a failure costs the index, not the write.
 * `onAppended`: a test seam, called between a line's write and the check that follows it.
 */
export function journalTouch(root: string, key: JournalKey, onAppended?: (n: number) => void): void {
  const line = Buffer.from(`\n${JSON.stringify(['w', key])}\n`);
  try {
    for (let i = 0; i < 8; i++) {
      const ns = journalNumbers(root);
      if (ns.length === 0) return; // no index is kept under this root
      if (appendOnce(root, ns[ns.length - 1]!, line, onAppended) === 'done') return;
    }
  } catch {
    // fall through: the line may be lost
  }
  try {
    unlinkSync(join(root, INDEX_FILE)); // the next listing rescans instead of trusting a snapshot that may miss this write
  } catch {
    // nothing more can be done; `dsh sessions --rescan` repairs
  }
}

export interface JournalRead {
  /** Session directories named, in order (repeats kept). */
  keys: JournalKey[];
  /** Bytes of complete lines read: a later read starts here. */
  end: number;
}

/**
 * The complete lines of journal `n` from byte `from` on; undefined when the file is gone or is
 * not one the store wrote (a FIFO, a link, a directory, bigger than any journal): either way the
 * caller starts over, and then rebuilds the index by a full scan, which drops the file. A line
 * that does not parse (torn by a crash) is skipped; a last line without its newline is not read
 * (a write in progress, read by the next listing).
 */
export function readJournal(root: string, n: number, from = 0): JournalRead | undefined {
  let buf: Buffer;
  try {
    const fd = openOwnFile(journalPath(root, n), 'read');
    try {
      if (fstatSync(fd).size > MAX_JOURNAL_BYTES) return undefined;
      buf = readFileSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  const end = buf.lastIndexOf(0x0a) + 1;
  const keys: JournalKey[] = [];
  if (end <= from) return { keys, end: Math.max(end, from) };
  for (const line of buf.toString('utf8', from, end).split('\n')) {
    if (line === '') continue;
    try {
      const v = JSON.parse(line) as unknown;
      if (Array.isArray(v) && v.length === 2 && v[0] === 'w' && typeof v[1] === 'string' && validKey(v[1])) keys.push(v[1]);
    } catch {
      // torn: ignored
    }
  }
  return { keys, end };
}

/** Two path segments, neither empty, `.` or `..`: a key can never name a directory outside the root. */
export function validKey(key: string): boolean {
  const parts = key.split('/');
  return parts.length === 2 && parts.every((p) => p !== '' && p !== '.' && p !== '..' && !p.includes('\\') && !p.includes('\0'));
}
