/**
 * The listing index's snapshot, `<root>/listing-index` (see listing-index.ts for what a listing
 * does with it): two lines, the metadata and the rows, what each holds, how they are checked when
 * read, and how they are written. A snapshot that does not check out is not used at all (the
 * listing rebuilds it from the logs).
 */
import { closeSync, fstatSync, readFileSync } from 'node:fs';
import { nodeCrypto } from '../model/node-crypto.js';
import { join } from 'node:path';
import type { SessionHeader } from '../session/index.js';
import type { JsonValue } from '../model/json.js';
import type { Fingerprint } from './listing-cache.js';
import { INDEX_FILE, validKey } from './listing-journal.js';
import { encodeSegment } from './layout.js';
import { openOwnFile, readFirstLine, replaceOwnFile } from './own-file.js';

const FORMAT = 'dsh-listing-index';
const VERSION = 2;

/**
 * A session directory as the snapshot holds it: `[segment, flags]`, re-checked by every listing
 * (a problem, a directory without a log, or one named since and not checked yet), or `[segment,
 * flags, size, mtimeMs, rest of the fingerprint, header, summary?]`. Flag 1: a live process held
 * the lock at the last check. Rows stay in this form from the file to the next file: a listing of
 * an unchanged store makes one object per session, its SessionInfo.
 */
export type RawRow = [seg: string, flags: number] | [string, number, number, number, string, SessionHeader, JsonValue?];

/** A project directory's mtime and ctime when it was read; null: read it again next time. */
export type DirStamp = [mtimeMs: number, ctimeMs: number] | null;

export interface Project {
  stamp: DirStamp;
  rows: RawRow[];
}

export interface Snapshot {
  upTo: number;
  summaryKey: string | null;
  projects: Map<string, Project>;
  /**
   * Every project directory stamped, and no row a listing with `summaryKey`'s summarizer
   * re-checks but the live ones (held open at their last check: re-checked by every listing).
   */
  settled: boolean;
  /** The snapshot file as read (a compaction writes only over this very file). */
  ident: string;
  /** See generationOf. */
  generation: string;
}

/**
 * The metadata line: `stamps` lists the project directories, in the rows line's order; `held`,
 * the rows of live sessions (with their project directory), kept out of the rows line so that
 * their changes leave its digest, and the generation, as they were.
 */
export interface Meta {
  format: typeof FORMAT;
  version: typeof VERSION;
  root: string;
  summaryKey: string | null;
  upTo: number;
  stamps: [name: string, mtimeMs: number | null, ctimeMs: number | null][];
  held: [project: string, row: RawRow][];
  settled: boolean;
  digest: string;
}

/**
 * What a listing from a settled snapshot holds apart from its live sessions: the rows (their
 * digest), the project directories and their stamps, which sessions are live, the root and the
 * summarizer. Not the journal number, nor the live rows themselves: a live session's appends are
 * compacted into new snapshots of the same generation.
 */
export const generationOf = (m: Meta): string =>
  sha256(JSON.stringify([m.root, m.summaryKey, m.stamps, m.digest, m.held.map(([project, row]) => `${project}/${row[0]}`)]));

/** A live row: held open by a live process at its last check, so every listing checks it again. */
export const isLive = (r: RawRow): boolean => r.length >= 6 && (r[1] & 1) !== 0;

export const identOf = (st: { ino: number | bigint; size: number; mtimeMs: number }): string => `${st.ino}:${st.size}:${st.mtimeMs}`;
export const fpRest = (fp: Fingerprint): string => `${fp[2]}:${fp[3]}:${fp[4]}:${fp[5]}`;

export function sha256(data: Buffer | string): string {
  return nodeCrypto().createHash('sha256').update(data).digest('hex');
}

const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/**
 * The header as the snapshot holds it: it was validated when read from its log and the digest
 * covers it, so only what a listing sorts, filters and prints by is checked here (validating
 * 10,000 headers again was a tenth of the listing's time).
 */
