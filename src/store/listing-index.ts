/**
 * The listing index: what a listing knows about every session directory, kept current by the
 * store's writers so that a listing need not `stat` every log. Two parts under the root:
 *
 * - the snapshot, `listing-index` (listing-snapshot.ts): a JSON line of metadata (format, version, root, summarizer
 *   key, the journal it is complete through, each project directory's mtime and ctime when it
 *   was last read, whether it is settled, a sha-256 digest of the rows) and a JSON line of rows,
 *   one array per session directory (its fingerprint as in listing-cache.ts, header, summary,
 *   whether a live process held its lock when it was last checked);
 * - the journal (listing-journal.ts): the directories the store's writers announced since.
 *
 * A listing reads both, then re-checks the current way (lock, stats, and the log's first line
 * and summary when those changed) only: directories named in the journal since, directories
 * whose lock was held at their last check (until a check finds it free: a writer killed while
 * writing is checked once more after its death), problem rows (compressed, unreadable header,
 * no log yet), rows without a summary for this listing's summarizer, and the directories of a
 * project directory whose mtime or ctime changed (read again: new and removed sessions). A
 * project directory modified within two seconds of being read is read again the next time (its
 * mtime may not have moved since). Everything else is trusted. If anything changed, the listing
 * compacts the journal into a new snapshot under the index lock (`listing-index.lock`); a
 * listing that cannot take the lock, or finds the snapshot replaced meanwhile, writes nothing.
 *
 * A settled snapshot (every project directory stamped, no row a listing would re-check but the
 * live ones, held open at their last check) whose journal is empty and whose project directories'
 * stamps still hold is the next listing but for its live sessions: `listingGeneration` says so
 * from the metadata line alone (and re-checks the live sessions), and a listing made from it
 * carries the same `generation`. A caller may keep what it derived from a listing under that
 * generation and redo only the live sessions (the CLI keeps its rendered text).
 *
 * It is never the truth: a missing, damaged (digest), other-version or other-root snapshot, or a
 * gap in the journal, is replaced by a full scan (listing-cache.ts's way) that rebuilds it; so is
 * an explicit rescan (`dsh sessions --rescan`). What it does not see: a log changed by a program
 * other than this store (a hand edit, the real dsh writing into the same root) while its project
 * directory's entries stay the same. See docs/store.md.
 */
import { openSync, closeSync, existsSync, lstatSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import { join, sep } from 'node:path';
import type { SessionHeader } from '../session/index.js';
import type { JsonValue } from '../model/json.js';
import { isErrno } from './errors.js';
import {
  assemble,
  checkDir,
  infoOf,
  listingOrder,
  mapLimit,
  unreadableDir,
  type CheckedDir,
  type Entry,
  type Listing,
  type ListingMemo,
  type SessionInfo,
} from './discover.js';
import { ListingCache, type ListingSummarizer } from './listing-cache.js';
import { INDEX_FILE, journalNumbers, journalPath, readJournal, validKey } from './listing-journal.js';
import { acquireLock, type SessionLock } from './lock.js';
import { LOG_FILE } from './layout.js';
import {
  fpRest,
  generationOf,
  identOf,
  readMeta,
  readSnapshot,
  rowKind,
  writeSnapshot,
  type DirStamp,
  type Meta,
  type Project,
  type RawRow,
  type Snapshot,
} from './listing-snapshot.js';

export const INDEX_LOCK_FILE = 'listing-index.lock';
/** A directory modified this recently (ms) may change again within its mtime's granularity. */
const RACY_MS = 2000;

/** Journals `upTo`+1, +2, … to the newest, each from where `from` says it was read to; undefined on a gap. */
function readJournals(root: string, upTo: number, from: ReadonlyMap<number, number> = new Map()) {
  const ns = journalNumbers(root).filter((n) => n > upTo);
  if (ns.length === 0 || ns[0] !== upTo + 1 || ns.some((n, i) => n !== upTo + 1 + i)) return undefined;
  const keys: string[] = [];
  const ends = new Map<number, number>();
  for (const n of ns) {
    const r = readJournal(root, n, from.get(n) ?? 0);
    if (r === undefined) return undefined; // compacted away while being read
    keys.push(...r.keys);
    ends.set(n, r.end);
  }
  return { keys, ends, last: ns[ns.length - 1]! };
}

async function tryLock(root: string): Promise<SessionLock | undefined> {
  try {
    return await acquireLock(join(root, INDEX_LOCK_FILE), { contentionMs: 0 });
  } catch {
    return undefined; // another listing is compacting (or the root is not writable): it writes, this one does not
  }
}

/** Start journal m+1 (m: the newest there is), so that writers stop adding to those a compaction reads. */
function startJournal(root: string): number {
  const ns = journalNumbers(root);
  const m = ns.length > 0 ? ns[ns.length - 1]! : -1;
  try {
    closeSync(openSync(journalPath(root, m + 1), 'wx'));
  } catch (e) {
    if (!isErrno(e, 'EEXIST')) throw e;
  }
  return m;
}

function dropJournals(root: string, upTo: number): void {
  for (const n of journalNumbers(root)) {
    if (n > upTo) break;
    try {
      unlinkSync(journalPath(root, n));
    } catch {
      // gone already
    }
  }
}

const stampOf = (st: { mtimeMs: number; ctimeMs: number }, readAt: number): DirStamp =>
  st.mtimeMs > readAt - RACY_MS || st.ctimeMs > readAt - RACY_MS ? null : [st.mtimeMs, st.ctimeMs];

/** Names of the subdirectories of `dir`; undefined when it is gone, or (given `problems`) unreadable. */
function subdirs(dir: string, problems?: Entry[]): string[] | undefined {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  } catch (e) {
    if (isErrno(e, 'ENOENT', 'ENOTDIR')) return undefined;
    const problem = problems && unreadableDir(dir, e);
    if (problem === undefined) throw e;
    problems!.push(problem);
    return undefined;
  }
}

