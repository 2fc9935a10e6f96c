/**
 * The tables, in one PostgreSQL schema (default `dsh`), created on first use.
 *
 *   sessions  one row per session: the header's exact JSON text, the fork pointer
 *             (parent_id, fork_seq: the child reads its parent's events through fork_seq, no
 *             copy), base_seq (its own first seq), and the writer's lease (epoch, holder, expiry,
 *             and the SHA-256 of the holder's secret token).
 *   events    one row per event, primary key (session_id, seq): a second writer of a seq fails
 *             on the key. `body` is the event's exact JSON text (what a JSONL line holds), so an
 *             export gives every event back byte for byte; `type` and `time` are copies for
 *             queries. `epoch` records which lease wrote the row.
 *   inputs    prompts, steering, context and cancels queued for workers (`dsh serve`, `dsh worker`).
 *
 * Fencing lives in the database, not in the client: an AFTER INSERT statement trigger on events
 * locks each touched session row (FOR SHARE) and refuses the whole statement unless the rows
 * carry the session's current lease epoch and the transaction presents the lease's token
 * (`dsh.lease_token`, set by the same statement). A takeover bumps the epoch under a row lock
 * that waits for in-flight appends, so every append either commits before the takeover (and the
 * new holder reads it) or fails after it. The trigger also refuses seqs that do not continue the
 * log, and announces each append on the `<schema>.events` channel (NOTIFY, at commit).
 */
import type { Pool } from 'pg';
import { StoreError } from '../store/errors.js';
import { inTransaction, pgError } from './connect.js';

/** 2: the `requests` table (idempotency keys of `dsh serve`); a version-1 schema gains it on first use. */
export const SCHEMA_VERSION = 2;

/** SQLSTATEs the trigger raises (class DS: dsh). */
export const LEASE_LOST_STATE = 'DS001';
export const SEQ_GAP_STATE = 'DS002';

const IDENT = /^[a-z_][a-z0-9_]{0,47}$/;

export function checkSchemaName(name: string): string {
  if (!IDENT.test(name)) {
    throw new StoreError(
      'INVALID_ARGUMENT',
      `PostgreSQL schema name ${JSON.stringify(name)} is not allowed: use lower-case letters, digits and _ (at most 48, not ` +
        'starting with a digit)',
    );
  }
  return name;
}

/** Quoted names of one schema's objects. */
export interface Names {
  schema: string;
  sessions: string;
  events: string;
  inputs: string;
  /** `dsh serve`'s answers by Idempotency-Key. */
  requests: string;
  meta: string;
  /** NOTIFY channels. */
  eventsChannel: string;
  inputsChannel: string;
}

export function namesFor(schema: string): Names {
  const q = `"${checkSchemaName(schema)}"`;
  return {
    schema: q,
    sessions: `${q}.sessions`,
    events: `${q}.events`,
    inputs: `${q}.inputs`,
    requests: `${q}.requests`,
    meta: `${q}.meta`,
    eventsChannel: `${schema}.events`,
    inputsChannel: `${schema}.inputs`,
  };
}

