/**
 * Appending a session's committed events to PostgreSQL, in commit order.
 *
 * - **Batching.** Events are queued as the session commits them and sent by a `setImmediate`
 *   batch (the JSONL writer's rhythm): one INSERT statement per batch, from arrays, which is one
 *   transaction and one round trip however many events it holds. While one batch is in flight
 *   the next gathers.
 * - **Durability.** A batch is durable when its statement returns (commit with
 *   `synchronous_commit = on`). `flush()` resolves once every event committed before the call is
 *   in, so the `persist` checkpoints (before each model call and each tool body) mean what they
 *   mean for files.
 * - **Fencing.** Each statement carries the lease epoch and presents the lease token; the
 *   database refuses it if the lease moved on (`LEASE_LOST`). That failure is final: the writer
 *   stops, and the handle refuses further appends.
 * - **Failures.** A lost connection keeps the batch queued and reports `CONNECT_FAILED` once;
 *   background writes pause until the next `flush()` retries. A commit whose outcome was unknown
 *   (the connection broke during it) is settled on the retry: rows already stored under our seqs
 *   are compared with ours, text for text; equal means the first attempt landed, different means
 *   another writer stored them (`SEQ_CONFLICT`, final).
 */
import type { Pool } from 'pg';
import { stringifyJson, type SessionEvent } from '../session/index.js';
import { StoreError } from '../store/errors.js';
import type { FlushResult } from '../store/writer.js';
import { isConnectionFailure, pgError, sqlState } from './connect.js';
import type { Lease } from './lease.js';
import { LEASE_LOST_STATE, SEQ_GAP_STATE, type Names } from './schema.js';
import { insertEvents } from './append.js';

/** Per statement at most this many events, or this many bytes of JSON. */
const BATCH_EVENTS = 10_000;
const BATCH_BYTES = 8 << 20;

export interface PgWriterOptions {
  pool: Pool;
  names: Names;
  sessionId: string;
  /** Seq of the first event not stored yet. */
  nextSeq: number;
  lease: Lease;
  label: string;
  onError: (error: StoreError) => void;
  /** Called once when the database refuses this writer (lease lost, or a seq another writer holds). */
  onFenced: (error: StoreError) => void;
}

export class PgWriter {
  private queue: SessionEvent[] = [];
  private storedSeq: number;
  private scheduled: NodeJS.Immediate | undefined;
  private running: Promise<void> | undefined;
  /** Set after a retryable failure: background writes wait for a flush. */
  private failure: StoreError | undefined;
  /** A final refusal: nothing more is written. */
  private fatal: StoreError | undefined;
  /** The last attempt broke during its commit: the rows may be stored. */
  private uncertain = false;
  private closed = false;

  constructor(private readonly opts: PgWriterOptions) {
    this.storedSeq = opts.nextSeq;
  }

  get durableSeq(): number {
    return this.storedSeq;
  }
  get lastError(): StoreError | undefined {
    return this.fatal ?? this.failure;
  }
  get fenced(): StoreError | undefined {
    return this.fatal;
  }
  get pending(): number {
    return this.queue.length;
  }

  enqueue(event: SessionEvent): void {
    if (this.closed) return;
    const expected = this.storedSeq + this.queue.length;
    if (event.seq !== expected) {
      this.report(
        new StoreError('WRITE_FAILED', `writer for ${this.opts.sessionId} got seq ${event.seq} where ${expected} belongs; not written`, {
          sessionId: this.opts.sessionId,
        }),
      );
      return;
    }
    this.queue.push(event);
    if (this.scheduled === undefined && this.failure === undefined && this.fatal === undefined) {
      this.scheduled = setImmediate(() => {
        this.scheduled = undefined;
        void this.pump();
      });
    }
  }

  /** Send everything queued, one batch at a time; a failure stops the pump. */
  private pump(): Promise<void> {
    if (this.running) return this.running;
    const run = (async () => {
      while (this.queue.length > 0 && this.fatal === undefined && !this.closed) {
        const ok = await this.sendBatch();
        if (!ok) return;
      }
    })().finally(() => {
      this.running = undefined;
    });
    this.running = run;
    return run;
  }

  private takeBatch(): { events: SessionEvent[]; bodies: string[] } {
    const events: SessionEvent[] = [];
    const bodies: string[] = [];
    let bytes = 0;
    for (const e of this.queue) {
      if (events.length >= BATCH_EVENTS || (events.length > 0 && bytes >= BATCH_BYTES)) break;
      const body = stringifyJson(e);
      events.push(e);
      bodies.push(body);
      bytes += body.length;
    }
    return { events, bodies };
  }

  private async sendBatch(): Promise<boolean> {
    const { events, bodies } = this.takeBatch();
    const { pool, names, lease } = this.opts;
    try {
      await insertEvents(pool, names, this.opts.sessionId, lease, events, bodies);
    } catch (e) {
      return this.failed(e, events, bodies);
    }
    this.stored(events.length);
    return true;
  }

  private stored(n: number): void {
    this.queue.splice(0, n);
    this.storedSeq += n;
    this.failure = undefined;
    this.uncertain = false;
  }

