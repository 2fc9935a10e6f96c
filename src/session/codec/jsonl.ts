/**
 * JSONL codec for dsh session format version 0.
 *
 *   line 1   {"type":"session","version":0,"id":…,"createdAt":…,"cwd":…,"delegationDepth":0}
 *   line 2…  one SessionEvent per line, or a packed chunk row (`rows.ts`)
 *
 * Reading follows dsh's crash rules and never crashes on bad bytes. A *defect* is a line that is
 * not JSON, not an object, a malformed row, or an event whose seq is not the next one. A defect
 * followed later by a line that records a `turn/end` lies in the committed region: the log is
 * corrupt and refused, naming the line. A defect after the last `turn/end` is a torn tail (the
 * writer died mid-write): reading stops there and the tail is reported, with its line and how
 * many lines it held, never dropped silently.
 */
import type { SessionEvent, SessionHeader } from '../events.js';
import { KNOWN_EVENT_TYPES } from '../events.js';
import { SessionError } from '../errors.js';
import { checkRow, expandParts, isRowTag, packChunkRuns, RowError, type RowParts, type StorageRecord } from './rows.js';
import { LegacyImporter } from './legacy.js';
import { preview, shortPath, stringifyJson } from '../json.js';
import { lossyNumber, type LossyNumber } from './numbers.js';

export interface LogWarning {
  code:
    | 'TORN_TAIL'
    | 'MISSING_FINAL_NEWLINE'
    | 'PLACEHOLDER'
    | 'LEGACY_IMPORT'
    | 'OPEN_TURN'
    | 'OUTSIDE_TURN'
    | 'BLANK_LINE'
    | 'BYTE_ORDER_MARK'
    | 'INVALID_UTF8'
    /** Another agent's file, read through src/import: what it was read as. */
    | 'IMPORTED'
    /** What such a file holds that has no dsh event, per field. */
    | 'IMPORT_LOSS'
    /** A log of dsh's newer formats (1–4), read as format 0 in memory: how. */
    | 'FORMAT_CONVERTED';
  message: string;
  line?: number;
  seq?: number;
}

export interface TornTail {
  /** 1-based line where reading stopped. */
  line: number;
  /** Lines from there to the end of the file (all dropped from the load). */
  droppedLines: number;
  reason: string;
}

export interface DecodedLog {
  /** Header fields (the `type:"session"` tag removed), not yet validated beyond recognition. */
  header: Record<string, unknown>;
  /** Raw events in seq order, rows expanded (expanded chunks are already frozen). */
  events: Record<string, unknown>[];
  /** Storage rows after the header (a packed row counts once). */
  rowCount: number;
  tornTail?: TornTail;
  warnings: LogWarning[];
  /** 1-based file line holding the event with this seq. */
  lineOf(seq: number): number | undefined;
}

export interface DecodeOptions {
  file?: string;
  /** Types besides the built-in vocabulary that this reader owns (plugin events). */
  knownTypes?: ReadonlySet<string>;
}

function corrupt(file: string | undefined, line: number, why: string): SessionError {
  const where = file ? `${file}:${line}` : `line ${line}`;
  return new SessionError('CORRUPT_LOG', `${where}: corrupt session log: ${why}`, { line, ...(file ? { file } : {}), rule: 'storage' });
}

/** Read the header line. */
function decodeHeader(text: string, file: string | undefined): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw corrupt(file, 1, `the first line is not a session header (not JSON: ${(e as Error).message})`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v) || (v as { type?: unknown }).type !== 'session') {
    throw corrupt(file, 1, 'the first line is not a session header ({"type":"session",…})');
  }
  const lossy = lossyNumber(text);
  if (lossy !== undefined) throw lossyNumberError(lossy, 'session', undefined, 1, file);
  const h = v as Record<string, unknown>;
  if (!('version' in h)) throw corrupt(file, 1, 'the first line is not a session header: it has no format "version"');
  if (typeof h.version === 'number' && h.version !== 0) {
    throw new SessionError(
      'FORMAT_UNSUPPORTED',
      `${file ? `${file}:1` : 'line 1'}: session format version ${h.version} is not supported (this build reads version 0)`,
      {
        line: 1,
        rule: 'format-version',
        ...(file ? { file } : {}),
      },
    );
  }
  if (!('delegationDepth' in h)) {
    throw corrupt(
      file,
      1,
      'the first line is not a session header: it has no "delegationDepth" (required on disk, 0 for a top-level session)',
    );
  }
  const { type: _tag, ...rest } = h;
  return rest;
}

