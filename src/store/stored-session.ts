/**
 * A session open for writing: the live `Session`, its log writer, its lock. Every event the
 * session commits is queued for the file in commit order (the subscription is attached before
 * the handle is returned, so nothing committed through it can be missed), written by the end of
 * the event-loop iteration that committed it, and made durable by `flush()`, at every `turn/end`, on close, and on exit.
 */
import type { LogWarning, ResumeIndex, Session, SessionEvent } from '../session/index.js';
import type { StoreError } from './errors.js';
import { registerExit, unregisterExit, type ExitParticipant } from './exit.js';
import type { ErrorListener, OpenSession, Recovery } from './interface.js';
import { restatIndexAfterWrites } from './load.js';
import type { SessionLock } from './lock.js';
import { ErrorListeners, refuseAppends } from './shared.js';
import type { FlushResult, LogWriter } from './writer.js';

export type { Recovery, ErrorListener } from './interface.js';

export class StoredSession implements OpenSession {
  readonly session: Session;
  readonly path: string;
  /** What the open found and fixed: torn tail, open turn, blank lines, missing final newline. */
  readonly warnings: readonly LogWarning[];
  readonly recovery: Recovery;
  private readonly writer: LogWriter;
  private readonly lock: SessionLock;
  private readonly unsubscribe: () => void;
  private readonly errorListeners = new ErrorListeners('session log');
  private closing = false;
  private closedFlag = false;
  private readonly exitHook: ExitParticipant;
  private readonly onClosed: (s: StoredSession) => void;
  /**
   * The resume index that described the log when it was opened (this handle only appends after
   * it), and whether the open left it unwritten.
   */
  private readonly resumeIndex: { index: ResumeIndex; unwritten: boolean } | undefined;

  constructor(args: {
    session: Session;
    path: string;
    writer: LogWriter;
    lock: SessionLock;
    warnings: LogWarning[];
    recovery: Recovery;
    onClosed: (s: StoredSession) => void;
    resumeIndex?: { index: ResumeIndex; unwritten: boolean };
  }) {
    this.session = args.session;
    this.path = args.path;
    this.writer = args.writer;
    this.lock = args.lock;
    this.warnings = Object.freeze(args.warnings);
    this.recovery = args.recovery;
    this.onClosed = args.onClosed;
    this.resumeIndex = args.resumeIndex;
    this.unsubscribe = this.session.subscribe((e: SessionEvent) => {
      this.writer.enqueue(e);
      // A finished turn is a natural durability point: nothing waits on it, so it is not awaited.
      if (e.type === 'turn/end') void this.writer.flush();
    });
    this.exitHook = {
      flushSync: () => {
        const r = this.writer.flushSync();
        if (!r.ok) process.stderr.write(`[dsh] at exit: ${r.error.message}\n`);
      },
      releaseSync: () => {
        this.writer.closeSync();
        this.restatIndex();
        this.lock.release();
      },
    };
    registerExit(this.exitHook);
  }

  /** Still under the lock: restamped if only this handle's writer wrote to the log since it was loaded. */
  private restatIndex(): void {
    const r = this.resumeIndex;
    if (r !== undefined) restatIndexAfterWrites(this.path, r.index, r.unwritten, this.writer.intactStamp());
  }

  get id(): string {
    return this.session.id;
  }
  /** The log file (the interface's name for `path`). */
  get location(): string {
    return this.path;
  }
  /** Seq of the first event not yet known durable. */
  get durableSeq(): number {
    return this.writer.durableSeq;
  }
  /** The failure that paused background writes, until a flush succeeds. */
  get lastError(): StoreError | undefined {
    return this.writer.lastError;
  }
  get closed(): boolean {
    return this.closedFlag;
  }

  /** Report write failures here (the `persist` plugin forwards them to `agent/error`). */
  onError(listener: ErrorListener): () => void {
    return this.errorListeners.add(listener);
  }

  /** @internal the writer's error sink. */
  reportError(error: StoreError): void {
    this.errorListeners.report(error);
  }

  /**
   * Write every committed event and fsync. Resolves `{ok: true, durableSeq}` once they are on
   * stable storage, or `{ok: false, error, pending}`: the events stay queued and a later flush
   * retries. Never rejects.
   */
  flush(): Promise<FlushResult> {
    return this.writer.flush();
  }

  /**
   * Flush, close the file and release the lock. From the first call on, appends to the session
   * are refused (`StoreError CLOSED`), so no event can commit without reaching the log. If the
   * final flush fails the handle stays open (file, lock, queued events) and close can be retried.
   */
  async close(): Promise<FlushResult> {
    if (this.closedFlag) return { ok: true, durableSeq: this.writer.durableSeq, bytes: 0 };
    if (!this.closing) {
      this.closing = true;
      refuseAppends(this.session, 'CLOSED', 'it is closed in the store', { path: this.path });
    }
    const r = await this.writer.flush();
    if (!r.ok) return r;
    this.unsubscribe();
    await this.writer.close();
    this.restatIndex();
    this.lock.release();
    unregisterExit(this.exitHook);
    this.closedFlag = true;
    this.onClosed(this);
    return r;
  }
}
