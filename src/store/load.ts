/**
 * Reading a stored log into a `Session`. Files up to a threshold (64 MiB by default) are read
 * whole and handed to the codec's `loadJsonl`, the reference loader; bigger files are streamed
 * (`stream-load.ts`), which never builds a whole-file string. Both report, besides the loaded
 * log, where its good bytes end: a torn tail starts there, and an open for writing moves what
 * follows into a sidecar before truncating.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { loadJsonl, type LoadedLog } from '../session/index.js';
import { streamLoadJsonl } from './stream-load.js';

export const DEFAULT_STREAM_THRESHOLD = 64 * 1024 * 1024;

export interface LogLoad extends LoadedLog {
  /** Bytes of the file that hold the header and every loaded line (the torn tail starts here). */
  goodLength: number;
  /** Does the good region end with a newline? (A last line that parsed may lack one.) */
  endsWithNewline: boolean;
  /** Was the file streamed rather than read whole? */
  streamed: boolean;
}

export interface ReadLogOptions {
  file?: string;
  knownTypes?: ReadonlySet<string>;
  clock?: () => number;
  /** Files larger than this are streamed (default 64 MiB). */
  streamThreshold?: number;
}

/** Byte offset where 1-based `line` starts in `buf`. */
function lineStart(buf: Buffer, line: number): number {
  let pos = 0;
  for (let l = 1; l < line; l++) {
    const nl = buf.indexOf(0x0a, pos);
    if (nl < 0) return buf.length;
    pos = nl + 1;
  }
  return pos;
}

async function readWhole(fh: FileHandle, size: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(size);
  let off = 0;
  while (off < size) {
    const { bytesRead } = await fh.read(buf, off, size - off, off);
    if (bytesRead === 0) break;
    off += bytesRead;
  }
  return off === size ? buf : buf.subarray(0, off);
}

/** Load the first `size` bytes of an open log. */
export async function readLog(fh: FileHandle, size: number, opts: ReadLogOptions = {}): Promise<LogLoad> {
  const common: { file?: string; knownTypes?: ReadonlySet<string>; clock?: () => number } = {};
  if (opts.file !== undefined) common.file = opts.file;
  if (opts.knownTypes !== undefined) common.knownTypes = opts.knownTypes;
  if (opts.clock !== undefined) common.clock = opts.clock;
  if (size > (opts.streamThreshold ?? DEFAULT_STREAM_THRESHOLD)) return streamLoadJsonl(fh, size, common);
  const buf = await readWhole(fh, size);
  const loaded = loadJsonl(buf.toString('utf8'), common);
  const goodLength = loaded.tornTail ? lineStart(buf, loaded.tornTail.line) : buf.length;
  return { ...loaded, goodLength, endsWithNewline: goodLength === 0 || buf[goodLength - 1] === 0x0a, streamed: false };
}

/** Load a log by path, read-only. */
export async function readLogFile(path: string, opts: ReadLogOptions = {}): Promise<LogLoad> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    return await readLog(fh, size, { file: path, ...opts });
  } finally {
    await fh.close();
  }
}