/** Does this raw line record a turn/end? (Used to decide torn tail versus corruption.) */
function recordsTurnEnd(line: string): boolean {
  if (!line.includes('turn/end')) return false;
  try {
    const v = JSON.parse(line) as { type?: unknown } | null;
    return typeof v === 'object' && v !== null && v.type === 'turn/end';
  } catch {
    return false;
  }
}

/**
 * Where each seq came from, as segments: a run of event lines on consecutive lines is one
 * segment (line = first line + offset), a packed row is one segment (every member on its line).
 * A one-event-per-line file is a single segment, however long.
 */
export class LineMap {
  private readonly seqs: number[] = [];
  private readonly lines: number[] = [];
  /** Events per segment; a row segment is marked by a negative count. */
  private readonly counts: number[] = [];
  private total = 0;

  event(seq: number, line: number): void {
    const k = this.seqs.length - 1;
    if (k >= 0 && this.counts[k]! > 0 && this.seqs[k]! + this.counts[k]! === seq && this.lines[k]! + this.counts[k]! === line)
      this.counts[k]!++;
    else {
      this.seqs.push(seq);
      this.lines.push(line);
      this.counts.push(1);
    }
    this.total = seq + 1;
  }

  /** `n` events on consecutive lines from `line` (a run of event lines, read whole from the resume index). */
  events(seq0: number, n: number, line: number): void {
    const k = this.seqs.length - 1;
    if (k >= 0 && this.counts[k]! > 0 && this.seqs[k]! + this.counts[k]! === seq0 && this.lines[k]! + this.counts[k]! === line)
      this.counts[k]! += n;
    else {
      this.seqs.push(seq0);
      this.lines.push(line);
      this.counts.push(n);
    }
    this.total = seq0 + n;
  }

  row(seq0: number, members: number, line: number): void {
    this.seqs.push(seq0);
    this.lines.push(line);
    this.counts.push(-members);
    this.total = seq0 + members;
  }

  lineOf(seq: number): number | undefined {
    if (!(seq >= 0 && seq < this.total) || this.seqs.length === 0 || seq < this.seqs[0]!) return undefined;
    let lo = 0;
    let hi = this.seqs.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.seqs[mid]! <= seq) lo = mid;
      else hi = mid - 1;
    }
    return this.counts[lo]! < 0 ? this.lines[lo] : this.lines[lo]! + (seq - this.seqs[lo]!);
  }
}

/** What the line scanner hands its consumer. */
interface ScanHandlers {
  /** The header line, decoded (before any event). */
  start?(header: Record<string, unknown>): void;
  /** A parsed event line whose seq is the next one. */
  event(o: Record<string, unknown>, line: number): void;
  /** A parsed, validated row whose first seq is the next one. */
  row(r: RowParts, line: number): void;
  /**
   * The line just handed over (event or row) holds a number `JSON.parse` rounded. Without this
   * handler the scan throws the refusal itself.
   */
  lossy?(error: SessionError): void;
}

/** The refusal of a record that holds a number JSON text cannot hand over exactly. */
export function lossyNumberError(
  n: LossyNumber,
  eventType: string,
  seq: number | undefined,
  line: number | undefined,
  file: string | undefined,
): SessionError {
  const where = [file, line !== undefined ? `line ${line}` : undefined].filter(Boolean).join(':');
  return new SessionError(
    'NON_JSON',
    `${where ? `${where}: ` : ''}${eventType === 'session' ? 'the session header' : `session event "${shortPath(eventType, 80)}"`}` +
      `${eventType !== 'session' && seq !== undefined ? ` at seq ${seq}` : ''}` +
      ` holds the number ${n.token} at ${shortPath(n.path)}, which JSON cannot hand over exactly: ${n.why}; it is refused rather ` +
      'than loaded rounded',
    {
      eventType,
      path: n.path,
      rule: 'lossless-json',
      ...(line !== undefined ? { line } : {}),
      ...(seq !== undefined ? { seq } : {}),
      ...(file ? { file } : {}),
    },
  );
}

