/**
 * `PgStore`: sessions in PostgreSQL, behind the same `Store` interface as the JSONL store (the
 * conformance suite runs against both). What differs is what a database gives:
 *
 * - the single-writer lock is a lease with an epoch (lease.ts), so a writer on another host can
 *   hold a session, and a dead holder's session is taken over once its lease expires;
 * - a fork is a pointer to its parent and the fork seq, not a copy;
 * - a session written on one host can be followed from any other (follow.ts).
 *
 * Everything else is the JSONL store's rules: `create` publishes the header (and a fork's seed
 * marker) in one transaction and never over an existing id; `open` takes the lease, loads with
 * the codec, and makes the crash-repair closers and the seed marker durable before returning;
 * `inspect` takes nothing and writes nothing; `list` reads rows, never event bodies.
 */
import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import {
  encodeHeaderLine,
  Session,
  stringifyJson,
  type LoadOptions,
  type LogWarning,
  type SessionEvent,
  type SessionOptions,
} from '../session/index.js';
import { StoreError, type LockHolder } from '../store/errors.js';
import type {
  CreateOptions,
  ForkOptions,
  ImportedLog,
  InspectOptions,
  OpenOptions,
  Store,
  StoreInspection,
  StoreListing,
  StoreListProblem,
  StoreSessionInfo,
} from '../store/interface.js';
import type { FlushResult } from '../store/writer.js';
import { parseHeaderLine } from '../store/discover.js';
import { forkChild, validateImport } from '../store/shared.js';
import { createPool, databaseOf, inTransaction, pgError, redactUrl } from './connect.js';
import { acquireLease, holderRecord, lockedError, newToken, releaseLease, type Lease } from './lease.js';
import { ANY, NotifyHub, rowEvent, Tail, type StoredRow, type TailOptions } from './follow.js';
import { claimSession, enqueueInput, listInputs, markApplied, type Claimed, type InputKind, type QueuedInput } from './queue.js';
import type { ContentBlock } from '../model/message.js';
import { PgOpenSession } from './open-session.js';
import { recallAnswer, recordAnswer, type StoredAnswer } from './requests.js';
import { insertEvents } from './append.js';
import { fetchPages, holderOf, loadStored, readRows, segmentsOf, SESSION_COLUMNS, sessionRow, storedEnd, type SessionRow } from './read.js';
import { ensureSchema, namesFor, type Names } from './schema.js';

export interface PgStoreOptions {
  /** `postgres://user:password@host:port/database`. */
  url: string;
  /** The PostgreSQL schema holding dsh's tables (default `dsh`); one database can hold several. */
  schema?: string;
  /** Event clock for sessions this store creates or opens (default `Date.now`). */
  clock?: () => number;
  /** Plugin event types this reader owns, besides the built-in vocabulary. */
  knownTypes?: ReadonlySet<string>;
  /** How long a lease lasts without renewal (default 30 s); renewed every third of it. */
  leaseMs?: number;
  /** `worker` for `dsh worker` (other workers take over its sessions when it dies), else `client`. */
  role?: 'worker' | 'client';
  /** Connections in this store's pool (default 10). */
  poolSize?: number;
  connectTimeoutMs?: number;
  /** `application_name` of this store's connections (default `dsh`; its LISTEN connection adds ` follow`). */
  applicationName?: string;
}

/** How long `follow` keeps trying to reach the database before it gives up (FOLLOW_FAILED). */
export const DEFAULT_FOLLOW_OUTAGE_MS = 60_000;

export const DEFAULT_LEASE_MS = 30_000;

/** Events per INSERT statement when a whole session is imported. */
const IMPORT_BATCH = 10_000;

/** One new session's row plus its first own events, published in one transaction. */
interface Publish {
  session: Session;
  parent?: { id: string; forkSeq: number };
  /** The first seq stored in this session's own rows. */
  base: number;
  lease: Lease;
}

export class PgStore implements Store {
  readonly kind = 'postgres';
  readonly location: string;
  readonly names: Names;
  /** This store instance (process) as a lease holder. */
  readonly owner = randomUUID();
  private readonly opts: PgStoreOptions;
  private poolP: Promise<Pool> | undefined;
  private readonly handles = new Map<string, PgOpenSession>();
  private closedStore = false;
  private readonly db: string;
  private hub: NotifyHub | undefined;
  private inputHub: NotifyHub | undefined;
  private readonly tails = new Set<Tail>();

