/**
 * The input queue of the PostgreSQL store: what `dsh serve` (or anyone with the database) asks
 * of a session (a prompt, steering, context, a cancel), waiting for the worker that holds it.
 *
 * - `enqueue` adds a row (`queued`); a trigger announces it on `<schema>.inputs`.
 * - `claimSession` is how a worker takes work: one statement that picks a session with queued
 *   input (oldest first), or one whose worker died (its lease expired and was never released),
 *   whose lease is free or expired, locking its row `FOR UPDATE SKIP LOCKED` so racing workers
 *   pick different sessions instead of queueing behind each other, and takes its lease (epoch + 1).
 * - `markApplied` records that an input reached the session's log. It is fenced like an append:
 *   only the current lease holder can mark. The log is the truth: an input whose message id
 *   (`input-<id>`) is in the log was applied, whatever its row says (a worker can die between
 *   the two), so a new holder reconciles before it applies anything.
 */
import type { Pool } from 'pg';
import type { ContentBlock } from '../model/message.js';
import type { LockHolder } from '../store/errors.js';
import { StoreError } from '../store/errors.js';
import { pgError, sqlState } from './connect.js';
import { newToken, type Lease } from './lease.js';
import type { LeaseHolderRecord, Queryable } from './read.js';
import type { Names } from './schema.js';

export type InputKind = 'prompt' | 'steer' | 'inject' | 'cancel';
export const INPUT_KINDS: readonly InputKind[] = ['prompt', 'steer', 'inject', 'cancel'];

export interface QueuedInput {
  id: number;
  sessionId: string;
  kind: InputKind;
  /** The message content (absent for a cancel). */
  content?: ContentBlock[];
  state: 'queued' | 'applied';
  /** Epoch ms (database clock). */
  createdAt: number;
}

/** The id the input's message carries in the log: how a worker knows it was applied. */
export function inputMessageId(id: number): string {
  return `input-${id}`;
}

export function inputIdOf(messageId: string): number | undefined {
  const m = /^input-(\d{1,15})$/.exec(messageId);
  return m ? Number(m[1]) : undefined;
}

export async function enqueueInput(
  q: Queryable,
  n: Names,
  sessionId: string,
  kind: InputKind,
  content?: ContentBlock[],
): Promise<QueuedInput> {
  try {
    const r = await q.query<{ id: number; created_ms: number }>(
      `INSERT INTO ${n.inputs} (session_id, kind, message) VALUES ($1, $2, $3) RETURNING id, (extract(epoch from created) * ` +
        '1000)::bigint AS created_ms',
      [sessionId, kind, kind === 'cancel' ? null : JSON.stringify(content ?? [])],
    );
    const row = r.rows[0]!;
    const out: QueuedInput = { id: row.id, sessionId, kind, state: 'queued', createdAt: row.created_ms };
    if (content) out.content = content;
    return out;
  } catch (e) {
    if (sqlState(e) === '23503')
      throw new StoreError('SESSION_NOT_FOUND', `no session ${JSON.stringify(sessionId)} to queue input for`, { sessionId });
    throw pgError(e, `cannot queue input for session ${sessionId}`, { sessionId });
  }
}

interface InputRow {
  id: number;
  session_id: string;
  kind: InputKind;
  message: string | null;
  state: 'queued' | 'applied';
  created_ms: number;
}

function toInput(r: InputRow): QueuedInput {
  const out: QueuedInput = { id: r.id, sessionId: r.session_id, kind: r.kind, state: r.state, createdAt: r.created_ms };
  if (r.message !== null) out.content = JSON.parse(r.message) as ContentBlock[];
  return out;
}

