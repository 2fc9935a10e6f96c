/**
 * The search index: SQLite FTS5 (through better-sqlite3), a cache of the logs. Deleting it loses
 * nothing: the next search rebuilds it from the logs. A file that is not a readable index (a
 * half-written copy, another program's file) is set aside and rebuilt too.
 *
 *   files  one row per indexed log: path, session id, cwd, the (inode, size, mtime) it was
 *          indexed at, the byte offset indexing reached (the end of its last complete line) and
 *          the turn open there, so a log that grew is indexed from where it stopped.
 *   docs   one row per document: its log, seq, turn, kind, and the byte offset of its line (for
 *          the snippet; -1 for another agent's log, which is re-read whole).
 *   fts    the full-text index over the documents' text, contentless (the text stays in the
 *          logs: the index holds the terms only), with deletes for logs indexed again.
 *
 * better-sqlite3 is a native module loaded only when search runs, never at CLI start.
 */
import { createRequire } from 'node:module';
import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Doc } from './extract.js';
import { SearchError } from './errors.js';
import { CodedError } from '../model/coded-error.js';

/** Bumped when the schema or what is indexed changes: an index of another version is rebuilt. */
export const SCHEMA_VERSION = '2';

// The parts of better-sqlite3's API this module uses.
interface Statement {
  run(...params: unknown[]): { changes: number; lastInsertRowid: number | bigint };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  iterate(...params: unknown[]): IterableIterator<unknown>;
}
export interface Database {
  prepare(sql: string): Statement;
  exec(sql: string): void;
  pragma(sql: string, opts?: { simple?: boolean }): unknown;
  transaction<F extends (...args: never[]) => unknown>(fn: F): F & { immediate: F };
  close(): void;
}
type DatabaseCtor = new (path: string, opts?: { timeout?: number }) => Database;

let ctor: DatabaseCtor | undefined;
function sqlite(): DatabaseCtor {
  if (!ctor) {
    try {
      ctor = createRequire(import.meta.url)('better-sqlite3') as DatabaseCtor;
    } catch (e) {
      throw new SearchError(
        'INDEX_UNAVAILABLE',
        `the search index needs the better-sqlite3 package, which did not load (${(e as Error).message.split('\n')[0]}); ` +
          'reinstall dsh (npm ci)',
        { cause: e },
      );
    }
  }
  return ctor;
}

export interface FileRow {
  id: number;
  path: string;
  session: string;
  cwd: string | null;
  ino: number;
  size: number;
  mtime: number;
  offset: number;
  turn: number;
  format: string;
  /** The bytes just before `offset` (hex): a prefix rewritten in place is told from one that grew. */
  tail: string;
}

