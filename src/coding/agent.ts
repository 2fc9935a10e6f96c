/**
 * The coding agent preset: the agent loop plus the built-in tools, permissions, MCP servers, the
 * coding system prompt, runtime context and workspace instructions, configured from the config
 * file(s) with per-call overrides. What `dsh run` and `dsh chat` start; usable from code too.
 */
import { resolve } from 'node:path';
import { assembleAgent, type Agent } from '../agent/agent.js';
import type { Plugin } from '../agent/context.js';
import type { LlmAdapter } from '../llm/adapter.js';
import { chooseModel } from '../llm/select.js';
import { isModelChoice, type ModelChoice } from '../llm/model-choice.js';
import { keyVariables } from '../llm/secrets.js';
import { configuredSecrets } from './secrets.js';
import type { Session } from '../session/session.js';
import { codingTools, isToolSet, type CodingToolsOptions, type ToolSet } from '../tools/coding-tools.js';
import { permissions, shellEnforcement, type PermissionsOptions } from '../tools/permissions/plugin.js';
import type { ApprovalPolicy, SandboxMode, SandboxReport } from '../tools/permissions/modes.js';
import { permissionsOptionsFrom } from '../tools/config-options.js';
import { connectMcpServers, type McpServers } from '../tools/mcp/plugin.js';
import type { ApprovalHandler } from '../tools/pipeline.js';
import { llmSection, loadConfig, projectTrusted, type DshConfig } from '../config/config.js';
import { hookBridge, loadHookConfigs, type HookFile } from './hook-bridge/index.js';
import type { RetryPolicyOptions } from '../agent/retry.js';
import { compaction, type CompactionOptions } from '../compaction/engine.js';
import { mergeCompactionConfig } from '../compaction/policy.js';
import { CODING_SYSTEM_PROMPT, MINIMAL_SYSTEM_PROMPT } from './prompt.js';
import { sessionTitle } from './title.js';
import { defaultContextSections, gitBranch, runtimeContext, workspaceInstructions, type ContextSection } from './context.js';

export interface CodingAgentOptions {
  /** Workspace root (default: the current directory). */
  cwd?: string;
  /**
   * `provider:model`, which overrides DSH_MODEL and the config file; or a choice already made from
   * them (`chooseModel`), as the CLI passes it. Absent: DSH_MODEL, the config file, the default.
   */
  model?: string | ModelChoice;
  reasoningEffort?: string;
  maxTokens?: number;
  /** The loaded config; read from the standard locations when absent. */
  config?: DshConfig;
  session?: Session;
  /** Approval callback for a UI; without one, anything that would ask is denied with a reason. */
  approve?: ApprovalHandler;
  /** Overrides of the config's sandbox and permissions (e.g. command-line flags). */
  sandbox?: SandboxMode;
  approval?: ApprovalPolicy;
  /** `false`: shell commands run without a network (overrides the config's `sandbox.network`). */
  network?: boolean;
  /** Files no tool may read (the CLI passes its config files that hold literal keys). */
  hidePaths?: readonly string[];
  /** Why this process's environment block still holds keys (see `PermissionsOptions.exposedKeys`). */
  exposedKeys?: string;
  allow?: readonly string[];
  ask?: readonly string[];
  deny?: readonly string[];
  tools?: CodingToolsOptions;
  /**
   * dsh's agent presets, which choose the tools: `standard` (the built-in tools) or `minimal`
   * (a persistent-shell `bash` and `str_replace_editor`, with a prompt for them). Absent: the one
   * the session last recorded (`agent-preset/selected`), else `standard`. A choice that differs
   * from the recorded one is recorded.
   */
  agentPreset?: ToolSet;
  /** Used instead of `standard` when neither `agentPreset` nor the session names one (the CLI's DSH_AGENT_PRESET). */
  defaultAgentPreset?: ToolSet;
  /** Connect the config's MCP servers (default true). */
  mcp?: boolean;
  /** Appended to the base system prompt. */
  system?: string;
  plugins?: Plugin[];
  /** Adapters to use instead of creating one from the environment (tests, custom routes). */
  adapters?: LlmAdapter[];
  retry?: RetryPolicyOptions | false;
  /** Extra runtime-context lines. */
  context?: ContextSection[];
  /**
   * Compaction: on by default with the config file's `compaction` section; these options override
   * it (`{ auto: false }` keeps manual `/compact` only); `false` installs nothing.
   */
  compaction?: CompactionOptions | false;
  /**
   * Write a `session/title` from the first prompt before the first request (src/coding/title.ts).
   * Off by default; `dsh sdk` and `dsh run --output-format stream-json` turn it on, as dsh does.
   */
  title?: boolean;
  /**
   * Claude Code / Codex hooks (docs/hooks.md): `files` named here always run (the caller chose
   * them); the workspace's own hook files run when `trustProject` (default: the config lists the
   * workspace in `trustedProjects`). `false` runs none.
   */
  hooks?:
    | {
        files?: readonly HookFile[];
        trustProject?: boolean;
        /** The session log's file, given to hooks as `transcript_path` (absent: `''`, Codex `null`). */
        transcriptPath?: string;
        /** Where the user-level hook files are looked for (default: the user's home directory). */
        home?: string;
      }
    | false;
}

