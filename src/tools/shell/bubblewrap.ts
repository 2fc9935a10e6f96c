/**
 * Bubblewrap as the shell sandbox backend, in every mode:
 *
 * - `read-only`: the whole filesystem read-only, a private `/tmp`;
 * - `workspace-write`: the same with the workspace bound writable;
 * - `danger-full-access`: the whole filesystem bound writable as it is (`/dev` too), the real
 *   `/tmp`: no file restriction at all.
 *
 * Every mode runs the command in its own PID namespace with a fresh `/proc` and
 * `--die-with-parent`: it sees no process of the host (so neither dsh's environment nor its
 * memory), and when dsh dies, however it dies, the namespace's init is killed and the kernel kills
 * every process in it. With network off, `--unshare-net` leaves it only a loopback of its own.
 *
 * Whether bwrap works depends on the machine (installed? user namespaces allowed? running in a
 * container that forbids mounts?), so it is probed by running a trivial sandbox once, and the
 * probe's failure is reported verbatim as the reason enforcement is partial.
 */
import { spawn } from 'node:child_process';
import type { SandboxMode } from '../permissions/modes.js';

export interface BubblewrapProbe {
  ok: boolean;
  path: string;
  /** Why it is unusable, when it is not. */
  reason?: string;
}

const probes = new Map<string, Promise<BubblewrapProbe>>();

export function probeBubblewrap(path = 'bwrap'): Promise<BubblewrapProbe> {
  let p = probes.get(path);
  if (!p) {
    p = new Promise((resolve) => {
      const child = spawn(path, ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-pid', '--die-with-parent', '--', 'true'], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let err = '';
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (d: string) => (err += d));
      child.on('error', (e) => {
        const missing = (e as { code?: string }).code === 'ENOENT';
        resolve({ ok: false, path, reason: missing ? `bubblewrap (${path}) is not installed` : `bubblewrap could not start: ${e.message}` });
      });
      child.on('close', (code) => {
        if (code === 0) resolve({ ok: true, path });
        else resolve({ ok: false, path, reason: `bubblewrap cannot create a sandbox on this machine: ${err.trim() || `exit code ${code}`}` });
      });
    });
    probes.set(path, p);
  }
  return p;
}

export interface BubblewrapOptions {
  /** Cut the network (`--unshare-net`). */
  network: boolean;
  /** Files the command must not read (dsh's config files holding literal keys): an empty file in their place. */
  hide?: readonly string[];
}

/** bwrap arguments for `mode`, ending with `--` (append the command after). */
export function bubblewrapArgs(mode: SandboxMode, root: string, cwd: string, opts: BubblewrapOptions = { network: true }): string[] {
  const args: string[] = [];
  if (mode === 'danger-full-access') {
    // Everything as it is, writable; only /proc is new (the namespace's own processes).
    args.push('--bind', '/', '/', '--dev-bind', '/dev', '/dev', '--proc', '/proc');
  } else {
    args.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp');
    // After the tmpfs, so a workspace under /tmp stays visible.
    args.push(mode === 'workspace-write' ? '--bind' : '--ro-bind', root, root);
    args.push('--unshare-ipc', '--unshare-uts');
  }
  for (const f of opts.hide ?? []) args.push('--ro-bind-try', '/dev/null', f);
  if (!opts.network) args.push('--unshare-net');
  args.push('--unshare-pid', '--die-with-parent', '--chdir', cwd, '--');
  return args;
}
