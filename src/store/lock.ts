/**
 * One live writer per session, across processes: a lock file beside the log.
 *
 * **Taking a free lock.** The record (pid, host, boot, start time, since, a random token) is
 * written to a temp file that is then hard-linked to `session.lock`: the lock appears complete or
 * not at all, and of two racing processes exactly one link succeeds.
 *
 * **Taking over a stale lock** (its holder is dead) is where naive lock files break: two
 * processes both see the dead holder, both delete the lock, and the slower one deletes the lock
 * the faster one just took. Here a lock *instance* (its token) may only be removed by whoever holds
 * the right to reap that instance, and that right is itself a lock, `session.lock.reap-<token>`,
 * taken by the same protocol. The reaper re-reads the lock and removes it only if it is still the
 * same instance; only one process holds the reap right at a time, and once the instance is gone
 * no later reaper can match it. A reaper that dies holding the right leaves a stale reap lock,
 * which is reaped the same way one level down. Afterwards everyone races on the free lock again,
 * and the losers are told who won.
 *
 * Nothing is fsynced: a lock only matters while its holder lives, and after a power loss every
 * holder is dead (a lock from an earlier boot is stale by its boot id).
 */
import { nodeCrypto } from '../model/node-crypto.js';
import { closeSync, constants, fstatSync, linkSync, openSync, readFileSync, unlinkSync } from 'node:fs';
import { StoreError, isErrno, type LockHolder } from './errors.js';
import { currentProcess, liveness, type ProcessIdentity } from './process-identity.js';
import { tempName, writeAll } from './durable.js';

export interface LockRecord extends ProcessIdentity {
  since: number;
  token: string;
}

interface Observed {
  record: LockRecord | undefined;
  /** The instance: its token, or the inode when the file is unreadable as a record. */
  identity: string;
}

function parseRecord(text: string): LockRecord | undefined {
  try {
    const v = JSON.parse(text) as Partial<LockRecord> | null;
    if (typeof v !== 'object' || v === null) return undefined;
    if (typeof v.pid !== 'number' || typeof v.host !== 'string' || typeof v.since !== 'number' || typeof v.token !== 'string')
      return undefined;
    if (!/^[A-Za-z0-9-]{1,64}$/.test(v.token)) return undefined;
    return v as LockRecord;
  } catch {
    return undefined;
  }
}

/** A record is one JSON line of a few hundred bytes. */
const MAX_RECORD_BYTES = 64 * 1024;

/** The lock file as it is now, or undefined when there is none. */
function observe(path: string): Observed | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK); // a FIFO here must not block the open
  } catch (e) {
    if (isErrno(e, 'ENOENT')) return undefined;
    throw e;
  }
  try {
    const st = fstatSync(fd);
    // Only a small regular file can be a record: a FIFO, a device (/dev/zero never ends) or a huge
    // file is not read, and is a lock of no live holder, like any unreadable one.
    const record = st.isFile() && st.size <= MAX_RECORD_BYTES ? parseRecord(readFileSync(fd, 'utf8')) : undefined;
    return { record, identity: record ? record.token : `ino${st.ino}` };
  } finally {
    closeSync(fd);
  }
}

export function holderOf(r: LockRecord): LockHolder {
  return { pid: r.pid, host: r.host, since: r.since };
}

export class SessionLock {
  private held = true;
  constructor(
    readonly path: string,
    readonly record: LockRecord,
  ) {}

  get isHeld(): boolean {
    return this.held;
  }

  get holder(): LockHolder {
    return holderOf(this.record);
  }

  /** Remove the lock if it is still ours. Synchronous, so it can run in an `exit` handler. */
  release(): void {
    if (!this.held) return;
    this.held = false;
    try {
      // Nobody reaps a live holder's lock, so a lock with our token here is ours to remove.
      if (observe(this.path)?.identity === this.record.token) unlinkSync(this.path);
    } catch {
      // An unremovable lock is stale once we exit; the next opener reaps it.
    }
  }
}

type Attempt = SessionLock | { busy: LockRecord } | 'retry';

const MAX_REAP_DEPTH = 6;

function attempt(path: string, me: ProcessIdentity, depth: number): Attempt {
  const record: LockRecord = { ...me, since: Date.now(), token: nodeCrypto().randomUUID() };
  const tmp = tempName(path);
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeAll(fd, Buffer.from(`${JSON.stringify(record)}\n`), 0);
  } finally {
    closeSync(fd);
  }
  try {
    for (let i = 0; i < 4; i++) {
      try {
        linkSync(tmp, path);
        return new SessionLock(path, record);
      } catch (e) {
        if (!isErrno(e, 'EEXIST')) throw e;
      }
      const cur = observe(path);
      if (cur === undefined) continue; // released meanwhile: race for it again
      const state = cur.record ? liveness(cur.record) : 'dead';
      if (state !== 'dead') return { busy: cur.record! };
      if (depth >= MAX_REAP_DEPTH) return 'retry';
      const reap = attempt(`${path}.reap-${cur.identity}`, me, depth + 1);
      if (!(reap instanceof SessionLock)) return 'retry'; // another process is reaping right now
      try {
        const again = observe(path);
        if (again !== undefined && again.identity === cur.identity) unlinkSync(path);
      } finally {
        reap.release();
      }
    }
    return 'retry';
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      // the temp name is garbage either way
    }
  }
}

export interface AcquireOptions {
  sessionId?: string;
  /** How long to keep retrying while another process is mid-takeover (default 2 s). */
  contentionMs?: number;
}

function lockedError(path: string, holder: LockRecord | undefined, sessionId: string | undefined): StoreError {
  const who = holder
    ? `pid ${holder.pid} on ${holder.host}, since ${new Date(holder.since).toISOString()}`
    : 'another process (taking over a stale lock right now)';
  const remote =
    holder && holder.host !== currentProcess().host
      ? `; this host cannot tell whether it is alive: if ${holder.host} is gone, delete ${path}`
      : '';
  const details: { path: string; sessionId?: string; holder?: LockHolder } = { path };
  if (sessionId !== undefined) details.sessionId = sessionId;
  if (holder) details.holder = holderOf(holder);
  return new StoreError('SESSION_LOCKED', `session ${sessionId ?? path} is locked by ${who}${remote}`, details);
}

/** Take the lock at `path`, taking over a stale one; throws SESSION_LOCKED naming a live holder. */
export async function acquireLock(path: string, opts: AcquireOptions = {}): Promise<SessionLock> {
  const me = currentProcess();
  const deadline = Date.now() + (opts.contentionMs ?? 2000);
  for (;;) {
    const r = attempt(path, me, 0);
    if (r instanceof SessionLock) return r;
    if (r !== 'retry') throw lockedError(path, r.busy, opts.sessionId);
    if (Date.now() >= deadline) throw lockedError(path, observe(path)?.record, opts.sessionId);
    await new Promise((resolve) => setTimeout(resolve, 2 + Math.random() * 15));
  }
}

/** Who holds the lock at `path` right now, if anyone alive does (for listings). */
export function lockHolder(path: string): LockHolder | undefined {
  let cur: Observed | undefined;
  try {
    cur = observe(path);
  } catch (e) {
    // Another user's lock (mode 0600): who holds it cannot be told, and a listing lists the session without.
    if (isErrno(e, 'EACCES', 'EPERM')) return undefined;
    throw e;
  }
  if (cur?.record === undefined) return undefined;
  return liveness(cur.record) === 'dead' ? undefined : holderOf(cur.record);
}
