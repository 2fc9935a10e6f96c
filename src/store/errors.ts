/**
 * Typed store errors. Every failure of the persistence layer carries a stable `code` (what a
 * caller switches on) and, where one exists, the path concerned. Log-content refusals (corrupt
 * lines, unknown event types, invalid events) stay `SessionError`s from the session layer: the
 * store adds I/O, locking and layout failures on top, it does not re-label the codec's verdicts.
 */
import { CodedError } from '../model/coded-error.js';
export type StoreErrorCode =
  /** No session directory holds this id under the root. */
  | 'SESSION_NOT_FOUND'
  /** `create`/`fork` with an id that already has a log: nothing is overwritten. */
  | 'SESSION_EXISTS'
  /** Another live writer (this process or another) holds the session's lock. */
  | 'SESSION_LOCKED'
  /** The same id appears under two project directories. */
  | 'AMBIGUOUS_SESSION'
  /** A `session.jsonl.zstd` log: this build reads and writes only uncompressed logs. */
  | 'COMPRESSED_LOG'
  /** The header's id or cwd does not name the file it was found in. */
  | 'IDENTITY_MISMATCH'
  /** The log's first line is not a readable session header (incomplete, not JSON, or invalid). */
  | 'BAD_HEADER'
  /** The session's `session.jsonl` is not a regular file (a FIFO, a device, a directory, a socket). */
  | 'NOT_A_FILE'
  /** A session's files cannot be read (permission denied, an I/O error): `details.errno` says which. A listing's problem. */
  | 'UNREADABLE'
  /** A project or session directory under the root is not a plain directory (a symbolic link, a file): nothing is written through it. */
  | 'NOT_A_DIRECTORY'
  /** The log holds fewer events than its header's `seedLength`: the inherited prefix is damaged. */
  | 'SEED_TRUNCATED'
  /** An id or cwd that cannot name a storage path (empty id, relative cwd). */
  | 'INVALID_ARGUMENT'
  /** Writing a batch failed (disk full, quota, I/O error); the batch is kept and the file rolled back. */
  | 'WRITE_FAILED'
  /** `fsync` failed: the unsynced bytes were rolled back and will be rewritten. */
  | 'SYNC_FAILED'
  /** A failed write could not be rolled back; the writer retries the truncation before any write. */
  | 'ROLLBACK_FAILED'
  /** A torn tail could not be preserved in a sidecar, so the log was left untouched. */
  | 'TAIL_PRESERVE_FAILED'
  /** A log of dsh's newer formats (1–4): readable, but this build appends only to format 0 logs. */
  | 'FORMAT_NOT_WRITABLE'
  /** The session (or the store) is closed. */
  | 'CLOSED'
  /** PostgreSQL store: the database cannot be reached (or the driver is missing); nothing was written. */
  | 'CONNECT_FAILED'
  /** PostgreSQL store: a statement failed for a reason not listed here (`errno` is the SQLSTATE). */
  | 'DATABASE_ERROR'
  /** PostgreSQL store: the database holds a schema this build does not know (a newer dsh). */
  | 'SCHEMA_MISMATCH'
  /**
   * PostgreSQL store: this writer's lease on the session is gone (it expired and another writer
   * took the session, so the epoch moved). The database refuses its appends; nothing it writes
   * after the takeover can land.
   */
  | 'LEASE_LOST'
  /** PostgreSQL store: the seq already holds an event another writer stored. */
  | 'SEQ_CONFLICT'
  /**
   * PostgreSQL store: a live follow could not reach the database for longer than its outage
   * limit (`details.seq` is the last event it delivered; follow again from the next one).
   */
  | 'FOLLOW_FAILED';

/** Who holds a session lock, as recorded in the lock file. */
export interface LockHolder {
  pid: number;
  host: string;
  /** Epoch ms when the lock was taken. */
  since: number;
  /** PostgreSQL store: when the holder's lease runs out unless it renews it (epoch ms, database clock). */
  expiresAt?: number;
  /** PostgreSQL store: `worker` (a `dsh worker`, whose sessions other workers take over) or `client`. */
  role?: 'worker' | 'client';
}

export interface StoreErrorDetails {
  path?: string;
  sessionId?: string;
  holder?: LockHolder;
  /** The operating-system error code behind an I/O failure (`ENOSPC`, `EFBIG`, `EIO`, …). */
  errno?: string;
  /** Events kept in memory, not yet on disk, when a write failed. */
  pending?: number;
  /** PostgreSQL store: the lease epoch concerned. */
  epoch?: number;
  /** The seq concerned (FOLLOW_FAILED: the last event delivered, -1 for none). */
  seq?: number;
}

export class StoreError extends CodedError<StoreErrorCode> {
  readonly details: StoreErrorDetails;
  constructor(code: StoreErrorCode, message: string, details: StoreErrorDetails = {}, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'StoreError';
    this.details = details;
  }
}

export function errnoOf(e: unknown): string | undefined {
  const c = (e as { code?: unknown } | null)?.code;
  return typeof c === 'string' ? c : undefined;
}

export function isErrno(e: unknown, ...codes: string[]): boolean {
  const c = errnoOf(e);
  return c !== undefined && codes.includes(c);
}
