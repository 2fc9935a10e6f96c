/**
 * Bounded capture of one output stream: the head and tail stay in memory; once the stream is
 * larger than the cap, the whole of it goes to a spill file whose path the result names, so
 * nothing is lost and the model's context is not flooded.
 */
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';

export interface CapturedOutput {
  /** What to show: all of it, or head + marker + tail. */
  text: string;
  bytes: number;
  omittedBytes: number;
  /** The complete stream, when it overflowed. */
  spillPath?: string;
}

export class StreamCapture {
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer = Buffer.alloc(0);
  private total = 0;
  private spill: WriteStream | undefined;
  private spillPath: string | undefined;
  private spillError: string | undefined;

  constructor(
    private readonly cap: number,
    private readonly spillDir: string | undefined,
    private readonly label: string,
  ) {}

  push(chunk: Buffer): void {
    // Start spilling before anything is dropped, so the file holds the whole stream.
    if (!this.spill && !this.spillError && this.total + chunk.length > this.cap) this.startSpill();
    if (this.spill) this.spill.write(chunk);
    this.total += chunk.length;
    const half = Math.floor(this.cap / 2);
    if (this.headBytes < half) {
      const take = chunk.subarray(0, half - this.headBytes);
      this.head.push(Buffer.from(take));
      this.headBytes += take.length;
      chunk = chunk.subarray(take.length);
    }
    if (chunk.length > 0) {
      const budget = this.cap - half;
      const joined = Buffer.concat([this.tail, chunk]);
      this.tail = joined.length > budget ? Buffer.from(joined.subarray(joined.length - budget)) : joined;
    }
  }

  private startSpill(): void {
    if (!this.spillDir) {
      this.spillError = 'no spill directory is configured';
      return;
    }
    try {
      mkdirSync(this.spillDir, { recursive: true });
      this.spillPath = join(this.spillDir, `${randomUUID().slice(0, 12)}-${this.label}.txt`);
      this.spill = createWriteStream(this.spillPath);
      this.spill.on('error', (e) => {
        this.spillError = e.message;
      });
      // Everything so far: the retained head and tail are all of it until the first drop.
      for (const b of this.head) this.spill.write(b);
      this.spill.write(this.tail);
    } catch (e) {
      this.spillError = (e as Error).message;
    }
  }

  /** Whether the spill file holds the whole stream (it started before anything was dropped). */
  private spillComplete(): boolean {
    return this.spill !== undefined && this.spillError === undefined;
  }

  async finish(): Promise<CapturedOutput> {
    if (this.spill) await new Promise<void>((r) => this.spill!.end(r));
    const head = Buffer.concat(this.head).toString('utf8');
    const tail = this.tail.toString('utf8');
    const shown = this.headBytes + this.tail.length;
    const omitted = this.total - shown;
    if (omitted <= 0) return { text: head + tail, bytes: this.total, omittedBytes: 0 };
    const out: CapturedOutput = { text: `${head}\n[… ${omitted} bytes omitted …]\n${tail}`, bytes: this.total, omittedBytes: omitted };
    if (this.spillComplete() && this.spillPath) out.spillPath = this.spillPath;
    return out;
  }

  /** Why the full stream could not be saved, if it could not. */
  get spillProblem(): string | undefined {
    return this.spillError;
  }
}
