/**
 * Full-text search across sessions. The index (`index-db.ts`) is brought up to date before each
 * query from the logs themselves: a log indexed before is read from the offset where indexing
 * stopped (the store only appends), a replaced or shrunk one is indexed again, a new one from its
 * start, a deleted one is forgotten. So the index follows sessions as they are written, by any
 * process, and a missing index is rebuilt. Only complete lines are indexed: a line being written
 * is read on the next search.
 *
 * dsh logs are read line by line from the file, in 4 MiB reads; a line's type is read from its
 * first bytes, and only the types that hold text are decoded and parsed (stream chunks, most of a
 * log, are skipped unparsed). Another agent's log (given with `extra`) is mapped through
 * src/import and indexed whole whenever it changes.
 */
import { closeSync, openSync, readdirSync, readSync, statSync, type Stats } from 'node:fs';
import { join, resolve } from 'node:path';
import { foldSpaces } from '../model/unsafe-chars.js';
import { LOG_FILE } from '../store/index.js';
import { importText } from '../import/index.js';
import type { SessionEvent } from '../session/index.js';
import { docsOf, INDEXED_TYPES, lineType, type Doc, type DocKind } from './extract.js';
import { CJK_RUN, IndexDb, type FileRow, type Hit, type QueryOrder } from './index-db.js';
import { SearchError } from './errors.js';

const READ = 4 << 20;
/** A line longer than this is not indexed (it is counted): no session text needs one. */
const MAX_LINE = 256 << 20;

export interface SearchOptions {
  /** The store root (`$DSH_HOME/sessions`). */
  root: string;
  /** The index file. */
  index: string;
  /** More logs to search: files, or directories searched for .jsonl, .json and .traj files. */
  extra?: readonly string[];
  /** Only sessions whose header cwd is this. */
  cwd?: string;
  kinds?: readonly DocKind[];
  limit?: number;
}

export interface SearchHit {
  session: string;
  path: string;
  cwd: string | null;
  format: string;
  turn: number | null;
  seq: number;
  kind: string;
  snippet: string;
  /** Where the first query term is in the snippet (UTF-16 offsets), when found. */
  match?: [number, number];
}

export interface RefreshStats {
  files: number;
  indexed: number;
  reindexed: number;
  removed: number;
  bytes: number;
  docs: number;
  skippedLines: number;
  /** Index ids of the other logs given, searched besides the store's. */
  extraIds: number[];
}

export interface SearchResult {
  hits: SearchHit[];
  /** Best first (BM25) of all matches; false when so many documents match that they are not all ranked. */
  ranked: boolean;
  /** `rank`: all matches ranked; `rank-newest`: the newest 5,000 ranked; `newest`: newest first. */
  order: QueryOrder;
  refresh: RefreshStats;
}

// ---------------------------------------------------------------------------------------------
// Which logs

interface Source {
  path: string;
  st: Stats;
  /** From the store: a dsh log. From `extra`: any format. */
  stored: boolean;
}

function storeLogs(root: string): Source[] {
  const out: Source[] = [];
  let projects: string[];
  try {
    projects = readdirSync(root);
  } catch {
    return out;
  }
  for (const p of projects) {
    let sessions: string[];
    try {
      sessions = readdirSync(join(root, p));
    } catch {
      continue;
    }
    for (const s of sessions) {
      const path = join(root, p, s, LOG_FILE);
      try {
        const st = statSync(path);
        if (st.isFile()) out.push({ path, st, stored: true });
      } catch {
        // a session directory without a log (a create in progress, a compressed log)
      }
    }
  }
  return out;
}

const FOREIGN_NAME = /\.(jsonl|json|traj)$/i;

