/**
 * The shell seam: how a command becomes a process. The `bash` tool asks `shell/spawn` for a
 * spawn plan; a sandbox listener may wrap the plan (e.g. in bubblewrap) and says in `sandbox`
 * how well it could enforce the mode. Without listeners the plan is plain `bash -c`. A foreground
 * command then runs through `shell/run` (run.ts).
 */
import type { WaterfallHook } from '../../hooks/bus.js';
import type { SandboxReport } from '../permissions/modes.js';

export interface ShellSpawnRequest {
  command: string;
  /** Checked working directory (a real path inside the workspace). */
  cwd: string;
  /** Workspace root (real path). */
  root: string;
  env: Record<string, string | undefined>;
  background: boolean;
  caller: { callId?: string; toolName?: string };
}

export interface ShellSpawnPlan {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string | undefined>;
  /** Present when a sandbox policy handled the request. */
  sandbox?: SandboxReport;
  /**
   * The plan already ends every process it starts when dsh dies (bubblewrap's
   * `--die-with-parent` and PID namespace). Otherwise the spawn puts the command under the reaper
   * (`shell/reaper.ts`) where it can run.
   */
  diesWithParent?: boolean;
  /**
   * Set by the sandbox policy when nothing in the plan confines the command: no file view, the
   * network on, no file or process of dsh's to hide from it. Only such a command may run outside
   * this process's control (`shell/run` listeners check it); absent means confined.
   */
  unconfined?: boolean;
}

declare module '../../hooks/bus.js' {
  interface HookMap {
    'shell/spawn': WaterfallHook<ShellSpawnRequest, ShellSpawnPlan>;
  }
}

/**
 * Run by `bash -c` before the command: close every descriptor above 2, then run the command in a
 * fresh `bash -c` (so `$0`, `$@` and the shell state are what a plain `bash -c` gives). dsh hands
 * its children whatever its own parent left open without close-on-exec (a file of keys on fd 3, a
 * CI runner's pipe or socket, a lock file), and neither Node's spawn nor bubblewrap closes those:
 * a command would read or write them. Without `/proc` the glob matches nothing and nothing closes.
 */
export const CLOSE_INHERITED_FDS =
  'for f in /proc/self/fd/*; do n=${f##*/}; case $n in 0|1|2|*[!0-9]*) ;; *) eval "exec $n>&-" 2>/dev/null;; esac; done; exec bash -c "$1"';

export function plainPlan(req: ShellSpawnRequest): ShellSpawnPlan {
  return { file: 'bash', args: ['-c', CLOSE_INHERITED_FDS, 'bash', req.command], cwd: req.cwd, env: req.env };
}