interface Scanned {
  header: Record<string, unknown>;
  count: number;
  rowCount: number;
  tornTail?: TornTail;
  warnings: LogWarning[];
  lines: LineMap;
}

/** The lines of a log, one at a time: from a string in memory, or streamed from a file. */
export interface LineSource {
  /** Advance to the next line; false at the end of the input. */
  next(): boolean;
  /** The current line, without its line end ('\n' or '\r\n'). */
  readonly line: string;
  /** Whether the current line ended with '\n' (only the last line of a file may not). */
  readonly terminated: boolean;
  /** Sources that decode bytes: the first lines whose bytes were not UTF-8, and how many there were. */
  readonly invalidUtf8Lines?: readonly number[] | undefined;
  readonly invalidUtf8Count?: number | undefined;
}

/** Lines of a string (with what a check of its bytes found, when it was decoded from bytes). */
export class StringLines implements LineSource {
  line = '';
  terminated = false;
  private pos = 0;
  readonly invalidUtf8Lines: readonly number[] | undefined;
  readonly invalidUtf8Count: number | undefined;
  constructor(
    private readonly text: string,
    utf8?: { readonly lines: readonly number[]; readonly count: number },
  ) {
    this.invalidUtf8Lines = utf8?.lines;
    this.invalidUtf8Count = utf8?.count;
  }
  next(): boolean {
    const text = this.text;
    const at = this.pos;
    if (at >= text.length) return false;
    const nl = text.indexOf('\n', at);
    this.terminated = nl >= 0;
    let end = nl >= 0 ? nl : text.length;
    this.pos = nl >= 0 ? nl + 1 : text.length;
    if (end > at && text.charCodeAt(end - 1) === 13) end--; // tolerate CRLF
    this.line = text.slice(at, end);
    return true;
  }
}

/** Why an event line's seq is not the next one, in words (a gap, a repeat, none at all). */
function misplacedSeq(o: Record<string, unknown>, expected: number): string {
  const seq = o.seq;
  if (o.type === 'session') return `a second session header (only line 1 may hold one; seq ${expected} belongs here)`;
  if (seq === undefined) return `the line has no seq (seq ${expected} belongs here)`;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0)
    return `seq ${preview(seq)} is not a non-negative integer (seq ${expected} belongs here)`;
  if (seq < expected) return `seq ${seq} repeats or goes back (seq ${seq} was already read; seq ${expected} belongs here)`;
  return (
    `seq gap: expected ${expected}, got ${seq} (${seq - expected === 1 ? `seq ${expected} is` : `seqs ${expected}–${seq - 1} are`}` +
    ' missing)'
  );
}

function isBlank(line: string): boolean {
  return line.length === 0 || (line.charCodeAt(0) !== 123 && line.trim().length === 0);
}

/**
 * Walk the storage lines once: parse each, sort out rows and events, check seq continuity, and
 * apply the torn-tail rule to any defect. Nothing but the current line is held.
 */
function scanJsonl(src: LineSource, file: string | undefined, handlers: ScanHandlers): Scanned {
  const warnings: LogWarning[] = [];
  const header = scanHeader(src, file, warnings);
  handlers.start?.(header);
  return scanBody(src, file, header, handlers, warnings);
}

/**
 * The first step of a scan: read and recognise the header line. A UTF-8 byte-order mark before
 * it (some editors add one) is skipped with a warning: it is not JSON, and dsh never writes one.
 */
