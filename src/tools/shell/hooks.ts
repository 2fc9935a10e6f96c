/**
 * The shell seam: how a command becomes a process. The `bash` tool asks `shell/spawn` for a
 * spawn plan; a sandbox listener may wrap the plan (e.g. in bubblewrap) and says in `sandbox`
 * how well it could enforce the mode. Without listeners the plan is plain `bash -c`.
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
}

declare module '../../hooks/bus.js' {
  interface HookMap {
    'shell/spawn': WaterfallHook<ShellSpawnRequest, ShellSpawnPlan>;
  }
}

export function plainPlan(req: ShellSpawnRequest): ShellSpawnPlan {
  return { file: 'bash', args: ['-c', req.command], cwd: req.cwd, env: req.env };
}
