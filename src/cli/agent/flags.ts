/**
 * The options `dsh run` and `dsh chat` share: workspace, model, sandbox and approval, permission
 * rules, which session to continue, persistence, an extra config file. Parsed and checked here so
 * a bad flag is a usage error (exit 2) before anything starts.
 */
import { Option, InvalidArgumentError, type Command } from 'commander';
import { SANDBOX_MODES, APPROVAL_POLICIES, type ApprovalPolicy, type SandboxMode } from '../../tools/permissions/modes.js';
import { parseRule, PermissionRuleError } from '../../tools/permissions/rules.js';
import { CliError } from '../errors.js';
import { TOOL_SETS, type ToolSet } from '../../tools/tool-sets.js';

/** What `addModelFlags` parses (plus the config file and compaction switch the worker shares). */
export interface ModelFlags {
  model?: string;
  reasoningEffort?: string;
  maxTokens?: number;
  sandbox?: SandboxMode;
  approval?: ApprovalPolicy;
  allow: string[];
  ask: string[];
  deny: string[];
  fullAuto?: boolean;
  /** `--no-network` sets it to false: shell commands run without a network. */
  network?: boolean;
  /** `--no-compact` sets it to false: no automatic compaction (manual /compact still works). */
  compact?: boolean;
  config?: string;
  /** `--replay-model <log>`: serve the model's replies from a recorded session log (replay-model.ts). */
  replayModel?: string;
  /** `--replay-override <file>`: patch those replies (dsh's `replay.override.json` format). */
  replayOverride?: string;
  /** `--agent-preset`: which tools the model gets (dsh's agent presets). */
  agentPreset?: ToolSet;
}

export interface AgentFlags extends ModelFlags {
  cwd?: string;
  /** An id or prefix; `true` (the flag without one) asks `dsh chat` for its picker. */
  resume?: string | true;
  continue?: boolean;
  /** `--no-persist` sets it to false. */
  persist: boolean;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function positiveInteger(value: string): number {
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

/** Checked when parsed, so a malformed rule is a usage error naming the flag. */
function rule(kind: 'allow' | 'ask' | 'deny'): (value: string, previous: string[]) => string[] {
  return (value, previous) => {
    try {
      parseRule(value, kind);
    } catch (e) {
      if (e instanceof PermissionRuleError) throw new InvalidArgumentError(e.message);
      throw e;
    }
    return collect(value, previous);
  };
}

/**
 * `picker`: the id may be left out (`dsh chat` on a terminal then lists this workspace's
 * sessions). Without it the id is required, and the help says so (`<id>`, not `[id]`).
 */
export function addAgentFlags(cmd: Command, opts: { picker?: boolean } = {}): Command {
  const resume = opts.picker
    ? cmd.option(
        '-r, --resume [id]',
        'continue a stored session (its id, or a unique prefix of at least 4 characters); ' +
          "on a terminal without an id: pick one of this workspace's sessions from a list",
      )
    : cmd.option('-r, --resume <id>', 'continue a stored session (its id, or a unique prefix of at least 4 characters)');
  return addModelFlags(resume.option('-C, --cwd <dir>', 'workspace directory (default: the current directory)'))
    .option('-c, --continue', "continue this workspace's most recent session")
    .option('--no-persist', 'keep the session in memory only; nothing is written under $DSH_HOME/sessions')
    .option('--no-compact', 'never compact the history automatically (near the context window, or when the provider says it overflowed)')
    .option('--config <file>', 'also read this config file, after the user and project files');
}

/** The model and what its tools may do: shared by the agent commands and `dsh worker`. */
export function addModelFlags(cmd: Command): Command {
  return cmd
    .option(
      '-m, --model <provider:model>',
      'model, e.g. deepseek:deepseek-v4-pro (default: DSH_MODEL, then the config, then deepseek:deepseek-v4-flash)',
    )
    .option('--reasoning-effort <level>', 'provider effort label (DeepSeek: off|low|high|max)')
    .option('--max-tokens <n>', 'cap on output tokens per model call', positiveInteger)
    .addOption(new Option('--sandbox <mode>', 'file sandbox for tools (default: the config, then workspace-write)').choices(SANDBOX_MODES))
    .addOption(
      new Option(
        '--approval <policy>',
        'ask: actions outside the sandbox need approval; never: no approvals (default: the config, then ask)',
      ).choices(APPROVAL_POLICIES),
    )
    .option('--allow <rule>', 'allow calls matching a rule, e.g. "bash(npm test)" (repeatable)', rule('allow'), [])
    .option('--ask <rule>', 'ask before calls matching a rule (repeatable)', rule('ask'), [])
    .option('--deny <rule>', 'deny calls matching a rule, e.g. "bash(git push*)" (repeatable)', rule('deny'), [])
    .option('--full-auto', 'no approvals inside a workspace-write sandbox (--sandbox and --approval still override)')
    .option('--no-network', 'run shell commands without a network (bubblewrap --unshare-net; default: the config, then on)')
    .option(
      '--replay-model <log>',
      "serve the model's replies from a recorded session log, call by call (no key, no network; tools run for real)",
    )
    .option('--replay-override <file>', "with --replay-model: replace or patch the replayed calls (dsh's replay.override.json format)")
    .addOption(
      new Option(
        '--agent-preset <name>',
        "the model's tools: standard (the built-ins) or minimal (a persistent bash and str_replace_editor) (default: the " +
          "session's recorded preset, then DSH_AGENT_PRESET, then standard)",
      ).choices(TOOL_SETS),
    );
}

/** Combinations commander cannot express. */
export function checkFlags(f: AgentFlags): void {
  if (f.resume !== undefined && f.continue) throw new CliError('USAGE', '--resume and --continue both pick the session; give one of them');
  if (!f.persist && (f.resume !== undefined || f.continue))
    throw new CliError('USAGE', '--no-persist cannot be combined with --resume or --continue: they continue a stored session');
}

/** The sandbox and approval the flags ask for (`--full-auto` fills what was not given). */
export function policyFlags(f: ModelFlags): { sandbox?: SandboxMode; approval?: ApprovalPolicy; network?: false } {
  const out: { sandbox?: SandboxMode; approval?: ApprovalPolicy; network?: false } = {};
  // Only the negation exists: without the flag the config decides.
  if (f.network === false) out.network = false;
  const sandbox = f.sandbox ?? (f.fullAuto ? 'workspace-write' : undefined);
  const approval = f.approval ?? (f.fullAuto ? 'never' : undefined);
  if (sandbox) out.sandbox = sandbox;
  if (approval) out.approval = approval;
  return out;
}
