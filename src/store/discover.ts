/**
 * Finding logs under a root without reading them: a lookup by id checks each project directory
 * for the id's directory, and a listing reads only each log's first line plus a `stat`, so it
 * scales with the number of sessions, not with their size.
 */
import { existsSync, statSync, type Stats } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { preview } from '../session/json.js';
import { validateHeader } from '../session/header.js';
import type { SessionHeader } from '../session/index.js';
import { StoreError, errnoOf, isErrno } from './errors.js';
import type { StoreListing, StoreListProblem, StoreSessionInfo } from './interface.js';
import { COMPRESSED_LOG_FILE, LOCK_FILE, LOG_FILE, decodeSegment, encodeSegment, logPath, projectDir } from './layout.js';
import { lockHolder } from './lock.js';
import { fingerprint, ListingCache, type CacheEntry, type Fingerprint, type ListingSummarizer } from './listing-cache.js';
import type { JsonValue } from '../model/json.js';

/** A listing's order: newest first, then by id (equal creation times list the same way every time). */
export const listingOrder = (a: SessionInfo, b: SessionInfo): number => b.header.createdAt - a.header.createdAt || (a.id < b.id ? -1 : 1);

export interface SessionInfo extends StoreSessionInfo {
  path: string;
  /** File size in bytes. */
  size: number;
  mtimeMs: number;
  /** What a listing's summarizer computed for this log (or remembered unchanged: see listing-cache.ts). */
  summary?: JsonValue;
}

export type ListProblem = StoreListProblem;

/** Logs that could not be listed are `problems` (compressed, unreadable header, identity mismatch, duplicate id). */
export type Listing = StoreListing<SessionInfo>;

export function compressedLogError(path: string, id?: string): StoreError {
  const details: { path: string; sessionId?: string } = { path };
  if (id !== undefined) details.sessionId = id;
  return new StoreError(
    'COMPRESSED_LOG',
    `${path} is a zstd-compressed dsh log; this build reads and writes only uncompressed logs (session.jsonl). Decompress it to ` +
      'session.jsonl beside it (zstd -d), or use a separate root',
    details,
  );
}

/**
 * The stat of a session's log, or undefined when there is none. Anything but a regular file is
 * refused before it is opened: a FIFO would block the open until some writer came, a device such
 * as /dev/zero (through a link) would never end.
 */
async function logStat(path: string): Promise<Stats | undefined> {
  let st: Stats;
  try {
    st = await stat(path);
  } catch (e) {
    if (isErrno(e, 'ENOENT', 'ENOTDIR')) return undefined;
    throw loopError(e, path);
  }
  if (!st.isFile()) {
    throw new StoreError('NOT_A_FILE', `${path}: not a regular file (a session log is one); nothing was read from it`, { path });
  }
  return st;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (e) {
    if (isErrno(e, 'ENOENT', 'ENOTDIR')) return false;
    throw loopError(e, path);
  }
}

/** A link that leads round in a loop is no file at all: NOT_A_FILE (a listing's problem), not a bare ELOOP that ends it. */
function loopError(e: unknown, path: string): unknown {
  if (!isErrno(e, 'ELOOP')) return e;
  return new StoreError('NOT_A_FILE', `${path}: a symbolic link loop, not a regular file; nothing was read from it`, {
    path,
    errno: 'ELOOP',
  });
}

async function projectDirs(root: string): Promise<string[]> {
  try {
    const entries = await readdir(root, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory()).map((e) => join(root, e.name));
  } catch (e) {
    if (isErrno(e, 'ENOENT')) return [];
    throw e;
  }
}

/** The log of `id`: SESSION_NOT_FOUND, AMBIGUOUS_SESSION or COMPRESSED_LOG when there is no single readable one. */
export async function locate(root: string, id: string, cwd?: string): Promise<string> {
  const seg = encodeSegment(id);
  const dirs = cwd !== undefined ? [projectDir(root, cwd)] : await projectDirs(root);
  const found: string[] = [];
  for (const project of dirs) {
    const dir = join(project, seg);
    if (await exists(join(dir, COMPRESSED_LOG_FILE))) throw compressedLogError(join(dir, COMPRESSED_LOG_FILE), id);
    if (await logStat(join(dir, LOG_FILE))) found.push(join(dir, LOG_FILE));
  }
  if (found.length === 0)
    throw new StoreError('SESSION_NOT_FOUND', `no session ${JSON.stringify(id)} under ${root}`, { path: root, sessionId: id });
  if (found.length > 1) {
    throw new StoreError(
      'AMBIGUOUS_SESSION',
      `session ${JSON.stringify(id)} appears in ${found.length} project directories: ${found.join(', ')}`,
      { path: found[0]!, sessionId: id },
    );
  }
  return found[0]!;
}

