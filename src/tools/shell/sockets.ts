/**
 * Unix sockets a sandboxed command must not reach. A read-only bind stops writes, not
 * `connect()`: a daemon listening on a path socket (the Docker or containerd API, the D-Bus
 * system bus, systemd's private socket, a database) acts for whoever connects, outside the
 * workspace and beyond dsh's life. So before each command the sandbox lists the path sockets
 * that exist and binds an empty device over each; `connect()` to a path that is not a socket
 * fails (`ECONNREFUSED`).
 *
 * Where the list comes from, so no daemon is missed for living in an unusual place:
 * - `/proc/net/unix`: every bound path socket of dsh's network namespace, wherever it lives
 *   (`/run`, `/var/lib`, a home directory, `$XDG_RUNTIME_DIR`);
 * - a bounded scan of `/run` (`/var/run`) and `$XDG_RUNTIME_DIR`, for sockets bound in another
 *   network namespace (a container's daemon whose socket is bind-mounted onto the host).
 *
 * Abstract sockets (`@name`) have no path and cannot be masked: only a network namespace of the
 * command's own (`--no-network`) cuts them.
 */
import { lstatSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';

/** Directories scanned besides /proc/net/unix, and how deep. */
const SCAN_DEPTH = 4;
/** A bound on what is masked (bwrap's argument list) and on the scan's work. */
const MAX_SOCKETS = 2000;
const MAX_SCANNED = 20_000;

/** Path sockets listed in a `/proc/net/unix` text (abstract names, `@…`, are skipped). */
export function parseProcNetUnix(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n').slice(1)) {
    // Num RefCount Protocol Flags Type St Inode Path: the path is everything after the 7th field.
    const m = /^\s*\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s(.+)$/.exec(line);
    const path = m?.[1];
    if (path?.startsWith('/')) out.push(path);
  }
  return out;
}

/** The socket's real path (directories on the way resolved), or undefined when `path` is no socket. */
function socketAt(path: string): string | undefined {
  try {
    return lstatSync(path).isSocket() ? realpathSync(path) : undefined;
  } catch {
    return undefined;
  }
}

function socketDir(d: string): string | undefined {
  try {
    return realpathSync(d);
  } catch {
    return undefined;
  }
}

function scan(dir: string, depth: number, out: Set<string>, budget: { left: number }): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (--budget.left < 0 || out.size >= MAX_SOCKETS) return;
    const p = join(dir, name);
    let st;
    try {
      st = lstatSync(p);
    } catch {
      continue;
    }
    if (st.isSocket()) out.add(p);
    else if (st.isDirectory() && depth > 1) scan(p, depth - 1, out, budget);
  }
}

export interface SocketScanOptions {
  /** Extra directories to scan (default: `/run`, `/var/run`, `$XDG_RUNTIME_DIR`). */
  dirs?: readonly string[];
  /** The `/proc/net/unix` to read (tests). */
  procNetUnix?: string;
}

/** Every path socket that exists now, from `/proc/net/unix` and the scan (sorted, once each). */
export function hostSockets(opts: SocketScanOptions = {}): string[] {
  const found = new Set<string>();
  try {
    for (const p of parseProcNetUnix(readFileSync(opts.procNetUnix ?? '/proc/net/unix', 'utf8'))) {
      const real = found.size < MAX_SOCKETS ? socketAt(p) : undefined;
      if (real !== undefined) found.add(real);
    }
  } catch {
    // no /proc/net/unix (not Linux, or /proc not mounted): the scan still runs
  }
  const dirs = opts.dirs ?? ['/run', '/var/run', ...(process.env.XDG_RUNTIME_DIR ? [process.env.XDG_RUNTIME_DIR] : [])];
  const budget = { left: MAX_SCANNED };
  for (const d of new Set(dirs.map((d) => socketDir(d)))) if (d !== undefined) scan(d, SCAN_DEPTH, found, budget);
  return [...found].sort();
}

function under(dir: string, p: string): boolean {
  return p === dir || p.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
}

/**
 * The sockets to mask for one command: every host socket except those in `keep` (directories
 * whose sockets are the command's own business, or that the sandbox already replaces, like a
 * private `/tmp`) and those the user allowed (a socket's path, or a directory holding it).
 */
export function socketsToMask(sockets: readonly string[], keep: readonly string[], allow: readonly string[] = []): string[] {
  return sockets.filter((s) => ![...keep, ...allow].some((k) => under(k, s)));
}
