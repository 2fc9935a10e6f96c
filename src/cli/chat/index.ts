/**
 * `dsh chat`: an interactive session on one stored log. A line is a prompt (`followup`) when the
 * agent is idle and steering (`steer`, entered at the next step) while it works; a line starting
 * with `/` is a command. Approvals are asked here: the call, its arguments and the reason, then
 * y (allowed once) or anything else (rejected); end of input or Ctrl-C cancels the question.
 *
 * On a terminal it is a readline prompt. When standard input is not a terminal it reads lines as
 * they come, with the same meaning (a line arriving while a turn runs steers it), so scripts and
 * tests can drive it through a pipe; end of input waits for the running turn, then leaves.
 *
 * Ctrl-C cancels the running turn (a second one while it winds down quits at once with 130, the
 * log flushed); at an idle prompt on a terminal it leaves when pressed twice within 5 s (once on a
 * pipe), and Ctrl-D and /exit leave. SIGTERM cancels, then leaves with 143.
 */
import { createInterface, type Interface } from 'node:readline';
import type { CodingAgent } from '../../coding/agent.js';
import { chooseModel } from '../../llm/select.js';
import { llmSection } from '../../config/config.js';
import type { Session } from '../../session/session.js';
import type { ApprovalOutcome } from '../../session/index.js';
import { SessionStore, type OpenSession } from '../../store/index.js';
import type { ApprovalHandler } from '../../tools/pipeline.js';
import { CliError, EXIT_OK, EXIT_SIGINT, EXIT_SIGTERM } from '../errors.js';
import type { Io } from '../output.js';
import type { AgentFlags } from '../agent/flags.js';
import { agentWarnings, buildAgent, closeSession, startSession, startWarnings } from '../agent/start.js';
import { closingLine, LiveRenderer, turnLine } from '../agent/render.js';
import { block, oneLine, truncate } from '../text.js';
import type { PickItem } from '../../terminal/chat/picker.js';
import { banner } from '../run.js';
import { runCommand, type ChatControl } from './commands.js';
import { ModelSwitch } from '../../coding/model-switch.js';
import { runCompactCommand } from '../../compaction/command.js';
import { AttachError, withAttachments } from '../../terminal/chat/attach.js';
import { ChatTerminal, type ScreenHooks } from './screen.js';
import { recentSessions } from './resume.js';
import { checkFlags } from '../agent/flags.js';
import { findSession } from '../session-ref.js';
import { storeFor } from '../store.js';
import { workspaceDir } from '../workspace.js';

export interface ChatOptions extends AgentFlags {
  /** `--line`: the line protocol even on a terminal. */
  line?: boolean;
}

/** How long a first Ctrl-C at an idle prompt waits for the second that leaves. */
const QUIT_AGAIN_MS = 5000;

interface Current {
  coding: CodingAgent;
  session: Session;
  stored: OpenSession | undefined;
  path: string | undefined;
  release: () => void;
}

/** The last prompt and answer of a session, one line each: where a resumed session left off. */
function lastExchange(session: Session): string[] {
  let prompt: string | undefined;
  let answer: string | undefined;
  const events = [...session.eventsOfType(['user/message', 'assistant/message'])];
  for (let i = events.length - 1; i >= 0 && (prompt === undefined || answer === undefined); i--) {
    const e = events[i]!;
    const text = (blocks: readonly { type: string }[]): string =>
      blocks
        .filter((b): b is { type: 'text'; text: string } => b.type === 'text')
        .map((b) => b.text)
        .join(' ');
    if (e.type === 'user/message' && e.data.source.kind === 'user' && prompt === undefined) prompt = text(e.data.content);
    else if (e.type === 'assistant/message' && answer === undefined && prompt === undefined) {
      const t = text(e.data.message.content);
      if (t.trim() !== '') answer = t;
    }
  }
  const out: string[] = [];
  if (prompt !== undefined) out.push(`last prompt: ${oneLine(truncate(prompt, 160))}`);
  if (answer !== undefined) out.push(`last answer: ${oneLine(truncate(answer, 160))}`);
  return out;
}

function argsText(args: unknown): string {
  try {
    return JSON.stringify(args) ?? String(args);
  } catch {
    return String(args);
  }
}

/**
 * `dsh chat --resume` without an id, on the screen: this workspace's sessions in a list, before
 * anything is opened. Returns the screen (already started) and the id picked; undefined when the
 * list was left without a pick.
 */