export interface CodingAgent {
  agent: Agent;
  /** How the shell sandbox is enforced on this machine (partial enforcement says why). */
  sandbox: SandboxReport;
  /** MCP servers that could not be started, with the reason. */
  mcpFailures: ReadonlyMap<string, string>;
  /** Hook files refused or left out (untrusted project), hooks dsh does not run. */
  hookWarnings: readonly string[];
  close(): Promise<void>;
}

export async function createCodingAgent(opts: CodingAgentOptions = {}): Promise<CodingAgent> {
  const cwd = resolve(opts.cwd ?? process.cwd());
  const config = opts.config ?? (await loadConfig({ cwd })).config;
  const llm = llmSection(config);
  const choice = isModelChoice(opts.model) ? opts.model : chooseModel({ spec: opts.model, config: llm, adapters: opts.adapters });

  const fromConfig = permissionsOptionsFrom(config);
  const perms: PermissionsOptions = { ...fromConfig };
  if (opts.sandbox) perms.sandbox = opts.sandbox;
  if (opts.approval) perms.approval = opts.approval;
  if (opts.network !== undefined) perms.network = opts.network;
  if (opts.hidePaths?.length) perms.hidePaths = opts.hidePaths;
  if (opts.exposedKeys !== undefined) perms.exposedKeys = opts.exposedKeys;
  for (const k of ['allow', 'ask', 'deny'] as const) {
    const merged = [...(fromConfig[k] ?? []), ...(opts[k] ?? [])];
    if (merged.length > 0) perms[k] = merged;
  }
  const mode = perms.sandbox ?? 'workspace-write';
  // Child processes that run while the rest starts: the sandbox probe, and git for the first
  // step's runtime context when the repository's files do not tell the branch (later steps read
  // it again).
  const probing = shellEnforcement(mode, perms.bubblewrap ?? 'bwrap');
  let branchRead: Promise<string | undefined> | undefined = gitBranch(cwd);

  let mcp: McpServers | undefined;
  if (opts.mcp !== false && config.mcpServers && Object.keys(config.mcpServers).length > 0) {
    mcp = await connectMcpServers(config.mcpServers);
  }
  const sandbox = await probing;

  const policySections: ContextSection[] = [
    { name: 'sandbox', text: `Sandbox: ${mode}${sandbox.enforcement === 'partial' ? ` (partially enforced: ${sandbox.reason})` : ''}` },
    {
      name: 'approval',
      text:
        `Approval policy: ${perms.approval ?? 'ask'}` +
        `${opts.approve ? '' : ' (non-interactive: actions that need approval are refused)'}`,
    },
  ];
  if (perms.network === false)
    policySections.push({ name: 'network', text: 'Network: off for shell commands (they cannot reach other hosts or local services)' });
  // Every provider key (built-in or configured, selected or not), header value and URL
  // credential stays out of shell commands, under whatever name it is copied.
  const recorded = opts.session ? recordedPreset(opts.session) : undefined;
  const preset: ToolSet = opts.agentPreset ?? recorded ?? opts.defaultAgentPreset ?? 'standard';
  const tools = {
    ...(perms.bubblewrap !== undefined ? { bubblewrap: perms.bubblewrap } : {}),
    ...opts.tools,
    toolSet: preset,
    hideEnv: [...(opts.tools?.hideEnv ?? []), ...keyVariables(llm)],
    hideValues: [...(opts.tools?.hideValues ?? []), ...configuredSecrets(config, process.env)],
  };
  const plugins: Plugin[] = [
    // Only a change is recorded: a session that never chose stays as it was written (`standard`).
    ...(preset !== (recorded ?? 'standard') ? [recordPreset(preset)] : []),
    codingTools(tools),
    permissions(perms),
    runtimeContext(() => {
      const read = branchRead ?? gitBranch(cwd);
      branchRead = undefined;
      return defaultContextSections(cwd, [...policySections, ...(opts.context ?? [])], undefined, read);
    }),
    workspaceInstructions(cwd),
  ];
  if (mcp) plugins.push(mcp.plugin);
  if (opts.title) plugins.push(sessionTitle());
  if (opts.compaction !== false) {
    // The config file's section (typed once src/config composes it).
    const fromFile = config.compaction;
    const { summarizer, contextWindow, ...overrides } = opts.compaction ?? {};
    plugins.push(
      compaction({
        ...mergeCompactionConfig(fromFile, overrides),
        ...(summarizer ? { summarizer } : {}),
        ...(contextWindow !== undefined ? { contextWindow } : {}),
      }),
    );
  }
  const hooks =
    opts.hooks === false
      ? { configs: [], warnings: [] }
      : loadHookConfigs({
          cwd,
          trusted: opts.hooks?.trustProject ?? projectTrusted(config, cwd),
          files: opts.hooks?.files ?? [],
          ...(opts.hooks?.home !== undefined ? { home: opts.hooks.home } : {}),
        });
  if (hooks.configs.length) {
    const transcript = opts.hooks === false ? undefined : opts.hooks?.transcriptPath;
    plugins.push(
      hookBridge({
        configs: hooks.configs,
        cwd,
        approvalPolicy: perms.approval ?? 'ask',
        hideEnv: tools.hideEnv,
        ...(transcript !== undefined ? { transcriptPath: () => transcript } : {}),
      }),
    );
  }
  plugins.push(...(opts.plugins ?? []));

  const effort = opts.reasoningEffort ?? llm.reasoningEffort;
  const model: ModelChoice = {
    ...choice,
    config: {
      provider: choice.config.provider,
      model: choice.config.model,
      ...(effort ? { reasoningEffort: effort } : {}),
      ...(opts.maxTokens ? { maxTokens: opts.maxTokens } : {}),
    },
  };
  const base = preset === 'minimal' ? MINIMAL_SYSTEM_PROMPT : CODING_SYSTEM_PROMPT;
  let agent: Agent;
  try {
    agent = assembleAgent({
      model,
      cwd,
      system: opts.system ? `${base}\n\n${opts.system}` : base,
      plugins,
      ...(opts.session ? { session: opts.session } : {}),
      ...(opts.approve ? { approve: opts.approve } : {}),
      ...(opts.adapters ? { adapters: opts.adapters } : {}),
      ...(opts.retry !== undefined ? { retry: opts.retry } : {}),
      secrets: tools.hideValues,
    });
  } catch (e) {
    await mcp?.close();
    throw e;
  }
  return {
    agent,
    sandbox,
    mcpFailures: mcp?.failures ?? new Map(),
    hookWarnings: hooks.warnings,
    async close() {
      await agent.dispose();
      await mcp?.close();
    },
  };
}

/** The agent preset a session last recorded (`agent-preset/selected`, dsh's event), if it is one this build has. */
export function recordedPreset(session: Session): ToolSet | undefined {
  let last: unknown;
  for (const e of session.eventsOfType(['agent-preset/selected'])) last = e.data.agentPreset;
  return isToolSet(last) ? last : undefined;
}

function recordPreset(preset: ToolSet): Plugin {
  return (host) => {
    host.session.append('agent-preset/selected', { agentPreset: preset });
  };
}
