/**
 * The log writer: committed events reach the file in commit order, and a failure never loses
 * one silently.
 *
 * - **Batching.** Every committed event is queued; the queue is written by a `setImmediate`
 *   batch, in the check phase of the event-loop iteration that committed it, encoded with packed
 *   chunk rows per batch, so a provider read that delivers many stream chunks packs them into
 *   rows. Writes are synchronous positional writes: the file's good length is always known
 *   exactly, and an exit handler can finish the job.
 * - **Checkpoints** (`flush()`): write the queue, then `fsync`. The promise settles when every
 *   event committed before the call is on stable storage (or the failure says why not).
 * - **Failures.** A failed write truncates the file back to its last good length (so no partial
 *   line is ever left behind), keeps the batch queued, reports a typed `StoreError` to the error
 *   listeners and pauses background writes; the next `flush()` retries. A failed `fsync` may have
 *   dropped dirty pages while the file length still counts them, so the writer truncates to the
 *   last synced length and re-queues every event written since: they are written again.
 */
import { closeSync, fsyncSync, ftruncateSync, fsync as fsyncCb, writeSync } from 'node:fs';
import { encodeEvents, fileStamp, sameStamp, type FileStamp, type SessionEvent } from '../session/index.js';
import { StoreError, errnoOf } from './errors.js';

/** The file operations the writer uses; tests substitute failing ones. */
export interface WriterIo {
  write(fd: number, data: Buffer, offset: number, length: number, position: number): number;
  fsync(fd: number): Promise<void>;
  fsyncSync(fd: number): void;
  ftruncate(fd: number, length: number): void;
  close(fd: number): void;
}

export const nodeIo: WriterIo = {
  write: (fd, data, offset, length, position) => writeSync(fd, data, offset, length, position),
  fsync: (fd) => new Promise((resolve, reject) => fsyncCb(fd, (e) => (e ? reject(e) : resolve()))),
  fsyncSync: (fd) => fsyncSync(fd),
  ftruncate: (fd, length) => ftruncateSync(fd, length),
  close: (fd) => closeSync(fd),
};

export type FlushResult =
  | { ok: true /** Events on stable storage (the next seq to write). */; durableSeq: number; bytes: number }
  | { ok: false; error: StoreError /** Committed events not yet durable. */; pending: number };

export interface WriterOptions {
  fd: number;
  path: string;
  sessionId: string;
  /** Bytes already in the file (all durable). */
  length: number;
  /** Seq of the first event the file does not hold yet. */
  nextSeq: number;
  io?: WriterIo;
  onError: (error: StoreError) => void;
}

export class LogWriter {
  private readonly fd: number;
  private readonly path: string;
  private readonly sessionId: string;
  private readonly io: WriterIo;
  private readonly onError: (error: StoreError) => void;
  /** Committed, not yet written. */
  private queue: SessionEvent[] = [];
  /** Written since the last successful fsync (re-queued if an fsync fails). */
  private unsynced: SessionEvent[] = [];
  private length: number;
  private syncedLength: number;
  private writtenSeq: number;
  private syncedSeq: number;
  private scheduled: NodeJS.Immediate | undefined;
  /** Set after a failure: background writes wait for an explicit flush. */
  private failure: StoreError | undefined;
  /** A failed rollback left bytes past `length`: truncate before writing anything. */
  private dirtyTail = false;
  private syncChain: Promise<void> = Promise.resolve();
  private closed = false;
  /**
   * With `watch`: the file's stamp after this writer's last write, while every write found the
   * file as the previous one left it (undefined once something else was seen to change it).
   */
  private stamp: FileStamp | undefined;

  constructor(opts: WriterOptions) {
    this.fd = opts.fd;
    this.path = opts.path;
    this.sessionId = opts.sessionId;
    this.io = opts.io ?? { ...nodeIo };
    this.onError = opts.onError;
    this.length = this.syncedLength = opts.length;
    this.writtenSeq = this.syncedSeq = opts.nextSeq;
  }