/** A session's inputs in queue order: those still queued, or (with `all`) every one. */
export async function listInputs(
  q: Queryable,
  n: Names,
  sessionId: string,
  opts: { all?: boolean; limit?: number } = {},
): Promise<QueuedInput[]> {
  const r = await q.query<InputRow>(
    `SELECT id, session_id, kind, message, state, (extract(epoch from created) * 1000)::bigint AS created_ms
       FROM ${n.inputs} WHERE session_id = $1 ${opts.all ? '' : "AND state = 'queued'"} ORDER BY id LIMIT $2`,
    [sessionId, opts.limit ?? 10_000],
  );
  return r.rows.map(toInput);
}

/** Mark inputs applied, under the lease (0 rows when the lease is no longer ours). */
export async function markApplied(q: Queryable, n: Names, lease: Lease, ids: readonly number[]): Promise<number> {
  if (ids.length === 0) return 0;
  const r = await q.query(
    `UPDATE ${n.inputs} i SET state = 'applied', applied_epoch = $2, applied_at = now()
       FROM ${n.sessions} s
      WHERE i.id = ANY($4::bigint[]) AND i.session_id = $1 AND i.state = 'queued'
        AND s.id = $1 AND s.lease_epoch = $2 AND s.lease_token = sha256(convert_to($3, 'UTF8'))`,
    [lease.sessionId, lease.epoch, lease.token, ids],
  );
  return r.rowCount ?? 0;
}

export interface Claimed {
  lease: Lease;
  /** The worker whose expired lease this took over (it died or was cut off), if any. */
  tookOver?: LockHolder & { epoch: number };
}

/**
 * Take one session that has work for a worker: queued input, or a dead worker's lease. Returns
 * undefined when there is none free. Racing workers never take the same session.
 */
export async function claimSession(pool: Pool, n: Names, holder: LeaseHolderRecord, ttlMs: number): Promise<Claimed | undefined> {
  const token = newToken();
  const r = await pool.query<{
    id: string;
    lease_epoch: number;
    until_ms: number;
    prev_holder: LeaseHolderRecord | null;
    prev_until_ms: number | null;
  }>(
    `WITH cand AS (
       SELECT s.id, s.lease_holder AS prev_holder, s.lease_token IS NOT NULL AS was_held, s.lease_until AS prev_until
         FROM ${n.sessions} s
        WHERE (s.lease_token IS NULL OR s.lease_until <= now())
          AND (EXISTS (SELECT 1 FROM ${n.inputs} i WHERE i.session_id = s.id AND i.state = 'queued')
               OR (s.lease_token IS NOT NULL AND s.lease_holder ->> 'role' = 'worker'))
        ORDER BY (SELECT min(i.id) FROM ${n.inputs} i WHERE i.session_id = s.id AND i.state = 'queued') NULLS LAST, s.lease_until NULLS LAST
        LIMIT 1
        FOR UPDATE OF s SKIP LOCKED
     )
     UPDATE ${n.sessions} s SET lease_epoch = s.lease_epoch + 1, lease_token = sha256(convert_to($1, 'UTF8')),
            lease_until = now() + make_interval(secs => $2::float8 / 1000), lease_holder = $3::jsonb
       FROM cand
      WHERE s.id = cand.id
     RETURNING s.id, s.lease_epoch, (extract(epoch from s.lease_until) * 1000)::bigint AS until_ms,
               CASE WHEN cand.was_held THEN cand.prev_holder END AS prev_holder,
               (extract(epoch from cand.prev_until) * 1000)::bigint AS prev_until_ms`,
    [token, ttlMs, JSON.stringify(holder)],
  );
  const row = r.rows[0];
  if (!row) return undefined;
  const out: Claimed = { lease: { sessionId: row.id, epoch: row.lease_epoch, token, holder, ttlMs, expiresAt: row.until_ms } };
  if (row.prev_holder) {
    const p = row.prev_holder;
    out.tookOver = { pid: p.pid, host: p.host, since: p.since, role: p.role, epoch: row.lease_epoch - 1 };
    if (row.prev_until_ms !== null) out.tookOver.expiresAt = row.prev_until_ms;
  }
  return out;
}
