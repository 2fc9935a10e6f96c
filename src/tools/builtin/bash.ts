/**
 * `bash`: a fresh `bash -c` per call, through the shell seam (where a sandbox may wrap it).
 * Output is reported as dsh reports it: stdout, then a `[stderr]` section, then
 * `[exit code: N]` when non-zero; `(no output)` when there is none.
 */
import type { JsonObject } from '../../model/json.js';
import type { ToolDefinition, ToolResultValue } from '../types.js';
import { ToolError } from '../types.js';
import type { ShellSpawnRequest } from '../shell/hooks.js';
import { plainPlan } from '../shell/hooks.js';
import { runForeground, type RunResult } from '../shell/run.js';
import type { SandboxReport } from '../permissions/modes.js';
import { fsFor, spillNote, type BuiltinEnv } from './env.js';
import { builtinParameters } from './parameters.js';
import type { BashArgs } from './schemas.js';
import '../shell/hooks.js';

type Args = BashArgs;

/**
 * The harness's own credentials (provider API keys, tokens) are not the model's: they are left
 * out of the command's environment. Pass what a command needs explicitly with `shellEnv`.
 * Names: anything with AUTH, TOKEN, SECRET, PASSWORD/PASSWD, CREDENTIAL, API_KEY/APIKEY or
 * PRIVATE_KEY in it, or KEY as a `_`-separated word (`*_KEY`, `KEY_*`), in any case.
 */
const CREDENTIAL = /(AUTH|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|API_?KEY|PRIVATE_?KEY|(?:^|_)KEY(?:_|$))/i;
/** Shorter values are not matched: a value like "1" would hide unrelated variables. */
const MIN_SECRET_LENGTH = 8;

/**
 * The variables of `env` a shell command must not see: credential names, the variables named in
 * `hidden` (a provider's configured `apiKeyEnv`, whatever it is called), and any variable whose
 * value holds one of `secrets` or the value of a hidden variable, so a copy under another name
 * (or inside a URL, or a header line) does not carry it either.
 */
export function hiddenVariables(
  env: Readonly<Record<string, string | undefined>>,
  hidden: readonly string[] = [],
  secrets: readonly string[] = [],
): Set<string> {
  const values = new Set(secrets.filter((v) => v.length >= MIN_SECRET_LENGTH));
  for (const name of hidden) {
    const v = env[name];
    if (v !== undefined && v.length >= MIN_SECRET_LENGTH) values.add(v);
  }
  const out = new Set<string>();
  for (const [k, v] of Object.entries(env)) {
    if (CREDENTIAL.test(k) || hidden.includes(k) || (v !== undefined && [...values].some((s) => v.includes(s)))) out.add(k);
  }
  return out;
}

export function shellEnvironment(
  extra: Record<string, string> | undefined,
  hidden: readonly string[] = [],
  secrets: readonly string[] = [],
): Record<string, string | undefined> {
  const drop = hiddenVariables(process.env, hidden, secrets);
  const env: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(process.env)) if (!drop.has(k)) env[k] = v;
  return { ...env, PAGER: 'cat', GIT_PAGER: 'cat', ...extra };
}

export function sandboxNote(s: SandboxReport | undefined): string | undefined {
  if (!s || s.enforcement === 'full') return undefined;
  return (
    `[sandbox: ${s.mode} is only partially enforced on this machine (${s.reason ?? 'no sandbox backend'}); this command ran without ` +
    'a file sandbox]'
  );
}

/** The note for output that shows the file sandbox refusing something (when the sandbox is enforced). */
export function deniedNote(sandbox: SandboxReport | undefined, output: string): string | undefined {
  if (!sandbox?.backend || sandbox.enforcement !== 'full' || sandbox.mode === 'danger-full-access') return undefined;
  if (!/Read-only file system|Permission denied|Operation not permitted/.test(output)) return undefined;
  return `[sandbox: file access denied under ${sandbox.mode} mode — a policy denial, not a bug in the command; do not retry another way]`;
}