/** The first line of a file, reading only as much as it takes. */
export async function readFirstLine(path: string): Promise<string | undefined> {
  const fh = await open(path, 'r');
  try {
    const parts: Buffer[] = [];
    let pos = 0;
    let size = 4096;
    for (;;) {
      const buf = Buffer.allocUnsafe(size);
      const { bytesRead } = await fh.read(buf, 0, size, pos);
      if (bytesRead === 0) return undefined; // no complete first line
      const nl = buf.subarray(0, bytesRead).indexOf(0x0a);
      if (nl >= 0) {
        parts.push(buf.subarray(0, nl));
        return Buffer.concat(parts).toString('utf8');
      }
      parts.push(buf.subarray(0, bytesRead));
      pos += bytesRead;
      size = Math.min(size * 4, 1 << 20);
    }
  } finally {
    await fh.close();
  }
}

/** Parse and validate a header line (without the `type` tag). */
export function parseHeaderLine(line: string, path: string): SessionHeader {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    throw new StoreError('BAD_HEADER', `${path}: the first line is not a session header (not JSON)`, { path });
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v) || (v as { type?: unknown }).type !== 'session') {
    throw new StoreError('BAD_HEADER', `${path}: the first line is not a session header`, { path });
  }
  const { type: _t, ...rest } = v as Record<string, unknown>;
  try {
    return validateHeader(rest);
  } catch (e) {
    throw new StoreError('BAD_HEADER', `${path}: ${(e as Error).message}`, { path }, { cause: e });
  }
}

/** The header must name the file it sits in: same id, and a cwd that derives this path. */
export function checkIdentity(root: string, path: string, header: SessionHeader, expectedId?: string): void {
  if (expectedId !== undefined && header.id !== expectedId) {
    throw new StoreError('IDENTITY_MISMATCH', `${path}: its header names session ${preview(header.id)}, not ${preview(expectedId)}`, {
      path,
      sessionId: expectedId,
    });
  }
  const expected = logPath(root, header.cwd, header.id);
  if (expected !== path) {
    throw new StoreError(
      'IDENTITY_MISMATCH',
      `${path}: its header (id ${preview(header.id)}, cwd ${preview(header.cwd)}) belongs at ${expected}`,
      { path, sessionId: header.id },
    );
  }
}

export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

export type Entry = { info: SessionInfo } | { problem: ListProblem } | undefined;

const idOfDir = (dir: string): string | undefined => decodeSegment(basename(dir));

async function listOne(root: string, dir: string): Promise<Entry> {
  const compressed = join(dir, COMPRESSED_LOG_FILE);
  const path = join(dir, LOG_FILE);
  try {
    // The directory's name is the encoded id: with it, the CLI can say "compressed" when asked for this id.
    if (await exists(compressed)) return { problem: { path: compressed, error: compressedLogError(compressed, idOfDir(dir)) } };
    if ((await logStat(path)) === undefined) return undefined;
    const line = await readFirstLine(path);
    if (line === undefined) return { problem: { path, error: new StoreError('BAD_HEADER', `${path}: no complete header line`, { path }) } };
    const header = parseHeaderLine(line, path);
    checkIdentity(root, path, header);
    const st = await stat(path);
    const info: SessionInfo = { id: header.id, header, path, location: path, size: st.size, mtimeMs: st.mtimeMs, modifiedMs: st.mtimeMs };
    const holder = lockHolder(join(dir, LOCK_FILE));
    if (holder) info.lockedBy = holder;
    return { info };
  } catch (e) {
    if (isErrno(e, 'ENOENT', 'ENOTDIR')) return undefined; // a directory without a log: a create in progress or abandoned
    if (e instanceof StoreError) return { problem: { path, error: e } };
    // One directory the user cannot read (chmod 000, another user's) is that session's problem, not the listing's end.
    const errno = errnoOf(e);
    if (errno !== undefined) {
      const error = new StoreError('UNREADABLE', `${path}: cannot be read (${errno})`, { path, errno }, { cause: e });
      return { problem: { path, error } };
    }
    throw e;
  }
}

function namesItsFile(root: string, path: string, header: SessionHeader): boolean {
  try {
    checkIdentity(root, path, header);
    return true;
  } catch {
    return false;
  }
}

/** A session directory's and log's stats, or undefined when either is missing or not what it should be. */
function statPair(dir: string, path: string): [Stats, Stats] | undefined {
  try {
    const d = statSync(dir);
    const l = statSync(path);
    return l.isFile() ? [d, l] : undefined;
  } catch {
    return undefined;
  }
}

/** Where a directory's remembered entry comes from: the listing cache, or the listing index's row. */
export interface ListingMemo {
  get(path: string, fp: Fingerprint): CacheEntry | undefined;
  set(path: string, entry: CacheEntry): void;
}

export interface CheckedDir {
  entry: Entry;
  /** The directory's and log's stats when the log was found (before it was read). */
  fp?: Fingerprint;
  /** A live process held the session's lock (checked before the log was looked at). */
  held: boolean;
}

/**
 * One session directory through a memo: its remembered header (and summary) when the directory
 * and log are unchanged, else `listOne` (and the summarizer) as without one. With `lockFirst`, the
 * lock is looked at before the log: a writer holds it for as long as it appends, so a log found
 * unlocked then was complete when it was read (the listing index relies on it); otherwise the
 * lock is read only where the directory changed or held one before (the listing cache's way).
 */
