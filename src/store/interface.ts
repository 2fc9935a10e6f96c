/**
 * What every session store does, whatever holds the log (JSONL files: `SessionStore`;
 * PostgreSQL: `PgStore` in src/postgres). One conformance suite (test/store/conformance.ts) runs
 * against each implementation, so the rules below are tested once for all of them:
 *
 * - `create` publishes a new session (header, and any seed) whole; an existing id fails with
 *   SESSION_EXISTS and nothing is overwritten.
 * - `open` resumes for writing: takes the session's single-writer lock (SESSION_LOCKED names a live
 *   holder), loads and validates the log as `dsh log check` would, closes a turn left open with the
 *   crash-repair closers, and makes the closers and the seed marker durable before it returns.
 * - `inspect` reads without the lock and writes nothing (`repair: false` leaves an open turn open).
 * - `list` reads headers only, newest first, with the live lock holder.
 * - `fork` seeds a new session with a prefix of another: the live session when it is open in this
 *   store, else the log as stored (never closers the parent did not write).
 * - every event committed to an open session reaches the store in commit order; `flush()`
 *   resolves once everything committed before it is durable (the `persist` plugin calls it before
 *   each model call and each tool body); `close()` refuses further appends, flushes and unlocks.
 *
 * The interface names no files: what is file-specific (paths, torn-tail sidecars, streaming
 * thresholds) stays on `SessionStore`, and what is database-specific (leases, epochs) on `PgStore`.
 */
import type { LoadedLog, LogWarning, Session, SessionEvent, SessionHeader } from '../session/index.js';
import type { StoreError, LockHolder } from './errors.js';
import type { FlushResult } from './writer.js';

export interface CreateOptions {
  /** The session's working directory (absolute); the JSONL store files it under it. */
  cwd: string;
  /** Session id; a UUID when absent. */
  id?: string;
  /** More header fields (`delegationDepth`, `origin`, `agentPreset`, …). */
  header?: Partial<SessionHeader>;
}

export interface ForkOptions {
  /** The child's id; a UUID when absent. */
  id?: string;
  header?: Partial<SessionHeader>;
}

export interface OpenOptions {
  /** The session's cwd when known: the JSONL store looks only there; any store refuses another. */
  cwd?: string;
}

export interface InspectOptions extends OpenOptions {
  /** Close a turn left open with crash-repair events, in memory only (default true). */
  repair?: boolean;
}

/** What `open` found and fixed. */
export interface Recovery {
  /** The torn tail that was cut off, and the sidecar holding its bytes (JSONL only). */
  tornTail?: { line: number; droppedLines: number; reason: string; bytes: number; sidecar: string };
  /** Types of the closers crash repair appended (and persisted) for a turn left open. */
  repaired: string[];
}

export type ErrorListener = (error: StoreError) => void;

/** A session open for writing in a store. */
export interface OpenSession {
  readonly session: Session;
  readonly id: string;
  /** Where the log is: a file path, or `postgres:<database>/<id>`. */
  readonly location: string;
  readonly warnings: readonly LogWarning[];
  readonly recovery: Recovery;
  /** Seq of the first event not yet known durable. */
  readonly durableSeq: number;
  /** The failure that paused background writes, until a flush succeeds. */
  readonly lastError: StoreError | undefined;
  readonly closed: boolean;
  /** Write everything committed and make it durable; never rejects. */
  flush(): Promise<FlushResult>;
  /** Refuse further appends, flush, release the lock. A failed final flush leaves it open. */
  close(): Promise<FlushResult>;
  /** Write failures as they happen (once per outage). */
  onError(listener: ErrorListener): () => void;
}

/** One session in a listing: its header and where it is, never its body. */
export interface StoreSessionInfo {
  id: string;
  header: SessionHeader;
  location: string;
  /** When the log last changed (epoch ms). */
  modifiedMs: number;
  /** A live writer holding the session, if any. */
  lockedBy?: LockHolder;
}

export interface StoreListProblem {
  /** The file, or the store location, concerned. */
  path: string;
  error: StoreError;
}

export interface StoreListing<I extends StoreSessionInfo = StoreSessionInfo> {
  sessions: I[];
  problems: StoreListProblem[];
  /**
   * Names this listing's content when the store can name it (the JSONL store's listing index,
   * from a settled snapshot): two listings with the same generation hold the same sessions and
   * problems but for their live sessions (held open by a live process; the same ones, each as it
   * is now), so what a caller derived from one it may reuse for the other. Absent: no such claim.
   */
  generation?: string;
}

export interface StoreInspection extends LoadedLog {
  location: string;
}

/** A whole session as another store (or a JSONL file) holds it. */
export interface ImportedLog {
  header: SessionHeader;
  events: readonly SessionEvent[];
}

export interface Store {
  readonly kind: 'jsonl' | 'postgres';
  /** The root directory, or the database (without its password). */
  readonly location: string;
  create(opts: CreateOptions): Promise<OpenSession>;
  open(id: string, opts?: OpenOptions): Promise<OpenSession>;
  inspect(id: string, opts?: InspectOptions): Promise<StoreInspection>;
  list(): Promise<StoreListing>;
  fork(sourceId: string, boundary?: number, opts?: ForkOptions): Promise<OpenSession>;
  /**
   * Publish a complete session exactly as given: the header and every event, byte for byte (no
   * seed marker, no crash repair; a turn left open stays open until the next `open`). Never over
   * an existing id (SESSION_EXISTS). The events are validated as a load would validate them.
   * `dsh sessions import` moves sessions between stores with it.
   */
  importLog(log: ImportedLog): Promise<StoreSessionInfo>;
  /** The open handle of a session opened in this store, or undefined. */
  handle(idOrSession: string | Session): OpenSession | undefined;
  /** Close every session this store opened (and its connections); results in open order. */
  close(): Promise<FlushResult[]>;
}
