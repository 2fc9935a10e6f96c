/**
 * `codingTools()`: the plugin that registers the built-in tools (dsh's names and argument
 * shapes) and confines the filesystem seam to the workspace. Permissions (sandbox modes,
 * approval) are a separate plugin, `permissions()`.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolPlugin } from './host.js';
import type { ToolDefinition } from './types.js';
import { JobRegistry } from './shell/jobs.js';
import { attachFsPolicy, workspaceConfinement } from './fs/policy.js';
import type { BashLimits, BuiltinEnv } from './builtin/env.js';
import { bashTool } from './builtin/bash.js';
import { jobKillTool, jobListTool, jobOutputTool } from './builtin/jobs.js';
import { readTool } from './builtin/read.js';
import { editTool, writeTool } from './builtin/write-edit.js';
import { globTool, grepTool } from './builtin/search.js';
import { todoWriteTool } from './builtin/todo.js';
import { PersistentShellSlot, persistentBashTool } from './builtin/persistent-bash.js';
import { strReplaceEditorTool } from './builtin/str-replace-editor.js';
import type { ToolSet } from './tool-sets.js';

export const BUILTIN_TOOL_NAMES = [
  'bash',
  'job_output',
  'job_kill',
  'job_list',
  'read',
  'write',
  'edit',
  'glob',
  'grep',
  'todo_write',
] as const;
export type BuiltinToolName = (typeof BUILTIN_TOOL_NAMES)[number];

export { isToolSet, TOOL_SETS, type ToolSet } from './tool-sets.js';

export interface CodingToolsOptions {
  /** The tool set (default `standard`); `only` picks among the standard set's tools. */
  toolSet?: ToolSet;
  /** Register only these (default: all). */
  only?: readonly BuiltinToolName[];
  bash?: Partial<BashLimits>;
  /** Extra environment for shell commands. */
  shellEnv?: Record<string, string>;
  /**
   * Environment variables holding credentials that shell commands must not see, beyond those
   * whose names say so (`*AUTH*`, `*TOKEN*`, `*SECRET*`, `*PASSWORD*`, `*CREDENTIAL*`, `*_KEY`, …); their values are hidden
   * under any other name too. `createCodingAgent` adds every configured provider's `apiKeyEnv`.
   */
  hideEnv?: readonly string[];
  /**
   * Secret values (keys, header values, URL credentials): any variable holding one is kept out of
   * shell commands, whatever its name. `createCodingAgent` adds every one the config and the
   * environment give it.
   */
  hideValues?: readonly string[];
  /** Where oversized output and job logs go; default a per-session directory under the OS tmpdir. */
  spillDir?: string;
  /** `auto` (default) searches with ripgrep when installed; `off` forces the JS search. */
  ripgrep?: 'auto' | 'off' | string;
  /**
   * bwrap, for running ripgrep where it sees only the searched roots (default `bwrap` on PATH);
   * where it cannot run, or `false`, `grep` uses the JS search.
   */
  bubblewrap?: string | false;
  /**
   * Confine the filesystem seam to the workspace (default true). Turning it off makes file tools
   * reach anything the process can; only for trusted, already isolated environments.
   */
  confine?: boolean;
}

export const DEFAULT_BASH_LIMITS: BashLimits = { defaultTimeoutMs: 120_000, maxTimeoutMs: 600_000, maxOutputBytes: 30_000 };

export function codingTools(opts: CodingToolsOptions = {}): ToolPlugin {
  return (host) => {
    const spillDir = opts.spillDir ?? join(tmpdir(), `dsh-${host.session.id}`);
    const jobs = new JobRegistry({ logDir: spillDir });
    const env: BuiltinEnv = {
      spillDir,
      jobs,
      fs: {
        ...(opts.ripgrep !== undefined ? { ripgrep: opts.ripgrep } : {}),
        ...(opts.bubblewrap !== undefined ? { bubblewrap: opts.bubblewrap } : {}),
      },
      bash: { ...DEFAULT_BASH_LIMITS, ...opts.bash },
      ...(opts.shellEnv ? { shellEnv: opts.shellEnv } : {}),
      ...(opts.hideEnv ? { hideEnv: opts.hideEnv } : {}),
      ...(opts.hideValues ? { hideValues: opts.hideValues } : {}),
    };
    const all: Record<BuiltinToolName, () => ToolDefinition> = {
      bash: () => bashTool(env),
      job_output: () => jobOutputTool(env),
      job_kill: () => jobKillTool(env),
      job_list: () => jobListTool(env),
      read: () => readTool(env),
      write: () => writeTool(env),
      edit: () => editTool(env),
      glob: () => globTool(env),
      grep: () => grepTool(env),
      todo_write: () => todoWriteTool(),
    };
    const shells = new PersistentShellSlot();
    if (opts.toolSet === 'minimal') {
      host.tool(persistentBashTool(env, shells));
      host.tool(strReplaceEditorTool(env));
    } else for (const name of opts.only ?? BUILTIN_TOOL_NAMES) host.tool(all[name]());
    if (opts.confine !== false) {
      // First in every fs/* chain, so every later policy sees a checked real path.
      attachFsPolicy(host.on, 'workspace-confinement', workspaceConfinement([{ path: spillDir, access: 'read' }]), { prepend: true });
    }
    // The persistent shell and background jobs end with the agent (session close, dispose).
    return () => {
      void jobs.dispose();
      void shells.dispose();
    };
  };
}
