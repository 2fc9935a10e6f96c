/**
 * Bubblewrap as the shell sandbox backend. The whole filesystem is mounted read-only; the
 * workspace is bound writable under `workspace-write` only; `/tmp` is a private tmpfs (scratch
 * space that never reaches the host). Network is left alone: sandbox modes govern file effects.
 *
 * Whether bwrap works depends on the machine (installed? user namespaces allowed? running in a
 * container that forbids mounts?), so it is probed by running a trivial sandbox once, and the
 * probe's failure is reported verbatim as the reason enforcement is partial.
 */
import { spawn } from 'node:child_process';

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

/** bwrap arguments for `mode`, ending with `--` (append the command after). */
export function bubblewrapArgs(mode: 'read-only' | 'workspace-write', root: string, cwd: string): string[] {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
  // After the tmpfs, so a workspace under /tmp stays visible.
  args.push(mode === 'workspace-write' ? '--bind' : '--ro-bind', root, root);
  args.push('--unshare-pid', '--unshare-ipc', '--unshare-uts', '--die-with-parent', '--chdir', cwd, '--');
  return args;
}
