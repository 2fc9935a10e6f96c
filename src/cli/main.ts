/**
 * The `dsh` command line. `main` parses, runs one command and returns the exit status; it never
 * exits the process itself, so it can run in tests and the shim (`bin/dsh.js`) sets the status.
 *
 * Exit status: 0 ok; 1 problems found or the command failed; 2 usage error; the agent commands
 * add 130 (SIGINT) and 143 (SIGTERM). Failures print one line to stderr (`dsh: …`);
 * `DSH_DEBUG=1` adds the stack trace.
 */
import { Command, CommanderError } from 'commander';
import { CodedError } from '../model/coded-error.js';
import { SessionError } from '../session/errors.js';
import { CliError, EXIT_OK, EXIT_PROBLEM, EXIT_USAGE } from './errors.js';
import { processIo, type Io } from './output.js';
import { formatProblem, problemFromError } from './problems.js';
import { block, oneLine } from './text.js';
import { registerLog } from './log/index.js';
import { addAcp, addChat, addReplay, addRun, addSdk, addServe, addSessions, addView, addWorker, registerConfig } from './commands.js';
import { packageVersion } from './version.js';
import { registerCompletion } from './completion.js';
import { MODEL_COMMANDS, preferBaselineWasm } from './baseline-wasm.js';

type AddCommand = (program: Command, io: Io, setExit: (code: number) => void) => void;

/** The top-level commands in the order help lists them, each with what adds it (and its subcommands). */
const COMMANDS: readonly (readonly [name: string, add: AddCommand])[] = [
  ['run', addRun],
  ['acp', addAcp],
  ['chat', addChat],
  ['replay', addReplay],
  ['view', addView],
  ['serve', addServe],
  ['sdk', addSdk],
  ['worker', addWorker],
  ['sessions', addSessions],
  ['log', registerLog],
  ['config', registerConfig],
  ['completion', registerCompletion],
];

/**
 * The program with every command, or, given the command a command line names (its first word),
 * with that command alone. Commander makes each of ~160 options an object as it is added, which
 * in a fresh process (cold code, run by the interpreter) cost ~8 ms of every start; a command's
 * parsing, help and errors need only its own subtree. `completion` walks the whole tree, and a
 * word that names no command (`help`, an option, a typo to suggest a name for) gets the whole
 * program. test/cli/program.test.ts holds each command's help and options to the whole program's.
 */
export function buildProgram(io: Io, setExit: (code: number) => void, command?: string): Command {
  const program = new Command('dsh')
    .description('dsh: an agent harness whose session is an append-only event log')
    .version(packageVersion(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'print help')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => {
        io.out.line(s.replace(/\n$/, ''));
      },
      writeErr: (s) => {
        io.err.line(block(s).replace(/\n$/, ''));
      },
      // One line: commander's message plus where help is. It echoes the arguments it rejects,
      // which writeErr escapes like any other text.
      outputError: (s, write) => write(`dsh: ${s.trimEnd()} (add --help for usage)\n`),
    })
    .addHelpText(
      'after',
      `
Exit status: 0 ok; 1 problems found or the command failed; 2 usage error.
run and chat: 130 after Ctrl-C (SIGINT), 143 after SIGTERM.
Environment: DEEPSEEK_API_KEY (or the selected provider's key), DSH_MODEL, DSH_HOME (config and
sessions, default ~/.dsh); NO_COLOR disables colour, FORCE_COLOR forces it; DSH_DEBUG=1 prints
stack traces.
Docs: docs/cli.md`,
    );
  const only = COMMANDS.find(([name]) => name === command && name !== 'completion');
  for (const [, add] of only ? [only] : COMMANDS) add(program, io, setExit);
  return program;
}

/** Node's `SystemError` (not an exported class): an Error with a string code, a numeric errno and the syscall. */
function isSystemError(e: unknown): e is NodeJS.ErrnoException & { code: string } {
  if (!(e instanceof Error)) return false;
  const x = e as NodeJS.ErrnoException;
  return typeof x.code === 'string' && typeof x.errno === 'number' && typeof x.syscall === 'string';
}

/** One line on stderr for a failure that reached `main`, and the exit status it means. */
export function reportFailure(e: unknown, io: Io): number {
  if (io.env.DSH_DEBUG === '1' && e instanceof Error) io.err.line(block(e.stack ?? String(e)));
  if (e instanceof CliError) {
    io.err.line(`dsh: ${e.file !== undefined ? `${oneLine(e.file)}: ` : ''}${oneLine(e.message)} [${e.code}]`);
    return e.exitCode;
  }
  if (e instanceof SessionError) {
    io.err.line(`dsh: ${formatProblem(problemFromError(e, e.details.file ?? '<log>'), io.err)}`);
    return EXIT_PROBLEM;
  }
  // Every layer's errors are CodedErrors with a stable code (ConfigError, LlmError, StoreError,
  // OtelExportError, ViewerError, ToolError…): one line with the code, no stack. So are Node's
  // system errors (an fs or socket call that failed: `errno` and `syscall` beside the code),
  // which name the file or address in their message.
  if (e instanceof CodedError || isSystemError(e)) {
    io.err.line(`dsh: ${oneLine(e.message)} [${oneLine(e.code)}]`);
    return EXIT_PROBLEM;
  }
  const msg = e instanceof Error ? e.message : String(e);
  io.err.line(`dsh: internal error: ${oneLine(msg)}${io.env.DSH_DEBUG === '1' ? '' : ' (DSH_DEBUG=1 prints the stack trace)'}`);
  return EXIT_PROBLEM;
}

/** Run the CLI on `argv` (the arguments after the program name); resolves to the exit status. */
export async function main(argv: readonly string[], io: Io = processIo()): Promise<number> {
  let status = EXIT_OK;
  if (argv[0] !== undefined && MODEL_COMMANDS.has(argv[0])) preferBaselineWasm();
  try {
    await buildProgram(
      io,
      (code) => {
        status = code;
      },
      argv[0],
    ).parseAsync([...argv], { from: 'user' });
  } catch (e) {
    // Commander has already printed its message (help, version, or the usage error).
    status = e instanceof CommanderError ? (e.exitCode === 0 ? EXIT_OK : EXIT_USAGE) : reportFailure(e, io);
  } finally {
    io.out.flush();
    io.err.flush();
  }
  return status;
}
