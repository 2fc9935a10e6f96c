/**
 * `SessionStore`: sessions as files under a root, in dsh's JSONL layout.
 *
 *   create  a new session, its header published atomically and never over an existing log
 *   open    resume one for writing: lock, load, preserve a torn tail in a sidecar, persist the
 *           crash-repair closers, then write every new event
 *   inspect read-only view (no lock, nothing written; repair closers only in memory)
 *   list    headers and stat only
 *   fork    a new session seeded with a prefix of another, published whole
 */
import { closeSync, existsSync, fsyncSync, ftruncateSync, lstatSync, openSync, statSync } from 'node:fs';
import { open as openHandle } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { encodeEvents, encodeHeaderLine, Session, type LogWarning, type ResumeIndex, type SessionOptions } from '../session/index.js';
import { StoreError, isErrno } from './errors.js';
import { compressedLogError, checkIdentity, listSessions, locate, type Listing, type SessionInfo } from './discover.js';
import type { ListingSummarizer } from './listing-cache.js';
import { listIndexed, listingGeneration, type ListingGeneration } from './listing-index.js';
import { journalTouch } from './listing-journal.js';
import type { JsonValue } from '../model/json.js';
import { mkdirDurable, publishNew, sweepTemps, writeAll, type PublishOptions } from './durable.js';
import { pidIsDead } from './process-identity.js';
import { flushAllSync } from './exit.js';
import { COMPRESSED_LOG_FILE, LOCK_FILE, defaultRoot, logPath, sessionDir } from './layout.js';
import { readLog, readLogFile, writeResumeIndex, type LogLoad } from './load.js';
import { acquireLock, type SessionLock } from './lock.js';
import { StoredSession } from './stored-session.js';
import { forkChild, validateImport } from './shared.js';
import type {
  CreateOptions,
  ForkOptions,
  ImportedLog,
  InspectOptions,
  OpenOptions,
  Recovery,
  Store,
  StoreInspection,
} from './interface.js';
import { preserveTail } from './tail.js';
import { LogWriter, type FlushResult, type WriterIo, type WriterOptions } from './writer.js';

export interface SessionStoreOptions {
  /** Where sessions live; default `$DSH_HOME/sessions` (DSH_HOME defaults to ~/.dsh). */
  root?: string;
  /** Event clock for sessions this store creates or opens (default `Date.now`). */
  clock?: () => number;
  /** Plugin event types this reader owns, besides the built-in vocabulary. */
  knownTypes?: ReadonlySet<string>;
  /**
   * Resume through the sidecar index beside each log (`resume-index.json`, a cache rebuilt from
   * the log when missing or stale; default true). Off: every open loads the whole file.
   */
  resumeIndex?: boolean;
  /**
   * List through the listing index (listing-index.ts: trusts what this store's writers did not
   * announce, so a log changed by another program is seen only by a rescan; default false: every
   * listing `stat`s every log through the listing cache). Writers keep the index current either way.
   */
  listingIndex?: boolean;
  /** How long `open` waits while another process is mid-takeover of a stale lock (default 2 s). */
  lockContentionMs?: number;
  /** Test seams: file operations of the writer, and the steps of an atomic publish. */
  io?: WriterIo;
  onPublishStep?: PublishOptions['onStep'];
}

export type { CreateOptions, ForkOptions } from './interface.js';

export interface Inspection extends LogLoad, StoreInspection {
  path: string;
}

export class SessionStore implements Store {
  readonly kind = 'jsonl';
  readonly root: string;
  private readonly opts: SessionStoreOptions;
  private readonly handles = new Map<string, StoredSession>();
  private closedStore = false;

  constructor(opts: SessionStoreOptions = {}) {
    this.opts = opts;
    this.root = resolve(opts.root ?? defaultRoot());
  }

  get location(): string {
    return this.root;
  }

  /** Flush every open log of this process synchronously (for SIGINT/SIGTERM handlers). */
  static flushAllSync(): void {
    flushAllSync();
  }