export async function checkDir(
  root: string,
  dir: string,
  memo: ListingMemo,
  summarizer: ListingSummarizer<JsonValue> | undefined,
  lockFirst: boolean,
): Promise<CheckedDir> {
  const lockPath = join(dir, LOCK_FILE);
  const early = lockFirst ? { file: existsSync(lockPath) } : undefined;
  const earlyHolder = early?.file ? lockHolder(lockPath) : undefined;
  const path = join(dir, LOG_FILE);
  const stats = statPair(dir, path);
  if (stats === undefined) return { entry: await listOne(root, dir), held: earlyHolder !== undefined }; // missing, compressed, odd
  const fp = fingerprint(stats[0], stats[1]);
  const hit = memo.get(path, fp);
  if (hit !== undefined && (summarizer === undefined || summarizer.check(hit.summary)) && namesItsFile(root, path, hit.header)) {
    const info = infoOf(hit.header, path, stats[1].size, stats[1].mtimeMs, hit.summary);
    const holder = early ? earlyHolder : hit.lockFile ? lockHolder(lockPath) : undefined;
    if (holder) info.lockedBy = holder;
    return { entry: { info }, fp, held: holder !== undefined };
  }
  // Taken before the read: a write after this makes the fingerprint stale, never the entry.
  const lockFile = early?.file ?? existsSync(lockPath);
  const e = await listOne(root, dir);
  if (e === undefined || 'problem' in e) return { entry: e, held: earlyHolder !== undefined };
  if (early) {
    if (earlyHolder) e.info.lockedBy = earlyHolder;
    else delete e.info.lockedBy;
  }
  if (summarizer !== undefined) e.info.summary = await summarizer.summarize(e.info);
  memo.set(path, { fp, header: e.info.header, lockFile, ...(e.info.summary !== undefined ? { summary: e.info.summary } : {}) });
  return { entry: e, fp, held: e.info.lockedBy !== undefined };
}

export function infoOf(header: SessionHeader, path: string, size: number, mtimeMs: number, summary: JsonValue | undefined): SessionInfo {
  const info: SessionInfo = { id: header.id, header, path, location: path, size, mtimeMs, modifiedMs: mtimeMs };
  if (summary !== undefined) info.summary = summary;
  return info;
}

/**
 * A project directory the user cannot read (chmod 000, another user's): a problem of the listing,
 * which lists the rest (the bare EACCES ended it). Undefined for any other error.
 */
export function unreadableDir(dir: string, e: unknown): Entry {
  const errno = errnoOf(e);
  if (errno !== 'EACCES' && errno !== 'EPERM') return undefined;
  const error = new StoreError(
    'UNREADABLE',
    `${dir}: cannot be read (${errno}); its sessions are not listed`,
    { path: dir, errno },
    { cause: e },
  );
  return { problem: { path: dir, error } };
}

/** Every session directory under `root` (each project directory read); `problems` gets the unreadable ones. */
export async function sessionDirs(root: string, problems?: Entry[]): Promise<string[]> {
  const dirs: string[] = [];
  for (const project of await projectDirs(root)) {
    let entries;
    try {
      entries = await readdir(project, { withFileTypes: true });
    } catch (e) {
      if (isErrno(e, 'ENOENT', 'ENOTDIR')) continue;
      const problem = problems && unreadableDir(project, e);
      if (problem === undefined) throw e;
      problems!.push(problem);
      continue;
    }
    for (const e of entries) if (e.isDirectory()) dirs.push(join(project, e.name));
  }
  return dirs;
}

/** The listing from each directory's entry: duplicate ids become problems, newest first. */
export function assemble(entries: Iterable<Entry>): Listing {
  const sessions: SessionInfo[] = [];
  const problems: ListProblem[] = [];
  const seen = new Map<string, SessionInfo>();
  for (const e of entries) {
    if (e === undefined) continue;
    if ('problem' in e) {
      problems.push(e.problem);
      continue;
    }
    const prior = seen.get(e.info.id);
    if (prior) {
      problems.push({
        path: e.info.path,
        error: new StoreError('AMBIGUOUS_SESSION', `session ${JSON.stringify(e.info.id)} appears at ${prior.path} and ${e.info.path}`, {
          path: e.info.path,
          sessionId: e.info.id,
        }),
      });
      continue;
    }
    seen.set(e.info.id, e.info);
    sessions.push(e.info);
  }
  sessions.sort(listingOrder);
  return { sessions, problems };
}

/**
 * Every session under `root`, newest first, through the listing cache (`listing-cache.ts`); with
 * a summarizer, each session also carries its summary, computed only for new or changed logs.
 */
export async function listSessions(root: string, summarizer?: ListingSummarizer<JsonValue>): Promise<Listing> {
  const cache = new ListingCache(root, summarizer?.key);
  const unreadable: Entry[] = [];
  const dirs = await sessionDirs(root, unreadable);
  const checked = await mapLimit(dirs, 32, (d) => checkDir(root, d, cache, summarizer, false));
  cache.save(new Set(dirs.map((d) => join(d, LOG_FILE))));
  return assemble([...checked.map((c) => c.entry), ...unreadable]);
}
