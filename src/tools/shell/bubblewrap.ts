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
 * Capabilities: run by root, bwrap keeps every capability for the command unless told otherwise,
 * and a root command holding CAP_SYS_ADMIN simply unmounts what confines it (`umount -l /proc`
 * shows the host's processes, dsh's environment and memory among them; `mount -o remount,rw /`
 * undoes read-only). So every command starts with `--cap-drop ALL`; as root it gets back only
 * what ordinary file ownership work needs (`ROOT_CAPS`), none of which touches mounts,
 * namespaces, other processes, devices or raw network access.
 *
 * Unix sockets: under read-only and workspace-write every path socket outside the workspace (and
 * outside the private `/tmp`) has an empty device bound over it (`sockets.ts`), so a command
 * cannot ask a daemon to act for it; under danger-full-access the same is done only when the
 * network is off (a daemon could reach the network for it); `allowSockets` lets named ones through.
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
      // With the capability flags every command gets, so a bwrap without them counts as unusable.
      const child = spawn(
        path,
        [
          '--ro-bind',
          '/',
          '/',
          '--dev',
          '/dev',
          '--proc',
          '/proc',
          '--unshare-pid',
          '--die-with-parent',
          ...capabilityArgs(),
          '--',
          'true',
        ],
        {
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      let err = '';
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (d: string) => (err += d));
      child.on('error', (e) => {
        const missing = (e as { code?: string }).code === 'ENOENT';
        resolve({
          ok: false,
          path,
          reason: missing ? `bubblewrap (${path}) is not installed` : `bubblewrap could not start: ${e.message}`,
        });
      });
      child.on('close', (code) => {
        if (code === 0) resolve({ ok: true, path });
        else
          resolve({ ok: false, path, reason: `bubblewrap cannot create a sandbox on this machine: ${err.trim() || `exit code ${code}`}` });
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
  /** Path sockets the command must not reach (read-only and workspace-write): an empty device in their place. */
  sockets?: readonly string[];
}

/**
 * What a command run by root keeps: owning, changing and reading files as root does, switching
 * to another user, signalling its own processes, binding a low port. Not kept, among others:
 * SYS_ADMIN (mounts, namespaces), SYS_PTRACE, SYS_RAWIO and SYS_MODULE (kernel memory and code),
 * DAC_READ_SEARCH (`open_by_handle_at` reaches files a bind mount hides), MKNOD (a device node
 * for the disk would read past every mount), NET_RAW and NET_ADMIN (sniffing dsh's own requests
 * to a local gateway), BPF and PERFMON.
 */
export const ROOT_CAPS = [
  'CAP_CHOWN',
  'CAP_DAC_OVERRIDE',
  'CAP_FOWNER',
  'CAP_FSETID',
  'CAP_SETUID',
  'CAP_SETGID',
  'CAP_KILL',
  'CAP_NET_BIND_SERVICE',
  'CAP_AUDIT_WRITE',
] as const;

/** `--cap-drop ALL`, then, for root only (others have none to keep), `ROOT_CAPS`. */
export function capabilityArgs(uid: number | undefined = process.getuid?.()): string[] {
  const args = ['--cap-drop', 'ALL'];
  if (uid === 0) for (const c of ROOT_CAPS) args.push('--cap-add', c);
  return args;
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
  for (const s of opts.sockets ?? []) args.push('--ro-bind-try', '/dev/null', s);
  for (const f of opts.hide ?? []) args.push('--ro-bind-try', '/dev/null', f);
  if (!opts.network) args.push('--unshare-net');
  args.push(...capabilityArgs(), '--unshare-pid', '--die-with-parent', '--chdir', cwd, '--');
  return args;
}