  constructor(opts: PgStoreOptions) {
    this.opts = opts;
    this.names = namesFor(opts.schema ?? 'dsh');
    this.db = databaseOf(opts.url);
    this.location = `${redactUrl(opts.url)} (schema ${opts.schema ?? 'dsh'})`;
  }

  get leaseMs(): number {
    return this.opts.leaseMs ?? DEFAULT_LEASE_MS;
  }

  /** `postgres:<host:port>/<database>/<schema>/<id>`: where a session is, for messages. */
  labelOf(id: string): string {
    return `postgres:${this.db}/${this.names.schema.slice(1, -1)}/${id}`;
  }

  /** The pool, created (and the schema prepared) on first use. */
  pool(): Promise<Pool> {
    this.poolP ??= (async () => {
      const pool = await createPool({
        url: this.opts.url,
        max: this.opts.poolSize ?? 10,
        ...(this.opts.applicationName !== undefined ? { applicationName: this.opts.applicationName } : {}),
        ...(this.opts.connectTimeoutMs !== undefined ? { connectTimeoutMs: this.opts.connectTimeoutMs } : {}),
      });
      try {
        await ensureSchema(pool, this.names);
      } catch (e) {
        await pool.end().catch(() => undefined);
        throw e;
      }
      return pool;
    })().catch((e: unknown) => {
      this.poolP = undefined;
      throw pgError(e, `cannot use the PostgreSQL store at ${this.location}`);
    });
    return this.poolP;
  }

  private assertOpen(): void {
    if (this.closedStore) throw new StoreError('CLOSED', `the store at ${this.location} is closed`, {});
  }

  private sessionOptions(): Pick<SessionOptions, 'clock'> {
    return this.opts.clock ? { clock: this.opts.clock } : {};
  }

  private loadOptions(repair: boolean): LoadOptions {
    const o: LoadOptions = { repair };
    if (this.opts.clock) o.clock = this.opts.clock;
    if (this.opts.knownTypes) o.knownTypes = this.opts.knownTypes;
    return o;
  }

  private newLease(id: string): Lease {
    return {
      sessionId: id,
      epoch: 1,
      token: newToken(),
      holder: holderRecord(this.owner, this.opts.role ?? 'client'),
      ttlMs: this.leaseMs,
      expiresAt: 0,
    };
  }

  handle(idOrSession: string | Session): PgOpenSession | undefined {
    const id = typeof idOrSession === 'string' ? idOrSession : idOrSession.id;
    const h = this.handles.get(id);
    return h && (typeof idOrSession === 'string' || h.session === idOrSession) ? h : undefined;
  }

  async create(opts: CreateOptions): Promise<PgOpenSession> {
    this.assertOpen();
    if (typeof opts.cwd !== 'string' || opts.cwd === '') throw new StoreError('INVALID_ARGUMENT', 'create() needs the session cwd', {});
    const sopts: SessionOptions = { ...this.sessionOptions(), header: { ...opts.header, cwd: opts.cwd } };
    if (opts.id !== undefined) sopts.id = opts.id;
    const session = Session.create(sopts);
    return this.publish({ session, base: 0, lease: this.newLease(session.id) });
  }

  async fork(sourceId: string, boundary?: number, opts: ForkOptions = {}): Promise<PgOpenSession> {
    this.assertOpen();
    const fopts: SessionOptions = { ...this.sessionOptions() };
    if (opts.id !== undefined) fopts.id = opts.id;
    if (opts.header !== undefined) fopts.header = opts.header;
    const live = this.handles.get(sourceId);
    const child = await forkChild(sourceId, boundary, fopts, live?.session, (id, o) => this.inspect(id, o));
    if (live) {
      // The child points at the parent's rows: the prefix must be stored before it can be read.
      const r = await live.flush();
      if (!r.ok) throw r.error;
    }
    const seed = child.header.seedLength!;
    return this.publish({ session: child, parent: { id: sourceId, forkSeq: seed - 1 }, base: seed, lease: this.newLease(child.id) });
  }