  private async failed(e: unknown, events: SessionEvent[], bodies: string[]): Promise<boolean> {
    const state = sqlState(e);
    const first = events[0]!.seq;
    const range = `seq ${first}…${events[events.length - 1]!.seq}`;
    if (this.uncertain && (state === '23505' || state === SEQ_GAP_STATE || state === LEASE_LOST_STATE)) {
      // The previous attempt may have committed: what is stored under our seqs decides.
      const landed = await this.alreadyStored(first, bodies).catch(() => -1);
      if (landed > 0) {
        this.stored(landed);
        return this.queue.length === 0 ? true : this.sendBatch();
      }
      if (landed < 0)
        return this.retryable(
          pgError(e, `cannot check whether ${range} of ${this.opts.label} was stored`, { sessionId: this.opts.sessionId }),
        );
    }
    const leaseLost = (errno: string) =>
      new StoreError(
        'LEASE_LOST',
        `${this.opts.label}: the database refused ${range}: this writer's lease (epoch ${this.opts.lease.epoch}) is gone, ` +
          'another writer holds the session now; nothing more is written from here',
        { sessionId: this.opts.sessionId, epoch: this.opts.lease.epoch, pending: this.queue.length, errno },
        { cause: e },
      );
    if (state === LEASE_LOST_STATE) return this.fence(leaseLost(state));
    if (state === '23505' || state === SEQ_GAP_STATE) {
      // The key refuses a fenced writer before the lease check runs: say which it was.
      if ((await this.epochNow().catch(() => undefined)) !== this.opts.lease.epoch) return this.fence(leaseLost(state));
      return this.fence(
        new StoreError(
          'SEQ_CONFLICT',
          `${this.opts.label}: ${range} cannot be stored: ${(e as Error).message}`,
          { sessionId: this.opts.sessionId, pending: this.queue.length, errno: state },
          { cause: e },
        ),
      );
    }
    if (isConnectionFailure(e)) this.uncertain = true;
    return this.retryable(
      pgError(
        e,
        `cannot store ${events.length} event(s) (${range}) of ${this.opts.label}; they are kept in memory and sent again on the next flush`,
        { sessionId: this.opts.sessionId, pending: this.queue.length },
      ),
    );
  }

  /** The session's lease epoch as the database has it now. */
  private async epochNow(): Promise<number | undefined> {
    const r = await this.opts.pool.query<{ lease_epoch: number }>(`SELECT lease_epoch FROM ${this.opts.names.sessions} WHERE id = $1`, [
      this.opts.sessionId,
    ]);
    return r.rows[0]?.lease_epoch;
  }

  /** How many of `bodies` (from seq `first`) are stored exactly as ours; throws SEQ_CONFLICT on a different row. */
  private async alreadyStored(first: number, bodies: string[]): Promise<number> {
    const r = await this.opts.pool.query<{ seq: number; body: string }>(
      `SELECT seq, body FROM ${this.opts.names.events} WHERE session_id = $1 AND seq >= $2 AND seq < $3 ORDER BY seq`,
      [this.opts.sessionId, first, first + bodies.length],
    );
    let n = 0;
    for (const row of r.rows) {
      if (row.seq !== first + n || row.body !== bodies[n]) {
        this.fence(
          new StoreError('SEQ_CONFLICT', `${this.opts.label}: seq ${row.seq} holds an event another writer stored`, {
            sessionId: this.opts.sessionId,
            pending: this.queue.length,
          }),
        );
        return 0;
      }
      n++;
    }
    return n;
  }

  private retryable(error: StoreError): false {
    const repeat = this.failure !== undefined && this.failure.code === error.code && this.failure.details.errno === error.details.errno;
    this.failure = error;
    if (!repeat) this.report(error);
    return false;
  }

  private fence(error: StoreError): false {
    if (this.fatal === undefined) {
      this.fatal = error;
      this.report(error);
      try {
        this.opts.onFenced(error);
      } catch {
        // the listener's failure must not hide the refusal
      }
    }
    return false;
  }

  private report(error: StoreError): void {
    try {
      this.opts.onError(error);
    } catch {
      // an error listener's own failure must not mask the write failure
    }
  }

  /** Resolves once every event committed before the call is stored, or says why not. Never rejects. */
  async flush(): Promise<FlushResult> {
    if (this.scheduled !== undefined) {
      clearImmediate(this.scheduled);
      this.scheduled = undefined;
    }
    const target = this.storedSeq + this.queue.length;
    if (this.running) await this.running;
    if (this.storedSeq < target && this.fatal === undefined) {
      this.failure = undefined; // a flush is the retry
      await this.pump();
    }
    if (this.storedSeq >= target) return { ok: true, durableSeq: this.storedSeq, bytes: 0 };
    const error =
      this.fatal ??
      this.failure ??
      new StoreError('WRITE_FAILED', `${this.opts.label}: events are still queued`, { sessionId: this.opts.sessionId });
    return { ok: false, error, pending: this.queue.length };
  }

  /** Stop writing (after the final flush, or when the handle is dropped). */
  close(): void {
    this.closed = true;
    if (this.scheduled !== undefined) clearImmediate(this.scheduled);
    this.scheduled = undefined;
  }
}