/** `root/project/seg` and `root/project` are directories, not links (out of the root): what `subdirs` lists. */
function realDirs(root: string, project: string, seg: string): boolean {
  try {
    return lstatSync(join(root, project)).isDirectory() && lstatSync(join(root, project, seg)).isDirectory();
  } catch {
    return false;
  }
}

function rawRow(seg: string, c: CheckedDir): RawRow {
  const info = c.entry !== undefined && 'info' in c.entry ? c.entry.info : undefined;
  const flags = c.held ? 1 : 0;
  if (info === undefined || c.fp === undefined) return [seg, flags];
  const row: RawRow = [seg, flags, c.fp[0], c.fp[1], fpRest(c.fp), info.header];
  if (info.summary !== undefined) row.push(info.summary);
  return row;
}

function rowMemo(row: RawRow | undefined): ListingMemo {
  return {
    get: (_path, fp) =>
      row !== undefined && row.length >= 6 && row[2] === fp[0] && row[3] === fp[1] && row[4] === fpRest(fp)
        ? { fp, header: row[5]!, lockFile: false, ...(row[6] !== undefined ? { summary: row[6] } : {}) }
        : undefined,
    set: () => undefined,
  };
}

/**
 * Every session under `root` through the index: the fast path when the snapshot and journal are
 * usable and `rescan` is not asked for, else a full scan that rebuilds them.
 */
export async function listIndexed(root: string, summarizer?: ListingSummarizer<JsonValue>, rescan = false): Promise<Listing> {
  if (!rescan) {
    for (let attempt = 0; attempt < 3; attempt++) {
      const snap = readSnapshot(root, summarizer?.key);
      if (snap === undefined) break;
      const journal = readJournals(root, snap.upTo);
      if (journal === undefined) continue;
      const listing = await fromSnapshot(root, snap, journal, summarizer);
      if (listing === undefined) break; // a damaged row
      return listing;
    }
  }
  return rebuild(root, summarizer);
}

interface Recheck {
  project: string;
  seg: string;
  row: RawRow | undefined;
  /** Re-checked only because it is live (not announced, not a problem, its summary there). */
  live?: boolean;
}

/** A live session still live: its lock held, its log listed. */
const stillLive = (c: CheckedDir | undefined): c is CheckedDir & { entry: { info: SessionInfo } } =>
  c?.held === true && c.entry !== undefined && 'info' in c.entry;

/** Journal keys by project directory. */
function byProject(keys: readonly string[]): Map<string, Set<string>> {
  const named = new Map<string, Set<string>>();
  for (const key of keys) {
    const slash = key.indexOf('/');
    const p = key.slice(0, slash);
    const set = named.get(p) ?? new Set<string>();
    set.add(key.slice(slash + 1));
    named.set(p, set);
  }
  return named;
}