  /** Insert the row and the events from `base` on, in one transaction; then hand out the writer. */
  private async publish(p: Publish): Promise<PgOpenSession> {
    const pool = await this.pool();
    const { session, lease } = p;
    const n = this.names;
    const own = [...session.since(p.base)];
    try {
      await inTransaction(pool, async (c) => {
        const r = await c.query<{ until_ms: number }>(
          `INSERT INTO ${n.sessions}
                  (id, header, cwd, created_at, parent_id, fork_seq, base_seq, lease_epoch, lease_token, lease_until, lease_holder)
           VALUES ($1, $2, $3, $4, $5, $6, $7, 1, sha256(convert_to($8, 'UTF8')),
                   now() + make_interval(secs => $9::float8 / 1000), $10::jsonb)
           ON CONFLICT (id) DO NOTHING
           RETURNING (extract(epoch from lease_until) * 1000)::bigint AS until_ms`,
          [
            session.id,
            encodeHeaderLine(session.header).slice(0, -1),
            session.header.cwd ?? null,
            session.header.createdAt,
            p.parent?.id ?? null,
            p.parent?.forkSeq ?? null,
            p.base,
            lease.token,
            lease.ttlMs,
            JSON.stringify(lease.holder),
          ],
        );
        if (r.rows.length === 0)
          throw new StoreError(
            'SESSION_EXISTS',
            `session ${JSON.stringify(session.id)} already exists in ${this.location}; nothing was overwritten`,
            { sessionId: session.id },
          );
        lease.expiresAt = r.rows[0]!.until_ms;
        if (own.length > 0) await insertEvents(c, n, session.id, lease, own);
      });
    } catch (e) {
      throw pgError(e, `cannot create session ${session.id} in ${this.location}`, { sessionId: session.id });
    }
    return this.attach(session, pool, lease, session.length, [], { repaired: [] });
  }

  private attach(
    session: Session,
    pool: Pool,
    lease: Lease,
    nextSeq: number,
    warnings: LogWarning[],
    recovery: PgOpenSession['recovery'],
    tookOver?: LockHolder & { epoch: number },
  ): PgOpenSession {
    const h = new PgOpenSession({
      ...(tookOver ? { tookOver } : {}),
      session,
      location: this.labelOf(session.id),
      pool,
      names: this.names,
      lease,
      nextSeq,
      warnings,
      recovery,
      onClosed: (x) => {
        if (this.handles.get(x.id) === x) this.handles.delete(x.id);
      },
    });
    this.handles.set(session.id, h);
    return h;
  }

  /**
   * Resume a session for writing: take its lease (SESSION_LOCKED names a live holder; an expired
   * one is taken over, bumping the epoch), load and validate it, and make the crash-repair closers
   * and the seed marker durable before returning.
   */
  async open(id: string, opts: OpenOptions & { lease?: Lease; tookOver?: LockHolder & { epoch: number } } = {}): Promise<PgOpenSession> {
    this.assertOpen();
    if (this.handles.has(id)) {
      const h = this.handles.get(id)!;
      throw lockedError(id, { pid: h.lease.holder.pid, host: h.lease.holder.host, since: h.lease.holder.since, role: h.lease.holder.role });
    }
    const pool = await this.pool();
    let lease = opts.lease;
    let tookOver = opts.tookOver;
    if (!lease) {
      let row: SessionRow | undefined;
      try {
        row = await sessionRow(pool, this.names, id);
      } catch (e) {
        throw pgError(e, `cannot read session ${id}`, { sessionId: id });
      }
      if (!row || (opts.cwd !== undefined && row.cwd !== opts.cwd)) throw this.notFound(id);
      let got;
      try {
        got = await acquireLease(pool, this.names, id, holderRecord(this.owner, this.opts.role ?? 'client'), this.leaseMs);
      } catch (e) {
        throw pgError(e, `cannot take the lease of session ${id}`, { sessionId: id });
      }
      if (got.kind === 'missing') throw this.notFound(id);
      if (got.kind === 'held') throw lockedError(id, got.holder);
      lease = got.lease;
      tookOver = got.tookOver;
    }
    try {
      return await this.openLeased(pool, id, lease, tookOver);
    } catch (e) {
      await releaseLease(pool, this.names, lease).catch(() => undefined);
      throw e;
    }
  }

