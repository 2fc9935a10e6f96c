/**
 * Reading a stored log into a `Session` with the codec's own loaders, so a stored log means
 * exactly what `dsh log check` says it means. Every file, whatever its size, goes to
 * `loadJsonlFile`, which streams it in 1 MiB chunks and never holds its text (the session's
 * compact chunk runs are the only copy). Small files were once read whole: for a packed log that
 * put the whole text beside the session it was decoding into, and a 20 MB packed session peaked
 * above a 97 MB streamed one (issue 13 item 5).
 *
 * Besides the loaded log, the store needs to know where the good bytes end: a torn tail starts
 * there, and an open for writing moves what follows into a sidecar before truncating. The codec
 * reports the torn tail by line; the byte offset is found by counting newlines.
 */
import { closeSync, constants, fstatSync, openSync, readSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  buildResumeIndex,
  fileStamp,
  loadJsonlFile,
  loadJsonlIndexed,
  parseResumeIndex,
  restatResumeIndex,
  sameStamp,
  serializeResumeIndex,
  type FileStamp,
  type LoadedLog,
  type LoadOptions,
  type ResumeIndex,
} from '../session/index.js';

/** The resume index beside a session's log (a cache: see session/codec/resume-index.ts). */
export const RESUME_INDEX_FILE = 'resume-index.json';

export interface LogLoad extends LoadedLog {
  /** Bytes of the file that hold the header and every loaded line (the torn tail starts here). */
  goodLength: number;
  /** Does the good region end with a newline? (A last line that parsed may lack one.) */
  endsWithNewline: boolean;
  /** With `resumeIndex`: was the prefix read through the sidecar index? */
  fromIndex?: boolean;
  /** Through the index: was the prefix shown unchanged by the file's stat (not read) or by its digests? */
  prefixCheckedBy?: 'stat' | 'digests';
  /** With `resumeIndex`: the index of the file as loaded, when it changed (to be written), or undefined. */
  newIndex?: ResumeIndex;
  /** With `resumeIndex`: the index that describes the file as loaded (written or not), when it may have one. */
  index?: ResumeIndex;
}

export interface ReadLogOptions {
  file?: string;
  knownTypes?: ReadonlySet<string>;
  clock?: () => number;
  /** `{{token}}` placeholders (tokenised fixtures only): see `LoadOptions`. */
  placeholders?: 'warn' | 'error';
  /** Close a turn left open with crash-repair events (default true): see `LoadOptions`. */
  repair?: boolean;
  /**
   * Resume through the sidecar index beside the log when it fits the file (else a full load),
   * and hand back the index to write when it is missing, stale or grew (`newIndex`).
   */
  resumeIndex?: boolean;
}

/**
 * The sidecar index of `path` (a log of `logSize` bytes), when there is one that parses whole (its
 * fit to the file is checked by the load). Only a regular file no larger than an index of such a
 * log can be, opened without following a link or waiting on a FIFO: a cache must not hang or
 * exhaust the resume that consults it (a FIFO, or a link to /dev/zero, in its place once did).
 */
function readIndexFile(path: string, logSize: number): ResumeIndex | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(join(dirname(path), RESUME_INDEX_FILE), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > 2 * logSize + 65_536) return undefined;
    const bytes = Buffer.allocUnsafe(st.size);
    let got = 0;
    while (got < bytes.length) {
      const n = readSync(fd, bytes, got, bytes.length - got, got);
      if (n === 0) return undefined; // cut short while read: a writer's rename replaces it whole, so this is not one
      got += n;
    }
    return parseResumeIndex(bytes);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Write the resume index beside the log (temp file + rename, so a reader sees the old or the
 * new one whole). Best effort: the index is a cache, and a failure to write it costs the next
 * resume its speed only.
 */
export function writeResumeIndex(logPath: string, index: ResumeIndex): void {
  const file = join(dirname(logPath), RESUME_INDEX_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    // A file of this name is a leftover of a dead process with this pid (or was put there): created
    // anew, never opened as found (a FIFO would block the write, a link would send it elsewhere).
    try {
      unlinkSync(tmp);
    } catch {
      // none
    }
    writeFileSync(tmp, serializeResumeIndex(index), { flag: 'wx' });
    renameSync(tmp, file);
  } catch {
    try {
      unlinkSync(tmp);
    } catch {
      // nothing left behind
    }
  }
}

