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
  private eof = false;

  constructor(path: string) {
    this.fd = openSync(path, 'r');
  }

  /** Read more text; false when the file is exhausted. */
  private fill(): boolean {
    if (this.eof) return false;
    const n = this.fd === undefined ? 0 : readSync(this.fd, this.buf, 0, CHUNK, null);
    const rest = this.text.slice(this.pos);
    if (n === 0) {
      this.eof = true;
      this.text = rest + this.decoder.end();
    } else {
      this.text = rest + this.decoder.write(this.buf.subarray(0, n));
    }
    this.pos = 0;
    return true;
  }

  next(): boolean {
    for (;;) {
      const nl = this.text.indexOf('\n', this.pos);
      if (nl >= 0) {
        let end = nl;
        if (end > this.pos && this.text.charCodeAt(end - 1) === 13) end--;
        this.line = this.text.slice(this.pos, end);
        this.terminated = true;
        this.pos = nl + 1;
        return true;
      }
      if (!this.fill()) break;
    }
    if (this.pos >= this.text.length) return false;
    let end = this.text.length;
    if (this.text.charCodeAt(end - 1) === 13) end--;
    this.line = this.text.slice(this.pos, end);
    this.terminated = false;
    this.pos = this.text.length;
    return true;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
