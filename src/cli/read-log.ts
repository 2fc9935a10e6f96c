/**
 * Reading a log file for the CLI: file-level refusals (missing, directory, binary, empty,
 * unreadable, too large) become one-line `CliError`s before the session library sees any bytes;
 * then the library loads it with `{{token}}` placeholders reported as warnings, as dsh's
 * tokenised fixtures need.
 */
import { readFileSync, statSync } from 'node:fs';
import { loadJsonl, type LoadedLog } from '../session/index.js';
import { CliError } from './errors.js';

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
    case 'ERR_FS_FILE_TOO_LARGE':
      return new CliError('FILE_TOO_LARGE', 'file is too large to read into memory (over 2 GiB)', { file, cause: e });
    default:
      return new CliError('FILE_UNREADABLE', `cannot read it (${code ?? (e as Error).message})`, { file, cause: e });
  }
}

/** The file's text, or a `CliError` saying in one line why it is not a log we can read. */
export function readLogText(path: string): string {
  const file = displayName(path);
  let buf: Buffer;
  try {
    if (path !== STDIN && statSync(path).isDirectory()) {
      throw new CliError('NOT_A_FILE', 'is a directory; pass the log files inside it (e.g. dir/*.jsonl)', { file });
    }
    buf = readFileSync(path === STDIN ? 0 : path);
  } catch (e) {
    throw e instanceof CliError ? e : fsError(e, path);
  }
  if (buf.length === 0) throw new CliError('EMPTY_FILE', 'the file is empty; a dsh log starts with a session header line', { file });
  // A crash can leave NUL padding in a torn tail, which the decoder reports as such; so a NUL
  // means binary only on the header line, or near the start of a file that is not JSON at all.
  const nl = buf.indexOf(10);
  const head = buf.subarray(0, 8192);
  const firstLineNul = head.subarray(0, nl < 0 ? head.length : nl).indexOf(0);
  const nul = firstLineNul >= 0 ? firstLineNul : buf[0] !== 0x7b ? head.indexOf(0) : -1;
  if (nul >= 0) throw new CliError('BINARY_FILE', `binary data (a NUL byte at offset ${nul}), not a JSONL session log`, { file });
  try {
    return buf.toString('utf8');
  } catch (e) {
    throw new CliError('FILE_TOO_LARGE', 'file is too large to decode as one string', { file, cause: e });
  }
}

export interface CliLog extends LoadedLog {
  /** The name to print (the path as given, or `<stdin>`). */
  file: string;
}

/** Load a log's text; placeholders in tokenised fixtures are warnings, an open turn is closed by crash repair. */
export function loadLogText(text: string, file: string): CliLog {
  return { ...loadJsonl(text, { file, placeholders: 'warn' }), file };
}

export function readLog(path: string): CliLog {
  const file = displayName(path);
  return loadLogText(readLogText(path), file);
}
