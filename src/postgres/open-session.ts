/**
 * A session open for writing in PostgreSQL: the live `Session`, its writer, its lease and the
 * lease's heartbeat. Every committed event is queued for the database in commit order (the
 * subscription exists before the handle is returned).
 *
 * When the lease is lost (the database refuses an append, a renewal finds the epoch moved, or no
 * renewal has succeeded for a whole lease period, so another writer may be taking over) the
 * handle is fenced: appends to the session are refused from then on (`LEASE_LOST`), and
 * `onLeaseLost` listeners hear it, so the owner can stop its agent before a tool acts twice.
 */
import type { Pool } from 'pg';
import type { LogWarning, Session, SessionEvent } from '../session/index.js';
import { StoreError, type LockHolder } from '../store/errors.js';
import type { ErrorListener, OpenSession, Recovery } from '../store/interface.js';
import { ErrorListeners, refuseAppends } from '../store/shared.js';
import type { FlushResult } from '../store/writer.js';
import { pgError } from './connect.js';
import { releaseLease, renewLease, type Lease } from './lease.js';
import type { Names } from './schema.js';
import { PgWriter } from './writer.js';

export type LeaseLostListener = (error: StoreError) => void;

export interface PgOpenSessionArgs {
  session: Session;
  location: string;
  pool: Pool;
  names: Names;
  lease: Lease;
  /** Seq of the first event not stored yet. */
  nextSeq: number;
  warnings: LogWarning[];
  recovery: Recovery;
  /** The holder whose expired lease this open took over, if any. */
  tookOver?: LockHolder & { epoch: number };
  onClosed: (h: PgOpenSession) => void;
}

export class PgOpenSession implements OpenSession {
  readonly session: Session;
  readonly location: string;
  readonly warnings: readonly LogWarning[];
  readonly recovery: Recovery;
  readonly lease: Lease;
  /** The holder whose expired lease this open took over (it died, or was cut off), if any. */
  readonly tookOver: (LockHolder & { epoch: number }) | undefined;
  private readonly writer: PgWriter;
  private readonly pool: Pool;
  private readonly names: Names;
  private readonly unsubscribe: () => void;
  private readonly errorListeners: ErrorListeners;
  private lostListeners: LeaseLostListener[] = [];
  private lost: StoreError | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private renewing = false;
  private lastRenewal = Date.now();
  private closing = false;
  private closedFlag = false;
  private readonly onClosed: (h: PgOpenSession) => void;

  constructor(args: PgOpenSessionArgs) {
    this.session = args.session;
    this.location = args.location;
    this.warnings = Object.freeze(args.warnings);
    this.recovery = args.recovery;
    this.lease = args.lease;
    this.tookOver = args.tookOver;
    this.pool = args.pool;
    this.names = args.names;
    this.onClosed = args.onClosed;
    this.errorListeners = new ErrorListeners(`session ${args.session.id}`);
    this.writer = new PgWriter({
      pool: args.pool,
      names: args.names,
      sessionId: args.session.id,
      nextSeq: args.nextSeq,
      lease: args.lease,
      label: args.location,
      onError: (e) => this.reportError(e),
      onFenced: (e) => this.fence(e),
    });
    this.unsubscribe = this.session.subscribe((e: SessionEvent) => {
      this.writer.enqueue(e);
      if (e.type === 'turn/end') void this.writer.flush();
    });
    const every = Math.max(50, Math.floor(args.lease.ttlMs / 3));
    this.heartbeat = setInterval(() => void this.renew(), every);
    this.heartbeat.unref();
  }

  /** Queue events the session holds past what is stored (crash-repair closers, the seed marker, a fork's seed end). */
  enqueueFrom(seq: number): void {
    for (const e of this.session.since(seq)) this.writer.enqueue(e);
  }