  /** The open handle of a session in this store, if it is open here. */
  handle(idOrSession: string | Session): StoredSession | undefined {
    const id = typeof idOrSession === 'string' ? idOrSession : idOrSession.id;
    const h = this.handles.get(id);
    return h && (typeof idOrSession === 'string' || h.session === idOrSession) ? h : undefined;
  }

  /** The path a session's log has (or would have); no I/O. */
  pathOf(cwd: string | undefined, id: string): string {
    return logPath(this.root, cwd, id);
  }

  private sessionOptions(): Pick<SessionOptions, 'clock'> {
    return this.opts.clock ? { clock: this.opts.clock } : {};
  }

  private assertOpen(): void {
    if (this.closedStore) throw new StoreError('CLOSED', `the store at ${this.root} is closed`, { path: this.root });
  }

  /**
   * A new, empty session whose header is on disk when this resolves. Fails with SESSION_EXISTS
   * (or SESSION_LOCKED, if the other creator still holds it) when the id is taken.
   */
  async create(opts: CreateOptions): Promise<StoredSession> {
    this.assertOpen();
    if (typeof opts.cwd !== 'string' || opts.cwd === '') throw new StoreError('INVALID_ARGUMENT', 'create() needs the session cwd', {});
    const sopts: SessionOptions = { ...this.sessionOptions(), header: { ...opts.header, cwd: opts.cwd } };
    if (opts.id !== undefined) sopts.id = opts.id;
    const session = Session.create(sopts);
    if (opts.id !== undefined) await this.refuseExisting(session.id);
    return this.publish(session);
  }

  /** A new session seeded with `source`'s events through `boundary` (inclusive; default all). */
  async fork(sourceId: string, boundary?: number, opts: ForkOptions = {}): Promise<StoredSession> {
    this.assertOpen();
    const live = this.handles.get(sourceId);
    const fopts: SessionOptions = { ...this.sessionOptions() };
    if (opts.id !== undefined) fopts.id = opts.id;
    if (opts.header !== undefined) fopts.header = opts.header;
    const child = await forkChild(sourceId, boundary, fopts, live?.session, (id, o) => this.inspect(id, o));
    if (opts.id !== undefined) await this.refuseExisting(child.id);
    return this.publish(child);
  }

  private async refuseExisting(id: string): Promise<void> {
    try {
      const path = await locate(this.root, id);
      throw new StoreError('SESSION_EXISTS', `session ${JSON.stringify(id)} already exists at ${path}`, { path, sessionId: id });
    } catch (e) {
      if (e instanceof StoreError && e.code === 'SESSION_NOT_FOUND') return;
      throw e;
    }
  }

  /** Write a new session (header plus any seed) as a new file, then attach its writer. */
  private async publish(session: Session): Promise<StoredSession> {
    const dir = sessionDir(this.root, session.header.cwd, session.id);
    const path = join(dir, 'session.jsonl');
    if (existsSync(join(dir, COMPRESSED_LOG_FILE))) throw compressedLogError(join(dir, COMPRESSED_LOG_FILE), session.id);
    makeSessionDir(dir);
    const lock = await acquireLock(join(dir, LOCK_FILE), this.lockOptions(session.id));
    try {
      this.announce(dir);
      sweepTemps(dir, pidIsDead); // an earlier creator's publish cut short by a crash
      const events = session.events;
      const data = Buffer.from(encodeHeaderLine(session.header) + encodeEvents(events), 'utf8');
      const publishOpts: PublishOptions = {};
      if (this.opts.onPublishStep) publishOpts.onStep = this.opts.onPublishStep;
      if (!publishNew(path, data, publishOpts)) {
        throw new StoreError('SESSION_EXISTS', `session ${JSON.stringify(session.id)} already exists at ${path}; nothing was overwritten`, {
          path,
          sessionId: session.id,
        });
      }
      return this.attach(session, path, lock, data.length, events.length, [], { repaired: [] });
    } catch (e) {
      lock.release();
      throw e;
    }
  }

  /**
   * Under the session's lock, before anything in `dir` is written: the listing index re-checks it
   * (and keeps checking it while its lock is held). See listing-journal.ts.
   */
  private announce(dir: string): void {
    journalTouch(this.root, `${basename(dirname(dir))}/${basename(dir)}`);
  }