  private async openLeased(
    pool: Pool,
    id: string,
    lease: Lease,
    tookOver: (LockHolder & { epoch: number }) | undefined,
  ): Promise<PgOpenSession> {
    const { load } = await loadStored(pool, this.names, id, this.labelOf(id), this.loadOptions(true));
    checkSeed(load.header.seedLength, load.eventCount, this.labelOf(id), load.header.parentSession);
    const h = this.attach(
      load.session,
      pool,
      lease,
      load.eventCount,
      [...load.warnings],
      { repaired: load.repaired.map((d) => d.type) },
      tookOver,
    );
    // Closers and the seed marker are new events: durable before anyone builds on them.
    h.enqueueFrom(load.eventCount);
    const r = await h.flush();
    if (!r.ok) {
      h.abandon();
      throw r.error;
    }
    return h;
  }

  private notFound(id: string): StoreError {
    return new StoreError('SESSION_NOT_FOUND', `no session ${JSON.stringify(id)} in ${this.location}`, { sessionId: id });
  }

  async inspect(id: string, opts: InspectOptions = {}): Promise<StoreInspection> {
    const pool = await this.pool();
    const { row, load } = await loadStored(pool, this.names, id, this.labelOf(id), this.loadOptions(opts.repair !== false));
    if (opts.cwd !== undefined && row.cwd !== opts.cwd) throw this.notFound(id);
    checkSeed(load.header.seedLength, load.eventCount, this.labelOf(id), load.header.parentSession);
    return { ...load, location: this.labelOf(id) };
  }

  /**
   * Publish a whole session as given (`dsh sessions import`), in one transaction: its row and
   * every event's exact text. A fork whose parent is in this store with the same inherited events,
   * text for text, is stored as a pointer to it; otherwise its seed is stored with it.
   */
  async importLog(log: ImportedLog): Promise<StoreSessionInfo> {
    this.assertOpen();
    validateImport(log, this.opts.knownTypes);
    const pool = await this.pool();
    const { header, events } = log;
    const bodies = events.map((e) => stringifyJson(e));
    const seed = header.seedLength;
    let parent: { id: string; forkSeq: number } | undefined;
    if (
      header.parentSession !== undefined &&
      seed !== undefined &&
      seed > 0 &&
      seed <= events.length &&
      (await this.holdsPrefix(pool, header.parentSession, bodies.slice(0, seed)))
    ) {
      parent = { id: header.parentSession, forkSeq: seed - 1 };
    }
    const base = parent ? seed! : 0;
    const lease = this.newLease(header.id);
    const n = this.names;
    try {
      await inTransaction(pool, async (c) => {
        const r = await c.query(
          `INSERT INTO ${n.sessions}
                  (id, header, cwd, created_at, parent_id, fork_seq, base_seq, lease_epoch, lease_token, lease_until, lease_holder)
           VALUES ($1, $2, $3, $4, $5, $6, $7, 1, sha256(convert_to($8, 'UTF8')), now(), $9::jsonb)
           ON CONFLICT (id) DO NOTHING`,
          [
            header.id,
            encodeHeaderLine(header).slice(0, -1),
            header.cwd ?? null,
            header.createdAt,
            parent?.id ?? null,
            parent?.forkSeq ?? null,
            base,
            lease.token,
            JSON.stringify(lease.holder),
          ],
        );
        if (r.rowCount !== 1)
          throw new StoreError(
            'SESSION_EXISTS',
            `session ${JSON.stringify(header.id)} already exists in ${this.location}; nothing was overwritten`,
            { sessionId: header.id },
          );
        for (let i = base; i < events.length; i += IMPORT_BATCH) {
          const end = Math.min(events.length, i + IMPORT_BATCH);
          await insertEvents(c, n, header.id, lease, events.slice(i, end), bodies.slice(i, end));
        }
        // Nobody holds an imported session: the lease taken to write it ends with the transaction.
        await c.query(`UPDATE ${n.sessions} SET lease_token = NULL, lease_until = NULL, lease_holder = NULL WHERE id = $1`, [header.id]);
      });
    } catch (e) {
      throw pgError(e, `cannot import session ${header.id} into ${this.location}`, { sessionId: header.id });
    }
    return {
      id: header.id,
      header,
      location: this.labelOf(header.id),
      modifiedMs: events.length > 0 ? events[events.length - 1]!.time : header.createdAt,
    };
  }

