/**
 * A log file, loaded with the codec's streamed loader and then followed: the file's size is
 * polled, and complete lines appended past the loaded region are decoded (`tail.ts`) and
 * published. An unterminated last line is a write in progress (or a crash's torn tail): it is
 * held back until its newline arrives.
 *
 * The file is loaded without crash repair. A turn with no `turn/end` may simply be running; the
 * viewer shows it as open rather than inventing the closers a resume would write.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { loadJsonlFile, type LogWarning, type Session, type SessionEvent, type SessionHeader, type ValidationOptions } from '../../session/index.js';
import { ViewerError, describeError } from '../errors.js';
import type { FollowState, LogSource } from './source.js';
import { TailDecoder, checksAtEnd } from './tail.js';
import { lineStartInFile } from '../../store/load.js';

export interface FileSourceOptions {
  /** How often the file's size is checked, in ms (default 250). */
  pollMs?: number;
  knownTypes?: ReadonlySet<string>;
}

/** Bytes read per poll at most; a line longer than this stops following rather than exhaust memory. */
const READ_CAP = 256 << 20;

export class FileSource implements LogSource {
  readonly kind = 'file';
  readonly label: string;
  readonly header: Readonly<SessionHeader>;
  readonly warnings: LogWarning[];
  private readonly base: Session;
  /** Events the file held when loaded (the session may hold a seed marker after them). */
  private readonly baseCount: number;
  private readonly tail: SessionEvent[] = [];
  private offset: number;
  private readonly ino: number;
  private decoder: TailDecoder | undefined;
  private readonly nextLine: number;
  private readonly validation: ValidationOptions;
  private state: FollowState = { state: 'following' };
  private timer: NodeJS.Timeout | undefined;
  private listeners: ((batch: readonly SessionEvent[]) => void)[] = [];

  private constructor(
    private readonly path: string,
    private readonly opts: FileSourceOptions,
  ) {
    this.label = path;
    const ino = statSync(path).ino;
    this.warnings = [];
    // Tokenised fixtures are worth viewing too: a placeholder is reported, not refused.
    this.validation = {
      onPlaceholder: ({ seq, path: at, token, eventType }) => {
        this.warnings.push({ code: 'PLACEHOLDER', seq, message: `${eventType} at seq ${seq} has the placeholder ${token} at ${at}` });
      },
    };
    const loaded = loadJsonlFile(path, { repair: false, placeholders: 'warn', ...(opts.knownTypes ? { knownTypes: opts.knownTypes } : {}) });
    this.warnings.push(...loaded.warnings);
    this.base = loaded.session;
    this.header = loaded.header;
    this.baseCount = loaded.eventCount;
    this.ino = ino;
    // Where following resumes: the torn line (it may be a write in progress), or the line after the last event.
    const last = loaded.eventCount > 0 ? (loaded.lineOf(loaded.eventCount - 1) ?? 1) : 1;
    this.nextLine = loaded.tornTail ? loaded.tornTail.line : last + 1;
    this.offset = lineStartInFile(path, this.nextLine);
  }

  /** Load `path` and start following it. Load failures are the codec's `SessionError`s. */
  static open(path: string, opts: FileSourceOptions = {}): FileSource {
    const src = new FileSource(path, opts);
    src.timer = setInterval(() => src.poll(), opts.pollMs ?? 250);
    src.timer.unref();
    return src;
  }

  length(): number {
    return this.baseCount + this.tail.length;
  }

  at(seq: number): SessionEvent {
    const e = this.lookup(seq);
    if (e === undefined) throw new RangeError(`seq ${seq} is outside the log (0 … ${this.length() - 1})`);
    return e;
  }

  private lookup(seq: number): SessionEvent | undefined {
    if (!(seq >= 0)) return undefined;
    if (seq < this.baseCount) return this.base.at(seq);
    return this.tail[seq - this.baseCount];
  }