  private lockOptions(id: string): { sessionId: string; contentionMs?: number } {
    const o: { sessionId: string; contentionMs?: number } = { sessionId: id };
    if (this.opts.lockContentionMs !== undefined) o.contentionMs = this.opts.lockContentionMs;
    return o;
  }

  private newWriter(
    session: Session,
    path: string,
    length: number,
    nextSeq: number,
    sink: { handle?: StoredSession; early: StoreError[] },
  ): LogWriter {
    const writerOpts: WriterOptions = {
      fd: openSync(path, 'r+'),
      path,
      sessionId: session.id,
      length,
      nextSeq,
      onError: (e) => (sink.handle ? sink.handle.reportError(e) : sink.early.push(e)),
    };
    if (this.opts.io) writerOpts.io = this.opts.io;
    return new LogWriter(writerOpts);
  }

  private attach(
    session: Session,
    path: string,
    lock: SessionLock,
    length: number,
    nextSeq: number,
    warnings: LogWarning[],
    recovery: Recovery,
  ): StoredSession {
    const sink: { handle?: StoredSession; early: StoreError[] } = { early: [] };
    const writer = this.newWriter(session, path, length, nextSeq, sink);
    return this.wrap(session, path, lock, writer, warnings, recovery, sink);
  }

  private wrap(
    session: Session,
    path: string,
    lock: SessionLock,
    writer: LogWriter,
    warnings: LogWarning[],
    recovery: Recovery,
    sink: { handle?: StoredSession; early: StoreError[] },
    resumeIndex?: { index: ResumeIndex; unwritten: boolean },
  ): StoredSession {
    const handle = new StoredSession({
      session,
      path,
      writer,
      lock,
      warnings,
      recovery,
      onClosed: (h) => this.handles.delete(h.id),
      ...(resumeIndex ? { resumeIndex } : {}),
    });
    sink.handle = handle;
    for (const e of sink.early) handle.reportError(e);
    this.handles.set(session.id, handle);
    return handle;
  }

  /**
   * Resume a session for writing. Takes the session's lock (SESSION_LOCKED names a live holder;
   * a dead holder's lock is taken over), loads and validates the log, moves a torn tail into a
   * sidecar, and makes the crash-repair closers and the seed marker durable before returning.
   */
  async open(id: string, opts: OpenOptions = {}): Promise<StoredSession> {
    this.assertOpen();
    if (this.handles.has(id)) {
      const h = this.handles.get(id)!;
      throw new StoreError('SESSION_LOCKED', `session ${id} is already open in this process (this store)`, { path: h.path, sessionId: id });
    }
    const path = await locate(this.root, id, opts.cwd);
    // A session directory that is a link (the lookup follows it) would take the lock, the resume
    // index and every append outside the root: refused as create refuses it.
    plainDir(dirname(path));
    refuseLinkedLog(path, id);
    const lock = await acquireLock(join(dirname(path), LOCK_FILE), this.lockOptions(id));
    try {
      this.announce(dirname(path));
      return await this.openLocked(id, path, lock);
    } catch (e) {
      lock.release();
      throw e;
    }
  }

