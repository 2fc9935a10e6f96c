/**
 * Who a process is, precisely enough to tell a live lock holder from a dead one. A pid alone is
 * not enough: pids are reused (pid_max is often 32768), and a lock file survives a reboot. So a
 * holder records its host, the boot it ran in and, on Linux, its start time in clock ticks since
 * boot; a holder is dead when its boot is over, its pid is gone, or its pid now names a process
 * that started at another time.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { errnoOf } from './errors.js';
import { procStatFields } from '../model/proc-stat.js';

export interface ProcessIdentity {
  pid: number;
  host: string;
  /** Linux `/proc/sys/kernel/random/boot_id`, when readable. */
  bootId?: string;
  /** Field 22 of `/proc/<pid>/stat` (start time in ticks since boot), when readable. */
  startTime?: string;
}

function readBootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

interface ProcStat {
  state: string;
  startTime: string;
}

/** State and start time of `pid` from /proc, or undefined when unavailable or gone. */
function procStat(pid: number): ProcStat | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const fields = procStatFields(stat);
  const state = fields?.[3];
  const startTime = fields?.[22];
  return state !== undefined && startTime !== undefined ? { state, startTime } : undefined;
}

export function startTimeOf(pid: number): string | undefined {
  return procStat(pid)?.startTime;
}

let self: ProcessIdentity | undefined;

export function currentProcess(): ProcessIdentity {
  if (self === undefined || self.pid !== process.pid) {
    const id: ProcessIdentity = { pid: process.pid, host: hostname() };
    const boot = readBootId();
    if (boot !== undefined) id.bootId = boot;
    const start = startTimeOf(process.pid);
    if (start !== undefined) id.startTime = start;
    self = id;
  }
  return self;
}

export type Liveness = 'alive' | 'dead' | 'unknown-host';

/** Is the process a lock file names still running? Only answerable on this host. */
export function liveness(holder: ProcessIdentity): Liveness {
  const me = currentProcess();
  if (holder.host !== me.host) return 'unknown-host';
  // kill(0) or kill(-n) would signal process groups: a malformed pid is no process at all.
  if (!Number.isSafeInteger(holder.pid) || holder.pid <= 0) return 'dead';
  if (holder.bootId !== undefined && me.bootId !== undefined && holder.bootId !== me.bootId) return 'dead';
  try {
    process.kill(holder.pid, 0);
  } catch (e) {
    // EPERM: the pid exists but belongs to another user, so it is alive.
    if (errnoOf(e) === 'ESRCH') return 'dead';
  }
  const now = procStat(holder.pid);
  if (now !== undefined) {
    // A killed holder whose parent has not reaped it yet is a zombie: it holds nothing.
    if (now.state === 'Z' || now.state === 'X') return 'dead';
    if (holder.startTime !== undefined && now.startTime !== holder.startTime) return 'dead'; // the pid was reused
  }
  return 'alive';
}

/** Is `pid` certainly gone on this host? (For files named by pid; a live or reused pid is kept.) */
export function pidIsDead(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return errnoOf(e) === 'ESRCH';
  }
}
