/**
 * Reading a stored session: its row, its fork chain, and its events as the exact texts stored.
 *
 * A fork is a pointer: the child holds its own events from `base_seq` on, and reads the rest
 * from its ancestors, each through the seq its child forked at. The events are fetched in pages
 * (one string per page, rows joined by newlines, so the driver builds one value per page rather
 * than one object per row) and handed to the codec's loader as the lines of a log: a session in
 * PostgreSQL loads, validates and is crash-repaired exactly as its JSONL export would be.
 */
import type { Pool, PoolClient } from 'pg';
import { loadJsonlLines, SessionError, type LineSource, type LoadedLog, type LoadOptions } from '../session/index.js';
import { StoreError, type LockHolder } from '../store/errors.js';
import { pgError } from './connect.js';
import type { Names } from './schema.js';

export type Queryable = Pick<Pool | PoolClient, 'query'>;

export interface SessionRow {
  id: string;
  header: string;
  cwd: string | null;
  created_at: number;
  parent_id: string | null;
  fork_seq: number | null;
  base_seq: number;
  options: string | null;
  lease_epoch: number;
  lease_holder: LeaseHolderRecord | null;
  /** Lease expiry, epoch ms (database clock), or null. */
  lease_until_ms: number | null;
  /** Is the lease held and unexpired now (database clock)? */
  lease_live: boolean;
}

/** What a lease row says about its holder (`lease_holder`). */
export interface LeaseHolderRecord {
  pid: number;
  host: string;
  since: number;
  role: 'worker' | 'client';
  /** The holding process's instance id (a random UUID per store). */
  owner: string;
}

export const SESSION_COLUMNS = `id, header, cwd, created_at, parent_id, fork_seq, base_seq, options, lease_epoch, lease_holder,
  (extract(epoch from lease_until) * 1000)::bigint AS lease_until_ms,
  coalesce(lease_until > now() AND lease_token IS NOT NULL, false) AS lease_live`;

/** A live holder as the listing and SESSION_LOCKED report it. */
export function holderOf(row: SessionRow): LockHolder | undefined {
  const h = row.lease_holder;
  if (!row.lease_live || !h) return undefined;
  const out: LockHolder = { pid: h.pid, host: h.host, since: h.since, role: h.role };
  if (row.lease_until_ms !== null) out.expiresAt = row.lease_until_ms;
  return out;
}

/** One stretch of a session's events: `id`'s rows with seq in [from, to]. */
export interface Segment {
  id: string;
  from: number;
  to: number;
}

export async function sessionRow(q: Queryable, n: Names, id: string): Promise<SessionRow | undefined> {
  const r = await q.query<SessionRow>(`SELECT ${SESSION_COLUMNS} FROM ${n.sessions} WHERE id = $1`, [id]);
  return r.rows[0];
}

/** The segments that make up `id`'s log, oldest ancestor first. */
export async function segmentsOf(q: Queryable, n: Names, id: string): Promise<Segment[]> {
  const r = await q.query<{ id: string; parent_id: string | null; fork_seq: number | null; base_seq: number; depth: number }>(
    `WITH RECURSIVE chain AS (
       SELECT id, parent_id, fork_seq, base_seq, 0 AS depth FROM ${n.sessions} WHERE id = $1
       UNION ALL
       SELECT s.id, s.parent_id, s.fork_seq, s.base_seq, c.depth + 1
         FROM ${n.sessions} s JOIN chain c ON s.id = c.parent_id WHERE c.depth < 10000
     ) SELECT id, parent_id, fork_seq, base_seq, depth FROM chain ORDER BY depth DESC`,
    [id],
  );
  const rows = r.rows;
  const out: Segment[] = [];
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    const child = rows[i + 1];
    // An ancestor is read through the seq its child forked at; the session itself to its end.
    out.push({ id: row.id, from: row.base_seq, to: child ? child.fork_seq! : Number.MAX_SAFE_INTEGER });
  }
  return out;
}

/** The seq after the last stored event of `id` (its own rows, else its base). */
export async function storedEnd(q: Queryable, n: Names, id: string, base: number): Promise<number> {
  const r = await q.query<{ seq: number }>(`SELECT seq FROM ${n.events} WHERE session_id = $1 ORDER BY seq DESC LIMIT 1`, [id]);
  return r.rows[0] === undefined ? base : r.rows[0].seq + 1;
}

const PAGE_ROWS = 20_000;

/**
 * The stored texts of `segments` from seq `from` on, as pages of newline-joined rows, up to
 * (not including) `end`. Each page's first and last seq come along, so a hole shows.
 */