function extraLogs(paths: readonly string[]): Source[] {
  const out: Source[] = [];
  const walk = (p: string, depth: number): void => {
    let st: Stats;
    try {
      st = statSync(p);
    } catch {
      return;
    }
    if (st.isFile()) out.push({ path: resolve(p), st, stored: false });
    else if (st.isDirectory() && depth < 6) {
      let names: string[];
      try {
        names = readdirSync(p);
      } catch {
        return;
      }
      for (const n of names) {
        const c = join(p, n);
        if (FOREIGN_NAME.test(n) || depth < 5) {
          try {
            const cs = statSync(c);
            if (cs.isDirectory()) walk(c, depth + 1);
            else if (cs.isFile() && FOREIGN_NAME.test(n)) out.push({ path: resolve(c), st: cs, stored: false });
          } catch {
            // vanished
          }
        }
      }
    }
  };
  for (const p of paths) walk(p, 0);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Indexing

/** Bring the index up to date with the logs. */
export function refresh(db: IndexDb, root: string, extra: readonly string[] = []): RefreshStats {
  const stats = noStats();
  const sources = [...storeLogs(root), ...extraLogs(extra)];
  const seen = new Set<string>();
  // One read of what the index knows; each log costs a stat, and a read only when it changed.
  const known = new Map(db.files().map((r) => [r.path, r]));
  for (const s of sources) {
    if (seen.has(s.path)) continue;
    seen.add(s.path);
    stats.files++;
    const row = known.get(s.path);
    if (row && row.ino === s.st.ino && row.size === s.st.size && row.mtime === s.st.mtimeMs) continue;
    db.write(() => indexOne(db, s, stats));
  }
  // Store logs that are gone (deleted sessions) are forgotten; other logs indexed from paths
  // given earlier stay until they change (they are searched only when given again).
  for (const row of known.values()) {
    if (seen.has(row.path) || row.format !== 'dsh-store') continue;
    db.write(() => db.dropFile(row.id));
    stats.removed++;
  }
  stats.extraIds = sources
    .filter((s) => !s.stored)
    .map((s) => db.file(s.path)?.id)
    .filter((x): x is number => x !== undefined);
  return stats;
}

/** Empty refresh figures (one log's update fills them in). */
export function noStats(): RefreshStats {
  return { files: 0, indexed: 0, reindexed: 0, removed: 0, bytes: 0, docs: 0, skippedLines: 0, extraIds: [] };
}

/**
 * Bring one stored log's entry up to date (its new lines, or all of it when it was replaced), in
 * one write transaction: the write path's update (live.ts), the same step a search's refresh
 * takes for each log that changed. A log that is gone is forgotten.
 */
export function indexStoredLog(db: IndexDb, path: string, stats: RefreshStats = noStats()): RefreshStats {
  let st: Stats;
  try {
    st = statSync(path);
  } catch {
    const row = db.file(path);
    if (row) db.write(() => db.dropFile(row.id));
    return stats;
  }
  stats.files++;
  db.write(() => indexOne(db, { path, st, stored: true }, stats));
  return stats;
}

function indexOne(db: IndexDb, s: Source, stats: RefreshStats): void {
  // Read again inside the write transaction: another process may have indexed it meanwhile.
  const row = db.file(s.path);
  let st: Stats;
  try {
    st = statSync(s.path);
  } catch {
    if (row) db.dropFile(row.id);
    return;
  }
  if (row && row.ino === st.ino && row.size === st.size && row.mtime === st.mtimeMs) return;
  const format = s.stored ? 'dsh-store' : row?.format;
  const grew =
    row !== undefined && row.ino === st.ino && st.size >= row.offset && row.format !== 'foreign' && tailOf(s.path, row.offset) === row.tail;
  if (row && !grew) {
    db.dropDocs(row.id);
    stats.reindexed++;
  } else if (!row) stats.indexed++;
  if (!s.stored && (format === 'foreign' || (!grew && !looksLikeDsh(s.path)))) {
    indexForeign(db, s.path, st, row?.id, stats);
    return;
  }
  indexDsh(db, s.path, st, grew ? row : undefined, row?.id, s.stored ? 'dsh-store' : 'dsh', stats);
}

/** The (up to) 64 bytes before `offset`, hex: the indexed prefix still ends as it did. */
function tailOf(path: string, offset: number): string {
  if (offset === 0) return '';
  const n = Math.min(64, offset);
  const b = Buffer.alloc(n);
  const fd = openSync(path, 'r');
  try {
    return b.subarray(0, readSync(fd, b, 0, n, offset - n)).toString('hex');
  } finally {
    closeSync(fd);
  }
}

function looksLikeDsh(path: string): boolean {
  const b = Buffer.alloc(256);
  const fd = openSync(path, 'r');
  try {
    const n = readSync(fd, b, 0, b.length, 0);
    const head = b.toString('utf8', 0, n).replace(/^\uFEFF/, '');
    return /^\{"type":"session","version":\d+/.test(head);
  } finally {
    closeSync(fd);
  }
}

/**
 * Index a dsh log from `from.offset` (or its start) to its last complete line. The header gives
 * the session id and cwd; `turn/start` lines the turn of what follows.
 */
function indexDsh(
  db: IndexDb,
  path: string,
  st: Stats,
  from: FileRow | undefined,
  id: number | undefined,
  format: string,
  stats: RefreshStats,
): void {
  let session = from?.session ?? '';
  let cwd = from?.cwd ?? null;
  let turn = from?.turn ?? 0;
  let offset = from?.offset ?? 0;
  const fileId = db.upsertFile(
    { path, session, cwd, ino: st.ino, size: st.size, mtime: st.mtimeMs, offset, turn, format, tail: from?.tail ?? '' },
    id,
  );
  const fd = openSync(path, 'r');
  const buf = Buffer.allocUnsafe(READ);
  let carry: Buffer | undefined;
  let pos = offset;
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, READ, pos);
      if (n === 0) break;
      const chunk = carry ? Buffer.concat([carry, buf.subarray(0, n)]) : buf.subarray(0, n);
      const base = pos - (carry?.length ?? 0);
      pos += n;
      let start = 0;
      for (;;) {
        const nl = chunk.indexOf(10, start);
        if (nl < 0) break;
        const lineStart = base + start;
        if (lineStart === 0) {
          const h = header(chunk.toString('utf8', start, nl));
          session = h.id ?? session;
          cwd = h.cwd ?? cwd;
        } else {
          const t = indexLine(db, fileId, chunk, start, nl, lineStart, turn, stats);
          if (t !== undefined) turn = t;
        }
        start = nl + 1;
        offset = base + start;
      }
      const rest = chunk.length - start;
      if (rest > MAX_LINE) {
        // A line too long to be session text: skipped whole, up to its newline.
        stats.skippedLines++;
        carry = undefined;
        const nl = findNewline(fd, pos);
        if (nl < 0) break;
        pos = nl + 1;
        offset = pos;
        continue;
      }
      carry = rest > 0 ? Buffer.from(chunk.subarray(start)) : undefined;
    }
  } finally {
    closeSync(fd);
  }
  stats.bytes += offset - (from?.offset ?? 0);
  db.upsertFile(
    {
      path,
      session: session || path,
      cwd,
      ino: st.ino,
      size: st.size,
      mtime: st.mtimeMs,
      offset,
      turn,
      format,
      tail: tailOf(path, offset),
    },
    fileId,
  );
}