export interface Hit {
  path: string;
  session: string;
  cwd: string | null;
  format: string;
  seq: number;
  turn: number | null;
  kind: string;
  pos: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
  id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, session TEXT NOT NULL, cwd TEXT,
  ino INTEGER NOT NULL, size INTEGER NOT NULL, mtime REAL NOT NULL, offset INTEGER NOT NULL,
  turn INTEGER NOT NULL, format TEXT NOT NULL, tail TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS docs(
  id INTEGER PRIMARY KEY, file INTEGER NOT NULL, seq INTEGER NOT NULL, turn INTEGER, kind TEXT NOT NULL, pos INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS docs_file ON docs(file);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(text, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2');
`;

/**
 * Chinese, Japanese and Korean are written without spaces, and unicode61 makes a whole run of
 * such characters one token, so a word inside a sentence could not be found. Each run is indexed
 * as its overlapping two-character pieces plus its last character alone (数据平面 → 数据 据平 平面
 * 面), and a query word is turned into the same pieces as a phrase (搜索功能 → "搜索 索功 功能"),
 * so any substring of two or more characters matches and one character matches as a prefix.
 * Bigrams rather than FTS5's trigram tokenizer: most Chinese words are two characters, which a
 * trigram index cannot find without a full scan, and one table keeps ranking and deletion as they
 * are. Text without these scripts is unchanged.
 */
export const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30fc]+/gu;

export function cjkBigrams(text: string): string {
  CJK_RUN.lastIndex = 0;
  if (!CJK_RUN.test(text)) return text;
  return text.replace(CJK_RUN, (run) => ` ${cjkPieces(run).join(' ')} `);
}

/** The pieces of one run: its bigrams, then its last character. */
export function cjkPieces(run: string): string[] {
  const c = [...run];
  const out: string[] = [];
  for (let i = 0; i + 1 < c.length; i++) out.push(c[i]! + c[i + 1]!);
  out.push(c[c.length - 1]!);
  return out;
}

/**
 * Whether a MATCH string made by `ftsQuery` holds a phrase: a quoted group with a space inside.
 * Each group is read whole (`""` is an escaped quote), so the space between two quoted words
 * (`"common" "word"`) is not mistaken for one.
 */
export function hasPhrase(match: string): boolean {
  for (const m of match.matchAll(/"((?:[^"]|"")*)"/g)) if (/\s/.test(m[1]!)) return true;
  return false;
}

export class IndexDb {
  private readonly db: Database;
  private readonly stmts: {
    file: Statement;
    files: Statement;
    insertFile: Statement;
    updateFile: Statement;
    deleteFile: Statement;
    insertDoc: Statement;
    insertFts: Statement;
    deleteDocs: Statement;
    deleteFts: Statement;
  };

  private constructor(db: Database) {
    this.db = db;
    this.stmts = {
      file: db.prepare('SELECT * FROM files WHERE path = ?'),
      files: db.prepare('SELECT * FROM files'),
      insertFile: db.prepare(
        'INSERT INTO files(path, session, cwd, ino, size, mtime, offset, turn, format, tail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      updateFile: db.prepare(
        'UPDATE files SET session = ?, cwd = ?, ino = ?, size = ?, mtime = ?, offset = ?, turn = ?, format = ?, tail = ? WHERE id = ?',
      ),
      deleteFile: db.prepare('DELETE FROM files WHERE id = ?'),
      insertDoc: db.prepare('INSERT INTO docs(file, seq, turn, kind, pos) VALUES (?, ?, ?, ?, ?)'),
      insertFts: db.prepare('INSERT INTO fts(rowid, text) VALUES (?, ?)'),
      deleteDocs: db.prepare('DELETE FROM docs WHERE file = ?'),
      deleteFts: db.prepare('DELETE FROM fts WHERE rowid = ?'),
    };
  }

  /**
   * Open (or create) the index at `path`; an unreadable or outdated one is rebuilt from nothing.
   * `busyMs`: how long a write waits for another process's write to finish (a search waits; the
   * write path does not, see live.ts).
   */
  static open(path: string, opts: { busyMs?: number } = {}): IndexDb {
    const Db = sqlite();
    mkdirSync(dirname(path), { recursive: true });
    for (let attempt = 0; ; attempt++) {
      let db: Database | undefined;
      try {
        db = new Db(path, { timeout: opts.busyMs ?? 10_000 });
        db.pragma('journal_mode = WAL');
        db.pragma('synchronous = NORMAL');
        db.exec(SCHEMA);
        const v = db.prepare("SELECT value FROM meta WHERE key = 'schema'").get() as { value: string } | undefined;
        if (v === undefined) db.prepare("INSERT OR IGNORE INTO meta(key, value) VALUES ('schema', ?)").run(SCHEMA_VERSION);
        else if (v.value !== SCHEMA_VERSION) throw new Outdated();
        return new IndexDb(db);
      } catch (e) {
        db?.close();
        const code = (e as { code?: unknown }).code;
        const damaged = e instanceof Outdated || code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT';
        if (!damaged || attempt > 0) {
          if (e instanceof SearchError) throw e;
          throw new SearchError('INDEX_UNAVAILABLE', `the search index ${path} cannot be opened: ${(e as Error).message}`, { cause: e });
        }
        // A cache: set the bad file aside (kept for a look, replaced next time) and start over.
        for (const suffix of ['-wal', '-shm']) rmSync(path + suffix, { force: true });
        renameSync(path, `${path}.damaged`);
      }
    }
  }

  close(): void {
    this.db.close();
  }

  file(path: string): FileRow | undefined {
    return this.stmts.file.get(path) as FileRow | undefined;
  }

  files(): FileRow[] {
    return this.stmts.files.all() as FileRow[];
  }

  /** Run `fn` in one write transaction (taken at once, so two indexers never interleave). */
  write<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  /** Forget a log's documents (it was replaced, shrank or is gone). */
  dropDocs(fileId: number): void {
    this.stmts.deleteFts.run(fileId);
    this.stmts.deleteDocs.run(fileId);
  }

  dropFile(fileId: number): void {
    this.dropDocs(fileId);
    this.stmts.deleteFile.run(fileId);
  }

  upsertFile(row: Omit<FileRow, 'id'>, id?: number): number {
    if (id !== undefined) {
      this.stmts.updateFile.run(row.session, row.cwd, row.ino, row.size, row.mtime, row.offset, row.turn, row.format, row.tail, id);
      return id;
    }
    return Number(
      this.stmts.insertFile.run(row.path, row.session, row.cwd, row.ino, row.size, row.mtime, row.offset, row.turn, row.format, row.tail)
        .lastInsertRowid,
    );
  }

  addDoc(fileId: number, seq: number, turn: number | null, pos: number, doc: Doc): void {
    const id = this.stmts.insertDoc.run(fileId, seq, turn, doc.kind, pos).lastInsertRowid;
    this.stmts.insertFts.run(id, cjkBigrams(doc.text));
  }

  /**
   * Matches of an FTS5 query in the store's logs and the other logs `extra` names (ids of logs
   * indexed earlier from other paths are left out). Ranked best first (BM25) when at most
   * `RANK_LIMIT` documents match (`order: 'rank'`). A query matching more (a very common word) is
   * not ranked whole (`ranked: false`), since ranking every match costs time in proportion to
   * them all (0.3–0.7 s for a word in 240,000 texts; bench/search.ts): it is ranked among its
   * newest `RANK_LIMIT` matches (`rank-newest`), or with a filter or a phrase answered newest
   * first (`newest`).
   */
  query(
    match: string,
    opts: { limit: number; cwd?: string | undefined; kinds?: readonly string[] | undefined; extra?: readonly number[] },
  ): { hits: Hit[]; ranked: boolean; order: QueryOrder } {
    const { where, params } = filters(match, opts);
    params.push(opts.limit);
    try {
      const many =
        this.db.prepare('SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rowid DESC LIMIT ?').all(match, RANK_LIMIT + 1).length >
        RANK_LIMIT;
      const cols = `f.path AS path, f.session AS session, f.cwd AS cwd, f.format AS format,
               d.seq AS seq, d.turn AS turn, d.kind AS kind, d.pos AS pos`;
      const from = 'fts JOIN docs d ON d.id = fts.rowid JOIN files f ON f.id = d.file';
      // Many matches, no filter and no phrase: BM25 inside FTS5 over the newest RANK_LIMIT
      // matches (FTS5 walks its doclist newest first and stops there; a word's weight comes from
      // its document count, which FTS5 keeps), then only the page is joined back. With a filter
      // the window would have to walk past every match the filter drops, and a phrase's weight
      // needs every match's positions: those are answered newest first.
      const phrase = hasPhrase(match);
      const order: QueryOrder = !many ? 'rank' : opts.cwd === undefined && !opts.kinds?.length && !phrase ? 'rank-newest' : 'newest';
      const sql =
        order === 'rank-newest'
          ? `SELECT ${cols} FROM (SELECT fts.rowid AS id, fts.rank AS score FROM ${from}
               WHERE ${where.join(' AND ')} ORDER BY fts.rowid DESC LIMIT ${RANK_LIMIT}) w
             JOIN docs d ON d.id = w.id JOIN files f ON f.id = d.file ORDER BY w.score, w.id DESC LIMIT ?`
          : `SELECT ${cols} FROM ${from} WHERE ${where.join(' AND ')} ORDER BY ${order === 'rank' ? 'fts.rank' : 'fts.rowid DESC'} LIMIT ?`;
      return { hits: this.db.prepare(sql).all(...params) as Hit[], ranked: !many, order };
    } catch (e) {
      const msg = (e as Error).message;
      if (/fts5: syntax error|no such column|unterminated string|malformed MATCH/i.test(msg))
        throw new SearchError('BAD_QUERY', `the query cannot be searched: ${msg}`, { cause: e });
      throw e;
    }
  }

  /** Every match ranked by BM25, the page joined (what `query` avoids past RANK_LIMIT): the bench's baseline. */
  rankAll(match: string, opts: { limit: number; cwd?: string; kinds?: readonly string[] }): Hit[] {
    const { where, params } = filters(match, opts);
    const sql = `SELECT f.path AS path, d.seq AS seq FROM fts JOIN docs d ON d.id = fts.rowid JOIN files f ON f.id = d.file
      WHERE ${where.join(' AND ')} ORDER BY fts.rank LIMIT ?`;
    return this.db.prepare(sql).all(...params, opts.limit) as Hit[];
  }
}

/** The WHERE terms and parameters of a query: the match, which logs, which cwd and kinds. */
function filters(
  match: string,
  opts: { cwd?: string | undefined; kinds?: readonly string[] | undefined; extra?: readonly number[] },
): { where: string[]; params: unknown[] } {
  const where: string[] = ['fts MATCH ?'];
  const params: unknown[] = [match];
  where.push(`(f.format = 'dsh-store'${opts.extra?.length ? ` OR f.id IN (${opts.extra.map(() => '?').join(', ')})` : ''})`);
  if (opts.extra?.length) params.push(...opts.extra);
  if (opts.cwd !== undefined) {
    where.push('f.cwd = ?');
    params.push(opts.cwd);
  }
  if (opts.kinds?.length) {
    where.push(`d.kind IN (${opts.kinds.map(() => '?').join(', ')})`);
    params.push(...opts.kinds);
  }
  return { where, params };
}

/** Matches ranked by relevance at most; beyond, the newest this many are (see `query`). */
export type QueryOrder = 'rank' | 'rank-newest' | 'newest';
export const RANK_LIMIT = 5000;

/** SQLite's "another connection holds the lock" (better-sqlite3 puts the code on the error or its cause). */
export function isBusy(e: unknown): boolean {
  for (let x = e, i = 0; x && i < 3; x = (x as { cause?: unknown }).cause, i++) {
    const code = (x as { code?: unknown }).code;
    if (typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))) return true;
  }
  return false;
}

class Outdated extends CodedError<'INDEX_OUTDATED'> {
  constructor() {
    super('INDEX_OUTDATED', 'the search index was written by another version');
  }
}