export async function fetchPages(
  q: Queryable,
  n: Names,
  segments: readonly Segment[],
  from: number,
  end: number,
  pageRows = PAGE_ROWS,
): Promise<{ text: string; lo: number; hi: number; rows: number }[]> {
  const pages: { text: string; lo: number; hi: number; rows: number }[] = [];
  for (const seg of segments) {
    let next = Math.max(from, seg.from);
    const last = Math.min(seg.to, end - 1);
    while (next <= last) {
      const r = await q.query<{ text: string | null; lo: number | null; hi: number | null; rows: number }>(
        `SELECT string_agg(body, E'\\n' ORDER BY seq) AS text, min(seq) AS lo, max(seq) AS hi, count(*)::int AS rows
           FROM (SELECT seq, body FROM ${n.events} WHERE session_id = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq LIMIT $4) page`,
        [seg.id, next, last, pageRows],
      );
      const p = r.rows[0];
      if (!p || p.rows === 0 || p.text === null) break;
      pages.push({ text: p.text, lo: p.lo!, hi: p.hi!, rows: p.rows });
      next = p.hi! + 1;
      if (p.rows < pageRows) break;
    }
  }
  return pages;
}

/** The lines of a log held as a header line plus pages of newline-joined event lines. */
class PageLines implements LineSource {
  line = '';
  readonly terminated = true;
  private started = false;
  private page = 0;
  private lines: string[] = [];
  private i = 0;
  constructor(
    private readonly header: string,
    private readonly pages: string[],
  ) {}

  next(): boolean {
    if (!this.started) {
      this.started = true;
      this.line = this.header;
      return true;
    }
    while (this.i >= this.lines.length) {
      if (this.page >= this.pages.length) return false;
      this.lines = this.pages[this.page]!.split('\n');
      this.pages[this.page++] = ''; // let the page's text go once it is split
      this.i = 0;
    }
    this.line = this.lines[this.i++]!;
    return true;
  }
}

export interface StoredLoad {
  row: SessionRow;
  load: LoadedLog;
}

/**
 * Load `id` as stored (through its fork chain), with the codec. `end` bounds its own events (the
 * stored end when absent, read first so a concurrent writer cannot make the read inconsistent).
 */
export async function loadStored(q: Queryable, n: Names, id: string, label: string, opts: LoadOptions): Promise<StoredLoad> {
  let row: SessionRow | undefined;
  let pages: { text: string; lo: number; hi: number; rows: number }[];
  try {
    row = await sessionRow(q, n, id);
    if (!row)
      throw new StoreError('SESSION_NOT_FOUND', `no session ${JSON.stringify(id)} in ${label.replace(/\/[^/]*$/, '')}`, { sessionId: id });
    const segments = await segmentsOf(q, n, id);
    const end = await storedEnd(q, n, id, row.base_seq);
    pages = await fetchPages(q, n, segments, 0, end);
  } catch (e) {
    throw pgError(e, `cannot read session ${id}`, { sessionId: id });
  }
  const load = loadJsonlLines(
    new PageLines(
      row.header,
      pages.map((p) => p.text),
    ),
    { ...opts, file: label },
  );
  if (load.tornTail) {
    // Rows cannot be torn: a defect here is damage to the stored data, never a crash's tail.
    throw new SessionError(
      'CORRUPT_LOG',
      `${label}: corrupt stored session: reading stopped at seq ${load.eventCount} (${load.tornTail.reason})`,
      { seq: load.eventCount, rule: 'storage', file: label },
    );
  }
  return { row, load };
}

/**
 * Up to `limit` stored rows of a session from seq `from` on, in seq order, through its fork
 * chain: what an API client reads by seq. Stops at a hole rather than skip it (the append
 * trigger forbids holes; a reader is sure anyway).
 */
export async function readRows(
  q: Queryable,
  n: Names,
  segments: readonly Segment[],
  from: number,
  limit: number,
): Promise<{ seq: number; body: string }[]> {
  const out: { seq: number; body: string }[] = [];
  let next = from;
  for (const seg of segments) {
    if (out.length >= limit) break;
    if (next > seg.to) continue;
    if (next < seg.from) break;
    const r = await q.query<{ seq: number; body: string }>(
      `SELECT seq, body FROM ${n.events} WHERE session_id = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq LIMIT $4`,
      [seg.id, next, seg.to, limit - out.length],
    );
    for (const row of r.rows) {
      if (row.seq !== next) return out;
      out.push(row);
      next++;
    }
    if (next <= seg.to) break; // the segment has no more rows yet
  }
  return out;
}
