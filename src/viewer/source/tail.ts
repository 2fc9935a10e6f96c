/**
 * Decoding the lines a writer appends to a log the viewer already loaded. The codec's loader
 * reads a whole file from seq 0; a followed file grows by a few lines at a time, so its new lines
 * are decoded here with the codec's own pieces (packed rows, legacy imports, unknown-type
 * refusal) and each event gets the checks a load gives it, in the same order as
 * `Session.commit`: envelope, lossless JSON, data shape, surface rules, trace rules.
 *
 * The check state (open turn and step, their tool calls, the surface nodes) is rebuilt from the
 * loaded `Session`'s public state rather than by a second pass over the log.
 */
import {
  KNOWN_EVENT_TYPES,
  SessionError,
  SurfaceState,
  TraceState,
  checkRow,
  expandParts,
  freezeJsonInPlace,
  preview,
  isRowTag,
  unknownTypeError,
  validateEnvelope,
  validateEventData,
  RowError,
  type Session,
  type SessionEvent,
  type ValidationOptions,
} from '../../session/index.js';
import { LegacyImporter } from '../../session/codec/legacy.js';
import { lossyNumber } from '../../session/codec/numbers.js';
import { lossyNumberError } from '../../session/codec/jsonl.js';

export interface TailOptions {
  sessionId: string;
  /** Seq of the first event the tail will hold. */
  nextSeq: number;
  /** 1-based file line of the first line the tail will read. */
  nextLine: number;
  file: string;
  knownTypes?: ReadonlySet<string>;
  validation?: ValidationOptions;
  /** Events before `nextSeq` (for the surface rule on tool-result replaces). */
  lookup: (seq: number) => SessionEvent | undefined;
}

export class TailDecoder {
  private nextSeq: number;
  private line: number;
  private readonly trace: TraceState;
  private readonly surface: SurfaceState;
  private readonly legacy: LegacyImporter;

  constructor(
    private readonly opts: TailOptions,
    checks: { trace: TraceState; surface: SurfaceState },
  ) {
    this.nextSeq = opts.nextSeq;
    this.line = opts.nextLine;
    this.trace = checks.trace;
    this.surface = checks.surface;
    this.legacy = new LegacyImporter(opts.sessionId, opts.lookup);
  }

  /**
   * Decode complete lines (`text` ends with a newline) into `out`. Throws a `SessionError` at the
   * first line the loader would refuse; events before it are already in `out`.
   */
  decode(text: string, out: SessionEvent[]): void {
    let pos = 0;
    while (pos < text.length) {
      const nl = text.indexOf('\n', pos);
      const end = nl < 0 ? text.length : nl;
      let line = text.slice(pos, end);
      pos = end + 1;
      const lineNo = this.line++;
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line.trim() === '') continue;
      try {
        this.decodeLine(line, out);
      } catch (e) {
        throw this.at(e, lineNo);
      }
    }
  }

  /**
   * Decode appended lines of a newer-format log, already converted to format 0 (`NextTail`):
   * each source line with the format 0 lines it stands for, refused at its source line.
   */
  decodeConverted(groups: readonly { line: number; lines: readonly string[] }[], out: SessionEvent[]): void {
    for (const g of groups) {
      this.line = g.line + 1;
      for (const line of g.lines) {
        try {
          this.decodeLine(line, out);
        } catch (e) {
          throw this.at(e, g.line);
        }
      }
    }
  }

  private decodeLine(line: string, out: SessionEvent[]): void {
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch (e) {
      throw new SessionError('CORRUPT_LOG', `an appended line is not JSON (${(e as Error).message})`, { rule: 'storage' });
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v))
      throw new SessionError('CORRUPT_LOG', 'an appended line is not a JSON object', { rule: 'storage' });
    const o = v as Record<string, unknown>;
    const lossy = lossyNumber(line);
    // Named with its file and line by the caller (`at`), like every refusal of an appended line.
    if (lossy !== undefined)
      throw lossyNumberError(lossy, typeof o.type === 'string' ? o.type : 'event', this.nextSeq, undefined, undefined);
    if (isRowTag(o.type)) {
      if (o.seq0 !== this.nextSeq)
        throw new SessionError('CORRUPT_LOG', `a packed row starts at seq0 ${preview(o.seq0)} where ${this.nextSeq} belongs`, {
          rule: 'storage',
        });
      const members: SessionEvent[] = [];
      try {
        expandParts(checkRow(o, o.type), members);
      } catch (e) {
        if (e instanceof RowError) throw new SessionError('CORRUPT_LOG', e.message, { rule: 'storage' });
        throw e;
      }
      // Members are already frozen and canonical; they still get the shape and trace checks.
      for (const m of members) {
        validateEnvelope(m, this.nextSeq);
        this.commitValid(m, out);
      }
      return;
    }
    const seq = typeof o.seq === 'number' ? o.seq : this.nextSeq;
    this.legacy.import(o);
    const type = o.type;
    if (typeof type === 'string' && !KNOWN_EVENT_TYPES.has(type) && !this.opts.knownTypes?.has(type) && o.ignorable !== true) {
      throw unknownTypeError(type, seq, undefined, undefined);
    }
    validateEnvelope(o, this.nextSeq);
    freezeJsonInPlace(o, { eventType: type as string, seq });
    this.commitValid(o as unknown as SessionEvent, out);
  }

  /** An event whose envelope is valid and whose data is frozen: the remaining checks, then commit. */
  private commitValid(e: SessionEvent, out: SessionEvent[]): void {
    validateEventData(e.type, e.seq, e.data, this.opts.validation);
    this.surface.check(e, (s) => this.opts.lookup(s) ?? out.find((x) => x.seq === s));
    this.trace.check(e);
    this.surface.apply(e);
    this.trace.apply(e);
    out.push(e);
    this.nextSeq++;
  }

  private at(e: unknown, line: number): unknown {
    if (e instanceof SessionError) return e.at(this.opts.file, line);
    return e;
  }
}

/**
 * The surface and trace state at the end of a loaded log, from the session's public state: the
 * surface nodes are copied, and the open turn (if any) is replayed from its `turn/start` so the
 * open step and its tool calls are known. `end` excludes what the loader added after the file's
 * events (the seed marker).
 */
export function checksAtEnd(session: Session, end: number): { trace: TraceState; surface: SurfaceState } {
  const surface = new SurfaceState();
  const view = session.surface;
  for (const n of view.nodes) surface.nodes.push(n);
  surface.replaceGeneration = view.replaceGeneration;
  const trace = new TraceState();
  const t = session.trace;
  trace.lastTurn = t.lastTurn;
  if (t.openTurn !== undefined) {
    let s = end - 1;
    while (s >= 0 && session.at(s)!.type !== 'turn/start') s--;
    for (const e of session.since(Math.max(0, s))) {
      if (e.seq >= end) break;
      trace.apply(e);
    }
  }
  return { trace, surface };
}
