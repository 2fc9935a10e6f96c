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
import { expandRow, isRowTag, packChunkRuns, RowError, type StorageRecord } from './rows.js';
import { importLegacy } from './legacy.js';
import { stringifyJson } from '../json.js';

export interface LogWarning {
  code:
    | 'TORN_TAIL'
    | 'MISSING_FINAL_NEWLINE'
    | 'PLACEHOLDER'
    | 'LEGACY_IMPORT'
    | 'OPEN_TURN'
    | 'BLANK_LINE';
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
  const h = v as Record<string, unknown>;
  if (!('version' in h)) throw corrupt(file, 1, 'the first line is not a session header: it has no format "version"');
  if (typeof h.version === 'number' && h.version !== 0) {
    throw new SessionError('FORMAT_UNSUPPORTED', `${file ? `${file}:1` : 'line 1'}: session format version ${h.version} is not supported (this build reads version 0)`, {
      line: 1,
      rule: 'format-version',
      ...(file ? { file } : {}),
    });
  }
  if (!('delegationDepth' in h)) {
    throw corrupt(file, 1, 'the first line is not a session header: it has no "delegationDepth" (required on disk, 0 for a top-level session)');
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

/** Split into lines without a regex; a final segment without '\n' is reported as unterminated. */
function splitLines(text: string): { lines: string[]; terminated: boolean } {
  const lines: string[] = [];
  let start = 0;
  for (;;) {
    const nl = text.indexOf('\n', start);
    if (nl < 0) break;
    let end = nl;
    if (end > start && text.charCodeAt(end - 1) === 13) end--; // tolerate CRLF
    lines.push(text.slice(start, end));
    start = nl + 1;
  }
  const terminated = start === text.length;
  if (!terminated) lines.push(text.slice(start));
  return { lines, terminated };
}

export function decodeJsonl(text: string, opts: DecodeOptions = {}): DecodedLog {
  const file = opts.file;
  if (text.length === 0) throw corrupt(file, 1, 'the file is empty (no session header)');
  const { lines, terminated } = splitLines(text);
  const header = decodeHeader(lines[0]!, file);
  const warnings: LogWarning[] = [];
  const events: Record<string, unknown>[] = [];
  const rowStarts: number[] = []; // first seq of each row
  const rowLines: number[] = []; // its 1-based line
  let rowCount = 0;
  let tornTail: TornTail | undefined;

  const defect = (index: number, why: string): boolean => {
    const line = index + 1;
    for (let j = index; j < lines.length; j++) {
      if (recordsTurnEnd(lines[j]!)) {
        throw corrupt(file, line, `${why}; a later line (${j + 1}) records a turn/end, so this is inside the committed region`);
      }
    }
    tornTail = { line, droppedLines: lines.length - index, reason: why };
    warnings.push({
      code: 'TORN_TAIL',
      line,
      message: `torn tail at line ${line}: ${why}; ${lines.length - index} line(s) after the last committed turn/end were not loaded`,
    });
    return true;
  };

  for (let i = 1; i < lines.length; i++) {
    const text = lines[i]!;
    const isLast = i === lines.length - 1;
    if (text.length === 0 || text.trim().length === 0) {
      if (!(isLast && !terminated)) warnings.push({ code: 'BLANK_LINE', line: i + 1, message: `line ${i + 1} is blank` });
      continue;
    }
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch (e) {
      if (defect(i, isLast && !terminated ? 'the last line is incomplete (no newline, not JSON)' : `line is not JSON (${(e as Error).message})`)) break;
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      if (defect(i, 'line is not a JSON object')) break;
    }
    const o = v as Record<string, unknown>;
    const expected = events.length;
    if (isRowTag(o.type)) {
      const before = events.length;
      try {
        if (o.seq0 !== expected) throw new RowError(o.type, `seq0 ${String(o.seq0)} where ${expected} belongs`);
        expandRow(o, o.type, events as unknown as SessionEvent[]);
      } catch (e) {
        events.length = before;
        if (!(e instanceof RowError)) throw e;
        if (defect(i, e.message)) break;
      }
    } else {
      if (o.seq !== expected) {
        if (defect(i, `seq gap: expected ${expected}, got ${JSON.stringify(o.seq)}`)) break;
      }
      events.push(o);
    }
    rowStarts.push(expected);
    rowLines.push(i + 1);
    rowCount++;
    if (isLast && !terminated) {
      warnings.push({ code: 'MISSING_FINAL_NEWLINE', line: i + 1, message: `line ${i + 1} has no final newline (it parsed, so it was kept)` });
    }
  }

  const lineOf = (seq: number): number | undefined => {
    let lo = 0;
    let hi = rowStarts.length - 1;
    if (hi < 0 || seq < 0 || seq >= events.length) return undefined;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (rowStarts[mid]! <= seq) lo = mid;
      else hi = mid - 1;
    }
    return rowLines[lo];
  };
  const out: DecodedLog = { header, events, rowCount, warnings, lineOf };
  if (tornTail) out.tornTail = tornTail;
  return out;
}

/**
 * Apply read-time legacy conversions and refuse unknown, non-ignorable event types (a newer
 * writer's log: skipping a required event would reconstruct a wrong session).
 */
export function importEvents(decoded: DecodedLog, sessionId: string, opts: DecodeOptions = {}): void {
  const known = opts.knownTypes;
  for (const e of decoded.events) {
    if (Object.isFrozen(e)) continue; // expanded chunk rows: already canonical
    const what = importLegacy(e, sessionId);
    const seq = e.seq as number;
    if (what) decoded.warnings.push({ code: 'LEGACY_IMPORT', seq, line: decoded.lineOf(seq) ?? 0, message: `seq ${seq}: ${what}` });
    const t = e.type;
    if (typeof t === 'string' && !KNOWN_EVENT_TYPES.has(t) && !(known?.has(t)) && e.ignorable !== true) {
      const line = decoded.lineOf(seq);
      throw new SessionError(
        'FORMAT_UNSUPPORTED',
        `${opts.file ? `${opts.file}:` : ''}${line !== undefined ? `line ${line}: ` : ''}event type "${t}" at seq ${seq} is unknown to this build and not marked ignorable; the log was probably written by a newer harness`,
        { eventType: t, seq, rule: 'known-types', ...(line !== undefined ? { line } : {}), ...(opts.file ? { file: opts.file } : {}) },
      );
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
