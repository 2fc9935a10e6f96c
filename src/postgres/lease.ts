/**
 * The single-writer lease of a session (the PostgreSQL store's lock).
 *
 * A writer holds a session through its row: an epoch (bumped by every acquisition), an expiry on
 * the database clock, a holder record (pid, host, role), and the SHA-256 of a random token only
 * the holder knows. The holder renews the expiry on a heartbeat. A holder that dies stops
 * renewing; once the expiry passes, the next writer acquires the session, which bumps the epoch.
 * From then on the database refuses the old holder's appends (the events trigger compares epoch
 * and token), so a writer that was only slow, or cut off from the database, cannot write after
 * a takeover, whatever its own clock or state says. Times are the database's (`now()`): hosts'
 * clocks never decide who holds a session.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { LockHolder } from '../store/errors.js';
import { StoreError } from '../store/errors.js';
import type { Names } from './schema.js';
import { holderOf, sessionRow, type LeaseHolderRecord, type Queryable } from './read.js';

export interface Lease {
  sessionId: string;
  epoch: number;
  /** The secret the appends present; the database keeps only its hash. */
  token: string;
  holder: LeaseHolderRecord;
  ttlMs: number;
  /** Expiry on the database clock (epoch ms) as of the last acquisition or renewal. */
  expiresAt: number;
}

export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

export function holderRecord(owner: string, role: 'worker' | 'client'): LeaseHolderRecord {
  return { pid: process.pid, host: hostname(), since: Date.now(), role, owner };
}

export function lockedError(id: string, holder: LockHolder | undefined): StoreError {
  const who = holder ? `pid ${holder.pid} on ${holder.host}, since ${new Date(holder.since).toISOString()}` : 'another writer';
  const until =
    holder?.expiresAt !== undefined
      ? `; its lease runs until ${new Date(holder.expiresAt).toISOString()} unless renewed (a holder that died loses it then)`
      : '';
  const details: { sessionId: string; holder?: LockHolder } = { sessionId: id };
  if (holder) details.holder = holder;
  return new StoreError('SESSION_LOCKED', `session ${id} is locked by ${who}${until}`, details);
}

export type AcquireResult =
  | { kind: 'acquired'; lease: Lease /** The holder whose expired lease this took over. */; tookOver?: LockHolder & { epoch: number } }
  | { kind: 'held'; holder: LockHolder | undefined }
  | { kind: 'missing' };

const INTERVAL = `make_interval(secs => $3::float8 / 1000)`;

/** Take `id`'s lease if it is free or expired. */
export async function acquireLease(q: Queryable, n: Names, id: string, holder: LeaseHolderRecord, ttlMs: number): Promise<AcquireResult> {
  const token = newToken();
  const r = await q.query<{
    lease_epoch: number;
    until_ms: number;
    prev_holder: LeaseHolderRecord | null;
    prev_live: boolean;
    prev_until_ms: number | null;
  }>(
    `WITH prev AS (SELECT id, lease_holder, lease_token, lease_until, lease_epoch FROM ${n.sessions} WHERE id = $1 FOR UPDATE)
     UPDATE ${n.sessions} s SET lease_epoch = s.lease_epoch + 1, lease_token = sha256(convert_to($2, 'UTF8')),
                                lease_until = now() + ${INTERVAL}, lease_holder = $4::jsonb
       FROM prev
      WHERE s.id = prev.id AND (prev.lease_token IS NULL OR prev.lease_until <= now())
     RETURNING s.lease_epoch, (extract(epoch from s.lease_until) * 1000)::bigint AS until_ms,
               CASE WHEN prev.lease_token IS NULL THEN NULL ELSE prev.lease_holder END AS prev_holder,
               (extract(epoch from prev.lease_until) * 1000)::bigint AS prev_until_ms, false AS prev_live`,
    [id, token, ttlMs, JSON.stringify(holder)],
  );
  const row = r.rows[0];
  if (row) {
    const lease: Lease = { sessionId: id, epoch: row.lease_epoch, token, holder, ttlMs, expiresAt: row.until_ms };
    if (row.prev_holder) {
      const p = row.prev_holder;
      const tookOver: LockHolder & { epoch: number } = {
        pid: p.pid,
        host: p.host,
        since: p.since,
        role: p.role,
        epoch: row.lease_epoch - 1,
      };
      if (row.prev_until_ms !== null) tookOver.expiresAt = row.prev_until_ms;
      return { kind: 'acquired', lease, tookOver };
    }
    return { kind: 'acquired', lease };
  }
  const now = await sessionRow(q, n, id);
  if (!now) return { kind: 'missing' };
  return { kind: 'held', holder: holderOf(now) };
}

/** Extend the lease; false when it is no longer ours (the epoch moved or the token differs). */
export async function renewLease(q: Queryable, n: Names, lease: Lease): Promise<boolean> {
  const r = await q.query<{ until_ms: number }>(
    `UPDATE ${n.sessions} SET lease_until = now() + ${INTERVAL}
      WHERE id = $1 AND lease_epoch = $4 AND lease_token = sha256(convert_to($2, 'UTF8'))
     RETURNING (extract(epoch from lease_until) * 1000)::bigint AS until_ms`,
    [lease.sessionId, lease.token, lease.ttlMs, lease.epoch],
  );
  const row = r.rows[0];
  if (!row) return false;
  lease.expiresAt = row.until_ms;
  return true;
}

/** Give the lease up (the epoch stays: the next holder bumps it). */
export async function releaseLease(q: Queryable, n: Names, lease: Lease): Promise<boolean> {
  const r = await q.query(
    `UPDATE ${n.sessions} SET lease_token = NULL, lease_until = NULL, lease_holder = NULL
      WHERE id = $1 AND lease_epoch = $3 AND lease_token = sha256(convert_to($2, 'UTF8'))`,
    [lease.sessionId, lease.token, lease.epoch],
  );
  return r.rowCount === 1;
}

/** The column values a new session row starts with when its creator holds it. */
export function leaseColumns(lease: Lease): unknown[] {
  return [lease.token, lease.ttlMs, JSON.stringify(lease.holder)];
}
