/**
 * The command-line surface of `run`, `chat`, `replay`, `sessions` and `config`. Only options and
 * help live here; each command's module is imported when it runs, so `dsh log …` and
 * `dsh --version` do not load the agent, the tools, the provider SDKs or the replay harness
 * (about half a second of every start).
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { Io } from './output.js';
import { addAgentFlags, addModelFlags } from './agent/flags.js';
import type { RunOptions } from './run.js';
import type { ChatOptions } from './chat/index.js';
import type { AcpOptions } from './acp.js';
import type { ReplayOptions } from './replay.js';
import type { ListOptions } from './sessions.js';
import type { LineageOptions } from './lineage.js';
import type { ExportOptions as TransferExportOptions, ImportOptions } from './transfer.js';
import type { ConfigShowOptions } from './config.js';
import type { ViewOptions } from './view.js';
import type { SearchCliOptions } from './search.js';
import type { WorkerCliOptions } from './worker.js';
import type { ServeCliOptions } from './serve.js';
import type { SdkOptions } from './sdk.js';

function portNumber(v: string): number {
  const n = /^\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n > 65535) throw new InvalidArgumentError('expected a port number');
  return n;
}

function positiveInt(v: string): number {
  const n = /^\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

type SetExit = (code: number) => void;

const EXIT_HELP = `
Exit status: 0 when the final turn ended completed; 1 when it ended otherwise (error, blocked,
max-tokens) or could not start (config, missing API key, session); 2 usage error; 130 after
Ctrl-C (SIGINT); 143 after SIGTERM.`;

export function addRun(program: Command, io: Io, setExit: SetExit): void {
  addAgentFlags(
    program
      .command('run')
      .description('run one task headless: stream the answer, persist the session, exit 0 only if the turn completed')
      .argument('[task...]', 'the task; absent or - reads it from standard input'),
  )
    .option('--json', 'print every committed session event as one JSON line on stdout instead of the answer')
    .addOption(
      new Option(
        '--output-format <format>',
        "stdout: text (the answer), or stream-json (dsh's headless stream: a session_event line per event, then a result line)",
      ).choices(['text', 'stream-json']),
    )
    .option('-q, --quiet', 'print only the final answer (no tool lines, no summary)')
    .option('--fail-on-denied', 'exit 3 when any tool call was refused (deny rule, sandbox, or an approval no one could give): for CI')
    .addHelpText(
      'after',
      `
Nothing can be approved in a headless run: a call that would ask for approval is refused, and
the refusal says which --allow rule (or --full-auto) would let it run. With --fail-on-denied
any refused call makes the exit status 3 (after 130/143, before the turn's own 0 or 1).
${EXIT_HELP}

Examples:
  DEEPSEEK_API_KEY=… dsh run "fix the typo in README.md"
  dsh run --full-auto --allow "bash(npm test)" "make the tests pass"
  dsh run --continue "now update the changelog"
  git diff | dsh run - --json > events.jsonl`,
    )
    .action(async (task: string[], opts: RunOptions) => {
      const { runRun } = await import('./run.js');
      setExit(await runRun(task, opts, io));
    });
}

export function addAcp(program: Command, io: Io, setExit: SetExit): void {
  addModelFlags(
    program
      .command('acp')
      .description('serve the Agent Client Protocol on stdin/stdout: dsh as the agent of an editor (Zed, JetBrains, neovim)'),
  )
    .option('--config <file>', 'also read this config file, after the user and project files')
    .option('--no-compact', 'never compact the history automatically')
    .addHelpText(
      'after',
      `
Every ACP session is a stored session: dsh log, dsh view and dsh run --resume work on it.
Standard output carries only protocol messages; warnings go to standard error.
docs/acp.md has the editor settings.`,
    )
    .action(async (opts: AcpOptions) => {
      const { runAcp } = await import('./acp.js');
      setExit(await runAcp(opts, io));
    });
}

export function addChat(program: Command, io: Io, setExit: SetExit): void {
  addAgentFlags(program.command('chat').description('interactive session: prompts, steering while it works, approvals, slash commands'), {
    picker: true,
  })
    .option('--line', 'the line protocol even on a terminal (as with TERM=dumb): no full screen')
    .addHelpText(
      'after',
      `
On a terminal, a full screen: Enter sends; Shift+Enter, Alt+Enter or a trailing \\ adds a
line; a paste is one prompt; ↑/↓ recall this workspace's earlier prompts; Tab completes slash
commands and paths (@path too); @path attaches a workspace file to the prompt; Ctrl-O expands
or collapses thinking and tool output. A prompt typed while the agent works is queued and steers
it (it enters at the next step). An approval shows the whole call: 1 (y) allow once, 2 (a)
allow for this session (a rule naming exactly that call), 3 (n) deny with a reason; Esc cancels.
On a pipe, with TERM=dumb, or with --line: the line protocol, each line a prompt (or a steer
while the agent works), approvals answered y or n.
Ctrl-C cancels the running turn; at an idle prompt Ctrl-C twice (once on a pipe), Ctrl-D or
/exit leaves.
Slash commands: /help, /session, /cancel, /resume [ID], /fork [SEQ], /model provider:model,
/compact, /exit (or /quit).
Exit status: 0 when you leave; 1 when it cannot start (config, missing API key, session); 2 usage
error; 130 after a second Ctrl-C while a turn winds down; 143 after SIGTERM.`,
    )
    .action(async (opts: ChatOptions) => {
      const { runChat } = await import('./chat/index.js');
      setExit(await runChat(opts, io));
    });
}

export function addReplay(program: Command, io: Io, setExit: SetExit): void {
  program
    .command('replay')
    .description('re-run a recorded session through the real agent loop with no model (and, by default, recorded tool results)')
    .argument('<log>', 'session log file, or a stored session id')
    .option('--live-tools', 'run the real built-in tools in --cwd instead of answering from the recording')
    .option('-C, --cwd <dir>', 'workspace for --live-tools (required with it: the recorded calls really run there)')
    .option('--strict', 'also fail when a request the loop builds differs from the recorded one (and stop there)')
    .option('-o, --out <file>', 'write the replayed session log to this file')
    .option('--json', 'print one JSON report instead of the transcript and summary')
    .addHelpText(
      'after',
      `
No API key and no network: model output comes from the log. What must match (turns, steps,
entered input, chunks, assistant messages, tool calls, end reasons, retries, todos) decides the
exit status: 0 when it matches, 1 otherwise. Tool results and request headers are reported.

Examples:
  dsh replay examples/fix-typo.jsonl
  dsh replay --live-tools --cwd /tmp/demo examples/fix-typo.jsonl --out replayed.jsonl`,
    )
    .action(async (log: string, opts: ReplayOptions) => {
      const { runReplay } = await import('./replay.js');
      setExit(await runReplay(log, opts, io));
    });
}

export function addView(program: Command, io: Io, setExit: SetExit): void {
  program
    .command('view')
    .description('open the timeline viewer for a log or stored session (a local web page; follows a session as it grows)')
    .argument('<log>', 'session log file, or a stored session id')
    .option('-p, --port <n>', 'port (default: any free port)', portNumber)
    .option('--open', 'also open the page in the default browser')
    .option('--seq <n>', 'open the page at this seq (a hit of dsh sessions search)', (v: string) => {
      const n = /^\d+$/.test(v) ? Number(v) : NaN;
      if (!Number.isSafeInteger(n)) throw new InvalidArgumentError('expected a seq (an integer ≥ 0)');
      return n;
    })
    .addHelpText(
      'after',
      `
Serves on 127.0.0.1 only, at an address holding a one-time token; log text is shown as inert
text. Prints the address and runs until Ctrl-C. See docs/viewer.md.

Examples:
  dsh view examples/fix-typo.jsonl
  dsh view --open 3f2a
  dsh view 3f2a --seq 41                  # at a search hit
  dsh view ~/.claude/projects/p/ID.jsonl  # another agent's log (see dsh log import)`,
    )
    .action(async (log: string, opts: ViewOptions) => {
      const { runView } = await import('./view.js');
      setExit(await runView(log, opts, io));
    });
}

export function addServe(program: Command, io: Io, setExit: SetExit): void {
  program
    .command('serve')
    .description(
      'HTTP API over the PostgreSQL store (DSH_STORE): create sessions, queue prompts, steering, context and cancels for dsh ' +
        'worker, read and follow events (JSON, Server-Sent Events)',
    )
    .option('-p, --port <n>', 'port (default: any free port)', portNumber)
    .option('--host <host>', 'loopback address to listen on: 127.0.0.1 (default), ::1 or localhost')
    .option('--max-streams <n>', 'event streams open at once; more get 503 with Retry-After (default 64)', positiveInt)
    .addHelpText(
      'after',
      `
Prints the address, then the bearer token (unless DSH_SERVE_TOKEN sets it); every request but
GET /openapi.json needs Authorization: Bearer <token>. See docs/scale.md.

Examples:
  DSH_STORE=postgres://dsh@db/dsh dsh serve --port 8377
  curl -H "Authorization: Bearer $TOKEN" http://127.0.0.1:8377/v1/sessions`,
    )
    .action(async (opts: ServeCliOptions) => {
      const { runServe } = await import('./serve.js');
      setExit(await runServe(opts, io));
    });
}

export function addSdk(program: Command, io: Io, setExit: SetExit): void {
  addModelFlags(
    program
      .command('sdk')
      .description('serve the dsh SDK protocol (newline-delimited JSON-RPC 2.0) on standard input and output, for programs'),
  )
    .option('--config <file>', 'also read this config file, after the user and project files')
    .addHelpText(
      'after',
      `
Requests: initialize {cwd, provider, model, maxTokens?}, session/prompt {sessionId,
contentBlocks}, session/cancel {sessionId}, session/close {sessionId}, shutdown.
Notifications: session.event {sessionId, event} for every event the log commits, and
session.status {sessionId, status: running|idle}. Every session is stored as dsh run stores it.
See docs/sdk.md.

Example:
  dsh sdk --full-auto < requests.jsonl      # one request per line, answers on stdout
  python3 drive.py                          # a program that spawns dsh sdk (docs/sdk.md)`,
    )
    .action(async (opts: SdkOptions) => {
      const { runSdk } = await import('./sdk.js');
      setExit(await runSdk(opts, io));
    });
}

export function addWorker(program: Command, io: Io, setExit: SetExit): void {
  addModelFlags(
    program
      .command('worker')
      .description(
        'run sessions of the PostgreSQL store (DSH_STORE): claim queued input, hold each session by a lease, take over from ' +
          'workers that died',
      ),
  )
    .option('--concurrency <n>', 'sessions held at once (default 8)', positiveInt)
    .option(
      '--lease-ms <n>',
      "lease length; a dead worker's sessions are taken over this long after its last renewal (default 30000)",
      positiveInt,
    )
    .option('--idle-ms <n>', 'release a session idle this long (default 2000)', positiveInt)
    .option('--poll-ms <n>', 'look for work this often besides notifications (default 2000)', positiveInt)
    .option(
      '--grace-ms <n>',
      'on Ctrl-C or SIGTERM, let running turns finish this long before cancelling them (default 10000)',
      positiveInt,
    )
    .addOption(
      new Option(
        '--on-takeover <what>',
        'after taking over a turn a dead worker left open: continue it (default) or wait for input',
      ).choices(['continue', 'wait']),
    )
    .option('--no-compact', 'never compact the history automatically')
    .option('--config <file>', 'also read this config file, after the user and project files')
    .addHelpText(
      'after',
      `
Each session runs in its own workspace (its cwd), with the coding agent, as dsh run would; what
needs approval is refused (nobody can approve). Progress goes to stderr. See docs/scale.md.

Examples:
  DSH_STORE=postgres://dsh@db/dsh dsh worker --full-auto --concurrency 16`,
    )
    .action(async (opts: WorkerCliOptions) => {
      const { runWorker } = await import('./worker.js');
      setExit(await runWorker(opts, io));
    });
}

export function addSessions(program: Command, io: Io, setExit: SetExit): void {
  const sessions = refuseUnknownSubcommand(
    program.command('sessions').description('stored sessions (under $DSH_HOME/sessions, or in the database DSH_STORE names)'),
  );
  sessions
    .command('list', { isDefault: true })
    .description("list this workspace's sessions, newest first (reads only each log's header and ends)")
    .option('-a, --all', 'every workspace')
    .option('-C, --cwd <dir>', 'the workspace (default: the current directory)')
    .option('-n, --limit <n>', 'at most N sessions', (v: string) => {
      const n = /^\d+$/.test(v) ? Number(v) : NaN;
      if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer');
      return n;
    })
    .option('--json', 'print one JSON array')
    .option('--rescan', 'read every log instead of trusting the listing index, and rebuild the index (sees changes made by other programs)')
    .action(async (opts: ListOptions) => {
      const { runSessionsList } = await import('./sessions.js');
      setExit(await runSessionsList(opts, io));
    });
  sessions
    .command('lineage')
    .description('the fork tree a session belongs to: its furthest stored ancestor and every fork below it')
    .argument('<id>', 'a session id, or a unique prefix of at least 4 characters')
    .option('--json', 'print one JSON document: {id, root, missingParent, sessions: [{id, parentSession, forkSeq, depth, …}]}')
    .action(async (id: string, opts: LineageOptions) => {
      const { runSessionsLineage } = await import('./lineage.js');
      setExit(await runSessionsLineage(id, opts, io));
    });
  sessions
    .command('search')
    .description('full-text search over every stored session: prompts, answers, reasoning, tool calls and results')
    .argument('<query...>', 'words that must all appear (any order); "quoted words" as a phrase; word* as a prefix')
    .option('-C, --cwd <dir>', "only this workspace's sessions")
    .option(
      '--in <path>',
      "also search these logs: files, or directories of .jsonl/.json/.traj files (other agents' logs too); repeatable",
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option(
      '--kind <kind>',
      'only hits of this kind: prompt, context, answer, reasoning, call, result, title; repeatable',
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option('-n, --limit <n>', 'at most N hits, best first (default 20)', (v: string) => {
      const n = /^\d+$/.test(v) ? Number(v) : NaN;
      if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer');
      return n;
    })
    .option('--json', 'print the hits as JSON')
    .option('--rebuild', 'delete the index and build it again from the logs')
    .addHelpText(
      'after',
      `
Hits: session · turn · seq · kind, then a snippet. Open one with dsh view SESSION --seq N.
The index ($DSH_HOME/search/index.sqlite) is a cache: dsh run and dsh chat add each step as
they write it, and each search first reads what the logs gained since; deleting it loses
nothing. Exit status 0 with hits, 1 without.

Examples:
  dsh sessions search recieve
  dsh sessions search '"connection refused"' --kind result
  dsh sessions search deploy* --cwd ~/src/app --json
  dsh sessions search flaky test --in ~/.claude/projects`,
    )
    .action(async (query: string[], opts: SearchCliOptions) => {
      const { runSearch } = await import('./search.js');
      setExit(await runSearch(query, opts, io));
    });
  sessions
    .command('path')
    .description("print a session's log path (or its location in the database)")
    .argument('<id>', 'session id, or a unique prefix of at least 4 characters')
    .action(async (id: string) => {
      const { runSessionsPath } = await import('./sessions.js');
      setExit(await runSessionsPath(id, io));
    });
  sessions
    .command('export')
    .description('write a stored session as a dsh JSONL log: the header and every event as stored, byte for byte')
    .argument('<id>', 'session id, or a unique prefix of at least 4 characters')
    .option('-o, --out <file>', 'write to this file (whole, or not at all) instead of standard output')
    .action(async (id: string, opts: TransferExportOptions) => {
      const { runSessionsExport } = await import('./transfer.js');
      setExit(await runSessionsExport(id, opts, io));
    });
  sessions
    .command('import')
    .description(
      'store dsh JSONL logs as sessions in the current store (DSH_STORE): lines dsh wrote (canonical JSON) byte for byte; ' +
        'any other line as its canonical form (the same JSON value)',
    )
    .argument('<file...>', 'session log files; - reads standard input')
    .option('--json', 'print one JSON report')
    .addHelpText(
      'after',
      `
Moving a session between stores: dsh sessions export ID | DSH_STORE=postgres://… dsh sessions import -
An existing id is refused (SESSION_EXISTS); a log with a torn tail is refused (TORN_TAIL).`,
    )
    .action(async (files: string[], opts: ImportOptions) => {
      const { runSessionsImport } = await import('./transfer.js');
      setExit(await runSessionsImport(files, opts, io));
    });
}

/**
 * A group with a default subcommand hands commander every word it does not know as an argument
 * of the default (`dsh sessions bogus` would read "too many arguments for 'list'"). Name the
 * unknown word and the group's commands instead; options still go to the default.
 */