function scanHeader(src: LineSource, file: string | undefined, warnings?: LogWarning[]): Record<string, unknown> {
  if (!src.next()) throw corrupt(file, 1, 'the file is empty (no session header)');
  let line = src.line;
  if (line.charCodeAt(0) === 0xfeff) {
    line = line.slice(1);
    warnings?.push({
      code: 'BYTE_ORDER_MARK',
      line: 1,
      message: 'line 1 starts with a UTF-8 byte-order mark (U+FEFF), which dsh never writes; it was skipped',
    });
  }
  return decodeHeader(line, file);
}

/** The rest of a scan, after `scanHeader`: every line after the header. */
function scanBody(
  src: LineSource,
  file: string | undefined,
  header: Record<string, unknown>,
  handlers: ScanHandlers,
  warnings: LogWarning[] = [],
  /** Where the lines in `src` start: after a prefix read another way (a resume from the sidecar index). */
  start: { count: number; line: number; lines?: LineMap } = { count: 0, line: 1 },
): Scanned {
  const lines = start.lines ?? new LineMap();
  let count = start.count;
  let rowCount = 0;
  let tornTail: TornTail | undefined;

  /** A defect on `line`: corruption if a later line records a turn/end, else a torn tail. */
  const defect = (line: number, why: string): void => {
    let lineNo = line;
    let droppedLines = 1;
    // The defective line itself may record a turn/end (say, with a seq gap): committed too.
    if (recordsTurnEnd(src.line))
      throw corrupt(file, line, `${why}; the line itself records a turn/end, so it is inside the committed region`);
    while (src.next()) {
      lineNo++;
      droppedLines++;
      if (recordsTurnEnd(src.line)) {
        throw corrupt(file, line, `${why}; a later line (${lineNo}) records a turn/end, so this is inside the committed region`);
      }
    }
    tornTail = { line, droppedLines, reason: why };
    warnings.push({
      code: 'TORN_TAIL',
      line,
      message:
        `torn tail at line ${line}: ${why}; it and the ${droppedLines - 1} line(s) after it were not loaded (no later line records ` +
        'a turn/end, so none of them was committed)',
    });
  };

  let line = start.line;
  while (src.next()) {
    line++;
    const text = src.line;
    const terminated = src.terminated;
    if (isBlank(text)) {
      if (terminated) warnings.push({ code: 'BLANK_LINE', line, message: `line ${line} is blank` });
      continue;
    }
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch (e) {
      defect(line, terminated ? `line is not JSON (${(e as Error).message})` : 'the last line is incomplete (no newline, not JSON)');
      break;
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      defect(line, 'line is not a JSON object');
      break;
    }
    const o = v as Record<string, unknown>;
    const tag = o.type;
    if (isRowTag(tag)) {
      let r: RowParts;
      try {
        if (o.seq0 !== count) throw new RowError(tag, `seq0 ${preview(o.seq0)} where ${count} belongs`);
        r = checkRow(o, tag);
      } catch (e) {
        if (!(e instanceof RowError)) throw e;
        defect(line, e.message);
        break;
      }
      const lossy = lossyNumber(text);
      if (lossy !== undefined) {
        const err = lossyNumberError(lossy, tag, count, line, file);
        if (handlers.lossy) handlers.lossy(err);
        else throw err;
      }
      handlers.row(r, line);
      lines.row(count, r.payload.length, line);
      count += r.payload.length;
    } else {
      if (o.seq !== count) {
        defect(line, misplacedSeq(o, count));
        break;
      }
      const lossy = lossyNumber(text);
      if (lossy !== undefined) {
        const err = lossyNumberError(lossy, typeof o.type === 'string' ? o.type : String(preview(o.type)), count, line, file);
        if (handlers.lossy) handlers.lossy(err);
        else throw err;
      }
      handlers.event(o, line);
      lines.event(count, line);
      count++;
    }
    rowCount++;
    if (!terminated)
      warnings.push({ code: 'MISSING_FINAL_NEWLINE', line, message: `line ${line} has no final newline (it parsed, so it was kept)` });
  }
  const out: Scanned = { header, count, rowCount, warnings, lines };
  if (tornTail) out.tornTail = tornTail;
  return out;
}