async function fromSnapshot(
  root: string,
  snap: Snapshot,
  journal: NonNullable<ReturnType<typeof readJournals>>,
  summarizer: ListingSummarizer<JsonValue> | undefined,
): Promise<Listing | undefined> {
  const named = byProject(journal.keys);
  let dirty = journal.keys.length > 0;
  // The listing is the snapshot's, but for its live sessions: no project directory read again, nothing re-checked but them.
  let asNamed = !dirty;
  const base = root.endsWith(sep) ? root : root + sep;
  const entries: Entry[] = [];
  const recheck: Recheck[] = [];
  const next = new Map<string, Project>();
  for (const name of subdirs(root) ?? []) {
    let st;
    try {
      st = statSync(join(root, name));
    } catch {
      continue;
    }
    const old = snap.projects.get(name);
    const rows = old?.rows ?? [];
    let stamp = old?.stamp ?? null;
    let present: Set<string> | undefined;
    const segs = named.get(name); // what is left of it after this project: directories not in the snapshot
    if (stamp === null || stamp[0] !== st.mtimeMs || stamp[1] !== st.ctimeMs) {
      // Read again: sessions made or removed since (by anyone, this store or not).
      const readAt = Date.now();
      asNamed = false;
      const read = subdirs(join(root, name), entries);
      present = new Set(read ?? []);
      const was = stamp;
      stamp = read === undefined ? null : stampOf(st, readAt); // unreadable: read (and reported) again next time
      const same = was === null ? stamp === null : stamp !== null && was[0] === stamp[0] && was[1] === stamp[1];
      if (!same) dirty = true;
      const known = new Set(rows.map((r) => (Array.isArray(r) ? r[0] : undefined))); // not a row: rowKind refuses it below
      for (const seg of present) {
        if (known.has(seg)) continue;
        recheck.push({ project: name, seg, row: undefined });
        segs?.delete(seg);
      }
    }
    const kept: RawRow[] = [];
    const dir = `${base}${name}${sep}`;
    for (const row of rows) {
      const kind = rowKind(row);
      if (kind === 'damaged') return undefined;
      const seg = row[0];
      const announced = segs?.delete(seg) === true;
      if (present !== undefined && !present.has(seg)) {
        dirty = true; // removed
        continue;
      }
      const unsummarized = summarizer !== undefined && row.length === 6;
      if (kind === 'recheck' || (row[1] & 1) !== 0 || announced || unsummarized) {
        const live = kind === 'trusted' && (row[1] & 1) !== 0 && !announced && !unsummarized;
        if (!live) asNamed = false;
        recheck.push({ project: name, seg, row, live });
        continue;
      }
      const [, , size, mtimeMs, , header, summary] = row as [string, number, number, number, string, SessionHeader, JsonValue?];
      entries.push({ info: infoOf(header, `${dir}${seg}${sep}${LOG_FILE}`, size, mtimeMs, summary) });
      kept.push(row);
    }
    next.set(name, { stamp, rows: kept });
  }
  for (const name of snap.projects.keys()) {
    if (next.has(name)) continue;
    dirty = true; // a project directory removed
    asNamed = false;
  }
  // Named in the journal but in no row: under a project directory not read above (made after it
  // was listed), or missing from the snapshot while its project directory did not change.
  for (const [project, segs] of named) for (const seg of segs) recheck.push({ project, seg, row: undefined });
  const results = await mapLimit(recheck, 16, async (r) => {
    if (!validKey(`${r.project}/${r.seg}`)) return undefined;
    // Not a row checked before (named by the journal, new, a problem): a real directory, as the full scan lists.
    if ((r.row === undefined || r.row.length === 2) && !realDirs(root, r.project, r.seg)) return undefined;
    const dir = join(root, r.project, r.seg);
    const c = await checkDir(root, dir, rowMemo(r.row), summarizer, true);
    return c.entry === undefined && !existsSync(dir) ? undefined : c;
  });
  results.forEach((c, i) => {
    const { project, seg, row, live } = recheck[i]!;
    if (!live || !stillLive(c)) asNamed = false;
    if (c === undefined) {
      if (row !== undefined) dirty = true;
      return;
    }
    const fresh = rawRow(seg, c);
    if (JSON.stringify(fresh) !== JSON.stringify(row)) dirty = true;
    const p = next.get(project) ?? { stamp: null, rows: [] };
    p.rows.push(fresh);
    next.set(project, p);
    entries.push(c.entry);
  });
  // A listing that compacts names the snapshot it wrote, when that is settled: its rows are this listing's.
  const written = dirty ? await compact(root, snap, journal.ends, next) : undefined;
  const listing: Listing = assemble(entries);
  const generation = asNamed && snap.settled ? snap.generation : written;
  if (generation !== undefined && listing.problems.length === 0) listing.generation = generation;
  return listing;
}

/** What listingGeneration says: the generation, and the listing's live sessions as they are now. */
export interface ListingGeneration {
  generation: string;
  live: SessionInfo[];
}

/**
 * The generation of the listing a `listIndexed(root, summarizer)` would return now, and its live
 * sessions checked afresh, when the snapshot's metadata line can tell (else undefined): the
 * snapshot is settled, for this summarizer; nothing was announced since it was written (its one
 * newer journal is empty); the project directories are the ones it stamped, with those stamps;
 * and each live session is still live. These are the conditions under which fromSnapshot reads
 * no project directory again and re-checks nothing but the live sessions: equal generations,
 * equal listings but for the live sessions, which are returned here as that listing would hold them.
 */