const plausibleHeader = (h: unknown): h is SessionHeader =>
  typeof h === 'object' &&
  h !== null &&
  typeof (h as SessionHeader).id === 'string' &&
  Number.isSafeInteger((h as SessionHeader).createdAt) &&
  ((h as SessionHeader).cwd === undefined || typeof (h as SessionHeader).cwd === 'string') &&
  // dsh sessions prints a fork's parent (and seq): a number there made it throw a TypeError.
  ((h as SessionHeader).parentSession === undefined || typeof (h as SessionHeader).parentSession === 'string') &&
  ((h as SessionHeader).seedLength === undefined || Number.isSafeInteger((h as SessionHeader).seedLength));

/**
 * A row's segment is one directory name, and its header's id is the one that names it (the id is
 * almost always its own segment, so the encoding runs only for the others): a forged row could
 * otherwise list a path outside the root (`../..`), or an id no lookup finds.
 */
const namesItsSegment = (seg: string, h: SessionHeader): boolean =>
  seg !== '' && seg !== '.' && seg !== '..' && !seg.includes('/') && (h.id === seg || (h.id !== '' && encodeSegment(h.id) === seg));

/**
 * What a row is: `trusted` (its log as remembered), `recheck` (`[segment, flags]`), or `damaged`
 * (not a row: the whole snapshot is unusable). Checked as rows are used, not in a pass of their own.
 */
export function rowKind(row: unknown): 'trusted' | 'recheck' | 'damaged' {
  if (!Array.isArray(row) || typeof row[0] !== 'string' || typeof row[1] !== 'number') return 'damaged';
  if (row.length === 2) return 'recheck';
  if ((row.length !== 6 && row.length !== 7) || !isNum(row[2]) || !isNum(row[3]) || typeof row[4] !== 'string') return 'damaged';
  return plausibleHeader(row[5]) && namesItsSegment(row[0], row[5]) ? 'trusted' : 'damaged';
}

/** The metadata line, checked; undefined when it is not this root's, this version's. */
export function parseMeta(line: string, root: string): Meta | undefined {
  const meta = JSON.parse(line) as Partial<Meta> | null;
  if (meta === null || typeof meta !== 'object') return undefined;
  if (meta.format !== FORMAT || meta.version !== VERSION || meta.root !== root || typeof meta.settled !== 'boolean') return undefined;
  if (!Number.isSafeInteger(meta.upTo) || (meta.summaryKey !== null && typeof meta.summaryKey !== 'string')) return undefined;
  if (typeof meta.digest !== 'string' || !Array.isArray(meta.stamps) || !Array.isArray(meta.held)) return undefined;
  const names = new Set<string>();
  for (const p of meta.stamps as unknown[]) {
    if (!Array.isArray(p) || p.length !== 3 || typeof p[0] !== 'string' || !validKey(`${p[0]}/x`) || names.has(p[0])) return undefined;
    if (!((isNum(p[1]) && isNum(p[2])) || (p[1] === null && p[2] === null))) return undefined;
    names.add(p[0]);
  }
  for (const h of meta.held as unknown[]) {
    if (!Array.isArray(h) || h.length !== 2 || typeof h[0] !== 'string' || !names.has(h[0])) return undefined;
    if (rowKind(h[1]) !== 'trusted' || !isLive(h[1] as RawRow) || !validKey(`${h[0]}/${(h[1] as RawRow)[0]}`)) return undefined;
  }
  return meta as Meta;
}