function format(r: RunResult, timeoutMs: number, sandbox: SandboxReport | undefined): ToolResultValue {
  const parts: string[] = [];
  const out = r.stdout.text;
  const err = r.stderr.text;
  if (out) parts.push(out.endsWith('\n') || !err ? out : `${out}\n`);
  if (err) parts.push(`[stderr]\n${err}`);
  let text = parts.join('');
  if (!text) text = '(no output)';
  const tail: string[] = [];
  if (r.timedOut)
    tail.push(`[timed out after ${timeoutMs} ms; the command was killed. Use a larger timeoutMs or run_in_background for long commands]`);
  else if (r.signal) tail.push(`[killed by signal ${r.signal}]`);
  else if (r.exitCode !== null && r.exitCode !== 0) tail.push(`[exit code: ${r.exitCode}]`);
  const denied = deniedNote(sandbox, r.stderr.text);
  if (denied) tail.push(denied);
  const note = sandboxNote(sandbox);
  if (note) tail.push(note);
  if (r.stdout.spillPath) tail.push(spillNote(`Omitted ${r.stdout.omittedBytes} bytes of stdout`, r.stdout.spillPath));
  if (r.stderr.spillPath) tail.push(spillNote(`Omitted ${r.stderr.omittedBytes} bytes of stderr`, r.stderr.spillPath));
  if (tail.length) text += `${text.endsWith('\n') ? '' : '\n'}${tail.join('\n')}`;
  const meta: Record<string, JsonObject[keyof JsonObject]> = { exitCode: r.exitCode, signal: r.signal, timedOut: r.timedOut };
  if (sandbox) meta.sandbox = { ...sandbox };
  if (r.ranIn !== undefined) meta.ranIn = r.ranIn;
  if (r.stdout.spillPath) meta.stdoutSpill = r.stdout.spillPath;
  if (r.stderr.spillPath) meta.stderrSpill = r.stderr.spillPath;
  const result: ToolResultValue = { content: text, meta };
  if (r.timedOut) {
    result.isError = true;
    result.error = { name: 'BashError', code: 'BASH_TIMEOUT' };
  }
  return result;
}

export function bashTool(env: BuiltinEnv): ToolDefinition<Args> {
  return {
    name: 'bash',
    description:
      'Execute a bash command (`bash -c`) and return its stdout/stderr. Each call runs in a fresh shell: no state (cwd, ' +
      'variables, functions) persists between calls; pass `workdir` instead of using `cd`. Non-zero exits are reported as `[exit ' +
      'code: N]`. Commands may run under a file sandbox; a blocked file operation is reported as `[sandbox: file access denied ' +
      'under <mode> mode]`. Long output is cut to its head and tail; the full output is saved to a file whose path is reported. ' +
      'Set `run_in_background: true` for long-running commands: the call returns a job id immediately; read its output with ' +
      '`job_output` and stop it with `job_kill`.',
    parameters: builtinParameters('bash'),
    permission: { effects: 'shell', subject: (a) => ({ kind: 'command', value: a.command }) },
    async execute(args, ctx) {
      const cwd = await fsFor(ctx, env).stat(args.workdir ?? '.');
      if (cwd.type !== 'directory') throw new ToolError('BASH_BAD_WORKDIR', `workdir "${args.workdir}" is not a directory`);
      const req: ShellSpawnRequest = {
        command: args.command,
        cwd: cwd.path,
        root: ctx.cwd,
        env: shellEnvironment(env.shellEnv, env.hideEnv, env.hideValues),
        background: args.run_in_background === true,
        caller: { callId: ctx.callId, toolName: ctx.toolName },
      };
      const plan = await ctx.bus.waterfall('shell/spawn', req, plainPlan);
      if (args.run_in_background) {
        const job = env.jobs.start(args.command, plan, plan.sandbox);
        const note = sandboxNote(plan.sandbox);
        return {
          content: `started background job ${job.id}${note ? `\n${note}` : ''}`,
          meta: { jobId: job.id, ...(plan.sandbox ? { sandbox: { ...plan.sandbox } } : {}), ...(job.logPath ? { log: job.logPath } : {}) },
        };
      }
      const timeoutMs = Math.min(args.timeoutMs ?? env.bash.defaultTimeoutMs, env.bash.maxTimeoutMs);
      const options = { timeoutMs, signal: ctx.signal, maxOutputBytes: env.bash.maxOutputBytes, spillDir: env.spillDir };
      const r = await ctx.bus.waterfall('shell/run', { request: req, plan, options }, (x) => runForeground(x.plan, x.options));
      if (r.spawnError !== undefined && r.exitCode === null && !r.timedOut && !r.aborted) {
        throw new ToolError('BASH_SPAWN_FAILED', `the shell could not be started (${plan.file}): ${r.spawnError}`);
      }
      return format(r, timeoutMs, plan.sandbox);
    },
  };
}
