/**
 * Following a session from any host: LISTEN/NOTIFY says "something was appended", reads by seq
 * say what. A follower keeps `next` (the seq it wants) and only ever reads `seq >= next` in
 * order, taking a run only while it continues without a hole, so it never skips and never
 * repeats an event, whatever it is told or misses:
 *
 * 1. LISTEN first, then read everything from `next` (an append committed before the LISTEN is
 *    found by that read; one committed after it sends a notification);
 * 2. on every notification for the session, read again from `next`;
 * 3. when the listening connection breaks, reconnect, LISTEN again, and read from `next` (what
 *    was appended meanwhile is found by the read, not by the notifications it missed);
 * 4. and, as a safety net, read every `pollMs` anyway.
 *
 * A follower reads a fork through its ancestors (their events below the fork seq never change),
 * then the session's own rows. Events are yielded as stored: the exact texts, parsed, checked
 * only for their seq. The viewer and the CLI validate them as a load would (TailDecoder).
 */
import type { Client, Notification, Pool } from 'pg';
import { freezeJsonInPlace, type SessionEvent } from '../session/index.js';
import { StoreError } from '../store/errors.js';
import { clientConfig, loadDriver, pgError } from './connect.js';
import { segmentsOf, sessionRow, type Segment } from './read.js';
import type { Names } from './schema.js';

export interface StoredRow {
  seq: number;
  body: string;
}

export interface TailOptions {
  /** The first seq wanted (default 0). */
  from?: number;
  /** How often to read even without a notification (default 5 s). */
  pollMs?: number;
  /** Rows per read (default 2000). */
  pageRows?: number;
}

type Wake = () => void;

/** `NotifyHub.watch` key for every session's notifications. */
export const ANY = '*';

/** One LISTEN connection per store and schema, shared by every follower of that store. */
export class NotifyHub {
  private client: Client | undefined;
  private connecting: Promise<void> | undefined;
  private readonly waiters = new Map<string, Set<Wake>>();
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;

  constructor(
    private readonly url: string,
    private readonly channel: string,
    private readonly onError: (e: StoreError) => void,
    private readonly applicationName = 'dsh',
  ) {}

  /** Wake `wake` on every notification for `sessionId` (`ANY`: for any session) and after every reconnection. Resolves once listening. */
  async watch(sessionId: string, wake: Wake): Promise<() => void> {
    let set = this.waiters.get(sessionId);
    if (!set) this.waiters.set(sessionId, (set = new Set()));
    set.add(wake);
    await this.ensure();
    return () => {
      const s = this.waiters.get(sessionId);
      s?.delete(wake);
      if (s && s.size === 0) this.waiters.delete(sessionId);
      this.holdRetry();
    };
  }

  /**
   * A pending reconnection keeps the process alive while anyone waits on this hub: when the
   * LISTEN socket is gone, the retry timer may be all that is left of a CLI follower's event
   * loop (the pool lets idle connections go), and Node would exit mid-follow. With no waiter
   * it must not hold a finished command open.
   */
  private holdRetry(): void {
    if (!this.retryTimer) return;
    if (this.waiters.size > 0) this.retryTimer.ref();
    else this.retryTimer.unref();
  }

  private ensure(): Promise<void> {
    if (this.client) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async connect(): Promise<void> {
    const pg = await loadDriver();
    const client = new pg.Client(await clientConfig({ url: this.url, applicationName: `${this.applicationName} follow` }));
    const lost = (e?: unknown): void => {
      if (this.client !== client) return;
      this.client = undefined;
      client.removeAllListeners('notification');
      void client.end().catch(() => undefined);
      if (this.closed) return;
      if (e) this.onError(pgError(e, 'the follow connection was lost; reconnecting'));
      this.scheduleReconnect();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (n: Notification) => {
      if (n.channel !== this.channel || n.payload === undefined) return;
      for (const w of this.waiters.get(n.payload) ?? []) w();
      if (n.payload !== ANY) for (const w of this.waiters.get(ANY) ?? []) w();
    });
    try {
      await client.connect();
      await client.query(`LISTEN "${this.channel.replace(/"/g, '""')}"`);
    } catch (e) {
      client.removeAllListeners();
      client.on('error', () => undefined);
      await client.end().catch(() => undefined);
      throw pgError(e, 'cannot listen for appends');
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.failures = 0;
  }

  private scheduleReconnect(): void {
    if (this.retryTimer || this.closed) return;
    const delay = Math.min(5000, 100 * 2 ** Math.min(this.failures++, 6));
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.ensure().then(
        // Listening again: whatever was appended while deaf is found by a read from `next`.
        () => {
          for (const set of this.waiters.values()) for (const w of set) w();
        },
        (e: unknown) => {
          this.onError(e instanceof StoreError ? e : pgError(e, 'cannot listen for appends'));
          this.scheduleReconnect();
        },
      );
    }, delay);
    this.holdRetry();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const c = this.client;
    this.client = undefined;
    this.waiters.clear();
    if (c) await c.end().catch(() => undefined);
  }
}

