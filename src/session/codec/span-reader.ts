/**
 * Reading the resume index's kept spans (src/session/codec/resume-index.ts) from the log file: the
 * byte ranges of events a resume parses, grouped into few reads.
 */
import { readSync } from 'node:fs';
import { SessionError } from '../errors.js';

/** `length` bytes of `fd` from `at` (fewer if the file ends first). */
export function readAt(fd: number, at: number, length: number, into = Buffer.allocUnsafe(length)): Buffer {
  let got = 0;
  while (got < length) {
    const n = readSync(fd, into, got, length - got, at + got);
    if (n === 0) break;
    got += n;
  }
  return into.subarray(0, got);
}

/** Kept spans closer than this are read with one `read` (a system call costs more than copying this much). */
const GAP = 64 * 1024;
/** The most one grouped read takes in (a span longer than this is read alone). */
const WINDOW = 1 << 20;

/**
 * The kept spans' text in file order. Spans near each other are read together into one reused
 * buffer (about a thousand reads for a 1 GB log instead of one per span); each span is checked to
 * sit on whole lines: a newline just before it and as its last byte.
 */
export class SpanReader {
  private buf = Buffer.allocUnsafe(WINDOW);
  /** The bytes of `buf` hold the file's `[from, to)`. */
  private from = 0;
  private to = 0;
  private next = 0;
  constructor(
    private readonly fd: number,
    private readonly path: string,
    private readonly spans: readonly (readonly [start: number, end: number, ...rest: number[]])[],
  ) {}
  /** The text of the next span. */
  read(): string {
    const span = this.spans[this.next]!;
    const start = span[0];
    const end = span[1];
    if (start - 1 < this.from || end > this.to) this.fill(this.next);
    this.next++;
    const at = start - 1 - this.from;
    const n = end - start + 1;
    if (this.buf[at] !== 0x0a || this.buf[at + n - 1] !== 0x0a) {
      throw new SessionError('STORAGE_CHANGED', `${this.path}: bytes ${start}-${end} are not the lines the resume index recorded`, {
        file: this.path,
        rule: 'resume-index',
      });
    }
    return this.buf.toString('utf8', at + 1, at + n);
  }
  /** Read from span `i` on: it and the spans after it that are near and fit. */
  private fill(i: number): void {
    const from = this.spans[i]![0] - 1;
    let to = this.spans[i]![1];
    for (let j = i + 1; j < this.spans.length; j++) {
      const s = this.spans[j]![0];
      const e = this.spans[j]![1];
      if (s - to > GAP || e - from > WINDOW) break;
      to = e;
    }
    if (this.buf.length < to - from) this.buf = Buffer.allocUnsafe(to - from);
    const got = readAt(this.fd, from, to - from, this.buf);
    if (got.length !== to - from) {
      throw new SessionError('STORAGE_CHANGED', `${this.path}: the file ended at byte ${from + got.length} inside a kept span`, {
        file: this.path,
        rule: 'resume-index',
      });
    }
    this.from = from;
    this.to = to;
  }
}
