/**
 * The store's own small files under the root (the listing index and its journals, the listing
 * cache): only ever regular files this store wrote. Whatever else a careless or hostile hand left
 * at such a name (a FIFO, a link to /dev/zero or to a file outside the root, a directory) is
 * refused before a byte moves: opening a FIFO blocks until a peer comes, /dev/zero never ends,
 * and a link would carry a write (or a temp file's rename) out of the root.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, readSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { StoreError, isErrno } from './errors.js';

const { O_APPEND, O_NOFOLLOW, O_NONBLOCK, O_RDONLY, O_WRONLY } = constants;

/**
 * Open one of the store's own files: a link fails (ELOOP), anything but a regular file with
 * NOT_A_FILE. O_NONBLOCK only matters for a FIFO (the open returns instead of waiting, and is
 * then refused); on a regular file it changes nothing.
 */
export function openOwnFile(path: string, mode: 'read' | 'append'): number {
  const fd = openSync(path, (mode === 'read' ? O_RDONLY : O_WRONLY | O_APPEND) | O_NOFOLLOW | O_NONBLOCK);
  let regular = false;
  try {
    regular = fstatSync(fd).isFile();
  } finally {
    if (!regular) closeSync(fd);
  }
  if (!regular) throw new StoreError('NOT_A_FILE', `${path}: not a regular file (the store only writes one there); not used`, { path });
  return fd;
}

/** The whole of one of the store's own files (errors as `openOwnFile`). */
export function readOwnFile(path: string): Buffer {
  const fd = openOwnFile(path, 'read');
  try {
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Replace one of the store's own files: a temp file beside it, created afresh (`O_EXCL`: never
 * through a link or FIFO planted at the temp name, which is removed first), renamed over it.
 */
export function replaceOwnFile(path: string, data: string | Buffer): void {
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    unlinkSync(tmp);
  } catch (e) {
    if (!isErrno(e, 'ENOENT')) throw e;
  }
  writeFileSync(tmp, data, { flag: 'wx' }); // O_EXCL: fails on anything at the name, a link included
  renameSync(tmp, path);
}

/**
 * The first line of an open file (without its newline), read a chunk at a time and no further
 * than `max` bytes: undefined when it has none there. A damaged file (a sparse GiB with no
 * newline) costs one bounded read, not a read of all of it.
 */
export function readFirstLine(fd: number, max: number): Buffer | undefined {
  const chunks: Buffer[] = [];
  for (let pos = 0; pos < max; ) {
    const chunk = Buffer.allocUnsafe(Math.min(64 * 1024, max - pos));
    const n = readSync(fd, chunk, 0, chunk.length, pos);
    if (n === 0) return undefined;
    const nl = chunk.subarray(0, n).indexOf(0x0a);
    chunks.push(chunk.subarray(0, nl < 0 ? n : nl));
    if (nl >= 0) return Buffer.concat(chunks);
    pos += n;
  }
  return undefined;
}