  /** Seq of the first event not yet durable. */
  get durableSeq(): number {
    return this.syncedSeq;
  }
  /** Committed events not yet written to the file. */
  get queued(): number {
    return this.queue.length;
  }
  get lastError(): StoreError | undefined {
    return this.failure;
  }

  /**
   * Keep the chain of the file's stamps from `stamp` (the file as loaded): before each write the
   * file must still have the stamp the previous write left, so `intactStamp` can tell the resume
   * index that only this writer wrote since the load (a program writing to the log in place while
   * the session was open breaks the chain, and the index is not restamped over its edit).
   */
  watch(stamp: FileStamp): void {
    this.stamp = stamp;
  }

  /** With `watch`: the file's stamp after this writer's last write, if nothing else was seen to write to it. */
  intactStamp(): FileStamp | undefined {
    return this.stamp;
  }

  /** After a write (`after`) or before one: the file's stamp follows the chain, or the chain ends. */
  private chain(after: boolean): void {
    if (this.stamp === undefined) return;
    try {
      const now = fileStamp(this.fd);
      this.stamp = after || sameStamp(now, this.stamp) ? now : undefined;
    } catch {
      this.stamp = undefined;
    }
  }

  /** Queue a committed event (called from the session subscription, in commit order). */
  enqueue(event: SessionEvent): void {
    if (this.closed) return;
    const expected = this.writtenSeq + this.queue.length;
    if (event.seq !== expected) {
      // Cannot happen through a subscription; refusing keeps the file's seqs contiguous.
      this.report(
        new StoreError('WRITE_FAILED', `writer for ${this.sessionId} got seq ${event.seq} where ${expected} belongs; not written`, {
          path: this.path,
          sessionId: this.sessionId,
        }),
      );
      return;
    }
    this.queue.push(event);
    if (this.scheduled === undefined && this.failure === undefined) {
      this.scheduled = setImmediate(() => {
        this.scheduled = undefined;
        this.writeQueued();
      });
    }
  }

  /** Write the queue now (no fsync). Returns the failure, if any. */
  writeQueued(): StoreError | undefined {
    if (this.scheduled !== undefined) {
      clearImmediate(this.scheduled);
      this.scheduled = undefined;
    }
    if (this.closed) return this.failure;
    this.chain(false);
    if (this.dirtyTail) {
      this.stamp = undefined;
      try {
        this.io.ftruncate(this.fd, this.length);
        this.dirtyTail = false;
      } catch (e) {
        return this.fail('ROLLBACK_FAILED', `cannot truncate ${this.path} back to ${this.length} bytes after a failed write`, e);
      }
    }
    if (this.queue.length === 0) {
      this.failure = undefined;
      return undefined;
    }
    const batch = this.queue;
    const data = Buffer.from(encodeEvents(batch), 'utf8');
    let off = 0;
    try {
      while (off < data.length) off += this.io.write(this.fd, data, off, data.length - off, this.length + off);
    } catch (e) {
      this.stamp = undefined;
      // Never leave a partial line: cut the file back to the end of the last whole batch (a
      // write that threw may still have stored some bytes, so truncate even when off is 0).
      try {
        this.io.ftruncate(this.fd, this.length);
      } catch {
        this.dirtyTail = true;
      }
      const code = this.dirtyTail ? 'ROLLBACK_FAILED' : 'WRITE_FAILED';
      return this.fail(
        code,
        `cannot write ${batch.length} event(s) (seq ${batch[0]!.seq}…${batch[batch.length - 1]!.seq}) to ${this.path}: ` +
          `${(e as Error).message}; they are kept in memory and written on the next flush`,
        e,
      );
    }
    this.chain(true);
    this.length += data.length;
    this.writtenSeq += batch.length;
    for (const e of batch) this.unsynced.push(e);
    this.queue = [];
    this.failure = undefined;
    return undefined;
  }

  private fail(code: 'WRITE_FAILED' | 'SYNC_FAILED' | 'ROLLBACK_FAILED', message: string, cause: unknown): StoreError {
    const details: { path: string; sessionId: string; pending: number; errno?: string } = {
      path: this.path,
      sessionId: this.sessionId,
      pending: this.queue.length,
    };
    const errno = errnoOf(cause);
    if (errno !== undefined) details.errno = errno;
    const error = new StoreError(code, message, details, { cause });
    // One report per episode: a retry that fails the same way is the same outage.
    const repeat = this.failure !== undefined && this.failure.code === code && this.failure.details.errno === errno;
    this.failure = error;
    if (!repeat) this.report(error);
    return error;
  }