async function pickAtStart(opts: ChatOptions, io: Io, hooks: ScreenHooks): Promise<{ term: ChatTerminal; id: string } | undefined> {
  checkFlags(opts);
  const cwd = workspaceDir(opts.cwd);
  const store = await storeFor(io.env);
  let items: Awaited<ReturnType<typeof recentSessions>>;
  try {
    items = await recentSessions(store, cwd);
  } finally {
    await store.close();
  }
  if (items.length === 0) throw new CliError('SESSION_NOT_FOUND', `no stored session of ${cwd} to resume; start one without --resume`);
  const term = new ChatTerminal(io, cwd, hooks);
  term.screen.start();
  const id = await term.screen.pick(`Resume a session of ${cwd}`, items);
  if (id !== undefined) return { term, id };
  term.screen.stop();
  return undefined;
}

export async function runChat(opts: ChatOptions, io: Io): Promise<number> {
  const stdin = io.stdin;
  if (!stdin) throw new CliError('USAGE', 'dsh chat reads prompts from standard input, and there is none here');
  // Only a real process has a terminal to drive; in-process callers always get the line mode.
  const tty = stdin.isTTY === true && io.proc !== undefined;
  // A terminal that cannot move its cursor (TERM=dumb: Emacs' shell, some CI consoles) gets the
  // line protocol with its own line editing (cooked mode), so nothing but text is written.
  const dumb = io.env.TERM === 'dumb';
  // On a terminal whose output is a terminal too, the chat is a full screen (src/terminal/chat);
  // otherwise (a pipe, a redirected output, TERM=dumb, --line) the line protocol below, unchanged.
  const onScreen = tty && process.stdout.isTTY === true && !dumb && opts.line !== true;
  // The screen of `--resume`'s list is up before the chat's handlers exist: keys that reach them
  // in between (the session opening) are ignored.
  let ready = false;
  const hooks: ScreenHooks = {
    onSubmit: (text) => ready && submit(text),
    onInterrupt: () => ready && interrupt(),
    onEof: () => ready && closeInput(),
  };
  let picked: { term: ChatTerminal; id: string } | undefined;
  if (opts.resume === true && onScreen) {
    picked = await pickAtStart(opts, io, hooks);
    if (!picked) {
      io.err.line('no session picked; nothing was started');
      return EXIT_OK;
    }
    opts = { ...opts, resume: picked.id };
  }
  let s: Awaited<ReturnType<typeof startSession>>;
  try {
    s = await startSession(opts, io);
  } catch (e) {
    picked?.term.screen.stop();
    throw e;
  }
  if (opts.compact === false) s.coding.compaction = { auto: false };
  const term = picked?.term ?? (onScreen ? new ChatTerminal(io, s.cwd, hooks) : undefined);
  const renderer = term
    ? new LiveRenderer(term.io, {
        mode: 'stream',
        answer: { text: (d) => term.screen.answerDelta(d), end: () => term.screen.answerEnd() },
        blocks: term.screen.blocks,
      })
    : new LiveRenderer(io, { mode: 'stream' });
  // The screen draws tool calls and reasoning by kind, with the renderers `dsh run` uses.
  if (term) await renderer.enableRich();
  const llm = llmSection(s.config);

  // ---- /model: a request-time override, so the change is logged as a request/header change.
  const modelSwitch = new ModelSwitch();
  const modelPlugin = modelSwitch.plugin();

  // ---- input
  let rl: Interface | undefined;
  let inputClosed = false;
  let pending: { done: (o: ApprovalOutcome) => void } | undefined;
  const ask = (question: string): void => {
    if (tty && rl) {
      renderer.endLine();
      rl.setPrompt(question);
      rl.prompt();
    } else renderer.note(question.trimEnd(), 'yellow');
  };
  const lineApprove: ApprovalHandler = (req, signal) =>
    new Promise<ApprovalOutcome>((resolve) => {
      if (inputClosed || signal.aborted) return resolve('cancelled');
      const entry = {
        done: (o: ApprovalOutcome): void => {
          if (pending !== entry) return;
          pending = undefined;
          signal.removeEventListener('abort', onAbort);
          resolve(o);
        },
      };
      const onAbort = (): void => entry.done('cancelled');
      pending = entry;
      signal.addEventListener('abort', onAbort, { once: true });
      // The whole call, never cut: nobody may approve what they could not read (JSON text keeps
      // a value's newlines as `\n`, so it is one line; its spaces are not folded).
      renderer.note(`approval needed: ${oneLine(req.toolName)} ${block(argsText(req.args))}`, 'yellow');
      if (req.reason) renderer.note(`  because ${oneLine(req.reason)}`, 'yellow');
      ask('allow once? [y/N] ');
    });
  const approve: ApprovalHandler = term
    ? (req, signal) => {
        if (inputClosed || signal.aborted) return 'cancelled';
        return term.approve(req, signal);
      }
    : lineApprove;

  // ---- the agent (replaced by /fork)
  let cur!: Current;
  let exitCode: number | undefined;
  let exitWhenIdle: number | undefined;
  let cancelling = false;
  let compacting: AbortController | undefined;
  let finishResolve!: (code: number) => void;
  const finished = new Promise<number>((r) => (finishResolve = r));
  const finish = (code: number): void => {
    if (exitCode !== undefined) return;
    exitCode = code;
    finishResolve(code);
  };
  const running = (): boolean => cur.coding.agent.status === 'running';
  const showPrompt = (): void => {
    if (!term && tty && rl && exitCode === undefined && !pending) {
      rl.setPrompt('› ');
      rl.prompt();
    }
  };
  const onIdle = (): void => {
    cancelling = false;
    if (exitWhenIdle !== undefined) finish(exitWhenIdle);
    else showPrompt();
  };
  const leaveWhenIdle = (code: number): void => {
    exitWhenIdle ??= code;
    if (!running()) finish(exitWhenIdle);
  };

  const start = async (session: Session, stored: OpenSession | undefined): Promise<Current> => {
    const coding = await buildAgent(
      { coding: s.coding, stored, ...(s.searchIndex !== undefined ? { searchIndex: s.searchIndex } : {}) },
      session,
      { approve, plugins: [modelPlugin] },
    );
    const detach = renderer.attach(session);
    const detachScreen = term?.attach(session);
    const offStatus = coding.agent.on('agent/status', ({ status }) => {
      if (status === 'idle') onIdle();
    });
    return { coding, session, stored, path: stored?.location, release: () => (offStatus(), detach(), detachScreen?.()) };
  };
  const stop = async (c: Current): Promise<void> => {
    c.release();
    await closeSession(c.coding, c.stored, io);
  };
  /**
   * The chat continues in another session (a fork, a resumed one). Its agent exists before the old
   * one goes, so a failure leaves the chat working.
   */
  const switchTo = async (session: Session, stored: OpenSession | undefined): Promise<Current> => {
    let next: Current;
    try {
      next = await start(session, stored);
    } catch (e) {
      await closeSession(undefined, stored, io);
      throw e;
    }
    const old = cur;
    cur = next;
    await stop(old);
    for (const w of agentWarnings(next.coding)) renderer.note(`warning: ${w}`, 'yellow');
    return next;
  };

  try {
    cur = await start(s.session, s.stored);
  } catch (e) {
    await closeSession(undefined, s.stored, io);
    throw e;
  }
  renderer.onCommitted((e) => {
    if (e.type === 'turn/end' && renderer.lastTurn) renderer.note(turnLine(renderer.lastTurn), 'dim');
  });
  for (const w of startWarnings(s, cur.coding)) renderer.note(`warning: ${w}`, 'yellow');
  renderer.note(banner(s, cur.coding), 'dim');
  renderer.note(
    term
      ? 'type a prompt; /help lists the commands, Ctrl-O expands or collapses thinking and tool output, /exit leaves'
      : 'type a prompt; /help lists the commands, /exit leaves',
    'dim',
  );

  /**
   * Cancels the running turn. A cancel clears the agent's inbox, so queued steers will not enter:
   * what was typed goes back into the editor, to send again or edit, never silently lost.
   */
  function cancelTurn(): void {
    cancelling = true;
    cur.coding.agent.cancel({ kind: 'user' });
    const dropped = term?.screen.takeQueue() ?? [];
    if (term && dropped.length > 0) {
      term.screen.restoreToEditor(dropped.join('\n'));
      const n = dropped.length;
      renderer.note(`${n === 1 ? 'the queued steer was' : `${n} queued steers were`} not sent: back in the editor`, 'yellow');
    }
  }

  /**
   * `/exit` while a turn runs cancels it, and the cancel drops the steers still queued. The first
   * `/exit` with steers queued only says so (Ctrl-C would put them back in the editor); a second
   * one, with the same steers queued, leaves and prints their text, so nothing typed is lost
   * silently (issue 15 second review, N8).
   */
  let exitWarnedFor = '';
  function exitDropsSteers(): boolean {
    const steers = cur.coding.agent.inbox.nextStep;
    if (steers.length === 0) return true;
    const ids = steers.map((m) => m.id).join(' ');
    const n = steers.length;
    const them = n === 1 ? 'it' : 'them';
    if (ids !== exitWarnedFor) {
      exitWarnedFor = ids;
      const back = term ? `; Ctrl-C cancels the turn and puts ${them} back in the editor` : '';
      renderer.note(
        `${n === 1 ? 'a steer is' : `${n} steers are`} queued, not sent yet: /exit again leaves without ${them}${back}`,
        'yellow',
      );
      return false;
    }
    term?.screen.takeQueue();
    const texts = steers.map((m) => m.content.find((b) => b.type === 'text')?.text ?? '');
    renderer.note(
      `left without sending ${n === 1 ? 'the queued steer' : `${n} queued steers`}: ${texts.map((t) => block(t)).join(' · ')}`,
      'yellow',
    );
    return true;
  }

  const control: ChatControl = {
    session: () => cur.session,
    path: () => cur.path,
    running,
    model: () => modelSwitch.current(s.ref),
    say: (text) => renderer.say(text),
    warn: (text) => renderer.note(text, 'yellow'),
    cancel: cancelTurn,
    exit: async () => {
      if (running() && !exitDropsSteers()) return;
      if (running()) cur.coding.agent.cancel({ kind: 'user' });
      leaveWhenIdle(EXIT_OK);
      await finished;
    },
    fork: async (seq) => {
      const old = cur;
      const boundary = seq ?? old.session.length - 1;
      let childStored: OpenSession | undefined;
      let child: Session;
      if (s.store && old.stored) {
        childStored = await s.store.fork(old.session.id, boundary);
        child = childStored.session;
      } else child = old.session.fork(boundary);
      const next = await switchTo(child, childStored);
      renderer.say(
        `forked ${oneLine(old.session.id)} at seq ${boundary}; continuing in ${oneLine(child.id)}` +
          `${next.path ? ` (${oneLine(next.path)})` : ''}`,
      );
    },
    ...(term ? { pick: (heading: string, items: readonly PickItem[]) => term.screen.pick(heading, items) } : {}),
    sessions: async () => (s.store ? recentSessions(s.store, s.cwd, cur.session.id) : []),
    resume: async (ref) => {
      if (!s.store) throw new CliError('USAGE', 'this chat keeps its session in memory (--no-persist): there is no store to resume from');
      const info = await findSession(s.store, ref);
      if (info.id === cur.session.id) throw new CliError('USAGE', `the chat is in session ${info.id} already`);
      // Tools work in the chat's workspace: a session of another one continues there, not here.
      if (info.header.cwd !== s.cwd)
        throw new CliError(
          'USAGE',
          `session ${info.id} belongs to ${info.header.cwd ?? 'no workspace'}; run dsh chat -C <that directory> --resume ${info.id}`,
        );
      const old = cur;
      const stored = await s.store.open(info.id);
      const next = await switchTo(stored.session, stored);
      renderer.say(
        `resumed ${oneLine(info.id)} at turn ${next.session.trace.lastTurn + 1}` +
          `${next.path ? ` (${oneLine(next.path)})` : ''}; ${oneLine(old.session.id)} is kept as it is`,
      );
      for (const l of lastExchange(next.session)) renderer.note(l, 'dim');
    },
    compact: async () => {
      const ctl = new AbortController();
      compacting = ctl;
      renderer.note('compacting the history…', 'dim');
      try {
        const out = await runCompactCommand(cur.coding.agent, { signal: ctl.signal });
        return { ok: out.error === undefined, text: ctl.signal.aborted ? 'compaction cancelled; the history is unchanged' : out.text };
      } finally {
        compacting = undefined;
      }
    },
    setModel: (ref) => {
      const choice = chooseModel({ spec: ref, env: io.env, config: llm });
      const parsed = { provider: choice.config.provider, model: choice.config.model };
      modelSwitch.set(cur.coding.agent, parsed, () => choice.adapter());
      renderer.say(`model ${oneLine(`${parsed.provider}:${parsed.model}`)} from the next request on`);
    },
  };

  const handleLine = async (line: string): Promise<void> => {
    if (exitCode !== undefined) return;
    const text = line.trim();
    if (text === '') {
      if (!running()) showPrompt();
      return;
    }
    if (text.startsWith('/')) {
      await runCommand(text, control);
      if (!running()) showPrompt();
      return;
    }
    const agent = cur.coding.agent;
    if (term) {
      // On the screen: `@path` attaches a workspace file, and a steer shows as queued until its
      // user/message is in the log.
      let content: ReturnType<typeof withAttachments>['content'];
      try {
        content = withAttachments(line.replace(/^\s+|\s+$/g, ''), s.cwd, s.coding.hidePaths).content;
      } catch (e) {
        if (e instanceof AttachError) {
          // The prompt goes back into the editor, so the path can be fixed rather than typed again.
          term.screen.restoreToEditor(line.replace(/^\s+|\s+$/g, ''));
          return renderer.note(`${oneLine(e.message)} [${e.code}]`, 'yellow');
        }
        throw e;
      }
      if (agent.status === 'running') {
        const m = agent.steer(content);
        term.screen.queue(m.id, text);
      } else agent.followup(content);
      return;
    }
    if (agent.status === 'running') {
      agent.steer(text);
      renderer.note('(steering: it enters at the next step)', 'dim');
    } else agent.followup(text);
  };

  /** When Ctrl-C was last pressed at an idle, empty prompt: a second press within the window leaves. */
  let quitArmedAt = Number.NEGATIVE_INFINITY;
  const interrupt = (): void => {
    if (pending) pending.done('cancelled');
    if (term?.screen.cancelQuestion()) return;
    if (compacting) {
      compacting.abort(new Error('cancelled by the user'));
      renderer.note('cancelling the compaction', 'yellow');
      return;
    }
    if (running()) {
      if (cancelling) {
        term?.screen.stop();
        SessionStore.flushAllSync();
        io.out.flush();
        io.err.flush();
        io.proc?.exitNow(EXIT_SIGINT);
      }
      renderer.note('cancelling the turn (Ctrl-C again quits at once)', 'yellow');
      cancelTurn();
      return;
    }
    // Ctrl-C with a half-typed prompt clears it. On an empty prompt of a terminal it leaves only
    // when pressed twice: a quick double press meant to stop a turn that had just ended on its own
    // (or been cancelled by the first press) must not end the chat.
    if (term && term.screen.editorText() !== '') return term.screen.clearEditor();
    if (tty && Date.now() - quitArmedAt > QUIT_AGAIN_MS) {
      quitArmedAt = Date.now();
      renderer.note('press Ctrl-C again to leave (or Ctrl-D, /exit)', 'dim');
      showPrompt();
      return;
    }
    finish(EXIT_OK);
  };

  const removers: (() => void)[] = [];
  let chain: Promise<void> = Promise.resolve();
  function submit(line: string): void {
    chain = chain
      .then(() => handleLine(line))
      .catch((e: unknown) => renderer.note(`dsh: ${oneLine(e instanceof Error ? e.message : String(e))}`, 'red'));
  }
  function closeInput(): void {
    inputClosed = true;
    pending?.done('cancelled');
    chain = chain.then(() => leaveWhenIdle(EXIT_OK));
  }
  ready = true;
  if (term) term.screen.start();
  else rl = createInterface({ input: stdin, terminal: tty && !dumb, ...(tty ? { output: process.stdout } : {}) });
  rl?.on('line', (line) => {
    if (pending) {
      // The answer to the question on screen, not a prompt: never queued behind other input.
      const yes = /^\s*(y|yes)\s*$/i.test(line);
      renderer.note(yes ? '(allowed once)' : '(rejected)', 'dim');
      pending.done(yes ? 'allowed-once' : 'rejected');
      return;
    }
    submit(line);
  });
  rl?.on('close', closeInput);
  if (term) removers.push(() => term.screen.stop());
  if (tty && !dumb && !term) rl!.on('SIGINT', interrupt);
  else if (io.proc) removers.push(io.proc.onSignal('SIGINT', interrupt));
  if (io.proc) {
    removers.push(
      io.proc.onSignal('SIGTERM', () => {
        compacting?.abort(new Error('terminated'));
        if (running()) cur.coding.agent.cancel({ kind: 'disposed' });
        leaveWhenIdle(EXIT_SIGTERM);
      }),
    );
  }
  showPrompt();

  const code = await finished;
  await term?.screen.finalFrame();
  rl?.close();
  for (const r of removers) r();
  await chain.catch(() => undefined);
  try {
    await stop(cur);
  } finally {
    // A pipe left open by the caller must not keep the process alive once the chat is over.
    if (stdin === process.stdin) process.stdin.destroy();
  }
  renderer.endLine();
  // Leaving from the prompt (Ctrl-C, Ctrl-D) leaves the cursor after it.
  if (tty && !term) {
    io.out.write('\n');
    io.out.flush();
  }
  io.err.line(closingLine(cur.session.id, cur.path, renderer));
  return code;
}
