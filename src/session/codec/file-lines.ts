/**
 * Lines of a file, read synchronously in fixed-size chunks and decoded as UTF-8 across chunk
 * boundaries: only the chunk in hand and the current line are in memory, never the whole file.
 *
 * The source may be a path or an open descriptor (standard input, a pipe): a pipe is read once,
 * as it comes, and one that is non-blocking (EAGAIN until the writer catches up) is waited on.
 * Bytes that are not UTF-8 decode to U+FFFD, as everywhere in Node; unlike a plain decode, the
 * lines where that happened are recorded (`invalidUtf8Lines`), so the loader can say so instead
 * of letting a damaged byte pass unnoticed.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { StringDecoder } from 'node:string_decoder';
import type { LineSource } from './jsonl.js';
import { SessionError } from '../errors.js';

const CHUNK = 1 << 20;
/** How long to wait before reading a non-blocking pipe again. */
const EAGAIN_WAIT_MS = 5;
/** Lines with invalid UTF-8 listed by number; the rest are counted. */
const MAX_LISTED = 20;

export interface FileLinesOptions {
  /** Called once with the first chunk (empty for an empty input), before any of it is decoded. */
  inspectHead?: (head: Buffer) => void;
  /** The name errors give the input (defaults to the path). */
  file?: string;
}

/** Bytes a UTF-8 sequence starting with `lead` has (1 for a byte that cannot start one). */
function sequenceLength(lead: number): number {
  return lead >= 0xf0 && lead <= 0xf4 ? 4 : lead >= 0xe0 ? (lead <= 0xef ? 3 : 1) : lead >= 0xc2 && lead <= 0xdf ? 2 : 1;
}

/** Where a possibly unfinished UTF-8 sequence starts at the end of `b` (b.length if none). */
function unfinishedTail(b: Buffer): number {
  for (let back = 1; back <= 3 && back <= b.length; back++) {
    const byte = b[b.length - back]!;
    if ((byte & 0xc0) !== 0x80) return sequenceLength(byte) > back ? b.length - back : b.length;
  }
  return b.length;
}

/** Offset of the first byte of `b` that is not part of a valid UTF-8 sequence, or -1. */
function firstInvalid(b: Buffer): number {
  for (let i = 0; i < b.length; ) {
    const n = sequenceLength(b[i]!);
    if (n === 1) {
      if (b[i]! >= 0x80) return i;
      i++;
      continue;
    }
    if (isUtf8(b.subarray(i, i + n))) i += n;
    else return i;
  }
  return -1;
}

export class FileLines implements LineSource {
  line = '';
  terminated = false;
  private readonly utf8 = new Utf8Check();
  private fd: number | undefined;
  private readonly owned: boolean;
  private readonly file: string | undefined;
  private inspectHead: ((head: Buffer) => void) | undefined;
  private readonly buf = Buffer.allocUnsafe(CHUNK);
  private readonly decoder = new StringDecoder('utf8');
  private text = '';
  private pos = 0;
  /** The current line's text from earlier reads (a line longer than a chunk), joined once it ends. */
  private parts: string[] = [];
  private eof = false;
  /** Lines handed out so far. */
  private lines = 0;

  constructor(source: string | { fd: number }, opts: FileLinesOptions = {}) {
    if (typeof source === 'string') {
      this.fd = openSync(source, 'r');
      this.owned = true;
      this.file = opts.file ?? source;
    } else {
      this.fd = source.fd;
      this.owned = false;
      this.file = opts.file;
    }
    this.inspectHead = opts.inspectHead;
  }

