/**
 * The one way events enter the events table: a single INSERT from arrays, carrying the lease
 * epoch and presenting the lease token to the append trigger (schema.ts) through a setting local
 * to the transaction. One statement is one transaction (or part of the caller's).
 */
import type { Pool, PoolClient } from 'pg';
import { stringifyJson, type SessionEvent } from '../session/index.js';
import type { Lease } from './lease.js';
import type { Names } from './schema.js';

/** One statement: `events` appended under `lease` (the trigger checks the epoch and token). */
export async function insertEvents(
  c: Pool | PoolClient,
  n: Names,
  id: string,
  lease: Pick<Lease, 'epoch' | 'token'>,
  events: readonly SessionEvent[],
  bodies?: readonly string[],
): Promise<void> {
  await c.query(
    `INSERT INTO ${n.events} (session_id, seq, epoch, type, time, body)
     SELECT $1, u.seq, $2, u.type, u.time, u.body
       FROM (SELECT set_config('dsh.lease_token', $3, true) AS v) cfg,
            unnest($4::bigint[], $5::text[], $6::bigint[], $7::text[]) AS u(seq, type, time, body)
      WHERE cfg.v IS NOT NULL`,
    [
      id,
      lease.epoch,
      lease.token,
      events.map((e) => e.seq),
      events.map((e) => e.type),
      events.map((e) => e.time),
      bodies ?? events.map((e) => stringifyJson(e)),
    ],
  );
}