  /** Does `id` hold exactly `bodies` as its first events? */
  private async holdsPrefix(pool: Pool, id: string, bodies: readonly string[]): Promise<boolean> {
    try {
      const row = await sessionRow(pool, this.names, id);
      if (!row) return false;
      const pages = await fetchPages(pool, this.names, await segmentsOf(pool, this.names, id), 0, bodies.length);
      const stored = pages.flatMap((p) => p.text.split('\n'));
      return stored.length === bodies.length && stored.every((b, i) => b === bodies[i]);
    } catch (e) {
      throw pgError(e, `cannot read session ${id}`, { sessionId: id });
    }
  }

  /** Every session: rows only (the header, the lease, the time of the last event), newest first. */
  async list(): Promise<StoreListing> {
    const pool = await this.pool();
    let rows: (SessionRow & { modified: number })[];
    try {
      const n = this.names;
      const r = await pool.query<SessionRow & { modified: number }>(
        `SELECT ${SESSION_COLUMNS},
                coalesce((SELECT e.time FROM ${n.events} e WHERE e.session_id = s.id ORDER BY e.seq DESC LIMIT 1), s.created_at) AS modified
           FROM ${n.sessions} s`,
      );
      rows = r.rows;
    } catch (e) {
      throw pgError(e, `cannot list the sessions in ${this.location}`);
    }
    const sessions: StoreSessionInfo[] = [];
    const problems: StoreListProblem[] = [];
    for (const row of rows) {
      const location = this.labelOf(row.id);
      try {
        const header = parseHeaderLine(row.header, location);
        if (header.id !== row.id)
          throw new StoreError('IDENTITY_MISMATCH', `${location}: its header names session ${JSON.stringify(header.id)}`, {
            sessionId: row.id,
          });
        const info: StoreSessionInfo = { id: row.id, header, location, modifiedMs: row.modified };
        const holder = holderOf(row);
        if (holder) info.lockedBy = holder;
        sessions.push(info);
      } catch (e) {
        if (!(e instanceof StoreError)) throw e;
        problems.push({ path: location, error: e });
      }
    }
    sessions.sort((a, b) => b.header.createdAt - a.header.createdAt || (a.id < b.id ? -1 : 1));
    return { sessions, problems };
  }

  /**
   * The stored texts at each end of a session, for a listing's title and turn count without
   * reading its body: the first `head` events (through its fork chain) and the last `tail` of its
   * own. `whole`: the two cover every event.
   */
  async ends(id: string, head: number, tail: number): Promise<{ head: string[]; tail: string[]; whole: boolean }> {
    const pool = await this.pool();
    try {
      const row = await sessionRow(pool, this.names, id);
      if (!row) throw this.notFound(id);
      const end = await storedEnd(pool, this.names, id, row.base_seq);
      const first = await fetchPages(pool, this.names, await segmentsOf(pool, this.names, id), 0, Math.min(end, head), head);
      const headLines = first.flatMap((p) => p.text.split('\n'));
      const r = await pool.query<{ body: string }>(
        `SELECT body FROM ${this.names.events} WHERE session_id = $1 ORDER BY seq DESC LIMIT $2`,
        [id, tail],
      );
      const tailLines = r.rows.map((x) => x.body).reverse();
      return { head: headLines, tail: tailLines.length > 0 ? tailLines : headLines, whole: end <= head };
    } catch (e) {
      throw pgError(e, `cannot read session ${id}`, { sessionId: id });
    }
  }

  private notifyHub(): NotifyHub {
    this.hub ??= new NotifyHub(
      this.opts.url,
      this.names.eventsChannel,
      (e) => process.stderr.write(`[dsh] ${e.message}\n`),
      this.opts.applicationName,
    );
    return this.hub;
  }

