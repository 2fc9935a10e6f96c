/**
 * `bash` of the `minimal` tool set: commands run one after another in one persistent shell
 * (shell/persistent.ts), so `cd`, variables and functions carry over between calls.
 *
 * The shell is asked for through `shell/spawn` like any command, so the sandbox, the scrubbed
 * environment and the approval rules apply as to the fresh-shell `bash`; output is capped and
 * spilled the same way. The shell is started on the first call, restarted when the sandbox the
 * permissions report changes (a mode switch must not leave a shell running under the old one),
 * and ended when the session closes, when a command times out, and when a call is cancelled.
 *
 * Results carry dsh's facts: the output with one trailing newline dropped, `[exit code: N]` when
 * the command failed; when the shell itself ended (`exit 9`, `set -e`, a signal) the output ends
 * with `[shell exited: code N]` (or `[shell killed by signal: S]`) and the sentence saying the
 * next call starts afresh, which dsh writes word for word.
 */
import type { JsonObject } from '../../model/json.js';
import type { ToolDefinition, ToolResultValue } from '../types.js';
import type { ShellSpawnRequest } from '../shell/hooks.js';
import { plainPlan } from '../shell/hooks.js';
import { PERSISTENT_SHELL_COMMAND, PersistentShell, type PersistentOutcome } from '../shell/persistent.js';
import type { SandboxReport } from '../permissions/modes.js';
import { fsFor, spillNote, type BuiltinEnv } from './env.js';
import { deniedNote, sandboxNote, shellEnvironment } from './bash.js';
import { builtinParameters } from './parameters.js';
import type { PersistentBashArgs } from './schemas.js';
import '../shell/hooks.js';

/** dsh's sentence after a shell ended (its result format; the conformance scenarios check it). */
export const SHELL_RESET_MESSAGE =
  'The persistent bash shell was reset; the next bash call starts from the workspace with a fresh current directory and environment.';

/** The session's one shell, and what it was started under. */
export class PersistentShellSlot {
  private current: { shell: PersistentShell; key: string } | undefined;

  /** The live shell for this spawn plan: a new one when there is none, it died, or the sandbox changed. */
  async shellFor(plan: ReturnType<typeof plainPlan>): Promise<{ shell: PersistentShell; restarted: boolean }> {
    const key = JSON.stringify([plan.file, plan.sandbox ?? null]);
    let restarted = false;
    if (this.current && (!this.current.shell.alive || this.current.key !== key)) {
      restarted = this.current.shell.alive;
      await this.current.shell.close();
      this.current = undefined;
    }
    this.current ??= { shell: PersistentShell.start(plan), key };
    return { shell: this.current.shell, restarted };
  }

  /** The running shell's process id (tests check it is gone). */
  get pid(): number | undefined {
    return this.current?.shell.alive ? this.current.shell.pid : undefined;
  }

  async dispose(): Promise<void> {
    const s = this.current;
    this.current = undefined;
    await s?.shell.close();
  }
}

function trimNewline(s: string): string {
  return s.endsWith('\n') ? s.slice(0, -1) : s;
}

export function formatOutcome(o: PersistentOutcome, timeoutMs: number, sandbox: SandboxReport | undefined): ToolResultValue {
  const lines: string[] = [];
  const body = trimNewline(o.output.text);
  if (body) lines.push(body);
  const meta: Record<string, JsonObject[keyof JsonObject]> = { shell: 'persistent' };
  switch (o.kind) {
    case 'completed':
      if (o.exitCode !== 0) lines.push(`[exit code: ${o.exitCode}]`);
      meta.exitCode = o.exitCode;
      break;
    case 'exited':
      // What bubblewrap or the reaper said on their own stderr: why a shell never started.
      if (o.stderr) lines.push(o.stderr);
      lines.push(
        o.signal !== null
          ? `[shell killed by signal: ${o.signal}]`
          : o.exitCode !== null
            ? `[shell exited: code ${o.exitCode}]`
            : '[shell exited]',
      );
      meta.shellExit = { code: o.exitCode, signal: o.signal };
      break;
    case 'timed-out':
      lines.push(`[timed out after ${timeoutMs} ms; the shell was killed with everything it started]`);
      meta.timedOut = true;
      break;
    case 'aborted':
      lines.push('[cancelled; the shell was killed with everything it started]');
      meta.aborted = true;
      break;
  }
  const denied = deniedNote(sandbox, o.output.text);
  if (denied) lines.push(denied);
  const note = sandboxNote(sandbox);
  if (note) lines.push(note);
  if (o.output.spillPath) {
    lines.push(spillNote(`Omitted ${o.output.omittedBytes} bytes of output`, o.output.spillPath));
    meta.outputSpill = o.output.spillPath;
  }
  if (o.kind !== 'completed') lines.push(SHELL_RESET_MESSAGE);
  if (sandbox) meta.sandbox = { ...sandbox };
  const result: ToolResultValue = { content: lines.join('\n') || '(no output)', meta };
  if (o.kind === 'timed-out') {
    result.isError = true;
    result.error = { name: 'BashError', code: 'PERSISTENT_BASH_TIMEOUT' };
  }
  return result;
}

export function persistentBashTool(env: BuiltinEnv, slot: PersistentShellSlot): ToolDefinition<PersistentBashArgs> {
  return {
    name: 'bash',
    description:
      'Run a command in a persistent bash shell: the current directory, variables (exported or not) and functions stay from one ' +
      'call to the next; `exit` ends the shell and the next call starts a fresh one in the workspace. stdout and stderr come ' +
      'back together; a failing command ends with `[exit code: N]`. The command gets no input (stdin is empty). It may run ' +
      'in a file sandbox; long output is cut to its head and tail and the whole of it saved to a file. A command that runs ' +
      'past its timeout is killed together with the shell. Background a long-running server with `&`.',
    parameters: builtinParameters('persistent_bash'),
    permission: { effects: 'shell', subject: (a) => ({ kind: 'command', value: a.command }) },
    async execute(args, ctx) {
      const root = await fsFor(ctx, env).stat('.');
      const req: ShellSpawnRequest = {
        command: PERSISTENT_SHELL_COMMAND,
        cwd: root.path,
        root: ctx.cwd,
        env: shellEnvironment(env.shellEnv, env.hideEnv, env.hideValues),
        background: false,
        caller: { callId: ctx.callId, toolName: ctx.toolName },
      };
      const plan = await ctx.bus.waterfall('shell/spawn', req, plainPlan);
      const { shell, restarted } = await slot.shellFor(plan);
      const timeoutMs = Math.min(args.timeoutMs ?? env.bash.defaultTimeoutMs, env.bash.maxTimeoutMs);
      const outcome = await shell.run(args.command, {
        timeoutMs,
        signal: ctx.signal,
        maxOutputBytes: env.bash.maxOutputBytes,
        spillDir: env.spillDir,
      });
      const result = formatOutcome(outcome, timeoutMs, plan.sandbox);
      if (restarted && typeof result.content === 'string')
        result.content = `[the sandbox changed, so this command ran in a new shell: earlier state is gone]\n${result.content}`;
      return result;
    },
  };
}
