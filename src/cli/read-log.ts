/**
 * Reading a log file for the CLI: file-level refusals (missing, directory, binary, empty,
 * unreadable, too large) become one-line `CliError`s before the session library sees any bytes;
 * then the library loads it with `{{token}}` placeholders reported as warnings, as dsh's
 * tokenised fixtures need.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { loadJsonlFd, loadJsonlFile, SessionError, type FileLoadOptions, type LoadedLog } from '../session/index.js';
import { CliError } from './errors.js';
import { oneLine, plural } from './text.js';

/** `-` reads standard input. */
export const STDIN = '-';

export function displayName(path: string): string {
  return path === STDIN ? '<stdin>' : path;
}

function fsError(e: unknown, path: string): CliError {
  const code = (e as NodeJS.ErrnoException).code;
  const file = displayName(path);
  switch (code) {
    case 'ENOENT':
    case 'ENOTDIR':
      return new CliError('FILE_NOT_FOUND', 'no such file', { file, cause: e });
    case 'EISDIR':
      return new CliError('NOT_A_FILE', 'is a directory; pass the log files inside it (e.g. dir/*.jsonl)', { file, cause: e });
    case 'EACCES':
    case 'EPERM':
      return new CliError('FILE_UNREADABLE', 'permission denied', { file, cause: e });
    default:
      return new CliError('FILE_UNREADABLE', `cannot read it (${code ?? (e as Error).message})`, { file, cause: e });
  }
}

/**
 * Offset of a NUL that marks the bytes as binary, or -1. A crash can leave NUL padding in a torn
 * tail, which the decoder reports as such; so a NUL means binary only on the header line, or near
 * the start of a file that is not JSON at all. `head` is the start of the file (8 KiB is enough).
 */
function binaryAt(head: Buffer): number {
  const nl = head.indexOf(10);
  const firstLineNul = head.subarray(0, nl < 0 ? head.length : nl).indexOf(0);
  return firstLineNul >= 0 ? firstLineNul : head[0] !== 0x7b ? head.indexOf(0) : -1;
}

const HEAD = 8192;

function refuseBytes(head: Buffer, file: string): void {
  if (head.length === 0) throw new CliError('EMPTY_FILE', 'the file is empty; a dsh log starts with a session header line', { file });
  const nul = binaryAt(head);
  if (nul >= 0) throw new CliError('BINARY_FILE', `binary data (a NUL byte at offset ${nul}), not a JSONL session log`, { file });
}

function refuseDirectory(path: string, file: string): void {
  if (statSync(path).isDirectory()) {
    throw new CliError('NOT_A_FILE', 'is a directory; pass the log files inside it (e.g. dir/*.jsonl)', { file });
  }
}

/**
 * The file-level refusals of `readLogText` (missing, directory, unreadable, empty, binary) from
 * the first bytes only, for commands that read the file themselves (the viewer follows it).
 */
export function checkLogFile(path: string): void {
  const head = Buffer.alloc(HEAD);
  let n: number;
  try {
    refuseDirectory(path, path);
    if (!statSync(path).isFile()) {
      throw new CliError('NOT_A_FILE', 'is a pipe or device, not a regular file; save the log to a file first', { file: path });
    }
    const fd = openSync(path, 'r');
    try {
      n = readSync(fd, head, 0, HEAD, 0);
    } finally {
      closeSync(fd);
    }
  } catch (e) {
    throw e instanceof CliError ? e : fsError(e, path);
  }
  refuseBytes(head.subarray(0, n), path);
}

/** What kind of input a path names; undefined when it cannot be inspected (the read names why). */
function kindOf(path: string): 'file' | 'directory' | 'stream' | 'device' | undefined {
  try {
    const st = statSync(path);
    if (st.isFile()) return 'file';
    if (st.isDirectory()) return 'directory';
    if (st.isFIFO() || st.isSocket()) return 'stream';
    return 'device';
  } catch {
    return undefined;
  }
}

export interface CliLog extends LoadedLog {
  /** The name to print (the path as given, or `<stdin>`). */
  file: string;
}

/**
 * Load a log for a command. Everything is streamed (`loadJsonlFile`, `loadJsonlFd`): a log of any
 * size loads in the session's memory alone, never the file's text on top of it. A regular file is
 * checked first (missing, empty, binary); standard input and pipes (`<(…)`) are read once, as they
 * arrive, and their first bytes get the same checks before any is decoded. Devices are refused:
 * `/dev/zero` would never end.
 */
export function readLog(path: string): CliLog {
  const file = displayName(path);
  const opts: FileLoadOptions = { file, placeholders: 'warn', inspectHead: (head) => refuseBytes(head.subarray(0, HEAD), file) };
  let load: () => LoadedLog;
  if (path === STDIN) {
    load = () => loadJsonlFd(0, opts);
  } else {
    const kind = kindOf(path);
    if (kind === 'directory') refuseDirectory(path, file);
    if (kind === 'device') throw new CliError('NOT_A_FILE', 'is a device, not a log file', { file });
    if (kind !== 'stream') checkLogFile(path);
    load = () => loadJsonlFile(path, opts);
  }
  try {
    return { ...load(), file };
  } catch (e) {
    if (e instanceof CliError) throw e;
    if (e instanceof SessionError && e.code === 'LINE_TOO_LONG') {
      throw new CliError('FILE_TOO_LARGE', `line ${e.details.line} is too long to decode as one string (over about 512 MiB)`, { file, cause: e });
    }
    // The file can vanish or fail between the check and the read: still one line.
    if (typeof (e as NodeJS.ErrnoException).code === 'string' && !(e instanceof SessionError)) throw fsError(e, path);
    throw e;
  }
}

/**
 * What a command that does not list a log's warnings (`dsh log messages`, `replay`, `export`)
 * must still say about its load: what was not loaded or not as written. One line each, for stderr.
 */
export function loadNotices(log: CliLog): string[] {
  const out: string[] = [];
  const name = oneLine(log.file);
  const t = log.tornTail;
  if (t) out.push(`${name}: torn tail at line ${t.line}: ${plural(t.droppedLines, 'line')} not loaded (${oneLine(t.reason)}) [TORN_TAIL]`);
  if (log.repaired.length) out.push(`${name}: the last turn was left open; crash repair added ${plural(log.repaired.length, 'event')} [OPEN_TURN]`);
  const utf8 = log.warnings.filter((w) => w.code === 'INVALID_UTF8' && w.line !== undefined).map((w) => w.line!);
  if (utf8.length) out.push(`${name}: ${utf8.length === 1 ? `line ${utf8[0]} holds` : `lines ${utf8.join(', ')} hold`} bytes that are not valid UTF-8, read as U+FFFD [INVALID_UTF8]`);
  return out;
}