  /**
   * Follow `id` from seq `opts.from` (default 0): `onRows` gets every stored row, in seq order,
   * each exactly once, as it is stored, from this or any other host. Resolves once following.
   */
  async tail(
    id: string,
    onRows: (rows: StoredRow[]) => void,
    opts: TailOptions & { onError?: (e: StoreError) => void } = {},
  ): Promise<Tail> {
    this.assertOpen();
    const pool = await this.pool();
    const t = new Tail(
      pool,
      this.names,
      this.notifyHub(),
      id,
      onRows,
      opts.onError ?? ((e) => process.stderr.write(`[dsh] ${e.message}\n`)),
      opts,
    );
    this.tails.add(t);
    try {
      await t.start();
    } catch (e) {
      t.stop();
      this.tails.delete(t);
      throw e;
    }
    return t;
  }

  /**
   * The session's events from seq `opts.from` on, as they are stored, forever (until `signal` aborts
   * or the store closes): the library's live event stream. Events are the stored texts parsed.
   *
   * A lost connection does not end it: the follow starts again from the seq after the last event
   * it delivered (so nothing is skipped or repeated), retrying with a backoff of up to 2 s, and
   * gives up with FOLLOW_FAILED (naming the session and that seq) only when the database stays
   * out of reach for `outageMs` (default 60 s). Any other failure (an unknown session, a stored
   * event that is not what it should be) ends the stream with its typed error.
   */
  async *follow(
    id: string,
    opts: TailOptions & { signal?: AbortSignal; outageMs?: number } = {},
  ): AsyncGenerator<SessionEvent, void, undefined> {
    const label = this.labelOf(id);
    const outageMs = opts.outageMs ?? DEFAULT_FOLLOW_OUTAGE_MS;
    const queue: SessionEvent[] = [];
    /** The seq wanted next: every event below it is queued or delivered. */
    let next = opts.from ?? 0;
    let failure: StoreError | undefined;
    let broken: StoreError | undefined;
    let wake: (() => void) | undefined;
    const poke = (): void => {
      const w = wake;
      wake = undefined;
      w?.();
    };
    let t: Tail | undefined;
    const onRows = (rows: StoredRow[]): void => {
      try {
        for (const r of rows) {
          if (r.seq < next) continue; // a restarted tail never reads below `next`; be sure anyway
          if (r.seq > next) throw new StoreError('DATABASE_ERROR', `${label}: seq ${r.seq} read where ${next} was due`, { sessionId: id });
          queue.push(rowEvent(r, label));
          next++;
        }
      } catch (e) {
        failure ??= pgError(e, `cannot read session ${id}`, { sessionId: id });
      }
      poke();
    };
    const onError = (e: StoreError): void => {
      if (e.code === 'CONNECT_FAILED') broken ??= e;
      else failure ??= e;
      poke();
    };
    const stopTail = (): void => {
      if (!t) return;
      t.stop();
      this.tails.delete(t);
      t = undefined;
    };
    let outageSince: number | undefined;
    let attempt = 0;
    const onAbort = (): void => poke();
    opts.signal?.addEventListener('abort', onAbort);
    try {
      for (;;) {
        if (!t && failure === undefined && !opts.signal?.aborted && !this.closedStore) {
          broken = undefined;
          try {
            t = await this.tail(id, onRows, { ...opts, from: next, onError });
          } catch (e) {
            const err = pgError(e, `cannot follow session ${id}`, { sessionId: id });
            if (err.code === 'CONNECT_FAILED') broken ??= err;
            else failure ??= err;
          }
          // The tail started and its first read went through: whatever outage there was is over.
          if (broken === undefined && failure === undefined) {
            outageSince = undefined;
            attempt = 0;
          }
        }
        while (queue.length > 0) yield queue.shift()!;
        if (failure !== undefined) throw failure;
        if (opts.signal?.aborted || this.closedStore) return;
        if (broken !== undefined) {
          stopTail();
          const cause = broken;
          broken = undefined;
          outageSince ??= Date.now();
          const outFor = Date.now() - outageSince;
          if (outFor >= outageMs)
            throw new StoreError(
              'FOLLOW_FAILED',
              `cannot follow session ${JSON.stringify(id)}: the database was out of reach for ${(outFor / 1000).toFixed(1)}` +
                ` s (${cause.message}); the last event delivered was seq ${next - 1}: follow again from ${next}`,
              { sessionId: id, seq: next - 1 },
              { cause },
            );
          const delay = Math.min(2000, 50 * 2 ** Math.min(attempt++, 6));
          await new Promise<void>((r) => {
            const timer = setTimeout(r, delay);
            wake = () => {
              clearTimeout(timer);
              r();
            };
          });
          wake = undefined;
          continue;
        }
        await new Promise<void>((r) => (wake = r));
      }
    } finally {
      opts.signal?.removeEventListener('abort', onAbort);
      stopTail();
    }
  }

