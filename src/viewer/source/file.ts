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
import { loadJsonlFile, type LogWarning } from '../../session/index.js';
import { ViewerError, describeError } from '../errors.js';
import { GrowingSource } from './growing.js';
import { lineStartInFile } from '../../store/load.js';
import { NextTail, nextVersionOf } from '../../session/codec/next.js';

export interface FileSourceOptions {
  /** How often the file's size is checked, in ms (default 250). */
  pollMs?: number;
  knownTypes?: ReadonlySet<string>;
}

/** Bytes read per poll at most; a line longer than this stops following rather than exhaust memory. */
const READ_CAP = 256 << 20;

export class FileSource extends GrowingSource {
  readonly kind = 'file';
  private offset: number;
  private readonly ino: number;
  private timer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly path: string,
    opts: FileSourceOptions,
  ) {
    const ino = statSync(path).ino;
    const warnings: LogWarning[] = [];
    const loaded = loadJsonlFile(path, {
      repair: false,
      placeholders: 'warn',
      ...(opts.knownTypes ? { knownTypes: opts.knownTypes } : {}),
    });
    // Where following resumes: the torn line (it may be a write in progress), or the line after the last event.
    const last = loaded.eventCount > 0 ? (loaded.lineOf(loaded.eventCount - 1) ?? 1) : 1;
    const nextLine = loaded.tornTail ? loaded.tornTail.line : last + 1;
    super(path, loaded, warnings, nextLine, opts.knownTypes);
    this.ino = ino;
    this.offset = lineStartInFile(path, nextLine);
    this.followNewerFormat(path);
  }

  /**
   * A log of dsh's formats 2–4 was converted to format 0 when loaded; lines appended to it are
   * converted the same way, continuing from the state the loaded rows left (renumbering, clock,
   * system prompt). Format 1's rows are format 0's and need nothing.
   */
  private followNewerFormat(path: string): void {
    const head = readStart(path, Math.min(this.offset, 64 << 10));
    const nl = head.indexOf(0x0a);
    // A header line longer than what was read is no dsh header of a newer format.
    const version = nl < 0 ? undefined : nextVersionOf(head.toString('utf8', 0, nl));
    if (version === undefined || version === 1) return;
    const tail = NextTail.after(readStart(path, this.offset).toString('utf8'), path);
    this.convertAppended = (text) => tail.convert(text);
  }

  /** Load `path` and start following it. Load failures are the codec's `SessionError`s. */
  static open(path: string, opts: FileSourceOptions = {}): FileSource {
    const src = new FileSource(path, opts);
    src.timer = setInterval(() => src.poll(), opts.pollMs ?? 250);
    src.timer.unref();
    return src;
  }

  override close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    super.close();
  }

  protected override stop(code: string, message: string): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    super.stop(code, message);
  }

  /** Read what was appended since the last poll. Public for tests that do not want to wait. */
  poll(): void {
    if (this.follow().state !== 'following') return;
    let size: number;
    try {
      const st = statSync(this.path);
      if (st.ino !== this.ino)
        return this.stop('FOLLOW_STOPPED', `${this.path} was replaced by another file; reload the viewer to read it`);
      size = st.size;
    } catch (e) {
      return this.stop('FOLLOW_STOPPED', `${this.path} cannot be read any more: ${describeError(e).message}`);
    }
    if (size < this.offset)
      return this.stop(
        'FOLLOW_STOPPED',
        `${this.path} shrank below the part already shown (${size} < ${this.offset} bytes); reload the viewer to read it again`,
      );
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
    this.setPending(lastNl < 0 ? n : n - lastNl - 1);
    if (lastNl < 0) {
      if (n === READ_CAP) this.stop('FOLLOW_STOPPED', `an appended line is longer than ${READ_CAP} bytes; reload the viewer to read it`);
      return;
    }
    if (this.ingest(buf.toString('utf8', 0, lastNl + 1))) this.offset += lastNl + 1;
  }
}

/** The first `bytes` bytes of a file (fewer if it is shorter). */
function readStart(path: string, bytes: number): Buffer {
  const buf = Buffer.allocUnsafe(bytes);
  let n = 0;
  const fd = openSync(path, 'r');
  try {
    while (n < bytes) {
      const r = readSync(fd, buf, n, bytes - n, n);
      if (r === 0) break;
      n += r;
    }
  } finally {
    closeSync(fd);
  }
  return buf.subarray(0, n);
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
