/**
 * The editor's terminal: when the client offers `terminal`, a foreground `bash` command whose
 * plan the sandbox policy marked `unconfined` runs in a client terminal (`terminal/create`,
 * `terminal/wait_for_exit`, `terminal/output`, `terminal/kill` on timeout or cancel,
 * `terminal/release`), and the tool call embeds it (`{type: "terminal", terminalId}`) so the
 * editor shows the command live.
 *
 * The sandbox decision: the client's terminal is a process of the editor, outside everything dsh
 * confines a command with (bubblewrap's file view and network cut, its PID namespace, the reaper
 * that ends a command with dsh). So only a command that would run unconfined here anyway goes
 * there: the policy marks a plan `unconfined` only under `danger-full-access` (the session's mode,
 * or a call whose escalation was approved) with the network on, no hidden config file and dsh's
 * keys scrubbed from its environment, or where no sandbox backend can run at all (the mode then
 * holds for file tools only, and the approval policy asked). Every other command runs locally,
 * sandboxed, as without the capability. Never an option that widens what a command may do.
 *
 * The command gets the environment it would get locally, not the editor's: `env -i` with the
 * scrubbed variables, then the same `bash -c` that closes inherited descriptors, so a key in the
 * editor's environment does not reach it. The client's output is one stream (stdout and stderr
 * interleaved); it is captured like a local stream (head and tail, the rest spilled to a file).
 * Background commands (`run_in_background`) stay local: they outlive the call, and their output
 * is read by job tools from their log.
 */
import type { AgentContext, TerminalOutputResponse, WaitForTerminalExitResponse } from '@agentclientprotocol/sdk/unstable';
import { StreamCapture } from '../tools/shell/capture.js';
import { CLOSE_INHERITED_FDS } from '../tools/shell/hooks.js';
import type { RunResult, ShellRunRequest } from '../tools/shell/run.js';
import type { ToolPlugin } from '../tools/host.js';
import '../tools/shell/run.js';

/** How long a killed command gets to report its exit before we stop waiting. */
const KILL_WAIT_MS = 5000;

export interface ClientTerminalOptions {
  client: AgentContext;
  sessionId: string;
  /** A call's command started in the client terminal `terminalId` (the tool call embeds it). */
  started(callId: string, terminalId: string): void;
}

/** The program and arguments that run `command` with exactly `env` (not the client's environment). */
export function clientCommand(command: string, env: Readonly<Record<string, string | undefined>>): { command: string; args: string[] } {
  const vars = Object.entries(env)
    .filter((e): e is [string, string] => e[1] !== undefined && e[0] !== '' && !e[0].includes('='))
    .map(([k, v]) => `${k}=${v}`);
  return { command: 'env', args: ['-i', ...vars, 'bash', '-c', CLOSE_INHERITED_FDS, 'bash', command] };
}

type Outcome = 'exited' | 'timeout' | 'abort';

async function runInClient(opts: ClientTerminalOptions, x: ShellRunRequest): Promise<RunResult> {
  const { client, sessionId } = opts;
  const { request, options } = x;
  const { command, args } = clientCommand(request.command, request.env);
  const { terminalId } = await client.request('terminal/create', {
    sessionId,
    command,
    args,
    cwd: request.cwd,
    // The client keeps the end of what passes the limit; we keep head and tail of what it kept.
    outputByteLimit: options.maxOutputBytes * 4,
  });
  const ids = { sessionId, terminalId };
  try {
    if (request.caller.callId !== undefined) opts.started(request.caller.callId, terminalId);
    const exited = client.request<WaitForTerminalExitResponse>('terminal/wait_for_exit', ids);
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const outcome = await Promise.race<Outcome>([
      exited.then(() => 'exited' as const),
      new Promise<Outcome>((r) => (timer = setTimeout(() => r('timeout'), options.timeoutMs))),
      new Promise<Outcome>((r) => {
        onAbort = () => r('abort');
        if (options.signal.aborted) onAbort();
        else options.signal.addEventListener('abort', onAbort, { once: true });
      }),
    ]).finally(() => {
      clearTimeout(timer);
      if (onAbort) options.signal.removeEventListener('abort', onAbort);
    });
    if (outcome !== 'exited') {
      await client.request('terminal/kill', ids).catch(() => undefined);
      let wait: NodeJS.Timeout | undefined;
      await Promise.race([exited.catch(() => undefined), new Promise((r) => (wait = setTimeout(r, KILL_WAIT_MS)))]);
      clearTimeout(wait);
    }
    exited.catch(() => undefined);
    const out = await client.request<TerminalOutputResponse>('terminal/output', ids);
    const capture = new StreamCapture(options.maxOutputBytes, options.spillDir, 'stdout');
    if (out.truncated) capture.push(Buffer.from('[the start of the output was cut by the editor’s terminal]\n'));
    capture.push(Buffer.from(out.output, 'utf8'));
    const status = out.exitStatus ?? (outcome === 'exited' ? await exited : undefined);
    return {
      exitCode: status?.exitCode ?? null,
      signal: (status?.signal as NodeJS.Signals | null | undefined) ?? null,
      timedOut: outcome === 'timeout',
      aborted: outcome === 'abort',
      stdout: await capture.finish(),
      stderr: { text: '', bytes: 0, omittedBytes: 0 },
      ranIn: `acp client terminal ${terminalId}`,
    };
  } finally {
    await client.request('terminal/release', ids).catch(() => undefined);
  }
}

/** Runs unconfined foreground commands in the client's terminal. */
export function clientTerminal(opts: ClientTerminalOptions): ToolPlugin {
  return (host) =>
    host.on('shell/run', async (x, next) => (x.plan.unconfined === true ? runInClient(opts, x) : next(x)), { name: 'acp-client-terminal' });
}