  /**
   * Up to `limit` (default 1000) of a session's stored events from seq `from` on, as their exact
   * stored texts (each checked to be JSON carrying its seq), with the header's text:
   * what `dsh serve` returns. SESSION_NOT_FOUND for an unknown id.
   */
  async rows(id: string, from = 0, limit = 1000): Promise<{ header: string; rows: StoredRow[] }> {
    this.assertOpen();
    const pool = await this.pool();
    try {
      const row = await sessionRow(pool, this.names, id);
      if (!row) throw this.notFound(id);
      const rows = await readRows(pool, this.names, await segmentsOf(pool, this.names, id), from, limit);
      const label = this.labelOf(id);
      for (const r of rows) rowEvent(r, label);
      return { header: row.header, rows };
    } catch (e) {
      if (e instanceof StoreError) throw e;
      throw pgError(e, `cannot read session ${id}`, { sessionId: id });
    }
  }

  /** One session's header text and who holds it (a row, no events): what `dsh serve` answers. SESSION_NOT_FOUND if none. */
  async sessionInfo(id: string): Promise<{ header: string; lockedBy?: LockHolder }> {
    this.assertOpen();
    const pool = await this.pool();
    let row: SessionRow | undefined;
    try {
      row = await sessionRow(pool, this.names, id);
    } catch (e) {
      throw pgError(e, `cannot read session ${id}`, { sessionId: id });
    }
    if (!row) throw this.notFound(id);
    const holder = holderOf(row);
    return holder ? { header: row.header, lockedBy: holder } : { header: row.header };
  }

  /**
   * A new session nobody holds, for the workers (`dsh serve`): its row (the header; no events),
   * and its first prompt queued, in one transaction, so it never exists without the prompt it
   * was created with. SESSION_EXISTS if the id is taken.
   */
  async createQueued(
    opts: { cwd: string; id?: string },
    prompt?: ContentBlock[],
    tx?: PoolClient,
  ): Promise<{ id: string; input?: QueuedInput }> {
    this.assertOpen();
    const session = Session.create({
      ...this.sessionOptions(),
      header: { cwd: opts.cwd },
      ...(opts.id !== undefined ? { id: opts.id } : {}),
    });
    const pool = await this.pool();
    const n = this.names;
    const h = session.header;
    try {
      const within = (c: PoolClient) => async () => {
        const r = await c.query(
          `INSERT INTO ${n.sessions} (id, header, cwd, created_at, base_seq) VALUES ($1, $2, $3, $4, 0) ON CONFLICT (id) DO NOTHING`,
          [session.id, encodeHeaderLine(h).slice(0, -1), h.cwd ?? null, h.createdAt],
        );
        if (r.rowCount !== 1)
          throw new StoreError(
            'SESSION_EXISTS',
            `session ${JSON.stringify(session.id)} already exists in ${this.location}; nothing was overwritten`,
            {
              sessionId: session.id,
            },
          );
        const input = prompt ? await enqueueInput(c, n, session.id, 'prompt', prompt) : undefined;
        return input ? { id: session.id, input } : { id: session.id };
      };
      return tx ? await within(tx)() : await inTransaction(pool, (c) => within(c)());
    } catch (e) {
      throw pgError(e, `cannot create session ${session.id} in ${this.location}`, { sessionId: session.id });
    }
  }

  // --- The input queue (dsh serve, dsh worker): queue.ts

  /** Queue a prompt, steering, context or a cancel for whoever holds (or next takes) the session. */
  async enqueue(sessionId: string, kind: InputKind, content?: ContentBlock[], tx?: PoolClient): Promise<QueuedInput> {
    this.assertOpen();
    return enqueueInput(tx ?? (await this.pool()), this.names, sessionId, kind, content);
  }

