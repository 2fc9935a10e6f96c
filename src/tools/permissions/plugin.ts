/**
 * `permissions()`: the sandbox mode and the approval policy, as one plugin.
 *
 * Where each part attaches, once:
 * - `tools/pre-execute`: rules (the configured ones, and the session's `approval/rule` events,
 *   read from the log) and the approval policy decide allow / deny / ask (the pipeline
 *   logs `approval/asked` and `approval/decided`, and a non-interactive run answers
 *   `unavailable`, so whatever would ask is denied with a result that says why);
 * - `tools/execute`: marks a call whose one-call escalation (`sandbox_permissions`) was
 *   approved, for the two seams below, for exactly the duration of its body;
 * - `shell/spawn`: wraps commands in bubblewrap in every mode (the file view of the mode, a PID
 *   namespace, `--die-with-parent`, no network when it is off), or reports the mode as partially
 *   enforced where bubblewrap cannot run; marks the plan `unconfined` when the wrapper (or its
 *   absence) confines nothing, the only plans a `shell/run` listener may run elsewhere;
 * - `fs/*`: refuses file writes under `read-only`.
 *
 * Workspace confinement of file tools is `codingTools()`'s, and holds in every mode.
 */
import { realpathSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import type { ToolPlugin } from '../host.js';
import type { ToolDefinition } from '../types.js';
import type { PreExecuteDecision } from '../hooks.js';
import { FsError } from '../fs/errors.js';
import { attachFsPolicy } from '../fs/policy.js';
import type { ShellSpawnPlan, ShellSpawnRequest } from '../shell/hooks.js';
import { bubblewrapArgs, probeBubblewrap } from '../shell/bubblewrap.js';
import { hostSockets, socketsToMask } from '../shell/sockets.js';
import type { ApprovalPolicy, SandboxMode, SandboxReport } from './modes.js';
import { ToolError } from '../types.js';
import { firstMatch, parseRule, parseRules, type PermissionRule, type Subject } from './rules.js';
import '../hooks.js';
import '../shell/hooks.js';

export interface PermissionsOptions {
  /** Default `workspace-write`. */
  sandbox?: SandboxMode;
  /** Default `ask`. */
  approval?: ApprovalPolicy;
  allow?: readonly string[];
  ask?: readonly string[];
  deny?: readonly string[];
  /** Path of the bwrap binary (default `bwrap` on PATH); `false` disables the backend. */
  bubblewrap?: string | false;
  /**
   * Whether shell commands may use the network (default true). `false` runs them with
   * `--unshare-net` (a loopback of their own); where bubblewrap cannot run, commands are refused.
   */
  network?: boolean;
  /**
   * Files no tool may read, in any mode: dsh's own config files when they hold a literal key.
   * The file tools refuse them (`FS_SANDBOX_DENIED`); under bubblewrap, commands see an empty file.
   */
  hidePaths?: readonly string[];
  /**
   * Unix sockets (paths, or directories holding them) that commands may still reach under
   * `read-only` and `workspace-write` (say `/run/postgresql` for a local database). Every other
   * path socket outside the workspace is masked.
   */
  allowSockets?: readonly string[];
  /**
   * Why dsh's own process still shows its keys to a process that can see it (the CLI could not
   * scrub its environment block). Commands then run only inside bubblewrap's PID namespace, where
   * dsh is not visible; where bubblewrap cannot run they are refused (`SANDBOX_KEYS_EXPOSED`).
   */
  exposedKeys?: string;
}

function wantsEscalation(args: unknown): boolean {
  return (
    typeof args === 'object' && args !== null && (args as { sandbox_permissions?: unknown }).sandbox_permissions === 'danger-full-access'
  );
}

function subjectOf(def: ToolDefinition | undefined, args: unknown): Subject | undefined {
  try {
    return def?.permission?.subject?.(args);
  } catch {
    return undefined;
  }
}

/** How the shell sandbox will be enforced for `mode` on this machine. */
export async function shellEnforcement(mode: SandboxMode, bubblewrap: string | false = 'bwrap'): Promise<SandboxReport> {
  if (mode === 'danger-full-access') return { mode, enforcement: 'full' };
  if (bubblewrap === false) return { mode, enforcement: 'partial', reason: 'the bubblewrap backend is disabled in the configuration' };
  const probe = await probeBubblewrap(bubblewrap);
  if (!probe.ok) return { mode, enforcement: 'partial', reason: probe.reason ?? 'bubblewrap is unusable' };
  return { mode, enforcement: 'full', backend: 'bubblewrap' };
}

export function permissions(opts: PermissionsOptions = {}): ToolPlugin {
  const mode: SandboxMode = opts.sandbox ?? 'workspace-write';
  const policy: ApprovalPolicy = opts.approval ?? 'ask';
  const rules = parseRules(opts);
  const bwrap = opts.bubblewrap ?? 'bwrap';
  const network = opts.network !== false;
  const hidden = (opts.hidePaths ?? []).map((p) => {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  });
  const allowSockets = (opts.allowSockets ?? []).map((p) => {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  });
  return (host) => {
    // dsh logs `{mode}`; `network` is added only when it is off, so every other log stays as dsh writes it.
    host.session.append('sandbox/mode', network ? { mode, source: 'config' } : { mode, source: 'config', network: 'disabled' });
    host.session.append('approval/policy', { policy });
    const escalated = new Set<string>();
    const workspace = host.cwd;
    // Rules the user added while approving ("allow for this session"), read from the log: those
    // recorded before this agent started (resume, fork) and those recorded from now on.
    const sessionRules: PermissionRule[] = [];
    const addSessionRule = (rule: string): void => {
      try {
        sessionRules.push(parseRule(rule, 'allow'));
      } catch {
        // A rule that does not parse (a hand-edited log) allows nothing.
      }
    };
    for (const e of host.session.eventsOfType(['approval/rule'])) addSessionRule(e.data.rule);
    const offRules = host.session.subscribe((e) => {
      if (e.type === 'approval/rule') addSessionRule(e.data.rule);
    });

    host.on(
      'tools/pre-execute',
      async ({ call, args }, next): Promise<PreExecuteDecision> => {
        const def = host.getTool(call.name);
        const effects = def?.permission?.effects ?? 'external';
        const subject = subjectOf(def, args);
        const deny = firstMatch(rules.deny, call.name, subject, workspace);
        if (deny) return { kind: 'deny', reason: `it matches the deny rule "${deny.source}"` };
        const allow = firstMatch(rules.allow, call.name, subject, workspace);
        // A session rule was offered for a call inside the sandbox: it never approves leaving it,
        // so an escalation asks every time (unless the user's config allows the call outright).
        if (wantsEscalation(args) && mode !== 'danger-full-access') {
          if (allow) return next();
          if (policy === 'never') {
            return {
              kind: 'deny',
              reason:
                `it asks to leave the ${mode} sandbox, and the approval policy is "never", so no one can approve that. Work within ` +
                'the sandbox instead',
            };
          }
          const why = (args as { justification?: unknown }).justification;
          return {
            kind: 'ask',
            reason: `escalate sandbox to danger-full-access: ${typeof why === 'string' && why ? why : '(no justification given)'}`,
          };
        }
        // The user's own answer for this session outranks the configured ask rules, never a deny.
        if (firstMatch(sessionRules, call.name, subject, workspace)) return next();
        const ask = firstMatch(rules.ask, call.name, subject, workspace);
        if (ask) {
          if (policy === 'never')
            return {
              kind: 'deny',
              reason: `it matches the ask rule "${ask.source}", and the approval policy is "never", so no one can approve it`,
            };
          return { kind: 'ask', reason: `it matches the ask rule "${ask.source}"` };
        }
        if (allow || effects === 'none' || effects === 'fs' || policy === 'never') return next();
        if (effects === 'shell') {
          const e = await shellEnforcement(mode, bwrap);
          if (mode !== 'danger-full-access' && e.enforcement === 'full') return next();
          return {
            kind: 'ask',
            reason:
              mode === 'danger-full-access'
                ? `${call.name} runs without a sandbox (mode danger-full-access)`
                : `${call.name} would run without a sandbox: ${mode} is only partially enforced here (${e.reason})`,
          };
        }
        return { kind: 'ask', reason: `${call.name} acts outside the sandbox (a tool the sandbox does not contain)` };
      },
      { name: 'permissions' },
    );

    host.on(
      'tools/execute',
      async (p, next) => {
        if (!wantsEscalation(p.args)) return next();
        escalated.add(p.call.callId);
        try {
          return await next();
        } finally {
          escalated.delete(p.call.callId);
        }
      },
      { name: 'permissions-escalation' },
    );

    host.on(
      'shell/spawn',
      async (req: ShellSpawnRequest, next): Promise<ShellSpawnPlan> => {
        const plan = await next(req);
        const escalatedCall = req.caller.callId !== undefined && escalated.has(req.caller.callId) && mode !== 'danger-full-access';
        const effective: SandboxMode = escalatedCall ? 'danger-full-access' : mode;
        const report: SandboxReport = escalatedCall
          ? { mode: 'danger-full-access', enforcement: 'full', escalatedFrom: mode }
          : await shellEnforcement(mode, bwrap);
        if (!network) report.network = 'disabled';
        // bubblewrap in every mode where it runs: besides the file view, its PID namespace and
        // --die-with-parent are what keep dsh's environment out of reach and end the command with dsh.
        const probe = bwrap === false ? undefined : await probeBubblewrap(bwrap);
        if (bwrap === false || !probe?.ok) {
          if (opts.exposedKeys !== undefined) {
            throw new ToolError(
              'SANDBOX_KEYS_EXPOSED',
              `dsh's own environment still holds its API keys (${opts.exposedKeys}), and without bubblewrap (` +
                `${report.reason ?? probe?.reason ?? 'disabled in the configuration'}) a command would see dsh's process and read ` +
                'them; the command was not run',
            );
          }
          if (!network) {
            throw new ToolError(
              'SANDBOX_NETWORK_UNAVAILABLE',
              'the network is off for commands in this session, and that needs bubblewrap, which cannot run here (' +
                `${report.reason ?? probe?.reason ?? 'disabled in the configuration'}); the command was not run`,
            );
          }
          // No backend: nothing confines the command (the mode holds for the file tools only).
          return { ...plan, sandbox: report, unconfined: true };
        }
        const root = await realpath(req.root);
        // Listed anew for each command: daemons come and go. The private /tmp and /dev hide theirs
        // already. danger-full-access keeps every socket, unless the network is off: a daemon on a
        // path socket (a proxy, Docker, an SSH control master, tmux in the real /tmp) would reach
        // other hosts for the command, which is what `--no-network` promises it cannot.
        const sockets =
          effective !== 'danger-full-access'
            ? socketsToMask(hostSockets(), [root, '/tmp', '/dev', '/proc'], allowSockets)
            : !network
              ? socketsToMask(hostSockets(), [root, '/proc'], allowSockets)
              : [];
        return {
          ...plan,
          file: bwrap,
          args: [...bubblewrapArgs(effective, root, plan.cwd, { network, hide: hidden, sockets }), plan.file, ...plan.args],
          sandbox: report,
          diesWithParent: true,
          // Full access with the network on and nothing to hide: the wrapper confines nothing
          // (its PID namespace guards only keys dsh could not scrub, and hidden config files).
          ...(effective === 'danger-full-access' && network && hidden.length === 0 && opts.exposedKeys === undefined
            ? { unconfined: true }
            : {}),
        };
      },
      { name: 'permissions-sandbox' },
    );

    attachFsPolicy(host.on, 'permissions-sandbox', (req) => {
      if (hidden.includes(req.path)) {
        throw new FsError(
          'FS_SANDBOX_DENIED',
          `cannot ${req.op} "${req.requested}": it is a dsh config file holding credentials, which no tool may read`,
        );
      }
      const isEscalated = req.caller.callId !== undefined && escalated.has(req.caller.callId);
      if (req.access === 'write' && mode === 'read-only' && !isEscalated) {
        throw new FsError(
          'FS_SANDBOX_DENIED',
          `cannot ${req.op} "${req.requested}": the sandbox mode is read-only, so file changes are not allowed in this session`,
        );
      }
      // A file with other hard links may have a name outside: only full access, an approved
      // escalation or an allow rule naming this tool and path lets the file tools at it.
      const ruled =
        req.caller.toolName !== undefined &&
        firstMatch(rules.allow, req.caller.toolName, { kind: 'path', value: req.requested }, workspace);
      const withHidden = hidden.length > 0 ? { ...req, hidden } : req;
      if (mode === 'danger-full-access' || isEscalated || ruled) return { ...withHidden, hardLinks: 'allow' };
      return withHidden;
    });
    return offRules;
  };
}
