/**
 * Lines of a file, read synchronously in fixed-size chunks and decoded as UTF-8 across chunk
 * boundaries: only the chunk in hand and the current line are in memory, never the whole file.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import type { LineSource } from './jsonl.js';

const CHUNK = 1 << 20;

export class FileLines implements LineSource {
  line = '';
  terminated = false;
  private fd: number | undefined;
  private readonly buf = Buffer.allocUnsafe(CHUNK);
  private readonly decoder = new StringDecoder('utf8');
  private text = '';
  private pos = 0;
  /** The current line's text from earlier reads (a line longer than a chunk), joined once it ends. */
  private parts: string[] = [];
  private eof = false;

  constructor(path: string) {
    this.fd = openSync(path, 'r');
  }

  /** Read more text; false when the file is exhausted. */
  private fill(): boolean {
    if (this.eof) return false;
    const n = this.fd === undefined ? 0 : readSync(this.fd, this.buf, 0, CHUNK, null);
    // The unfinished line's text is set aside, not prepended: rescanning and copying it on every
    // read would make a long line cost quadratic time.
    if (this.pos < this.text.length) this.parts.push(this.pos === 0 ? this.text : this.text.slice(this.pos));
    if (n === 0) {
      this.eof = true;
      this.text = this.decoder.end();
    } else {
      this.text = this.decoder.write(this.buf.subarray(0, n));
    }
    this.pos = 0;
    return true;
  }

  /** The current line's text up to `end` of the text in hand, with what was set aside. */
  private take(end: number): string {
    const tail = this.text.slice(this.pos, end);
    if (this.parts.length === 0) return tail;
    this.parts.push(tail);
    const line = this.parts.join('');
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
        return true;
      }
      if (!this.fill()) break;
    }
    const line = this.take(this.text.length);
    this.pos = this.text.length;
    if (line.length === 0) return false;
    this.line = line.charCodeAt(line.length - 1) === 13 ? line.slice(0, -1) : line;
    this.terminated = false;
    return true;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
