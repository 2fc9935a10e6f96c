/**
 * Reading a log file for the CLI: file-level refusals (missing, directory, binary, empty,
 * unreadable, too large) become one-line `CliError`s before the session library sees any bytes;
 * then the library loads it with `{{token}}` placeholders reported as warnings, as dsh's
 * tokenised fixtures need.
 */
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { loadJsonl, loadJsonlFd, loadJsonlFile, SessionError, type FileLoadOptions, type LoadedLog } from '../session/index.js';
import { ImportError } from '../import/errors.js';
import { plainlyDsh } from '../import/first-line.js';
import type { Detection, FormatInfo, Loss } from '../import/index.js';
import { CliError } from './errors.js';
import { STDIN, takeLoaded } from './loaded-logs.js';
import { oneLine, plural } from './text.js';

/** `-` reads standard input. */
export { registerLoaded, STDIN } from './loaded-logs.js';

/**
 * The importers (other agents' formats), loaded only when a file is not plainly a dsh log: reading
 * dsh's own logs, the common case, never links them (~75 KB).
 */
const importers = () => import('../import/index.js');

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
 * "Starts like JSON" is judged as the loaders judge the header line: after a UTF-8 byte-order
 * mark (skipped with a warning) and JSON whitespace, a `{`. Judging the raw first byte instead
 * called a log with a BOM and a NUL in its torn tail binary while the loaders accept it.
 */
function binaryAt(head: Buffer): number {
  const nl = head.indexOf(10);
  const firstLineNul = head.subarray(0, nl < 0 ? head.length : nl).indexOf(0);
  if (firstLineNul >= 0) return firstLineNul;
  let i = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
  while (head[i] === 0x20 || head[i] === 0x09 || head[i] === 0x0d) i++;
  return head[i] !== 0x7b ? head.indexOf(0) : -1;
}

const HEAD = 8192;

function refuseBytes(head: Buffer, file: string): void {
  // Line 1 is where the missing header belongs; a NUL is named with the line it is on.
  if (head.length === 0)
    throw new CliError('EMPTY_FILE', 'the file is empty; a dsh log starts with a session header line', { file, line: 1 });
  const nul = binaryAt(head);
  if (nul >= 0) {
    let line = 1;
    for (let i = head.indexOf(10); i >= 0 && i < nul; i = head.indexOf(10, i + 1)) line++;
    throw new CliError('BINARY_FILE', `binary data (a NUL byte at offset ${nul}), not a JSONL session log`, { file, line });
  }
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
  /** Set when the file is another agent's log, read through src/import. */
  imported?: { format: FormatInfo; key: string; siblings: { key: string; label: string; id: string }[]; losses: Loss[] };
}

/** Foreign files are read whole; a JavaScript string holds about 512 MiB. */
const MAX_FOREIGN_BYTES = 512 * 1024 * 1024 - 64;

/**
 * The format of a regular file, from its first line (read whole, up to 64 MiB, when it is longer
 * than the first read): the one seam where dsh's own formats and other agents' meet.
 */
export async function detectFile(path: string): Promise<Detection> {
  return detectHead(headOf(path));
}

/** The format from a file's first bytes: the importers are asked only when they are not plainly dsh's. */
async function detectHead(head: string): Promise<Detection> {
  return plainlyDsh(head) ? { kind: 'dsh' } : (await importers()).detect(head);
}

