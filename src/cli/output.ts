/**
 * Where the CLI writes, and whether it may colour. Colour is on only for a TTY, never with
 * `NO_COLOR` (https://no-color.org) or `TERM=dumb`; `FORCE_COLOR` (non-empty, not "0") turns it
 * on for a pipe. Styles wrap text the CLI already made safe (see `text.ts`): they add escapes,
 * never pass the log's own.
 */
import { styleText } from 'node:util';
import { redactSecrets } from '../llm/failures.js';

export type Style = 'bold' | 'dim' | 'red' | 'green' | 'yellow' | 'cyan' | 'magenta';

export interface Sink {
  write(s: string): unknown;
  isTTY?: boolean;
  /** A terminal's width, read at each use (it changes on resize). */
  columns?: number;
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
  /** Writes reach a terminal (where stdout and stderr share one screen). */
  readonly tty: boolean;

  constructor(
    private readonly sink: Sink,
    color?: boolean,
  ) {
    this.color = color ?? colorWanted(sink);
    this.tty = sink.isTTY === true;
  }

  /** Columns of the terminal written to (80 when it does not say). */
  get columns(): number {
    const c = this.sink.columns;
    return typeof c === 'number' && c > 0 ? c : 80;
  }

  style(s: Style, text: string): string {
    return this.color && text.length > 0 ? styleText(s, text) : text;
  }

  line(text = ''): void {
    this.buf.push(text, '\n');
    this.size += text.length + 1;
    if (this.size >= 65536) this.flush();
  }

  /** Text without a line end (streamed output); the caller flushes when it wants it seen. */
  write(text: string): void {
    if (text.length === 0) return;
    this.buf.push(text);
    this.size += text.length;
    if (this.size >= 65536) this.flush();
  }

  private secrets: readonly string[] = [];

  /**
   * From now on, every configured secret that reaches this output is written as `[REDACTED]`: a
   * last line of defence for whatever error text quotes one (the adapters already redact the
   * failures they record).
   */
  redact(secrets: readonly string[]): void {
    this.secrets = [...this.secrets, ...secrets];
  }

  flush(): void {
    if (this.buf.length === 0) return;
    const text = this.buf.join('');
    this.sink.write(this.secrets.length > 0 ? redactSecrets(text, this.secrets) : text);
    this.buf = [];
    this.size = 0;
  }
}

/** Standard input as the agent commands read it (a task for `run`, lines for `chat`). */
export type Input = NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };

/**
 * What only a real process has. Absent when `main` runs inside another program (the tests): then
 * no signal handler is installed and nothing exits the process.
 */
export interface ProcessHooks {
  /** Install a signal handler; returns its remover. */
  onSignal(signal: 'SIGINT' | 'SIGTERM', handler: () => void): () => void;
  /** Leave now with this status (after the caller's synchronous flush). */
  exitNow(code: number): never;
}

export interface Io {
  out: Output;
  err: Output;
  env: NodeJS.ProcessEnv;
  /** Standard input; the agent commands fall back to "no input" without it. */
  stdin?: Input;
  proc?: ProcessHooks;
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
  return {
    out: new Output(process.stdout),
    err: new Output(process.stderr),
    env: process.env,
    stdin: process.stdin,
    proc: {
      onSignal(signal, handler) {
        process.on(signal, handler);
        return () => void process.off(signal, handler);
      },
      exitNow(code) {
        process.exit(code);
      },
    },
  };
}
