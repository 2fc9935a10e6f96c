/**
 * CLI failures. Every refusal the CLI itself makes has a stable code (scripts match on it in
 * `--json` output) and an exit status: 1 for a problem with the input, 2 for a usage error.
 * Session-library refusals (`SessionError`) keep their own codes and are reported as input
 * problems (exit 1).
 */
import { CodedError } from '../model/coded-error.js';

export const EXIT_OK = 0;
export const EXIT_PROBLEM = 1;
export const EXIT_USAGE = 2;

export type CliErrorCode =
  /** Bad command line: unknown option, missing argument, malformed option value. */
  | 'USAGE'
  | 'FILE_NOT_FOUND'
  | 'NOT_A_FILE'
  | 'FILE_UNREADABLE'
  | 'FILE_TOO_LARGE'
  | 'EMPTY_FILE'
  | 'BINARY_FILE'
  /** An option names a seq or turn the log does not have. */
  | 'SEQ_OUT_OF_RANGE'
  | 'TURN_NOT_FOUND'
  /** A call id the log does not have (the message lists the nearest ones). */
  | 'CALL_NOT_FOUND'
  /** `dsh run` got no task (no arguments and nothing on standard input). */
  | 'NO_TASK'
  /** `--cwd` is missing or not a directory. */
  | 'NOT_A_DIRECTORY'
  /** No stored session has this id (or prefix); `--continue` found none for the workspace. */
  | 'SESSION_NOT_FOUND'
  /** An id prefix matches more than one stored session. */
  | 'AMBIGUOUS_SESSION'
  /** `--out` could not be written. */
  | 'WRITE_FAILED'
  /** `$DSH_HOME` (or `~/.dsh`) is not a directory, lies under a file, or cannot be created or written. */
  | 'HOME_UNUSABLE'
  /** `dsh view --port N`: the port is taken or needs privileges. */
  | 'PORT_UNAVAILABLE'
  /** A command that needs the PostgreSQL store (`dsh serve`, `dsh worker`) with DSH_STORE unset. */
  | 'NEEDS_POSTGRES'
  /** `dsh sessions import` of a log with a torn tail (only whole logs are imported). */
  | 'TORN_TAIL'
  /** `--replay-model`: the log cannot be read, or is not a session log. */
  | 'REPLAY_LOG_INVALID'
  /** `--replay-override`: the file cannot be read, is not JSON, or is not an override (its JSON path named). */
  | 'REPLAY_OVERRIDE_INVALID';

const USAGE_CODES: ReadonlySet<CliErrorCode> = new Set(['USAGE', 'SEQ_OUT_OF_RANGE', 'TURN_NOT_FOUND', 'CALL_NOT_FOUND', 'NO_TASK']);

/** Exit statuses of the agent commands beyond 0/1/2: killed by SIGINT or SIGTERM (128 + signal). */
export const EXIT_SIGINT = 130;
export const EXIT_SIGTERM = 143;

export class CliError extends CodedError<CliErrorCode> {
  readonly file: string | undefined;
  /** The 1-based line of the file the refusal is about, when it is about one. */
  readonly line: number | undefined;
  constructor(code: CliErrorCode, message: string, opts: { file?: string; line?: number; cause?: unknown } = {}) {
    super(code, message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'CliError';
    this.file = opts.file;
    this.line = opts.line;
  }
  get exitCode(): number {
    return USAGE_CODES.has(this.code) ? EXIT_USAGE : EXIT_PROBLEM;
  }
}