function headOf(path: string): string {
  const fd = openSync(path, 'r');
  try {
    let buf = Buffer.alloc(HEAD * 8);
    let n = readSync(fd, buf, 0, buf.length, 0);
    // A first line longer than what was read (a long first record): read on to its end.
    while (n === buf.length && buf.indexOf(10) < 0 && buf.length < 64 << 20) {
      const more = Buffer.alloc(buf.length * 4);
      buf.copy(more);
      n += readSync(fd, more, n, more.length - n, n);
      buf = more;
    }
    return buf.subarray(0, n).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Another agent's file as a log (the session `key` names, or the first). */
async function importLog(d: Detection, text: string, file: string, key: string | undefined): Promise<CliLog> {
  const { importDetected, asLoadedLog } = await importers();
  try {
    const result = importDetected(d, text, { file });
    if (!result) throw new ImportError('NO_SUCH_SESSION', `${file} is a dsh log, which holds one session; "#${key}" names none`, { file });
    const log = asLoadedLog(result, key, file);
    return { ...log, file, imported: { format: log.format, key: log.key, siblings: log.siblings, losses: log.losses } };
  } catch (e) {
    if (e instanceof SessionError) {
      // The importer built events that dsh refuses: a bug of the import, said as such.
      throw new ImportError(
        'MALFORMED_SOURCE',
        `${file}: could not be mapped onto dsh events (${e.code}: ${e.message}); please report it with the file`,
        { file },
        { cause: e },
      );
    }
    throw e;
  }
}

function readForeignFile(path: string, file: string): string {
  const size = statSync(path).size;
  if (size > MAX_FOREIGN_BYTES)
    throw new CliError(
      'FILE_TOO_LARGE',
      `another agent's log is read whole, and this one (${size} bytes) is larger than one string can hold`,
      { file },
    );
  return readFileText(path);
}

function readFileText(path: string): string {
  const fd = openSync(path, 'r');
  try {
    return readRest(fd).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Everything left to read on `fd` (a pipe that is not ready yet, EAGAIN, is waited on). */
function readRest(fd: number): Buffer {
  const chunks: Buffer[] = [];
  const buf = Buffer.allocUnsafe(1 << 20);
  let total = 0;
  for (;;) {
    let n: number;
    try {
      n = readSync(fd, buf, 0, buf.length, null);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
        continue;
      }
      if (code === 'EOF') break;
      throw e;
    }
    if (n === 0) break;
    total += n;
    if (total > MAX_FOREIGN_BYTES)
      throw new CliError('FILE_TOO_LARGE', "another agent's log is read whole, and this one is larger than one string can hold", {
        file: '<stdin>',
      });
    chunks.push(Buffer.from(buf.subarray(0, n)));
  }
  return Buffer.concat(chunks);
}

/** Thrown from the head check of standard input when it holds another agent's log. */
class ForeignInput {
  constructor(readonly head: Buffer) {}
}

/**
 * Load a log for a command. Everything is streamed (`loadJsonlFile`, `loadJsonlFd`): a log of any
 * size loads in the session's memory alone, never the file's text on top of it. A regular file is
 * checked first (missing, empty, binary); standard input and pipes (`<(…)`) are read once, as they
 * arrive, and their first bytes get the same checks before any is decoded. Devices are refused:
 * `/dev/zero` would never end.
 */
export async function readLog(arg: string): Promise<CliLog> {
  const pre = takeLoaded(arg);
  if (pre) return { ...pre, file: arg };
  // `FILE#key` names one session of a file holding several (a transcript's sidechains); a file
  // whose name holds a # is still found by its name.
  const split = arg === STDIN || existsSync(arg) ? { path: arg, key: undefined } : (await importers()).splitSessionKey(arg);
  const path = split.path;
  const file = displayName(arg);
  let fd: number | undefined;
  const opts: FileLoadOptions = {
    file,
    placeholders: 'warn',
    inspectHead: (head) => {
      refuseBytes(head.subarray(0, HEAD), file);
      if (fd === undefined) return;
      // A stream is read once: another agent's log found in its first bytes is read on whole. A
      // first line not complete in them is left to the codec when it starts like a dsh header.
      const text = head.toString('utf8');
      const whole = text.includes('\n');
      if (!whole && /^\uFEFF?\s*\{"type":"session","version"/.test(text)) return;
      const d = detect!(text);
      if (d.kind !== 'dsh' || split.key !== undefined || !whole) throw new ForeignInput(Buffer.from(head));
    },
  };
  let load: () => LoadedLog;
  const kind = path === STDIN ? 'stream' : kindOf(path);
  // A stream is read once, and its first bytes may turn out to be another agent's log: the
  // importers are loaded before it is read (inspectHead runs inside the synchronous load).
  const { detect } = kind === 'stream' ? await importers() : { detect: undefined };
  if (path === STDIN) fd = 0;
  else {
    if (kind === 'directory') refuseDirectory(path, file);
    if (kind === 'device') throw new CliError('NOT_A_FILE', 'is a device, not a log file', { file });
    if (kind !== 'stream') {
      checkLogFile(path);
      const head = wrapFs(() => headOf(path), path);
      const d = await detectHead(head);
      if (d.kind !== 'dsh' || split.key !== undefined)
        return await importLog(
          d,
          wrapFs(() => readForeignFile(path, file), path),
          file,
          split.key,
        );
    } else fd = wrapFs(() => openSync(path, 'r'), path);
  }
  if (fd !== undefined) {
    const from = fd;
    load = () => loadJsonlFd(from, opts);
  } else load = () => loadJsonlFile(path, opts);
  try {
    return { ...load(), file };
  } catch (e) {
    if (e instanceof ForeignInput) {
      // What was read, then the rest of the stream: detected on the whole, read as what it is.
      const bytes = Buffer.concat([e.head, readRest(fd!)]);
      const text = bytes.toString('utf8');
      const d = detect!(text);
      if (d.kind === 'dsh' && split.key === undefined) {
        const { inspectHead: _, ...rest } = opts;
        return { ...loadJsonl(bytes, rest), file };
      }
      return await importLog(d, text, file, split.key);
    }
    if (e instanceof CliError) throw e;
    if (e instanceof SessionError && e.code === 'LINE_TOO_LONG') {
      throw new CliError('FILE_TOO_LARGE', `line ${e.details.line} is too long to decode as one string (over about 512 MiB)`, {
        file,
        cause: e,
      });
    }
    // The file can vanish or fail between the check and the read: still one line.
    if (typeof (e as NodeJS.ErrnoException).code === 'string' && !(e instanceof SessionError)) throw fsError(e, path);
    throw e;
  } finally {
    if (fd !== undefined && fd !== 0) closeSync(fd);
  }
}

function wrapFs<T>(f: () => T, path: string): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof CliError || e instanceof ImportError) throw e;
    throw fsError(e, path);
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
  if (log.repaired.length)
    out.push(`${name}: the last turn was left open; crash repair added ${plural(log.repaired.length, 'event')} [OPEN_TURN]`);
  const utf8 = log.warnings.filter((w) => w.code === 'INVALID_UTF8' && w.line !== undefined).map((w) => w.line!);
  if (utf8.length)
    out.push(
      `${name}: ${utf8.length === 1 ? `line ${utf8[0]} holds` : `lines ${utf8.join(', ')} hold`} bytes that are not valid UTF-8, ` +
        'read as U+FFFD [INVALID_UTF8]',
    );
  return out;
}
