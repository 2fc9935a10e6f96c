/**
 * Reaching PostgreSQL. The `pg` driver is imported on first use only (`import('pg')`), so a
 * command that never touches a database does not pay for loading it.
 *
 * Every connection this layer opens sets `synchronous_commit = on` at startup: the store's
 * durability rule (committed before each model call and each tool body) means "the commit has
 * reached the WAL on disk", whatever the server's default says. 64-bit integers (`bigint`) are
 * read as numbers, refusing any beyond 2^53 rather than rounding it.
 */
import type { ClientConfig, Pool, PoolClient, PoolConfig } from 'pg';
import { maskUrlPassword } from '../config/config.js';
import { StoreError, type StoreErrorDetails } from '../store/errors.js';

type PgModule = typeof import('pg');
let driver: Promise<PgModule> | undefined;

export function loadDriver(): Promise<PgModule> {
  driver ??= import('pg').catch((e: unknown) => {
    driver = undefined;
    throw new StoreError(
      'CONNECT_FAILED',
      `the PostgreSQL driver (the npm package pg) cannot be loaded: ${(e as Error).message}`,
      {},
      { cause: e },
    );
  });
  return driver;
}

export interface PgConnectOptions {
  /** `postgres://user:password@host:port/database` (libpq URL; `?sslmode=…` and friends work). */
  url: string;
  /** Connections in the pool (default 10). */
  max?: number;
  /** Give up connecting after this long (default 10 s). */
  connectTimeoutMs?: number;
  /** Reported in `pg_stat_activity` (default `dsh`). */
  applicationName?: string;
}

const INT8_OID = 20;

function parseInt8(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n))
    throw new StoreError('DATABASE_ERROR', `a 64-bit integer from the database (${text}) is beyond 2^53; refusing to round it`);
  return n;
}

/** Client settings for one connection: the URL, the startup options, our integer parsing. */
export async function clientConfig(opts: PgConnectOptions): Promise<ClientConfig & PoolConfig> {
  const pg = await loadDriver();
  return {
    connectionString: opts.url,
    application_name: opts.applicationName ?? 'dsh',
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 10_000,
    options: '-c synchronous_commit=on',
    keepAlive: true,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID && format !== 'binary' ? parseInt8 : pg.types.getTypeParser(oid, format as 'text')) as never,
    },
  };
}

export async function createPool(opts: PgConnectOptions): Promise<Pool> {
  const pg = await loadDriver();
  // allowExitOnIdle: idle pooled connections never keep a finished command's process alive.
  const pool = new pg.Pool({ ...(await clientConfig(opts)), max: opts.max ?? 10, idleTimeoutMillis: 30_000, allowExitOnIdle: true });
  // An idle client that loses its connection emits 'error' on the pool; without a listener that
  // would be an uncaught exception. The next checkout gets a fresh connection.
  pool.on('error', () => undefined);
  // A checked-out client has no pool listener: a connection killed between two statements of a
  // transaction (or while a follower's read waits) would emit 'error' with nobody listening,
  // an uncaught exception that ends the process. The statement in flight, or the next one, fails
  // with that error anyway, which is where it is handled.
  pool.on('connect', (client) => void client.on('error', () => undefined));
  return pool;
}

/** The URL without its password, for messages and `location`. */
export const redactUrl = maskUrlPassword;

/** The database name a URL names, for short locations (`postgres:dbname/session-id`). */
export function databaseOf(url: string): string {
  try {
    const u = new URL(url);
    const db = decodeURIComponent(u.pathname.replace(/^\//, ''));
    return `${u.hostname}${u.port ? `:${u.port}` : ''}/${db || u.username || 'postgres'}`;
  } catch {
    return 'postgres';
  }
}

/** SQLSTATE classes and Node errno values that mean "the connection, not the statement, failed". */
const CONNECTION_STATES = /^(08|57P0|53300|3D000|28)/;
const CONNECTION_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EPIPE',
  'EAI_AGAIN',
]);

/** node-postgres's own wordings for a connection that failed or ended. */
const CONNECTION_MESSAGES = new RegExp(
  [
    'Connection terminated',
    'connection timeout',
    'Client has encountered a connection error',
    'timeout exceeded when trying to connect',
    'Connection ended',
  ].join('|'),
  'i',
);

export function sqlState(e: unknown): string | undefined {
  const c = (e as { code?: unknown } | null)?.code;
  return typeof c === 'string' ? c : undefined;
}

/** Did the connection fail (so the outcome of an in-flight commit is unknown)? */
export function isConnectionFailure(e: unknown): boolean {
  const code = sqlState(e);
  if (code !== undefined && (CONNECTION_STATES.test(code) || CONNECTION_ERRNOS.has(code))) return true;
  const msg = (e as Error | null)?.message ?? '';
  return CONNECTION_MESSAGES.test(msg);
}

/** A typed store error for a failed database call (`errno` carries the SQLSTATE or socket code). */
export function pgError(e: unknown, what: string, details: StoreErrorDetails = {}): StoreError {
  if (e instanceof StoreError) return e;
  const code = sqlState(e);
  const d: StoreErrorDetails = { ...details };
  if (code !== undefined) d.errno = code;
  const why = (e as Error | null)?.message ?? String(e);
  return new StoreError(isConnectionFailure(e) ? 'CONNECT_FAILED' : 'DATABASE_ERROR', `${what}: ${why}${code ? ` (${code})` : ''}`, d, {
    cause: e,
  });
}

/** Run `fn` on one pooled connection inside a transaction (rolled back when it throws). */
export async function inTransaction<T>(pool: Pool, fn: (c: PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  let broken = false;
  try {
    await c.query('BEGIN');
    const r = await fn(c);
    await c.query('COMMIT');
    return r;
  } catch (e) {
    try {
      await c.query('ROLLBACK');
    } catch {
      broken = true; // the connection is gone; do not hand it out again
    }
    throw e;
  } finally {
    c.release(broken);
  }
}