export async function listingGeneration(
  root: string,
  summarizer: ListingSummarizer<JsonValue> | undefined,
): Promise<ListingGeneration | undefined> {
  let meta: Meta | undefined;
  try {
    meta = readMeta(root);
    if (meta === undefined || !meta.settled || (summarizer !== undefined && summarizer.key !== meta.summaryKey)) return undefined;
    const upTo = meta.upTo;
    const ns = journalNumbers(root).filter((n) => n > upTo);
    if (ns.length !== 1 || ns[0] !== upTo + 1 || statSync(journalPath(root, ns[0])).size !== 0) return undefined;
    const names = subdirs(root);
    if (names === undefined || names.length !== meta.stamps.length) return undefined;
    const stamps = new Map(meta.stamps.map(([name, m, c]) => [name, [m, c]] as const));
    for (const name of names) {
      const stamp = stamps.get(name);
      if (stamp === undefined || stamp[0] === null) return undefined;
      const st = statSync(join(root, name));
      if (st.mtimeMs !== stamp[0] || st.ctimeMs !== stamp[1]) return undefined;
    }
  } catch {
    return undefined;
  }
  const live: SessionInfo[] = [];
  for (const [project, row] of meta.held) {
    const c = await checkDir(root, join(root, project, row[0]), rowMemo(row), summarizer, true);
    if (!stillLive(c)) return undefined; // closed (or gone) since: the listing compacts that
    live.push(c.entry.info);
  }
  // As the listing holds them: the snapshot keeps live rows project by project.
  live.sort(listingOrder);
  return { generation: generationOf(meta), live };
}

/**
 * Fold the journal into a new snapshot (lines that arrived after this listing read it ask for a
 * re-check); the new snapshot's generation when it is settled (none of those lines came).
 */
async function compact(
  root: string,
  snap: Snapshot,
  read: ReadonlyMap<number, number>,
  projects: Map<string, Project>,
): Promise<string | undefined> {
  const lock = await tryLock(root);
  if (lock === undefined) return;
  try {
    try {
      if (identOf(statSync(join(root, INDEX_FILE))) !== snap.ident) return; // compacted by another listing meanwhile
    } catch {
      return;
    }
    const m = startJournal(root);
    const late = readJournals(root, snap.upTo, read);
    if (late === undefined) return;
    for (const [project, segs] of byProject(late.keys)) {
      const p = projects.get(project) ?? { stamp: null, rows: [] };
      p.rows = p.rows.filter((r) => !segs.has(r[0]));
      for (const seg of segs) p.rows.push([seg, 0]);
      projects.set(project, p);
    }
    const generation = writeSnapshot(root, { upTo: m, summaryKey: snap.summaryKey, projects });
    dropJournals(root, m);
    return generation;
  } catch {
    // an index only: the next listing tries again
  } finally {
    lock.release();
  }
}

/** The full scan: every directory checked through the listing cache, the index written anew when the lock is free. */
async function rebuild(root: string, summarizer: ListingSummarizer<JsonValue> | undefined): Promise<Listing> {
  const lock = existsSync(root) ? await tryLock(root) : undefined;
  try {
    const m = lock ? startJournal(root) : -1;
    const projects = new Map<string, Project>();
    const unreadable: Entry[] = [];
    const dirs: { project: string; seg: string; dir: string }[] = [];
    for (const name of subdirs(root) ?? []) {
      const dir = join(root, name);
      let st;
      try {
        st = statSync(dir);
      } catch {
        continue;
      }
      const readAt = Date.now();
      const segs = subdirs(dir, unreadable);
      if (segs === undefined) continue;
      projects.set(name, { stamp: stampOf(st, readAt), rows: [] });
      for (const seg of segs) dirs.push({ project: name, seg, dir: join(dir, seg) });
    }
    const cache = new ListingCache(root, summarizer?.key);
    const checked = await mapLimit(dirs, 32, (d) => checkDir(root, d.dir, cache, summarizer, true));
    cache.save(new Set(dirs.map((d) => join(d.dir, LOG_FILE))));
    let generation: string | undefined;
    if (lock) {
      checked.forEach((c, i) => {
        const d = dirs[i]!;
        if (c.entry !== undefined || existsSync(d.dir)) projects.get(d.project)!.rows.push(rawRow(d.seg, c));
      });
      try {
        generation = writeSnapshot(root, { upTo: m, summaryKey: summarizer?.key ?? null, projects });
        dropJournals(root, m);
      } catch {
        // an index only: the next listing scans again
      }
    }
    const listing = assemble([...checked.map((c) => c.entry), ...unreadable]);
    // The snapshot written holds this listing's rows: a settled one names it.
    if (generation !== undefined && listing.problems.length === 0) listing.generation = generation;
    return listing;
  } finally {
    lock?.release();
  }
}