function findNewline(fd: number, from: number): number {
  const b = Buffer.allocUnsafe(READ);
  let pos = from;
  for (;;) {
    const n = readSync(fd, b, 0, READ, pos);
    if (n === 0) return -1;
    const i = b.subarray(0, n).indexOf(10);
    if (i >= 0) return pos + i;
    pos += n;
  }
}

function header(line: string): { id?: string; cwd?: string } {
  try {
    const h = JSON.parse(line) as { id?: unknown; cwd?: unknown };
    return { ...(typeof h.id === 'string' ? { id: h.id } : {}), ...(typeof h.cwd === 'string' ? { cwd: h.cwd } : {}) };
  } catch {
    return {};
  }
}

/** Index one line; returns the turn a `turn/start` opens. */
function indexLine(
  db: IndexDb,
  fileId: number,
  chunk: Buffer,
  start: number,
  end: number,
  pos: number,
  turn: number,
  stats: RefreshStats,
): number | undefined {
  // The type from the first bytes: chunks and other text-less events are never decoded.
  let type = lineType(chunk.toString('latin1', start, Math.min(end, start + 64)));
  if (type !== undefined && !INDEXED_TYPES.has(type) && !type.includes('\\')) return undefined;
  let e: { type?: unknown; seq?: unknown; data?: unknown };
  try {
    e = JSON.parse(chunk.toString('utf8', start, end)) as typeof e;
  } catch {
    stats.skippedLines++;
    return undefined;
  }
  if (typeof e !== 'object' || e === null) return undefined;
  type = typeof e.type === 'string' ? e.type : undefined;
  if (type === undefined || !INDEXED_TYPES.has(type) || typeof e.seq !== 'number') return undefined;
  if (type === 'turn/start') {
    const t = (e.data as { turn?: unknown } | undefined)?.turn;
    return typeof t === 'number' ? t : undefined;
  }
  const d = e.data as { turn?: unknown } | undefined;
  const t = typeof d?.turn === 'number' ? d.turn : turn > 0 ? turn : null;
  for (const doc of docsOf(type, e.data)) {
    db.addDoc(fileId, e.seq, t, pos, doc);
    stats.docs++;
  }
  return undefined;
}