/**
 * A follower of one session: `onRows` gets every stored row from `from` on, in seq order, each
 * exactly once, in batches as they are read (and one empty batch when it stops).
 */
export class Tail {
  private next: number;
  private segments: Segment[] | undefined;
  private reading: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private unwatch: (() => void) | undefined;
  private poll: NodeJS.Timeout | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly names: Names,
    private readonly hub: NotifyHub,
    private readonly sessionId: string,
    private readonly onRows: (rows: StoredRow[]) => void,
    private readonly onError: (e: StoreError) => void,
    private readonly opts: TailOptions = {},
  ) {
    this.next = opts.from ?? 0;
  }

  /** The seq the follower reads next (everything before it was delivered). */
  get position(): number {
    return this.next;
  }

  async start(): Promise<void> {
    const row = await sessionRow(this.pool, this.names, this.sessionId).catch((e: unknown) => {
      throw pgError(e, `cannot follow session ${this.sessionId}`, { sessionId: this.sessionId });
    });
    if (!row)
      throw new StoreError('SESSION_NOT_FOUND', `no session ${JSON.stringify(this.sessionId)} to follow`, { sessionId: this.sessionId });
    try {
      this.segments = await segmentsOf(this.pool, this.names, this.sessionId);
      // Listen before the first read: nothing committed after this point can go unannounced.
      this.unwatch = await this.hub.watch(this.sessionId, () => this.wake());
    } catch (e) {
      throw pgError(e, `cannot follow session ${this.sessionId}`, { sessionId: this.sessionId });
    }
    // Not unref'd: an active follower keeps its process alive (a CLI follower's LISTEN socket can
    // drop, and then this timer is what is left); stop() clears it.
    this.poll = setInterval(() => this.wake(), this.opts.pollMs ?? 5000);
    await this.wake();
  }

  /** Read from `next` now (or once more after the read in progress). */
  wake(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    this.reading = (async () => {
      do {
        this.again = false;
        try {
          await this.readAll();
        } catch (e) {
          this.onError(e instanceof StoreError ? e : pgError(e, `cannot read session ${this.sessionId}`, { sessionId: this.sessionId }));
        }
      } while (this.again && !this.stopped);
    })().finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }

  private async readAll(): Promise<void> {
    const limit = this.opts.pageRows ?? 2000;
    for (;;) {
      if (this.stopped) return;
      const seg = this.segments!.find((s) => this.next >= s.from && this.next <= s.to) ?? this.segments![this.segments!.length - 1]!;
      if (this.next < seg.from) return; // below the first stored seq of the chain: nothing there
      const r = await this.pool.query<StoredRow>(
        `SELECT seq, body FROM ${this.names.events} WHERE session_id = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq LIMIT $4`,
        [seg.id, this.next, seg.to, limit],
      );
      const rows: StoredRow[] = [];
      for (const row of r.rows) {
        if (row.seq !== this.next) break; // never past a hole (the trigger forbids them; be sure anyway)
        rows.push(row);
        this.next++;
      }
      if (rows.length > 0 && !this.stopped) this.onRows(rows);
      const segmentDone = this.next > seg.to;
      if (!segmentDone && rows.length < limit) return;
    }
  }

  /** Stop following; `onRows` gets one empty batch, so a consumer waiting for rows wakes up. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.unwatch?.();
    if (this.poll) clearInterval(this.poll);
    this.onRows([]);
  }
}

/** Parse a stored row into a frozen event, refusing one whose seq is not the row's. */
export function rowEvent(row: StoredRow, label: string): SessionEvent {
  let v: unknown;
  try {
    v = JSON.parse(row.body);
  } catch {
    throw new StoreError('DATABASE_ERROR', `${label}: the event stored at seq ${row.seq} is not JSON`, {});
  }
  if (typeof v !== 'object' || v === null || (v as { seq?: unknown }).seq !== row.seq)
    throw new StoreError('DATABASE_ERROR', `${label}: the event stored at seq ${row.seq} does not carry that seq`, {});
  return freezeJsonInPlace(v, { eventType: String((v as { type?: unknown }).type), path: '$' }) as SessionEvent;
}