/**
 * After a writer that held the session's lock since `index` was made (or found to fit) has closed
 * its log: record the log's stat in the index, so the next resume takes the prefix as recorded
 * without reading it. Only when the file's stamp is `expected`, the one the writer's own last
 * write left (`LogWriter.intactStamp`: every write of it found the file as the previous one left
 * it, the first as loaded): a program that wrote to the log while the session was open (an edit
 * in place) leaves the stat unrecorded, and the next resume reads the prefix for its digests. An
 * index the open left unwritten (`unwritten`) is written either way, restamped or as it was.
 * Best effort, like every index write.
 */
export function restatIndexAfterWrites(logPath: string, index: ResumeIndex, unwritten: boolean, expected: FileStamp | undefined): void {
  try {
    const fd = openSync(logPath, 'r');
    let next: ResumeIndex | undefined;
    try {
      const now = fileStamp(fd);
      next = expected !== undefined && sameStamp(now, expected) ? restatResumeIndex(index, now) : undefined;
    } finally {
      closeSync(fd);
    }
    if (next !== undefined && (next !== index || unwritten)) writeResumeIndex(logPath, next);
    else if (next === undefined && unwritten) writeResumeIndex(logPath, index);
  } catch {
    // a cache: the next resume reads the prefix for its digests instead
  }
}

/** Byte offset where 1-based `line` starts (the file's size if it has fewer lines), reading the file in chunks from the start. */
export function lineStartInFile(path: string, line: number): number {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    let base = 0;
    let toSkip = line - 1;
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, base);
      if (n === 0) return base;
      let pos = 0;
      while (toSkip > 0) {
        const nl = buf.indexOf(0x0a, pos);
        if (nl < 0 || nl >= n) break;
        pos = nl + 1;
        toSkip--;
      }
      if (toSkip === 0) return base + pos;
      base += n;
    }
  } finally {
    closeSync(fd);
  }
}

function lastByteIsNewline(fh: FileHandle | number, at: number): boolean {
  if (at === 0) return true;
  const b = Buffer.alloc(1);
  readSync(typeof fh === 'number' ? fh : fh.fd, b, 0, 1, at - 1);
  return b[0] === 0x0a;
}

/** Load the log at `path` (open as `fh`, `size` bytes long). */
export async function readLog(fh: FileHandle, path: string, size: number, opts: ReadLogOptions = {}): Promise<LogLoad> {
  const lo: LoadOptions = { file: opts.file ?? path };
  if (opts.knownTypes !== undefined) lo.knownTypes = opts.knownTypes;
  if (opts.clock !== undefined) lo.clock = opts.clock;
  if (opts.placeholders !== undefined) lo.placeholders = opts.placeholders;
  if (opts.repair !== undefined) lo.repair = opts.repair;
  if (opts.resumeIndex) {
    const index = readIndexFile(path, size);
    const indexed = index ? loadJsonlIndexed(path, index, lo) : undefined;
    if (indexed) {
      const { resumeIndex, fromIndex, ...loaded } = indexed;
      const goodLength = loaded.tornTail ? lineStartInFile(path, loaded.tornTail.line) : size;
      const out: LogLoad = { ...loaded, goodLength, endsWithNewline: lastByteIsNewline(fh, goodLength), fromIndex };
      if (resumeIndex !== undefined) out.index = resumeIndex;
      if (resumeIndex !== undefined && resumeIndex !== index) out.newIndex = resumeIndex;
      return out;
    }
    // Stamped before the load: an index is built only of bytes nothing wrote to while they were loaded.
    const before = fileStamp(fh.fd);
    const full = await readLog(fh, path, size, { ...opts, resumeIndex: false });
    const built = buildResumeIndex(path, full, before);
    return { ...full, fromIndex: false, ...(built ? { newIndex: built, index: built } : {}) };
  }
  const loaded = loadJsonlFile(path, lo);
  const goodLength = loaded.tornTail ? lineStartInFile(path, loaded.tornTail.line) : size;
  return { ...loaded, goodLength, endsWithNewline: lastByteIsNewline(fh, goodLength) };
}

/** Load a log by path, read-only. */
export async function readLogFile(path: string, opts: ReadLogOptions = {}): Promise<LogLoad> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    return await readLog(fh, path, size, opts);
  } finally {
    await fh.close();
  }
}