  private report(error: StoreError): void {
    try {
      this.onError(error);
    } catch {
      // an error listener's own failure must not mask the write failure
    }
  }

  /** Write the queue and fsync: resolves once every event committed before the call is durable. */
  flush(): Promise<FlushResult> {
    const failed = this.writeQueued();
    if (failed) return Promise.resolve({ ok: false, error: failed, pending: this.pending() });
    const targetSeq = this.writtenSeq;
    const targetLength = this.length;
    if (this.syncedSeq >= targetSeq) return Promise.resolve(this.ok());
    // Serialised: each fsync covers everything written before it started.
    const run = this.syncChain.then(async (): Promise<FlushResult> => {
      if (this.syncedSeq >= targetSeq) return this.ok();
      const seq = this.writtenSeq;
      const length = this.length;
      try {
        await this.io.fsync(this.fd);
      } catch (e) {
        return { ok: false, error: this.syncFailed(e), pending: this.pending() };
      }
      this.markSynced(seq, length);
      return this.syncedSeq >= targetSeq && this.syncedLength >= targetLength
        ? this.ok()
        : { ok: false, error: this.failure ?? this.syncFailed(new Error('sync target lost')), pending: this.pending() };
    });
    this.syncChain = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  private pending(): number {
    return this.queue.length + this.unsynced.length;
  }

  private ok(): FlushResult {
    return { ok: true, durableSeq: this.syncedSeq, bytes: this.syncedLength };
  }

  private markSynced(seq: number, length: number): void {
    if (seq <= this.syncedSeq) return;
    let k = 0;
    while (k < this.unsynced.length && this.unsynced[k]!.seq < seq) k++;
    this.unsynced = this.unsynced.slice(k);
    this.syncedSeq = seq;
    this.syncedLength = length;
  }

  /** After a failed fsync, nothing past the last synced length can be trusted: rewrite it. */
  private syncFailed(cause: unknown): StoreError {
    if (this.scheduled !== undefined) {
      clearImmediate(this.scheduled);
      this.scheduled = undefined;
    }
    this.queue = [...this.unsynced, ...this.queue];
    this.unsynced = [];
    this.stamp = undefined;
    this.writtenSeq = this.syncedSeq;
    this.length = this.syncedLength;
    try {
      this.io.ftruncate(this.fd, this.length);
    } catch {
      this.dirtyTail = true;
    }
    return this.fail(
      'SYNC_FAILED',
      `fsync of ${this.path} failed: ${(cause as Error).message}; ${this.queue.length} event(s) since the last durable point will ` +
        'be written again on the next flush',
      cause,
    );
  }

  /** Synchronous write + fsync, for `exit` handlers and uncaught exceptions. */
  flushSync(): FlushResult {
    const failed = this.writeQueued();
    if (failed) return { ok: false, error: failed, pending: this.pending() };
    if (this.syncedSeq < this.writtenSeq) {
      const seq = this.writtenSeq;
      const length = this.length;
      try {
        this.io.fsyncSync(this.fd);
      } catch (e) {
        return { ok: false, error: this.syncFailed(e), pending: this.pending() };
      }
      this.markSynced(seq, length);
    }
    return this.ok();
  }

  /** Flush, then close the file. Events still failing stay reported in the result. */
  async close(): Promise<FlushResult> {
    if (this.closed) return this.failure ? { ok: false, error: this.failure, pending: this.pending() } : this.ok();
    const r = await this.flush();
    await this.syncChain;
    this.closed = true;
    try {
      this.io.close(this.fd);
    } catch {
      // the descriptor is gone either way
    }
    return r;
  }

  /** Close without flushing (after `flushSync` in an exit handler). */
  closeSync(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.io.close(this.fd);
    } catch {
      // the descriptor is gone either way
    }
  }
}
