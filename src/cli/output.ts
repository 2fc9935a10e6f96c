/**
 * Where the CLI writes, and whether it may colour. Colour is on only for a TTY, never with
 * `NO_COLOR` (https://no-color.org) or `TERM=dumb`; `FORCE_COLOR` (non-empty, not "0") turns it
 * on for a pipe. Styles wrap text the CLI already made safe (see `text.ts`): they add escapes,
 * never pass the log's own.
 */
import { styleText } from 'node:util';

export type Style = 'bold' | 'dim' | 'red' | 'green' | 'yellow' | 'cyan' | 'magenta';

export interface Sink {
  write(s: string): unknown;
  isTTY?: boolean;
}

export function colorWanted(stream: Sink, env: NodeJS.ProcessEnv = process.env): boolean {
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== '' && force !== '0' && force !== 'false') return true;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.TERM === 'dumb') return false;
  return stream.isTTY === true;
}

/** Buffered line writer: one `write` per ~64 KB keeps large timelines fast. */
export class Output {
  private buf: string[] = [];
  private size = 0;
  readonly color: boolean;

  constructor(private readonly sink: Sink, color?: boolean) {
    this.color = color ?? colorWanted(sink);
  }

  style(s: Style, text: string): string {
    return this.color && text.length > 0 ? styleText(s, text) : text;
  }

  line(text = ''): void {
    this.buf.push(text, '\n');
    this.size += text.length + 1;
    if (this.size >= 65536) this.flush();
  }

  flush(): void {
    if (this.buf.length === 0) return;
    this.sink.write(this.buf.join(''));
    this.buf = [];
    this.size = 0;
  }
}

export interface Io {
  out: Output;
  err: Output;
  env: NodeJS.ProcessEnv;
}

let pipeGuard = false;

export function processIo(): Io {
  // `dsh log show big.jsonl | head` closes the pipe early; that is the reader's choice, not a failure.
  if (!pipeGuard) {
    pipeGuard = true;
    process.stdout.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE') process.exit(0);
      throw e;
    });
  }
  return { out: new Output(process.stdout), err: new Output(process.stderr), env: process.env };
}
