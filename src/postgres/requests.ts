/**
 * Idempotency keys for `dsh serve`: a client that retries a POST (a timeout, a dropped
 * connection) with the same `Idempotency-Key` gets the first answer, and nothing is queued or
 * created twice. The answer is stored in the same transaction as what the request did, so the two
 * commit together, and in the database, so a retry after a serve restart finds it too.
 *
 * A key is bound to its request (operation, path, body: the fingerprint): the same key with
 * another request is refused (IDEMPOTENCY_KEY_REUSED). Keys are kept for `REQUEST_TTL_HOURS`.
 */
import type { PoolClient } from 'pg';
import type { Queryable } from './read.js';
import type { Names } from './schema.js';

export const REQUEST_TTL_HOURS = 24;

export interface StoredAnswer {
  fingerprint: string;
  status: number;
  body: string;
}

export async function recallAnswer(q: Queryable, n: Names, key: string): Promise<StoredAnswer | undefined> {
  const r = await q.query<StoredAnswer>(
    `SELECT fingerprint, status, body FROM ${n.requests} WHERE key = $1 AND created > now() - make_interval(hours => $2)`,
    [key, REQUEST_TTL_HOURS],
  );
  return r.rows[0];
}

/**
 * Record the answer under `key` (inside the request's transaction). False when another request
 * with the key committed first: the caller rolls back and answers with that one's answer.
 */
export async function recordAnswer(c: PoolClient, n: Names, key: string, a: StoredAnswer): Promise<boolean> {
  await c.query(`DELETE FROM ${n.requests} WHERE created <= now() - make_interval(hours => $1)`, [REQUEST_TTL_HOURS]);
  const r = await c.query(
    `INSERT INTO ${n.requests} (key, fingerprint, status, body) VALUES ($1, $2, $3, $4) ON CONFLICT (key) DO NOTHING`,
    [key, a.fingerprint, a.status, a.body],
  );
  return r.rowCount === 1;
}