/** Another agent's log: mapped whole (every session it holds), indexed by seq. */
function indexForeign(db: IndexDb, path: string, st: Stats, id: number | undefined, stats: RefreshStats): void {
  let text: string;
  try {
    text = readText(path);
  } catch {
    return;
  }
  let result;
  try {
    result = importText(text, { file: path });
  } catch {
    // Not a log this build reads: remembered (so it is not read again until it changes), empty.
    db.upsertFile(
      {
        path,
        session: path,
        cwd: null,
        ino: st.ino,
        size: st.size,
        mtime: st.mtimeMs,
        offset: st.size,
        turn: 0,
        format: 'foreign',
        tail: '',
      },
      id,
    );
    return;
  }
  if (!result) {
    indexDsh(db, path, st, undefined, id, 'dsh', stats);
    return;
  }
  const first = result.sessions[0]!;
  const fileId = db.upsertFile(
    {
      path,
      session: first.header.id,
      cwd: first.header.cwd ?? null,
      ino: st.ino,
      size: st.size,
      mtime: st.mtimeMs,
      offset: st.size,
      turn: 0,
      format: 'foreign',
      tail: '',
    },
    id,
  );
  stats.bytes += st.size;
  // Sessions after the first are addressed as FILE#key: their seqs are offset by a key index.
  result.sessions.forEach((s, k) => {
    let turn = 0;
    for (const e of s.session.events) {
      if (e.type === 'turn/start') turn = e.data.turn;
      for (const doc of docsOf(e.type, e.data)) {
        db.addDoc(fileId, e.seq, (e.data as { turn?: number }).turn ?? (turn || null), -1 - k, doc);
        stats.docs++;
      }
    }
  });
}

function readText(path: string): string {
  const st = statSync(path);
  if (st.size > 512 * 1024 * 1024 - 64) throw new Error('too large');
  const fd = openSync(path, 'r');
  try {
    const b = Buffer.allocUnsafe(st.size);
    let n = 0;
    while (n < st.size) {
      const r = readSync(fd, b, n, st.size - n, n);
      if (r === 0) break;
      n += r;
    }
    return b.toString('utf8', 0, n);
  } finally {
    closeSync(fd);
  }
}

// ---------------------------------------------------------------------------------------------
// Queries

/**
 * The FTS5 query for what a person typed: every word must appear (in any order), "quoted words"
 * as a phrase, a trailing * a prefix. Everything is quoted for FTS5, so its operators and
 * punctuation are plain text; an unbalanced quote is read as a plain character.
 */