function refuseUnknownSubcommand(group: Command): Command {
  return group.hook('preSubcommand', (self, sub) => {
    // A known name is dispatched to itself; only an unknown word reaches the default.
    const first = self.args[0];
    if (first === undefined || first.startsWith('-') || first === sub.name()) return;
    self.error(`unknown command '${self.name()} ${first}': use one of ${self.commands.map((c) => c.name()).join(', ')}`, {
      exitCode: 2,
      code: 'commander.unknownCommand',
    });
  });
}

export function registerConfig(program: Command, io: Io, setExit: SetExit): void {
  const config = refuseUnknownSubcommand(
    program.command('config').description('show where configuration comes from and what it resolves to'),
  );
  config
    .command('show', { isDefault: true })
    .description('print the config files read, the effective config (secrets masked) and the selected model')
    .option('--json', 'print one JSON document')
    .option('--config <file>', 'also read this config file (after the user and project files)')
    .option('-m, --model <provider:model>', 'report this model instead of the one DSH_MODEL or the config selects (as dsh run --model)')
    .addHelpText(
      'after',
      `
Files: $DSH_HOME/config.json (DSH_HOME defaults to ~/.dsh), then ./.dsh/config.json.
A project config may not loosen permissions, sandbox, MCP commands or provider endpoints unless
the user config lists the workspace in "trustedProjects"; such keys are dropped with a warning.
The model comes from --model, then DSH_MODEL, then "model" in the config, then the default.`,
    )
    .action(async (opts: ConfigShowOptions) => {
      const { runConfigShow } = await import('./config.js');
      setExit(await runConfigShow(opts, io));
    });
}
