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
  /** Text; bytes (UTF-8) too when the Output was made with `bytes` (a Node stream takes both). */
  write(s: string | Uint8Array): unknown;
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

/** Text up to this many UTF-16 units is buffered before one `write`. */
const CHUNK_CHARS = 65536;
/** Bytes buffered before one `write` when the sink takes bytes. */
const CHUNK_BYTES = 1 << 17;

/**
 * Buffered line writer: one `write` per ~64 KB keeps large timelines fast. Given a sink that
 * takes bytes (`bytes`), lines are encoded as UTF-8 into a buffer as they come: `dsh log show` of
 * a large log writes ~38,000 lines, and joining them into strings first cost 4–8 times the
 * encoding (the sink would encode the joined string again).
 */
export class Output {
  private buf: string[] = [];
  private size = 0;
  /** Encoded lines not yet written (only with a byte sink and no secrets to redact). */
  private bytes: Buffer | undefined;
  private used = 0;
  readonly color: boolean;
  /** Writes reach a terminal (where stdout and stderr share one screen). */
  readonly tty: boolean;

  constructor(
    private readonly sink: Sink,
    color?: boolean,
    /** The sink's `write` takes a Uint8Array as well as a string. */
    private readonly byteSink = false,
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
    if (this.encode(text, true)) return;
    this.buf.push(text, '\n');
    this.size += text.length + 1;
    if (this.size >= CHUNK_CHARS) this.flush();
  }

  /** Text without a line end (streamed output); the caller flushes when it wants it seen. */
  write(text: string): void {
    if (text.length === 0) return;
    if (this.encode(text, false)) return;
    this.buf.push(text);
    this.size += text.length;
    if (this.size >= CHUNK_CHARS) this.flush();
  }

  /**
   * Complete lines already encoded as UTF-8 (text this CLI rendered earlier): written as they are
   * when the sink takes bytes and nothing needs redacting, else decoded and written as text.
   */
  utf8Lines(bytes: Uint8Array): void {
    if (this.byteSink && this.secrets.length === 0 && this.buf.length === 0) {
      this.flushBytes();
      this.sink.write(bytes);
      return;
    }
    this.write(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  }

  /**
   * `text` (and a line end) into the byte buffer, when the sink takes bytes and nothing needs
   * redacting (redaction reads text). False when the text is to go the string way: then also
   * while strings are buffered, so they are written in order and, as before, a surrogate pair
   * that streamed text splits across two `write`s is joined before it is encoded.
   */
  private encode(text: string, newline: boolean): boolean {
    if (!this.byteSink || this.secrets.length > 0 || this.buf.length > 0) return false;
    const last = text.charCodeAt(text.length - 1);
    if (!newline && last >= 0xd800 && last <= 0xdbff) {
      this.bytesToText();
      return false;
    }
    // At most 3 bytes per UTF-16 unit; a text that might not fit a buffer is written on its own.
    const most = 3 * text.length + 1;
    if (most > CHUNK_BYTES) {
      this.flushBytes();
      this.sink.write(newline ? `${text}\n` : text);
      return true;
    }
    if (this.used + most > CHUNK_BYTES) this.flushBytes();
    // A fresh buffer per write: a stream may still hold the one it was given.
    this.bytes ??= Buffer.allocUnsafe(CHUNK_BYTES);
    this.used += this.bytes.write(text, this.used, 'utf8');
    if (newline) this.bytes[this.used++] = 0x0a;
    return true;
  }

  /**
   * What is encoded but not written, back to buffered text (UTF-8 we encoded decodes to the same
   * bytes again): from here on the string way holds everything since the last flush, as it did
   * before bytes, for redaction and for joining a split surrogate pair.
   */
  private bytesToText(): void {
    if (this.bytes !== undefined && this.used > 0) {
      const text = this.bytes.toString('utf8', 0, this.used);
      this.buf.push(text);
      this.size += text.length;
    }
    this.bytes = undefined;
    this.used = 0;
  }

  private flushBytes(): void {
    if (this.bytes === undefined || this.used === 0) return;
    const out = this.bytes.subarray(0, this.used);
    this.bytes = undefined;
    this.used = 0;
    this.sink.write(out);
  }

  private secrets: readonly string[] = [];

  /**
   * From now on, every configured secret that reaches this output is written as `[REDACTED]`: a
   * last line of defence for whatever error text quotes one (the adapters already redact the
   * failures they record).
   */
  redact(secrets: readonly string[]): void {
    // Text encoded but not yet written is redacted too, as buffered strings are.
    this.bytesToText();
    this.secrets = [...this.secrets, ...secrets];
  }

  flush(): void {
    this.flushBytes();
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
      // Any other failure (a full disk, an I/O error) ends the command as a failure, said in one
      // line: thrown from this handler it was Node's uncaught-exception report, dsh's stack included.
      const reason = e.message.replace(/^[A-Z0-9]+: /, '').replace(/, write$/, '');
      process.stderr.write(`dsh: cannot write to standard output: ${reason} [${e.code ?? 'EIO'}]\n`);
      process.exit(1);
    });
  }
  return {
    out: new Output(process.stdout, undefined, true),
    err: new Output(process.stderr, undefined, true),
    env: process.env,
    // Read when a command reads its input: made on every start, Node's stdin stream cost commands
    // that never read it up to ~7 ms (a pipe, in a bare process; /dev/null costs dsh nothing).
    get stdin() {
      return process.stdin;
    },
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
