/**
 * The text `dsh sessions` last printed, kept under the listing's generation (see
 * src/store/listing-index.ts). When the store says the listing it would make now is the one that
 * text was rendered from, the text is written again as it was: 10,000 sessions are then neither
 * read nor rendered (the listing alone is ~200 ms of JavaScript that runs once per process, too
 * short for the JIT to pay off).
 *
 * A live session (held open by a running dsh) changes while the rest stays: its lines are kept
 * with their byte range, and printed afresh from the session as it is now.
 *
 * The text is printed as kept, not checked again for unsafe characters (it was made safe when it
 * was rendered): the file lives in the user's own dsh home, beside the config, so whoever can
 * change it can already change what dsh runs.
 *
 * A cache, never the truth: a file with another key, another length or none at all is a miss, and
 * a miss is the ordinary listing. The key holds everything the text is a function of: the
 * generation (the sessions, their summaries and lock flags as the index holds them), the root,
 * the scope (workspace and limit), how the output styles text, and the build that rendered it (the
 * package's version and its module file's size and mtime: a new build renders afresh). One file per scope, `--all` or a
 * workspace, so alternating the two does not evict each other.
 */
import { closeSync, fstatSync, mkdirSync, readSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openOwnFile, readFirstLine, replaceOwnFile } from '../store/own-file.js';
import { packageVersion } from './version.js';

const FORMAT = 'dsh-sessions-text/1';

export interface ListingTextKey {
  generation: string;
  root: string;
  /** The workspace listed; null: every workspace (`--all`). */
  cwd: string | null;
  limit: number | null;
  /** The output's styling, as the escapes it wraps text in ('' when it does not colour). */
  style: string;
}

let build: string | undefined;

/**
 * This build: the package's version, and its module file's size and mtime. The file alone does
 * not tell two releases apart: a package's files are unpacked with the tarball's one fixed mtime
 * (npm's 1985-10-26), and the chunk this module is in stays byte for byte (or size for size) the
 * same when only the rendering code in other files changed.
 */
function buildStamp(): string {
  if (build === undefined) {
    try {
      const st = statSync(fileURLToPath(import.meta.url));
      build = `${st.size}:${st.mtimeMs}`;
    } catch {
      build = 'unknown';
    }
  }
  return `${packageVersion()}:${build}`;
}

/** `$DSH_HOME/cache/sessions[-all].txt`, beside the sessions root (`$DSH_HOME/sessions`). */
export function listingTextFile(root: string, all: boolean): string {
  return join(dirname(root), 'cache', all ? 'sessions-all.txt' : 'sessions.txt');
}

/** A live session's lines in the kept text: its id and their byte range (line ends included). */
export type LiveRange = [id: string, start: number, end: number];

export interface KeptText {
  /** UTF-8, complete lines. */
  text: Buffer;
  /** In text order, not overlapping. */
  live: LiveRange[];
}

const keyOf = (key: ListingTextKey): string =>
  JSON.stringify([FORMAT, key.generation, key.root, key.cwd, key.limit, key.style, buildStamp()]);

/** The ranges as written by keepListingText, checked against a text of `bytes` bytes. */
function ranges(v: unknown, bytes: number): LiveRange[] | undefined {
  if (!Array.isArray(v)) return undefined;
  let at = 0;
  for (const r of v as unknown[]) {
    if (!Array.isArray(r) || r.length !== 3 || typeof r[0] !== 'string') return undefined;
    const [, start, end] = r as [string, unknown, unknown];
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end)) return undefined;
    if ((start as number) < at || (end as number) <= (start as number) || (end as number) > bytes) return undefined;
    at = end as number;
  }
  return v as LiveRange[];
}

/** The longest head line read: the key and the live ranges of a few thousand sessions held open. */
const MAX_HEAD = 1 << 20;

/**
 * The text kept for `key`; undefined on any mismatch. The head line is read and checked first,
 * and the text only when the file is exactly as long as the head says: a file grown or damaged
 * at this name (a sparse gigabyte of zeros) is a miss, not read whole (seconds and its size in
 * memory on every listing).
 */
export function cachedListingText(file: string, key: ListingTextKey): KeptText | undefined {
  let fd: number;
  try {
    fd = openOwnFile(file, 'read'); // a FIFO or a link there is a miss, not a wait
  } catch {
    return undefined;
  }
  try {
    const line = readFirstLine(fd, MAX_HEAD);
    if (line === undefined) return undefined;
    // The head line: [key…, bytes, live ranges].
    const head = JSON.parse(line.toString('utf8')) as unknown;
    if (!Array.isArray(head) || head.length !== 9 || JSON.stringify(head.slice(0, 7)) !== keyOf(key)) return undefined;
    const bytes = head[7] as unknown;
    if (!Number.isSafeInteger(bytes) || fstatSync(fd).size !== line.length + 1 + (bytes as number)) return undefined;
    const live = ranges(head[8], bytes as number);
    if (live === undefined) return undefined;
    const text = Buffer.allocUnsafe(bytes as number);
    for (let at = 0; at < text.length; ) {
      const n = readSync(fd, text, at, text.length - at, line.length + 1 + at);
      if (n === 0) return undefined; // cut meanwhile
      at += n;
    }
    return { text, live };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Keep `kept` for `key` (written whole, then renamed into place); a failure only costs the next listing its shortcut. */
export function keepListingText(file: string, key: ListingTextKey, kept: KeptText): void {
  try {
    try {
      mkdirSync(dirname(file), { mode: 0o700 });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const head = `${keyOf(key).slice(0, -1)},${kept.text.length},${JSON.stringify(kept.live)}]\n`;
    replaceOwnFile(file, Buffer.concat([Buffer.from(head), kept.text]));
  } catch {
    // a read-only home, a full disk, something else at the name: list the long way next time
  }
}
