/**
 * A log loaded once and then grown by complete lines appended after it: the part of a followed
 * source that does not care where the lines come from (a file that grows, rows a database
 * announces). New lines are decoded with `TailDecoder`, so each event gets the checks a load
 * gives it; events before a refused line stay, and following stops at the refusal.
 *
 * The log is loaded without crash repair: a turn with no `turn/end` may simply be running, and
 * is shown as open rather than with closers a resume would write.
 */
import type { LoadedLog, LogWarning, Session, SessionEvent, SessionHeader, ValidationOptions } from '../../session/index.js';
import { describeError } from '../errors.js';
import type { FollowState, LogSource } from './source.js';
import { TailDecoder, checksAtEnd } from './tail.js';

export abstract class GrowingSource implements LogSource {
  abstract readonly kind: LogSource['kind'];
  readonly label: string;
  readonly header: Readonly<SessionHeader>;
  readonly warnings: LogWarning[];
  private readonly base: Session;
  /** Events the log held when loaded (the session may hold a seed marker after them). */
  private readonly baseCount: number;
  private readonly tail: SessionEvent[] = [];
  private decoder: TailDecoder | undefined;
  private readonly validation: ValidationOptions;
  private state: FollowState = { state: 'following' };
  private listeners: ((batch: readonly SessionEvent[]) => void)[] = [];
  /**
   * For a log of dsh's formats 2–4: appended lines converted to format 0 as the load converted
   * the rest (`NextTail`), each with its source line.
   */
  protected convertAppended: ((text: string) => { line: number; lines: string[] }[]) | undefined;

  protected constructor(
    label: string,
    loaded: LoadedLog,
    warnings: LogWarning[],
    /** The line number the first appended line has (for messages). */
    private readonly nextLine: number,
    private readonly knownTypes: ReadonlySet<string> | undefined,
  ) {
    this.label = label;
    this.warnings = warnings;
    // Tokenised fixtures are worth viewing too: a placeholder is reported, not refused.
    this.validation = {
      onPlaceholder: ({ seq, path: at, token, eventType }) => {
        this.warnings.push({ code: 'PLACEHOLDER', seq, message: `${eventType} at seq ${seq} has the placeholder ${token} at ${at}` });
      },
    };
    this.warnings.push(...loaded.warnings);
    this.base = loaded.session;
    this.header = loaded.header;
    this.baseCount = loaded.eventCount;
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
    if (this.state.state === 'following') this.state = { state: 'stopped', problem: { code: 'CLOSED', message: 'the viewer was closed' } };
    this.listeners = [];
  }

  /** Stop following; listeners get an empty batch, so they can show why. */
  protected stop(code: string, message: string): void {
    this.state = { state: 'stopped', problem: { code, message } };
    for (const l of this.listeners) l([]);
  }

  /** Bytes of an unterminated last line held back (0: none). */
  protected setPending(bytes: number): void {
    if (bytes > 0) this.state.pendingBytes = bytes;
    else delete this.state.pendingBytes;
  }

  /**
   * Decode complete appended lines (`text` ends with a newline) and publish their events.
   * Returns false when a line was refused (following stopped there).
   */
  protected ingest(text: string): boolean {
    const batch: SessionEvent[] = [];
    let failure: unknown;
    try {
      this.decoder ??= this.makeDecoder();
      if (this.convertAppended) this.decoder.decodeConverted(this.convertAppended(text), batch);
      else this.decoder.decode(text, batch);
    } catch (e) {
      failure = e;
    }
    // Events before a refused line are valid and stay; following stops at the refusal.
    for (const e of batch) this.tail.push(e);
    if (batch.length > 0) for (const l of this.listeners) l(batch);
    if (failure !== undefined) {
      const d = describeError(failure);
      this.stop('FOLLOW_STOPPED', `following stopped: ${d.code}: ${d.message}`);
      return false;
    }
    return true;
  }

  private makeDecoder(): TailDecoder {
    return new TailDecoder(
      {
        sessionId: this.header.id,
        nextSeq: this.baseCount,
        nextLine: this.nextLine,
        file: this.label,
        validation: this.validation,
        lookup: (s) => this.lookup(s),
        ...(this.knownTypes ? { knownTypes: this.knownTypes } : {}),
      },
      checksAtEnd(this.base, this.baseCount),
    );
  }
}