/** The snapshot, or undefined when there is none usable (the caller rebuilds it). */
export function readSnapshot(root: string, summaryKey: string | undefined): Snapshot | undefined {
  let buf: Buffer;
  let ident: string;
  try {
    const fd = openOwnFile(join(root, INDEX_FILE), 'read'); // a FIFO or a link to /dev/zero there: rebuilt, not waited on
    try {
      ident = identOf(fstatSync(fd));
      buf = readFileSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  const nl = buf.indexOf(0x0a);
  if (nl < 0 || buf[buf.length - 1] !== 0x0a) return undefined;
  try {
    const meta = parseMeta(buf.toString('utf8', 0, nl), root);
    if (meta === undefined) return undefined;
    const body = buf.subarray(nl + 1, buf.length - 1);
    if (meta.digest !== sha256(body)) return undefined;
    const doc = JSON.parse(body.toString('utf8')) as unknown;
    if (!Array.isArray(doc) || doc.length !== meta.stamps.length) return undefined;
    const projects = new Map<string, Project>();
    // Summaries computed by another summarizer are not this listing's: each is computed again.
    const dropSummaries = summaryKey !== undefined && summaryKey !== meta.summaryKey;
    for (let i = 0; i < doc.length; i++) {
      const p = doc[i] as unknown;
      const [name, mtimeMs, ctimeMs] = meta.stamps[i]!;
      if (!Array.isArray(p) || p.length !== 2 || p[0] !== name || !Array.isArray(p[1])) return undefined;
      projects.set(name, { stamp: mtimeMs !== null && ctimeMs !== null ? [mtimeMs, ctimeMs] : null, rows: p[1] as RawRow[] });
    }
    for (const [project, row] of meta.held) projects.get(project)!.rows.push(row);
    if (dropSummaries) for (const p of projects.values()) for (const r of p.rows) if (r.length === 7) r.pop();
    return {
      upTo: meta.upTo,
      summaryKey: summaryKey ?? meta.summaryKey,
      projects,
      settled: meta.settled && !dropSummaries,
      ident,
      generation: generationOf(meta),
    };
  } catch {
    return undefined;
  }
}

/** Newest first, as a listing sorts: the next listing's sort then only merges one run per project directory. */
export const createdAt = (r: RawRow): number => (r.length >= 6 ? (r[5] as SessionHeader).createdAt : 0);

/** Whether a listing with `summaryKey`'s summarizer trusts the (not live) row as it is (see fromSnapshot). */
const settledRow = (r: RawRow, summaryKey: string | null): boolean =>
  r.length >= 6 && (r[1] & 1) === 0 && (summaryKey === null || r.length === 7);

/** Write the snapshot; its generation when it is settled (a listing of exactly these rows may carry it). */
export function writeSnapshot(root: string, snap: Pick<Snapshot, 'upTo' | 'summaryKey' | 'projects'>): string | undefined {
  let settled = true;
  const held: Meta['held'] = [];
  const body: [string, RawRow[]][] = [];
  for (const [name, p] of snap.projects) {
    p.rows.sort((a, b) => createdAt(b) - createdAt(a));
    const rows: RawRow[] = [];
    for (const r of p.rows) {
      if (isLive(r)) held.push([name, r]);
      else {
        rows.push(r);
        if (!settledRow(r, snap.summaryKey)) settled = false;
      }
    }
    if (p.stamp === null) settled = false;
    body.push([name, rows]);
  }
  const bodyText = JSON.stringify(body);
  const meta: Meta = {
    format: FORMAT,
    version: VERSION,
    root,
    summaryKey: snap.summaryKey,
    upTo: snap.upTo,
    stamps: [...snap.projects].map(([name, p]) => [name, p.stamp?.[0] ?? null, p.stamp?.[1] ?? null]),
    held,
    settled,
    digest: sha256(bodyText),
  };
  const file = join(root, INDEX_FILE);
  replaceOwnFile(file, `${JSON.stringify(meta)}\n${bodyText}\n`);
  return settled ? generationOf(meta) : undefined;
}

/**
 * The longest metadata line read: its stamps and live rows make ~60 bytes a project directory and
 * ~300 a live session, so this is far beyond any real one.
 */
const MAX_META_BYTES = 16 << 20;

/** The file's first line (without its newline); undefined when it has none within MAX_META_BYTES. */
function firstLine(path: string): string | undefined {
  const fd = openOwnFile(path, 'read');
  try {
    return readFirstLine(fd, MAX_META_BYTES)?.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** The metadata line alone (a listing that may not need the rows): undefined when there is none usable. */
export function readMeta(root: string): Meta | undefined {
  const line = firstLine(join(root, INDEX_FILE));
  return line === undefined ? undefined : parseMeta(line, root);
}