function ddl(n: Names): string[] {
  return [
    `CREATE SCHEMA IF NOT EXISTS ${n.schema}`,
    `CREATE TABLE IF NOT EXISTS ${n.meta} (key text PRIMARY KEY, value text NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS ${n.sessions} (
      id text PRIMARY KEY CHECK (id <> ''),
      header text NOT NULL CHECK (strpos(header, E'\\n') = 0),
      cwd text,
      created_at bigint NOT NULL,
      parent_id text REFERENCES ${n.sessions} (id),
      fork_seq bigint,
      base_seq bigint NOT NULL DEFAULT 0 CHECK (base_seq >= 0),
      options text,
      lease_epoch bigint NOT NULL DEFAULT 0,
      lease_token bytea,
      lease_until timestamptz,
      lease_holder jsonb,
      CHECK ((parent_id IS NULL) = (fork_seq IS NULL)),
      CHECK (parent_id IS NULL OR base_seq = fork_seq + 1)
    )`,
    `CREATE TABLE IF NOT EXISTS ${n.events} (
      session_id text NOT NULL REFERENCES ${n.sessions} (id),
      seq bigint NOT NULL CHECK (seq >= 0),
      epoch bigint NOT NULL,
      type text NOT NULL,
      time bigint NOT NULL,
      body text NOT NULL CHECK (strpos(body, E'\\n') = 0),
      PRIMARY KEY (session_id, seq)
    )`,
    `CREATE TABLE IF NOT EXISTS ${n.inputs} (
      id bigserial PRIMARY KEY,
      session_id text NOT NULL REFERENCES ${n.sessions} (id),
      kind text NOT NULL CHECK (kind IN ('prompt', 'steer', 'inject', 'cancel')),
      message text,
      created timestamptz NOT NULL DEFAULT now(),
      state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'applied')),
      applied_epoch bigint,
      applied_at timestamptz,
      CHECK ((kind = 'cancel') = (message IS NULL))
    )`,
    `CREATE INDEX IF NOT EXISTS inputs_queued ON ${n.inputs} (session_id, id) WHERE state = 'queued'`,
    `CREATE TABLE IF NOT EXISTS ${n.requests} (
      key text PRIMARY KEY,
      fingerprint text NOT NULL,
      status integer NOT NULL,
      body text NOT NULL,
      created timestamptz NOT NULL DEFAULT now()
    )`,
    `CREATE INDEX IF NOT EXISTS requests_created ON ${n.requests} (created)`,
    `CREATE INDEX IF NOT EXISTS sessions_parent ON ${n.sessions} (parent_id) WHERE parent_id IS NOT NULL`,
    `CREATE OR REPLACE FUNCTION ${n.schema}.check_append() RETURNS trigger LANGUAGE plpgsql AS $fn$
    DECLARE
      r record;
      s record;
      prior bigint;
      presented bytea := sha256(convert_to(coalesce(current_setting('dsh.lease_token', true), ''), 'UTF8'));
    BEGIN
      FOR r IN SELECT session_id, min(seq) AS lo, max(seq) AS hi, count(*) AS n, min(epoch) AS e0, max(epoch) AS e1
               FROM new_rows GROUP BY session_id ORDER BY session_id LOOP
        -- FOR SHARE: a takeover (UPDATE of the epoch) waits for this append to commit, and an
        -- append that waited for a takeover re-reads the row and sees the new epoch.
        SELECT lease_epoch, lease_token, base_seq INTO s FROM ${n.sessions} WHERE id = r.session_id FOR SHARE;
        IF NOT FOUND OR s.lease_token IS NULL OR r.e0 <> r.e1 OR s.lease_epoch <> r.e0 OR s.lease_token <> presented THEN
          RAISE EXCEPTION
            'dsh: session % is not leased to this writer (epoch % written, epoch % current): the lease was lost or never held',
            r.session_id, r.e0, s.lease_epoch
            USING ERRCODE = '${LEASE_LOST_STATE}';
        END IF;
        SELECT max(seq) INTO prior FROM ${n.events} WHERE session_id = r.session_id AND seq < r.lo;
        IF r.hi - r.lo + 1 <> r.n OR r.lo <> coalesce(prior + 1, s.base_seq) THEN
          RAISE EXCEPTION 'dsh: session % got seqs %..% (% rows) where seq % comes next',
            r.session_id, r.lo, r.hi, r.n, coalesce(prior + 1, s.base_seq)
            USING ERRCODE = '${SEQ_GAP_STATE}';
        END IF;
        PERFORM pg_notify('${n.eventsChannel}', r.session_id);
      END LOOP;
      RETURN NULL;
    END
    $fn$`,
    `CREATE OR REPLACE TRIGGER events_append AFTER INSERT ON ${n.events} REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT ` +
      `EXECUTE FUNCTION ${n.schema}.check_append()`,
    // Rows are never changed or removed: the log is append-only, in the database too.
    `CREATE OR REPLACE FUNCTION ${n.schema}.refuse_change() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      RAISE EXCEPTION 'dsh: the events table is append-only' USING ERRCODE = '${LEASE_LOST_STATE}';
    END
    $fn$`,
    `CREATE OR REPLACE TRIGGER events_immutable BEFORE UPDATE OR DELETE ON ${n.events} FOR EACH STATEMENT EXECUTE FUNCTION ` +
      `${n.schema}.refuse_change()`,
    `CREATE OR REPLACE FUNCTION ${n.schema}.announce_input() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      PERFORM pg_notify('${n.inputsChannel}', NEW.session_id);
      RETURN NULL;
    END
    $fn$`,
    `CREATE OR REPLACE TRIGGER inputs_announce AFTER INSERT ON ${n.inputs} FOR EACH ROW EXECUTE FUNCTION ${n.schema}.announce_input()`,
  ];
}

const ready = new WeakMap<Pool, Map<string, Promise<void>>>();

/** Create the schema's tables once per pool (and check a schema made by another build). */
export function ensureSchema(pool: Pool, n: Names): Promise<void> {
  let perPool = ready.get(pool);
  if (!perPool) ready.set(pool, (perPool = new Map()));
  let p = perPool.get(n.schema);
  if (!p) {
    p = migrate(pool, n).catch((e: unknown) => {
      perPool.delete(n.schema);
      throw e;
    });
    perPool.set(n.schema, p);
  }
  return p;
}

async function migrate(pool: Pool, n: Names): Promise<void> {
  try {
    await inTransaction(pool, async (c) => {
      // One creator at a time: CREATE … IF NOT EXISTS still races on the catalog.
      await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`dsh-schema:${n.schema}`]);
      const enc = (await c.query<{ server_encoding: string }>('SHOW server_encoding')).rows[0]?.server_encoding;
      if (enc !== 'UTF8')
        throw new StoreError(
          'SCHEMA_MISMATCH',
          `the database's encoding is ${enc ?? 'unknown'}; dsh stores JSON text and needs UTF8 (CREATE DATABASE … ENCODING 'UTF8')`,
        );
      const exists =
        (await c.query('SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = $2', [n.schema.slice(1, -1), 'meta'])).rowCount === 1;
      if (exists) {
        const v = (await c.query<{ value: string }>(`SELECT value FROM ${n.meta} WHERE key = 'schema_version'`)).rows[0]?.value;
        if (v !== undefined && Number(v) === SCHEMA_VERSION) return;
        if (v !== undefined && Number(v) > SCHEMA_VERSION) {
          throw new StoreError(
            'SCHEMA_MISMATCH',
            `the PostgreSQL schema ${n.schema} is at version ${v}, newer than this build's ${SCHEMA_VERSION}; upgrade dsh`,
          );
        }
      }
      for (const stmt of ddl(n)) await c.query(stmt);
      await c.query(
        `INSERT INTO ${n.meta} (key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
        [String(SCHEMA_VERSION)],
      );
    });
  } catch (e) {
    throw pgError(e, `cannot prepare the dsh tables in schema ${n.schema}`);
  }
}