  *since(from: number): Iterable<SessionEvent> {
    const end = this.length();
    if (from < this.baseCount) {
      for (const e of this.base.since(Math.max(0, from))) {
        if (e.seq >= this.baseCount || e.seq >= end) break;
        yield e;
      }
    }
    for (let s = Math.max(from, this.baseCount); s < end; s++) yield this.tail[s - this.baseCount]!;
  }

  follow(): FollowState {
    return { ...this.state };
  }

  subscribe(listener: (batch: readonly SessionEvent[]) => void): () => void {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.state.state === 'following') this.state = { state: 'stopped', problem: { code: 'CLOSED', message: 'the viewer was closed' } };
    this.listeners = [];
  }

  /** Stop following; listeners get an empty batch, so they can show why. */
  private stop(code: string, message: string): void {
    this.state = { state: 'stopped', problem: { code, message } };
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    for (const l of this.listeners) l([]);
  }

  /** Read what was appended since the last poll. Public for tests that do not want to wait. */
  poll(): void {
    if (this.state.state !== 'following') return;
    let size: number;
    try {
      const st = statSync(this.path);
      if (st.ino !== this.ino) return this.stop('FOLLOW_STOPPED', `${this.path} was replaced by another file; reload the viewer to read it`);
      size = st.size;
    } catch (e) {
      return this.stop('FOLLOW_STOPPED', `${this.path} cannot be read any more: ${describeError(e).message}`);
    }
    if (size < this.offset) return this.stop('FOLLOW_STOPPED', `${this.path} shrank below the part already shown (${size} < ${this.offset} bytes); reload the viewer to read it again`);
    if (size === this.offset) return;
    const want = Math.min(size - this.offset, READ_CAP);
    const buf = Buffer.allocUnsafe(want);
    let n = 0;
    const fd = openSync(this.path, 'r');
    try {
      while (n < want) {
        const r = readSync(fd, buf, n, want - n, this.offset + n);
        if (r === 0) break;
        n += r;
      }
    } finally {
      closeSync(fd);
    }
    // Only complete lines: whatever follows the last newline is a write still in progress.
    const lastNl = buf.lastIndexOf(0x0a, n - 1);
    this.state.pendingBytes = lastNl < 0 ? n : n - lastNl - 1;
    if (this.state.pendingBytes === 0) delete this.state.pendingBytes;
    if (lastNl < 0) {
      if (n === READ_CAP) this.stop('FOLLOW_STOPPED', `an appended line is longer than ${READ_CAP} bytes; reload the viewer to read it`);
      return;
    }
    const text = buf.toString('utf8', 0, lastNl + 1);
    const batch: SessionEvent[] = [];
    let failure: unknown;
    try {
      this.decoder ??= this.makeDecoder();
      this.decoder.decode(text, batch);
    } catch (e) {
      failure = e;
    }
    // Events before a refused line are valid and stay; following stops at the refusal.
    for (const e of batch) this.tail.push(e);
    if (failure === undefined) this.offset += lastNl + 1;
    if (batch.length > 0) for (const l of this.listeners) l(batch);
    if (failure !== undefined) {
      const d = describeError(failure);
      this.stop('FOLLOW_STOPPED', `following stopped: ${d.code}: ${d.message}`);
    }
  }

  private makeDecoder(): TailDecoder {
    return new TailDecoder(
      {
        sessionId: this.header.id,
        nextSeq: this.baseCount,
        nextLine: this.nextLine,
        file: this.path,
        validation: this.validation,
        lookup: (s) => this.lookup(s),
        ...(this.opts.knownTypes ? { knownTypes: this.opts.knownTypes } : {}),
      },
      checksAtEnd(this.base, this.baseCount),
    );
  }
}

export function assertFile(path: string): void {
  let st;
  try {
    st = statSync(path);
  } catch (e) {
    throw new ViewerError('INVALID_SOURCE', `cannot read ${path}: ${describeError(e).message}`, { cause: e });
  }
  if (!st.isFile()) throw new ViewerError('INVALID_SOURCE', `${path} is not a file`);
}