  private async openLocked(id: string, path: string, lock: SessionLock): Promise<StoredSession> {
    sweepTemps(dirname(path), pidIsDead);
    const fh = await openHandle(path, 'r');
    let load: LogLoad;
    let size: number;
    try {
      size = (await fh.stat()).size;
      load = await readLog(fh, path, size, { ...this.readOptions(path), resumeIndex: this.opts.resumeIndex !== false });
    } finally {
      await fh.close();
    }
    checkIdentity(this.root, path, load.header, id);
    checkSeed(load, path);
    // A newer format's log is read as format 0 in memory; appending format 0 lines to it would
    // mix formats in one file. (Nothing was written: the lock is released by the caller.)
    if (load.warnings.some((w) => w.code === 'FORMAT_CONVERTED')) {
      throw new StoreError(
        'FORMAT_NOT_WRITABLE',
        `${path}: written in a newer dsh session format; this build appends only to format 0 logs (write a format 0 copy with dsh ` +
          'log convert --to 0)',
        { path },
      );
    }
    // An index built by a full load is written now, before anything is appended (it describes the
    // bytes as loaded, a prefix of the file to come), so a crash does not cost the next resume the
    // full load again. One grown or restamped from the index on disk waits for the close: that one
    // still fits the prefix if this process dies, and writing it here would put a serialisation of
    // the whole index before the first model request.
    const deferIndex = load.fromIndex === true;
    if (load.newIndex && !deferIndex) writeResumeIndex(path, load.newIndex);
    const warnings = [...load.warnings];
    const recovery: Recovery = { repaired: load.repaired.map((d) => d.type) };
    let length = load.goodLength;
    if (load.tornTail) {
      const sidecar = preserveTail(path, load.goodLength, size);
      truncateDurably(path, length);
      recovery.tornTail = { ...load.tornTail, bytes: size - length, sidecar };
      for (const w of warnings) if (w.code === 'TORN_TAIL') w.message += `; the ${size - length} torn byte(s) were moved to ${sidecar}`;
    } else if (!load.endsWithNewline) {
      // The last line parsed but lacks its newline: end it, or the next line would fuse with it.
      length = appendNewline(path, length);
    }
    const nextSeq = load.eventCount;
    const sink: { handle?: StoredSession; early: StoreError[] } = { early: [] };
    const writer = this.newWriter(load.session, path, length, nextSeq, sink);
    // The index's stamp is the file as loaded: the writer keeps the chain from it (see restatIndexAfterWrites).
    if (load.index) writer.watch(load.index.file);
    // Closers and the seed marker are new events: durable before anyone builds on them.
    for (const e of load.session.since(nextSeq)) writer.enqueue(e);
    const r = await writer.flush();
    if (!r.ok) {
      writer.closeSync();
      throw r.error;
    }
    const index = load.index && { index: load.index, unwritten: deferIndex && load.newIndex !== undefined };
    return this.wrap(load.session, path, lock, writer, warnings, recovery, sink, index);
  }

  private readOptions(path: string): { file: string; clock?: () => number; knownTypes?: ReadonlySet<string> } {
    const o: { file: string; clock?: () => number; knownTypes?: ReadonlySet<string> } = { file: path };
    if (this.opts.clock) o.clock = this.opts.clock;
    if (this.opts.knownTypes) o.knownTypes = this.opts.knownTypes;
    return o;
  }

  /** Load a session read-only: no lock, nothing written, a torn tail reported but left in place. */
  async inspect(id: string, opts: InspectOptions = {}): Promise<Inspection> {
    const path = await locate(this.root, id, opts.cwd);
    const load = await readLogFile(path, { ...this.readOptions(path), ...(opts.repair === false ? { repair: false } : {}) });
    checkIdentity(this.root, path, load.header, id);
    checkSeed(load, path);
    return { ...load, path, location: path };
  }

  /** Publish a whole session as given (`dsh sessions import`): one new file, header and events, atomically. */
  async importLog(log: ImportedLog): Promise<SessionInfo> {
    this.assertOpen();
    validateImport(log, this.opts.knownTypes);
    const id = log.header.id;
    await this.refuseExisting(id);
    const dir = sessionDir(this.root, log.header.cwd, id);
    const path = join(dir, 'session.jsonl');
    if (existsSync(join(dir, COMPRESSED_LOG_FILE))) throw compressedLogError(join(dir, COMPRESSED_LOG_FILE), id);
    makeSessionDir(dir);
    const lock = await acquireLock(join(dir, LOCK_FILE), this.lockOptions(id));
    try {
      this.announce(dir);
      sweepTemps(dir, pidIsDead);
      const data = Buffer.from(encodeHeaderLine(log.header) + encodeEvents(log.events), 'utf8');
      if (!publishNew(path, data, this.opts.onPublishStep ? { onStep: this.opts.onPublishStep } : {})) {
        throw new StoreError('SESSION_EXISTS', `session ${JSON.stringify(id)} already exists at ${path}; nothing was overwritten`, {
          path,
          sessionId: id,
        });
      }
    } finally {
      lock.release();
    }
    const st = statSync(path);
    return { id, header: log.header, path, location: path, size: st.size, mtimeMs: st.mtimeMs, modifiedMs: st.mtimeMs };
  }

