/**
 * The listing cache: one file under the root (`listing-cache.json`) remembering, for each log,
 * what a listing read from it (its header, and a caller's summary such as the CLI's title and
 * turn count) together with what the file system said about it then. A later listing `stat`s
 * each session directory and log and reuses the remembered entry only when every one of those
 * facts is unchanged; anything else (a new, grown, rewritten, moved or locked log) is read again
 * as without the cache. So the cache is never the truth, only a memo of reads whose inputs have
 * not changed:
 *
 * - keyed by the log's size, mtime, ctime and inode and by its directory's mtime and ctime (an
 *   append changes the first, a rewrite the ctime even if the mtime is set back, a lock file or a
 *   compressed log appearing in the directory the last);
 * - a file that does not parse, has another format or version, another root or summary key, or
 *   whose digest does not match its entries, is ignored whole and rebuilt;
 * - each reused header is validated again and must still name the file it sits in.
 *
 * The file is written (temp file + rename) only when an entry changed, and never when the root
 * does not exist; a failure to write it costs the next listing its speed, nothing else.
 */
import { nodeCrypto } from '../model/node-crypto.js';
import { statSync, type Stats } from 'node:fs';
import { join, relative } from 'node:path';
import { validateHeader } from '../session/header.js';
import type { SessionHeader } from '../session/index.js';
import type { JsonValue } from '../model/json.js';
import { isErrno } from './errors.js';
import { readOwnFile, replaceOwnFile } from './own-file.js';

export const LISTING_CACHE_FILE = 'listing-cache.json';
const FORMAT = 'dsh-listing-cache';
const VERSION = 1;

/** What the file system says about a session directory and its log, compared as a whole. */
export type Fingerprint = [size: number, mtimeMs: number, ctimeMs: number, ino: number, dirMtimeMs: number, dirCtimeMs: number];

export interface CacheEntry {
  fp: Fingerprint;
  header: SessionHeader;
  /** The directory held a lock file when the entry was made (so its holder is checked every time). */
  lockFile: boolean;
  summary?: JsonValue;
}

/** A per-log summary a listing computes and the cache remembers (`key` names its meaning: change it when the computation changes). */
export interface ListingSummarizer<T extends JsonValue> {
  key: string;
  summarize(info: { path: string; size: number }): Promise<T>;
  /** Is this remembered value a summary this summarizer could have produced? */
  check(value: unknown): value is T;
}

export function fingerprint(dir: Stats, log: Stats): Fingerprint {
  return [log.size, log.mtimeMs, log.ctimeMs, Number(log.ino), dir.mtimeMs, dir.ctimeMs];
}

function sameFingerprint(a: Fingerprint, b: Fingerprint): boolean {
  for (let i = 0; i < 6; i++) if (a[i] !== b[i]) return false;
  return true;
}

function digest(entries: string): string {
  return nodeCrypto().createHash('sha256').update(entries).digest('hex');
}

const isFingerprint = (v: unknown): v is Fingerprint =>
  Array.isArray(v) && v.length === 6 && v.every((x) => typeof x === 'number' && Number.isFinite(x));

export class ListingCache {
  private readonly file: string;
  private readonly entries = new Map<string, CacheEntry>();
  private changed = false;
  /** Why the file was not used, when it was not (missing, unreadable, corrupt, …): for tests and diagnostics. */
  readonly discarded: string | undefined;

  constructor(
    private readonly root: string,
    private summaryKey: string | undefined,
  ) {
    this.file = join(root, LISTING_CACHE_FILE);
    this.discarded = this.read();
  }

  private read(): string | undefined {
    let text: string;
    try {
      text = readOwnFile(this.file).toString('utf8'); // a FIFO there would block the listing, /dev/zero never end
    } catch (e) {
      return isErrno(e, 'ENOENT') ? 'missing' : 'unreadable';
    }
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      this.changed = true;
      return 'not JSON';
    }
    const d = doc as { format?: unknown; version?: unknown; root?: unknown; summaryKey?: unknown; digest?: unknown; entries?: unknown };
    const stale = (why: string): string => {
      this.changed = true;
      return why;
    };
    if (typeof d !== 'object' || d === null || d.format !== FORMAT || d.version !== VERSION) return stale('another format or version');
    if (d.root !== this.root) return stale('another root');
    if (typeof d.entries !== 'object' || d.entries === null || Array.isArray(d.entries)) return stale('no entries');
    if (d.digest !== digest(JSON.stringify(d.entries))) return stale('digest mismatch');
    // A listing without a summarizer keeps the summaries it finds; one with another summarizer
    // drops them (the headers stay good).
    const fileKey = typeof d.summaryKey === 'string' ? d.summaryKey : undefined;
    const dropSummaries = this.summaryKey !== undefined && fileKey !== this.summaryKey;
    if (this.summaryKey === undefined) this.summaryKey = fileKey;
    if (dropSummaries) this.changed = true;
    for (const [rel, v] of Object.entries(d.entries as Record<string, unknown>)) {
      const e = v as Partial<CacheEntry> | null;
      if (typeof e !== 'object' || e === null || !isFingerprint(e.fp) || typeof e.lockFile !== 'boolean' || typeof e.header !== 'object') {
        this.changed = true;
        continue;
      }
      if (dropSummaries) delete e.summary;
      this.entries.set(rel, e as CacheEntry);
    }
    return undefined;
  }

  /** The remembered entry for `path` if its fingerprint is unchanged and its header still validates. */
  get(path: string, fp: Fingerprint): CacheEntry | undefined {
    const rel = relative(this.root, path);
    const e = this.entries.get(rel);
    if (e === undefined) return undefined;
    if (!sameFingerprint(e.fp, fp)) return undefined;
    try {
      e.header = validateHeader(e.header);
    } catch {
      this.entries.delete(rel);
      this.changed = true;
      return undefined;
    }
    return e;
  }

  set(path: string, entry: CacheEntry): void {
    this.entries.set(relative(this.root, path), entry);
    this.changed = true;
  }

  /** Forget every entry not in `seen` (logs gone since), then write the file if anything changed. */
  save(seen: ReadonlySet<string>): void {
    for (const rel of this.entries.keys()) {
      if (!seen.has(join(this.root, rel))) {
        this.entries.delete(rel);
        this.changed = true;
      }
    }
    if (!this.changed) return;
    try {
      if (!statSync(this.root).isDirectory()) return;
    } catch {
      return; // nothing stored: no root to write into
    }
    const entries = JSON.stringify(Object.fromEntries(this.entries));
    const head = `"format":${JSON.stringify(FORMAT)},"version":${VERSION},"root":${JSON.stringify(this.root)}`;
    const key = JSON.stringify(this.summaryKey ?? null);
    const doc = `{${head},"summaryKey":${key},"digest":${JSON.stringify(digest(entries))},"entries":${entries}}\n`;
    try {
      replaceOwnFile(this.file, doc); // never through a link planted at the temp name
      this.changed = false;
    } catch {
      // A cache only: a read-only root lists at the uncached speed.
    }
  }
}
