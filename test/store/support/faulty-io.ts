/**
 * A writer I/O layer over the real file system that can be made to fail like a full disk: a
 * write stores a few bytes and then fails with ENOSPC (as a real short write followed by a
 * failing one does), fsync can fail with EIO, ftruncate can fail. Every successful fsync records
 * the file size it made durable.
 */
import { closeSync, fstatSync, fsyncSync, ftruncateSync, writeSync } from 'node:fs';
import type { WriterIo } from '../../../src/store/index.js';

function errno(code: string, syscall: string): NodeJS.ErrnoException {
  const e = new Error(`${code}: simulated failure, ${syscall}`) as NodeJS.ErrnoException;
  e.code = code;
  e.syscall = syscall;
  return e;
}

export class FaultyIo implements WriterIo {
  /**
   * Bytes the "disk" can still take; undefined means unlimited. A write stores what fits and
   * returns short; the next write fails with ENOSPC. Truncating gives the space back.
   */
  spaceLeft: number | undefined;
  failNextFsync = false;
  failTruncates = 0;
  readonly syncedSizes: number[] = [];

  write(fd: number, data: Buffer, offset: number, length: number, position: number): number {
    if (this.spaceLeft === undefined) return writeSync(fd, data, offset, length, position);
    const n = Math.min(length, this.spaceLeft);
    if (n === 0) throw errno('ENOSPC', 'write');
    const written = writeSync(fd, data, offset, n, position);
    this.spaceLeft -= written;
    return written;
  }

  async fsync(fd: number): Promise<void> {
    if (this.failNextFsync) {
      this.failNextFsync = false;
      throw errno('EIO', 'fsync');
    }
    fsyncSync(fd);
    this.syncedSizes.push(fstatSync(fd).size);
  }
  fsyncSync(fd: number): void {
    fsyncSync(fd);
    this.syncedSizes.push(fstatSync(fd).size);
  }
  ftruncate(fd: number, length: number): void {
    if (this.failTruncates > 0) {
      this.failTruncates--;
      throw errno('EIO', 'ftruncate');
    }
    const before = fstatSync(fd).size;
    ftruncateSync(fd, length);
    if (this.spaceLeft !== undefined) this.spaceLeft += Math.max(0, before - length);
  }
  close(fd: number): void {
    closeSync(fd);
  }
}