export function ftsQuery(q: string): { match: string; terms: string[] } {
  const parts: string[] = [];
  const terms: string[] = [];
  const re = /"([^"]*)"|(\S+)/g;
  const quotes = (q.match(/"/g) ?? []).length;
  const text = quotes % 2 === 1 ? q.replace(/"/g, ' ') : q;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const phrase = m[1];
    let word = phrase ?? m[2]!;
    let prefix = false;
    if (phrase === undefined && word.endsWith('*') && word.length > 1) {
      prefix = true;
      word = word.replace(/\*+$/, '');
    }
    if (!/[\p{L}\p{N}]/u.test(word)) continue;
    terms.push(word);
    // Chinese, Japanese and Korean runs are indexed as bigrams (index-db.ts): search for the
    // same pieces, in order, but without the run's lone last character, which matches only at a
    // run's end. A single character is a prefix of the bigrams it starts (or the lone last one).
    const cjk = cjkQuery(word);
    if (cjk !== undefined) {
      parts.push(`"${cjk.replace(/"/g, '""')}"${prefix || [...word].length === 1 ? '*' : ''}`);
      continue;
    }
    parts.push(`"${word.replace(/"/g, '""')}"${prefix ? '*' : ''}`);
  }
  if (parts.length === 0) throw new SearchError('BAD_QUERY', 'the query has no word to search for (letters or digits)');
  return { match: parts.join(' '), terms };
}

/**
 * A query word holding Chinese, Japanese or Korean, as the index holds it: each run of two or
 * more characters as its bigrams (without the lone last character the index adds, which would
 * tie the match to a run's end), a one-character run as itself. Undefined for other words.
 */
function cjkQuery(word: string): string | undefined {
  if (!new RegExp(CJK_RUN.source, 'u').test(word)) return undefined;
  return word
    .replace(CJK_RUN, (run) => {
      const c = [...run];
      return ` ${
        c.length === 1
          ? run
          : c
              .slice(1)
              .map((ch, i) => c[i]! + ch)
              .join(' ')
      } `;
    })
    .trim();
}

export function openIndex(path: string): IndexDb {
  return IndexDb.open(path);
}

export function search(query: string, opts: SearchOptions): SearchResult {
  const q = ftsQuery(query);
  const db = IndexDb.open(opts.index);
  try {
    const stats = refresh(db, opts.root, opts.extra ?? []);
    const { hits, ranked, order } = db.query(q.match, { limit: opts.limit ?? 20, cwd: opts.cwd, kinds: opts.kinds, extra: stats.extraIds });
    const foreign = new Map<string, ReturnType<typeof importText> | null>();
    return { hits: hits.map((h) => hitOf(h, q.terms, foreign)), ranked, order, refresh: stats };
  } finally {
    db.close();
  }
}

/** The hit with a snippet read from the log (the index holds no text). */
function hitOf(h: Hit, terms: string[], foreign: Map<string, ReturnType<typeof importText> | null>): SearchHit {
  let text = '';
  let session = h.session;
  try {
    if (h.pos >= 0) {
      const e = readLineAt(h.path, h.pos) as { type?: string; data?: unknown };
      text = docsOf(String(e.type), e.data).find((d) => d.kind === h.kind)?.text ?? '';
    } else {
      if (!foreign.has(h.path)) {
        try {
          foreign.set(h.path, importText(readText(h.path), { file: h.path }) ?? null);
        } catch {
          foreign.set(h.path, null);
        }
      }
      const s = foreign.get(h.path)?.sessions[-1 - h.pos];
      if (s) {
        if (h.pos < -1) session = `${s.header.id}`;
        const e = s.session.at(h.seq) as SessionEvent | undefined;
        if (e) text = docsOf(e.type, e.data).find((d) => d.kind === h.kind)?.text ?? '';
      }
    }
  } catch {
    // The log changed since it was indexed: the hit is shown without its text.
  }
  const snip = snippet(text, terms);
  const path = h.pos < -1 ? `${h.path}#${foreignKey(foreign.get(h.path), -1 - h.pos)}` : h.path;
  return {
    session,
    path,
    cwd: h.cwd,
    format: h.format === 'dsh-store' ? 'dsh' : h.format,
    turn: h.turn,
    seq: h.seq,
    kind: h.kind,
    snippet: snip.text,
    ...(snip.match ? { match: snip.match } : {}),
  };
}

function foreignKey(r: ReturnType<typeof importText> | null | undefined, k: number): string {
  return r?.sessions[k]?.key ?? String(k);
}

function readLineAt(path: string, pos: number): unknown {
  const fd = openSync(path, 'r');
  try {
    const parts: Buffer[] = [];
    const b = Buffer.allocUnsafe(1 << 16);
    let at = pos;
    let total = 0;
    for (;;) {
      const n = readSync(fd, b, 0, b.length, at);
      if (n === 0) break;
      const nl = b.subarray(0, n).indexOf(10);
      parts.push(Buffer.from(b.subarray(0, nl < 0 ? n : nl)));
      total += nl < 0 ? n : nl;
      if (nl >= 0 || total > MAX_LINE) break;
      at += n;
    }
    return JSON.parse(Buffer.concat(parts).toString('utf8'));
  } finally {
    closeSync(fd);
  }
}

const fold = (s: string): string => s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();

/** About 160 characters around the first query term, whitespace folded. */
export function snippet(text: string, terms: string[], width = 160): { text: string; match?: [number, number] } {
  const flat = foldSpaces(text, true);
  // Folding can change lengths (a decomposed accent); offsets are looked up on the folded text
  // only when it keeps the length, otherwise on the lower-cased text.
  const folded = fold(flat);
  const hay = folded.length === flat.length ? folded : flat.toLowerCase();
  let at = -1;
  let len = 0;
  for (const t of terms) {
    const needle = hay === folded ? fold(t) : t.toLowerCase();
    const i = hay.indexOf(needle);
    if (i >= 0 && (at < 0 || i < at)) {
      at = i;
      len = needle.length;
    }
  }
  if (at < 0) return { text: flat.length > width ? `${flat.slice(0, width)}…` : flat };
  const start = Math.max(0, at - Math.floor((width - len) / 2));
  const end = Math.min(flat.length, start + width);
  const pre = start > 0 ? '…' : '';
  const out = `${pre}${flat.slice(start, end)}${end < flat.length ? '…' : ''}`;
  return { text: out, match: [pre.length + at - start, pre.length + at - start + len] };
}

export type { Doc, DocKind };