/** Decode a log into raw events (rows expanded into frozen chunk events), header and diagnostics. */
export function decodeJsonl(text: string, opts: DecodeOptions = {}): DecodedLog {
  const events: Record<string, unknown>[] = [];
  const scanned = scanJsonl(new StringLines(text), opts.file, {
    event: (o) => {
      events.push(o);
    },
    row: (r) => {
      expandParts(r, events as unknown as SessionEvent[]);
    },
  });
  const out: DecodedLog = {
    header: scanned.header,
    events,
    rowCount: scanned.rowCount,
    warnings: scanned.warnings,
    lineOf: (seq) => scanned.lines.lineOf(seq),
  };
  if (scanned.tornTail) out.tornTail = scanned.tornTail;
  return out;
}

/** The scanner, for the loader: it consumes lines as they are read, keeping nothing else. */
export { scanJsonl as scanJsonlInternal, scanHeader, scanBody, type ScanHandlers, type Scanned };

/** The refusal of an event type this build does not know and the writer did not mark ignorable. */
export function unknownTypeError(type: string, seq: number, line: number | undefined, file: string | undefined): SessionError {
  return new SessionError(
    'FORMAT_UNSUPPORTED',
    `${file ? `${file}:` : ''}${line !== undefined ? `line ${line}: ` : ''}event type "${type}" at seq ${seq} is unknown to this ` +
      'build and not marked ignorable; the log was probably written by a newer harness',
    { eventType: type, seq, rule: 'known-types', ...(line !== undefined ? { line } : {}), ...(file ? { file } : {}) },
  );
}

/**
 * Apply read-time legacy conversions and refuse unknown, non-ignorable event types (a newer
 * writer's log: skipping a required event would reconstruct a wrong session).
 */
export function importEvents(decoded: DecodedLog, sessionId: string, opts: DecodeOptions = {}): void {
  const known = opts.knownTypes;
  const importer = new LegacyImporter(sessionId);
  for (const e of decoded.events) {
    if (Object.isFrozen(e)) continue; // expanded chunk rows: already canonical
    const seq = e.seq as number;
    let what: string | undefined;
    try {
      what = importer.import(e);
    } catch (err) {
      throw err instanceof SessionError ? err.at(opts.file, decoded.lineOf(seq)) : err;
    }
    if (what) decoded.warnings.push({ code: 'LEGACY_IMPORT', seq, line: decoded.lineOf(seq) ?? 0, message: `seq ${seq}: ${what}` });
    const t = e.type;
    if (typeof t === 'string' && !KNOWN_EVENT_TYPES.has(t) && !known?.has(t) && e.ignorable !== true) {
      throw unknownTypeError(t, seq, decoded.lineOf(seq), opts.file);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Encoding

/** The header line object, in dsh's field order; `delegationDepth` is required on disk. */
export function headerRecord(h: SessionHeader): Record<string, unknown> {
  const rec: Record<string, unknown> = { type: 'session', version: h.version, id: h.id, createdAt: h.createdAt };
  if (h.cwd !== undefined) rec.cwd = h.cwd;
  if (h.parentSession !== undefined) rec.parentSession = h.parentSession;
  if (h.seedLength !== undefined) rec.seedLength = h.seedLength;
  if (h.origin !== undefined) rec.origin = h.origin;
  rec.delegationDepth = h.delegationDepth ?? 0;
  if (h.agentPreset !== undefined) rec.agentPreset = h.agentPreset;
  return rec;
}

export function encodeHeaderLine(h: SessionHeader): string {
  return `${JSON.stringify(headerRecord(h))}\n`;
}

/** Storage lines for a batch of events (each ending in '\n'); packed unless `pack` is false. */
export function encodeEvents(events: readonly SessionEvent[], opts: { pack?: boolean } = {}): string {
  const records: readonly StorageRecord[] = opts.pack === false ? events : packChunkRuns(events);
  let out = '';
  for (const r of records) out += `${stringifyJson(r)}\n`;
  return out;
}

export function encodeJsonl(header: SessionHeader, events: readonly SessionEvent[], opts: { pack?: boolean } = {}): string {
  return encodeHeaderLine(header) + encodeEvents(events, opts);
}