  get id(): string {
    return this.session.id;
  }
  get durableSeq(): number {
    return this.writer.durableSeq;
  }
  get lastError(): StoreError | undefined {
    return this.lost ?? this.writer.lastError;
  }
  get closed(): boolean {
    return this.closedFlag;
  }
  /** The lease epoch this handle writes under. */
  get epoch(): number {
    return this.lease.epoch;
  }
  /** Why this handle may no longer write, once it may not. */
  get fenced(): StoreError | undefined {
    return this.lost;
  }

  onError(listener: ErrorListener): () => void {
    return this.errorListeners.add(listener);
  }

  /** Hear once that this handle lost its lease (already lost: called at once). */
  onLeaseLost(listener: LeaseLostListener): () => void {
    if (this.lost) {
      listener(this.lost);
      return () => undefined;
    }
    this.lostListeners = [...this.lostListeners, listener];
    return () => {
      this.lostListeners = this.lostListeners.filter((l) => l !== listener);
    };
  }

  /** @internal */
  reportError(error: StoreError): void {
    this.errorListeners.report(error);
  }

  private fence(error: StoreError): void {
    if (this.lost) return;
    this.lost = error;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    refuseAppends(this.session, 'LEASE_LOST', error.message, { epoch: this.lease.epoch });
    for (const l of this.lostListeners.splice(0)) {
      try {
        l(error);
      } catch {
        // keep telling the others
      }
    }
  }

  private async renew(): Promise<void> {
    if (this.renewing || this.lost || this.closedFlag) return;
    this.renewing = true;
    try {
      const ok = await renewLease(this.pool, this.names, this.lease);
      if (ok) this.lastRenewal = Date.now();
      else {
        const e = new StoreError('LEASE_LOST', `${this.location}: the lease (epoch ${this.lease.epoch}) was taken over by another writer`, {
          sessionId: this.id,
          epoch: this.lease.epoch,
        });
        this.reportError(e);
        this.fence(e);
      }
    } catch (e) {
      // The database is unreachable. Past a whole lease period without a renewal another writer
      // may have taken over: stop acting on the session (the database would refuse the appends
      // anyway, but a tool could act before the next append is tried).
      if (Date.now() - this.lastRenewal > this.lease.ttlMs) {
        const err = new StoreError(
          'LEASE_LOST',
          `${this.location}: the lease (epoch ${this.lease.epoch}) could not be renewed for ${this.lease.ttlMs} ms (` +
            `${(e as Error).message}); another writer may hold the session now`,
          { sessionId: this.id, epoch: this.lease.epoch },
          { cause: e },
        );
        this.reportError(err);
        this.fence(err);
      }
    } finally {
      this.renewing = false;
    }
  }

  flush(): Promise<FlushResult> {
    return this.writer.flush();
  }

  /**
   * Refuse further appends, flush, release the lease. A failed final flush leaves the handle open
   * (its events queued) so close can be retried, unless the lease is lost: then nothing more can
   * be written, and the handle closes with the failure.
   */
  async close(): Promise<FlushResult> {
    if (this.closedFlag) return { ok: true, durableSeq: this.writer.durableSeq, bytes: 0 };
    if (!this.closing) {
      this.closing = true;
      refuseAppends(this.session, 'CLOSED', 'it is closed in the store', {});
    }
    const r = await this.writer.flush();
    if (!r.ok && !this.lost) return r;
    this.unsubscribe();
    this.writer.close();
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    if (!this.lost) {
      try {
        await releaseLease(this.pool, this.names, this.lease);
      } catch (e) {
        // The lease then simply expires; report it, the log itself is complete.
        this.reportError(pgError(e, `${this.location}: could not release the lease (it expires by itself)`, { sessionId: this.id }));
      }
    }
    this.closedFlag = true;
    this.onClosed(this);
    return r;
  }

  /** Drop the handle without writing or releasing anything (a process that is going away). */
  abandon(): void {
    this.unsubscribe();
    this.writer.close();
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    this.closedFlag = true;
    this.onClosed(this);
  }
}