  /**
   * Every session under the root: headers (line 1) and stat only, remembered in the listing cache
   * for logs that did not change; with `listingIndex`, from the listing index (`rescan`: a full
   * scan that rebuilds it). With a summarizer, each session carries its summary too.
   */
  list(summarizer?: ListingSummarizer<JsonValue>, opts: { rescan?: boolean } = {}): Promise<Listing> {
    if (this.opts.listingIndex || opts.rescan) return listIndexed(this.root, summarizer, opts.rescan === true);
    return listSessions(this.root, summarizer);
  }

  /**
   * The generation `list(summarizer)` would carry now, and its live sessions (held open) checked
   * afresh, when the listing index can tell without reading the listing (see listingGeneration);
   * undefined without the index or when it cannot.
   */
  async listingGeneration(summarizer?: ListingSummarizer<JsonValue>): Promise<ListingGeneration | undefined> {
    return this.opts.listingIndex ? listingGeneration(this.root, summarizer) : undefined;
  }

  /** Close every session this store opened. Results in open order; a failed close stays open. */
  async close(): Promise<FlushResult[]> {
    const results: FlushResult[] = [];
    for (const h of [...this.handles.values()]) results.push(await h.close());
    if (this.handles.size === 0) this.closedStore = true;
    return results;
  }
}

/** `path` is a directory itself (not a link to one); false when it does not exist. */
function plainDir(path: string): boolean {
  try {
    const st = lstatSync(path);
    if (st.isDirectory()) return true;
  } catch (e) {
    if (isErrno(e, 'ENOENT')) return false;
    throw e;
  }
  throw new StoreError('NOT_A_DIRECTORY', `${path}: not a plain directory (a symbolic link or a file); nothing is written through it`, {
    path,
  });
}

/**
 * A log that is a symbolic link (the lookup follows it to a regular file) would take the session's
 * appends, from the open's own end marker on, to a file outside the session's directory.
 */
function refuseLinkedLog(path: string, id: string): void {
  let linked = false;
  try {
    linked = lstatSync(path).isSymbolicLink();
  } catch (e) {
    if (!isErrno(e, 'ENOENT')) throw e; // gone since the lookup: the open says so
  }
  if (linked) {
    throw new StoreError('NOT_A_FILE', `${path}: a symbolic link, not the session's own log; nothing is read or written through it`, {
      path,
      sessionId: id,
    });
  }
}

/**
 * Make a session's directory, refusing a project or session directory that is a symbolic link
 * (or a file): listings and lookups follow only real directories under the root, so a session made
 * through a link would be written outside the root and never found again. Checked before the
 * directories are made (a link would be followed) and after (one made meanwhile).
 */
function makeSessionDir(dir: string): void {
  plainDir(dirname(dir));
  plainDir(dir);
  mkdirDurable(dir);
  if (!plainDir(dirname(dir)) || !plainDir(dir)) throw new StoreError('NOT_A_DIRECTORY', `${dir}: vanished as it was made`, { path: dir });
}

function checkSeed(load: LogLoad, path: string): void {
  const seed = load.header.seedLength;
  if (seed !== undefined && load.eventCount < seed) {
    throw new StoreError(
      'SEED_TRUNCATED',
      `${path}: the header says ${seed} event(s) were inherited from ${load.header.parentSession ?? 'a parent session'}` +
        `, but the log holds only ${load.eventCount}` +
        `${load.tornTail ? ` (reading stopped at line ${load.tornTail.line}: ${load.tornTail.reason})` : ''}; refusing to resume a ` +
        'damaged seed',
      { path, sessionId: load.header.id },
    );
  }
}

function truncateDurably(path: string, length: number): void {
  const fd = openSync(path, 'r+');
  try {
    ftruncateSync(fd, length);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function appendNewline(path: string, length: number): number {
  const fd = openSync(path, 'r+');
  try {
    writeAll(fd, Buffer.from('\n'), length);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return length + 1;
}