  /**
   * `dsh serve`'s idempotency keys (requests.ts): the answer stored under `key`, or else `run`'s,
   * computed in a transaction that also stores it (so what the request did and its answer commit
   * together). `replayed`: an earlier request's answer; compare its fingerprint with the request's.
   */
  async answerOnce(
    key: string,
    fingerprint: string,
    run: (tx: PoolClient) => Promise<{ status: number; body: string }>,
  ): Promise<StoredAnswer & { replayed: boolean }> {
    this.assertOpen();
    const pool = await this.pool();
    const n = this.names;
    const recall = async (): Promise<StoredAnswer | undefined> => {
      try {
        return await recallAnswer(pool, n, key);
      } catch (e) {
        throw pgError(e, `cannot read the answer to request ${JSON.stringify(key)}`);
      }
    };
    const prior = await recall();
    if (prior) return { ...prior, replayed: true };
    const lost = new Error('another request with this key committed first');
    try {
      return await inTransaction(pool, async (c) => {
        const a = { fingerprint, ...(await run(c)) };
        if (!(await recordAnswer(c, n, key, a))) throw lost;
        return { ...a, replayed: false };
      });
    } catch (e) {
      if (e !== lost) throw pgError(e, `cannot carry out request ${JSON.stringify(key)}`);
      return { ...(await recall())!, replayed: true };
    }
  }

  /** A session's queued inputs (with `all`, applied ones too), oldest first. */
  async inputs(sessionId: string, opts: { all?: boolean; limit?: number } = {}): Promise<QueuedInput[]> {
    try {
      return await listInputs(await this.pool(), this.names, sessionId, opts);
    } catch (e) {
      throw pgError(e, `cannot read the inputs of session ${sessionId}`, { sessionId });
    }
  }

  /** Record inputs as applied, under the handle's lease (0 when the lease is gone). */
  async markApplied(h: PgOpenSession, ids: readonly number[]): Promise<number> {
    try {
      return await markApplied(await this.pool(), this.names, h.lease, ids);
    } catch (e) {
      throw pgError(e, `cannot mark inputs of session ${h.id} applied`, { sessionId: h.id });
    }
  }

  /** Take a session with work for a worker (queued input, or a dead worker's lease), or undefined. */
  async claim(): Promise<Claimed | undefined> {
    this.assertOpen();
    try {
      return await claimSession(await this.pool(), this.names, holderRecord(this.owner, this.opts.role ?? 'worker'), this.leaseMs);
    } catch (e) {
      throw pgError(e, `cannot claim a session in ${this.location}`);
    }
  }

  /** Hear of every queued input (any session); resolves once listening. */
  async onInput(wake: () => void): Promise<() => void> {
    this.assertOpen();
    await this.pool();
    this.inputHub ??= new NotifyHub(
      this.opts.url,
      this.names.inputsChannel,
      (e) => process.stderr.write(`[dsh] ${e.message}\n`),
      this.opts.applicationName,
    );
    return this.inputHub.watch(ANY, wake);
  }

  /** Close every session this store opened, then its connections. */
  async close(): Promise<FlushResult[]> {
    const results: FlushResult[] = [];
    for (const h of [...this.handles.values()]) results.push(await h.close());
    if (this.handles.size === 0) {
      this.closedStore = true;
      for (const t of this.tails) t.stop();
      this.tails.clear();
      const hub = this.hub;
      this.hub = undefined;
      if (hub) await hub.close();
      const inputs = this.inputHub;
      this.inputHub = undefined;
      if (inputs) await inputs.close();
      const p = this.poolP;
      this.poolP = undefined;
      if (p) await p.then((pool) => pool.end()).catch(() => undefined);
    }
    return results;
  }
}

function checkSeed(seed: number | undefined, count: number, label: string, parent: string | undefined): void {
  if (seed !== undefined && count < seed) {
    throw new StoreError(
      'SEED_TRUNCATED',
      `${label}: the header says ${seed} event(s) were inherited from ${parent ?? 'a parent session'}, but the log holds only ` +
        `${count}; refusing to resume a damaged seed`,
      {},
    );
  }
}
