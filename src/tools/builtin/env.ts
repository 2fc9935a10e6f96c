/** What the built-in tools share within one agent: where to spill, background jobs, limits. */
import type { JobRegistry } from '../shell/jobs.js';
import type { LocalFsOptions } from '../fs/local.js';
import type { ToolRunContext } from '../types.js';
import { WorkspaceFs } from '../fs/seam.js';
import { displayPath } from '../fs/paths.js';

export interface BashLimits {
  /** Default per-call timeout. */
  defaultTimeoutMs: number;
  /** Ceiling for a model-requested `timeoutMs`. */
  maxTimeoutMs: number;
  /** Per stream; past it the output is cut to head + tail and the whole stream spilled. */
  maxOutputBytes: number;
}

export interface BuiltinEnv {
  /** Where oversized output and background job logs go (readable by `read` and `grep`). */
  spillDir: string;
  jobs: JobRegistry;
  fs: LocalFsOptions;
  bash: BashLimits;
  /** Extra environment for shell commands. */
  shellEnv?: Record<string, string>;
  /** Variables (and their values under any name) kept out of shell commands: credentials. */
  hideEnv?: readonly string[];
  /** Secret values: no variable holding one reaches a shell command, whatever its name. */
  hideValues?: readonly string[];
}

export function fsFor(ctx: ToolRunContext, env: BuiltinEnv): WorkspaceFs {
  return WorkspaceFs.forCall(ctx, env.fs);
}

/** A real path as the user spells the workspace (what results show). */
export function shown(ctx: ToolRunContext, real: string): Promise<string> {
  return displayPath(ctx.cwd, real);
}

/** The note that ends a result whose full form was saved to a file. */
export function spillNote(omitted: string, path: string): string {
  return `(${omitted}. Full output saved to: ${path}. Use read with offset/limit, or grep this path to search within it.)`;
}
