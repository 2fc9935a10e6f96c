/**
 * `dsh run [task…]`: one task, headless. The coding agent runs it in the workspace on a stored
 * session; the answer streams to stdout, tool activity and a closing summary go to stderr.
 *
 * Exit status (dsh's headless rule): 0 only when the final turn ended `completed`; 1 when it
 * ended otherwise (error, blocked, max-tokens) or could not start (config, credentials, session);
 * 130 after SIGINT, 143 after SIGTERM. The first signal cancels the turn and waits until the log
 * has closed it; a second one flushes the log synchronously and exits at once.
 */
import { SessionStore } from '../store/index.js';
import type { CodingAgent } from '../coding/agent.js';
import { CliError, EXIT_OK, EXIT_PROBLEM, EXIT_SIGINT, EXIT_SIGTERM } from './errors.js';
import type { Input, Io } from './output.js';
import type { AgentFlags } from './agent/flags.js';
import { buildAgent, closeSession, startSession, startWarnings, type AgentSession } from './agent/start.js';
import { answerText, closingLine, LiveRenderer, type RenderMode } from './agent/render.js';
import { formatTurnEnd } from './format.js';
import { oneLine, safeJson } from './text.js';

export interface RunOptions extends AgentFlags {
  json?: boolean;
  /** `text` (the default) or `stream-json`: dsh's headless stream (render.ts). */
  outputFormat?: 'text' | 'stream-json';
  quiet?: boolean;
  failOnDenied?: boolean;
}

/** `dsh run --fail-on-denied`: a tool call was refused (CI can tell a policy too tight from a failed task). */
export const EXIT_REFUSED = 3;

async function readAll(input: Input): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of input) parts.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(parts).toString('utf8');
}

/** The task: the arguments, or standard input when they are absent or `-`. */
export async function readTask(args: readonly string[], io: Io): Promise<string> {
  const dash = args.length === 1 && args[0] === '-';
  if (!dash) {
    const text = args.join(' ').trim();
    if (text !== '') return text;
  }
  const stdin = io.stdin;
  // A terminal with no task given would wait for input nobody knows to type.
  if (stdin && (dash || !stdin.isTTY)) {
    const text = (await readAll(stdin)).trim();
    if (text !== '') return text;
  }
  throw new CliError(
    'NO_TASK',
    'no task: give it as arguments (dsh run "fix the failing test") or on standard input (dsh run - < task.md)',
  );
}

export function banner(s: AgentSession, coding: CodingAgent): string {
  const approval = s.coding.approval ?? s.config.permissions?.approval ?? 'ask';
  const where = s.resumed ? `resumed at turn ${s.session.trace.lastTurn + 1}` : 'new';
  return (
    `session ${oneLine(s.session.id)} (${where}) · ${oneLine(`${s.ref.provider}:${s.ref.model}`)} · sandbox ${coding.sandbox.mode}` +
    ` · approval ${approval}${s.path ? '' : ' · not persisted'}`
  );
}

type Signal = 'SIGINT' | 'SIGTERM';

export async function runRun(taskArgs: readonly string[], opts: RunOptions, io: Io): Promise<number> {
  if (opts.json && opts.quiet) throw new CliError('USAGE', '--json and --quiet choose different outputs; give one of them');
  const streamJson = opts.outputFormat === 'stream-json';
  if (streamJson && (opts.json || opts.quiet))
    throw new CliError('USAGE', '--output-format stream-json and --json/--quiet choose different outputs; give one of them');
  const task = await readTask(taskArgs, io);
  const s = await startSession(opts, io);
  if (opts.compact === false) s.coding.compaction = { auto: false };
  // dsh's headless stream carries the session's title, as dsh writes one.
  if (streamJson) s.coding.title = true;
  const mode: RenderMode = streamJson ? 'stream-json' : opts.json ? 'json' : opts.quiet ? 'quiet' : 'stream';
  const renderer = new LiveRenderer(io, { mode, approvalHints: true });
  // On a terminal, tool calls and reasoning are drawn by the terminal renderers; a pipe keeps the plain lines.
  if (mode === 'stream' && io.err.tty) await renderer.enableRich();
  // A program reading --json learns which session it is watching before any event: the id to
  // pass to --resume or `dsh log`, and where the log is (null with --no-persist).
  if (mode === 'json')
    io.out.line(safeJson({ type: 'dsh/run', sessionId: s.session.id, path: s.path ?? null, cwd: s.cwd, resumed: s.resumed }));
  // Before the agent exists: its setup events (sandbox mode, approval policy) are committed too.
  const detach = renderer.attach(s.session);
  let coding: CodingAgent | undefined;
  let signal: Signal | undefined;
  const removers: (() => void)[] = [];
  try {
    coding = await buildAgent(s, s.session);
    const agent = coding.agent;
    for (const w of startWarnings(s, coding)) renderer.note(`warning: ${w}`, 'yellow');
    if (mode === 'stream') renderer.note(banner(s, coding), 'dim');
    const proc = io.proc;
    if (proc) {
      const on = (sig: Signal) => (): void => {
        if (signal !== undefined) {
          // Second signal: the turn did not wind down in time for the user; leave now, log flushed.
          SessionStore.flushAllSync();
          io.out.flush();
          io.err.flush();
          proc.exitNow(signal === 'SIGTERM' ? EXIT_SIGTERM : EXIT_SIGINT);
        }
        signal = sig;
        if (sig === 'SIGINT') renderer.note('cancelling the turn (Ctrl-C again quits at once)', 'yellow');
        agent.cancel(sig === 'SIGINT' ? { kind: 'user' } : { kind: 'disposed' });
      };
      removers.push(proc.onSignal('SIGINT', on('SIGINT')), proc.onSignal('SIGTERM', on('SIGTERM')));
    }
    agent.prompt(task);
    await agent.whenIdle();
  } finally {
    try {
      await closeSession(coding, s.stored, io);
    } finally {
      detach();
      for (const r of removers) r();
    }
  }

  renderer.endLine();
  const reason = renderer.lastTurn?.reason;
  if (mode === 'stream-json') {
    // The stream's last line: the final answer and the turn's token usage (absent when no call reported any).
    const usage = renderer.lastTurn?.usage;
    io.out.line(safeJson({ type: 'result', sessionId: s.session.id, output: renderer.finalText, ...(usage ? { usage } : {}) }));
    io.out.flush();
    io.err.line(closingLine(s.session.id, s.path, renderer));
  } else if (mode === 'quiet') {
    if (renderer.finalText.trim() !== '') io.out.line(answerText(renderer.finalText));
    if (reason && reason.kind !== 'completed') io.err.line(`dsh: turn ${renderer.lastTurn!.turn} ended ${formatTurnEnd(reason)}`);
  } else {
    io.err.line(closingLine(s.session.id, s.path, renderer));
  }
  if (signal === 'SIGINT') return EXIT_SIGINT;
  if (signal === 'SIGTERM') return EXIT_SIGTERM;
  if (opts.failOnDenied && renderer.refusals.length > 0) {
    const named = renderer.refusals.map((r) => `${oneLine(r.name)} (${r.code})`);
    io.err.line(
      `dsh: ${renderer.refusals.length === 1 ? '1 tool call was' : `${renderer.refusals.length} tool calls were`} refused: ` +
        `${named.slice(0, 5).join(', ')}${named.length > 5 ? ', …' : ''} [REFUSED]`,
    );
    return EXIT_REFUSED;
  }
  return reason?.kind === 'completed' ? EXIT_OK : EXIT_PROBLEM;
}