  private read(): number {
    if (this.fd === undefined) return 0;
    for (;;) {
      try {
        return readSync(this.fd, this.buf, 0, CHUNK, null);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        // A non-blocking pipe whose writer has not caught up: wait, do not mistake it for the end.
        if (code === 'EAGAIN') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, EAGAIN_WAIT_MS);
        else if (code === 'EOF') return 0;
        else throw e;
      }
    }
  }

  /** Read more text; false when the file is exhausted. */
  private fill(): boolean {
    if (this.eof) return false;
    const n = this.read();
    const bytes = this.buf.subarray(0, n);
    if (this.inspectHead !== undefined) {
      const inspect = this.inspectHead;
      this.inspectHead = undefined;
      inspect(bytes);
    }
    // Every newline read before this chunk has been handed out as a line (fill runs only when the
    // text in hand holds no more), so the chunk starts on the next one.
    this.utf8.feed(bytes, this.lines + 1);
    // The unfinished line's text is set aside, not prepended: rescanning and copying it on every
    // read would make a long line cost quadratic time.
    if (this.pos < this.text.length) this.parts.push(this.pos === 0 ? this.text : this.text.slice(this.pos));
    if (n === 0) {
      this.eof = true;
      this.text = this.decoder.end();
    } else {
      this.text = this.decoder.write(bytes);
    }
    this.pos = 0;
    return true;
  }

  /** The current line's text up to `end` of the text in hand, with what was set aside. */
  private take(end: number): string {
    const tail = this.text.slice(this.pos, end);
    if (this.parts.length === 0) return tail;
    this.parts.push(tail);
    let line: string;
    try {
      line = this.parts.join('');
    } catch (e) {
      if (!(e instanceof RangeError)) throw e;
      const where = `${this.file ? `${this.file}:` : ''}line ${this.lines + 1}`;
      throw new SessionError(
        'LINE_TOO_LONG',
        `${where}: the line is too long to decode as one string (over about 512 MiB)`,
        {
          line: this.lines + 1,
          rule: 'storage',
          ...(this.file !== undefined ? { file: this.file } : {}),
        },
        { cause: e },
      );
    }
    this.parts = [];
    return line;
  }

  next(): boolean {
    for (;;) {
      const nl = this.text.indexOf('\n', this.pos);
      if (nl >= 0) {
        const line = this.take(nl);
        this.line = line.length > 0 && line.charCodeAt(line.length - 1) === 13 ? line.slice(0, -1) : line;
        this.terminated = true;
        this.pos = nl + 1;
        this.lines++;
        return true;
      }
      if (!this.fill()) break;
    }
    const line = this.take(this.text.length);
    this.pos = this.text.length;
    if (line.length === 0) return false;
    this.line = line.charCodeAt(line.length - 1) === 13 ? line.slice(0, -1) : line;
    this.terminated = false;
    this.lines++;
    return true;
  }

  /** 1-based lines whose bytes were not valid UTF-8 (decoded with U+FFFD in their place): the first few. */
  get invalidUtf8Lines(): readonly number[] {
    return this.utf8.lines;
  }

  /** How many lines held bytes that were not valid UTF-8. */
  get invalidUtf8Count(): number {
    return this.utf8.count;
  }

  close(): void {
    if (this.fd !== undefined && this.owned) closeSync(this.fd);
    this.fd = undefined;
  }
}

/**
 * Which lines of a byte stream are not valid UTF-8, fed chunk by chunk (a sequence split between
 * two chunks is checked whole) and ended with an empty chunk. The check itself is native
 * (`isUtf8`); only a chunk that fails it is walked byte by byte to place the bad bytes on lines.
 */
export class Utf8Check {
  /** The first lines (1-based) holding bytes that are not UTF-8. */
  readonly lines: number[] = [];
  /** How many lines hold such bytes. */
  count = 0;
  private lastLine = 0;
  /** The end of the previous chunk when it stopped inside a UTF-8 sequence. */
  private carry: Buffer | undefined;

  /**
   * Check the next chunk, whose first byte (after any carried bytes, which hold no newline) is on
   * line `firstLine`: the reader knows it, so the valid chunks, nearly all of them, cost no
   * newline count. `final` marks the end of the input: an unfinished sequence there is bad.
   */
  feed(bytes: Buffer, firstLine: number, final = bytes.length === 0): void {
    let whole = bytes;
    if (this.carry !== undefined) {
      whole = Buffer.concat([this.carry, bytes]);
      this.carry = undefined;
    }
    const end = final ? whole.length : unfinishedTail(whole);
    let from = 0;
    let line = firstLine;
    let counted = 0;
    while (from < end) {
      const region = whole.subarray(from, end);
      if (isUtf8(region)) break;
      const bad = from + firstInvalid(region);
      if (bad < from) break; // isUtf8 and the byte walk disagree: nothing to place
      line += countNewlines(whole, counted, bad);
      counted = bad;
      if (line !== this.lastLine) {
        this.lastLine = line;
        this.count++;
        if (this.lines.length < MAX_LISTED) this.lines.push(line);
      }
      const nl = whole.indexOf(10, bad);
      from = nl < 0 || nl >= end ? end : nl + 1;
    }
    if (end < whole.length) this.carry = Buffer.from(whole.subarray(end));
  }
}

function countNewlines(b: Buffer, from: number, to: number): number {
  let n = 0;
  for (let i = b.indexOf(10, from); i >= 0 && i < to; i = b.indexOf(10, i + 1)) n++;
  return n;
}
