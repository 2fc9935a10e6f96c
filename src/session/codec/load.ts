/**
 * Load a dsh v0 JSONL log into a `Session`: scan the lines once (rows and runs of chunk lines
 * kept compact, torn tail reported), apply read-time legacy imports, validate every event exactly
 * as a seed is validated (errors name the file line, seq and rule), close a turn the writer left
 * open (crash repair), and mark the end of the seed.
 *
 * Chunk runs never become one object per delta here: a packed row, or three or more consecutive
 * event lines that a row could hold, is stored as a `ChunkRun` and its members are materialised
 * only when read. Everything else is the parsed object itself, validated and frozen in place.
 */
import { restoreWith, Session, type SeedSink } from '../session.js';
import { SessionError } from '../errors.js';
import { KNOWN_EVENT_TYPES, type SessionEvent, type SessionHeader } from '../events.js';
import { interruptedTurnClosers, type EventDraft } from '../repair.js';
import {
  scanBody,
  scanHeader,
  StringLines,
  unknownTypeError,
  type DecodeOptions,
  type LineMap,
  type LineSource,
  type LogWarning,
  type ScanHandlers,
  type Scanned,
  type TornTail,
} from './jsonl.js';
import { FileLines, Utf8Check } from './file-lines.js';
import { LegacyImporter } from './legacy.js';
import { chunkRunKind, MIN_RUN, type RowParts } from './rows.js';
import { ChunkRun, type RunKind } from '../chunk-runs.js';
import type { ValidationOptions } from '../validate.js';
import { readFileSync } from 'node:fs';
import { convertNextToV0, nextVersionOf, type ConvertedLog } from './next.js';

export interface LoadOptions extends DecodeOptions {
  /**
   * `{{token}}` placeholders where a path, id, prompt or tool list belongs (tokenised test
   * fixtures): `warn` reports and keeps them; `error` (the default) refuses them.
   */
  placeholders?: 'warn' | 'error';
  /** Append crash-repair closers when the last turn is open (default true, as dsh's load does). */
  repair?: boolean;
  clock?: () => number;
}

export interface LoadedLog {
  session: Session;
  header: SessionHeader;
  warnings: LogWarning[];
  rowCount: number;
  /** Events read from the file (before repair closers and the end-seed marker). */
  eventCount: number;
  tornTail?: TornTail;
  /** Closers appended by crash repair (empty when every turn was closed). */
  repaired: EventDraft[];
  lineOf(seq: number): number | undefined;
}

type Obj = Record<string, unknown>;

/** Consecutive runnable chunk lines of one block, gathered until the run breaks. */
class RunBuilder {
  kind: RunKind | undefined;
  private seq0 = 0;
  private turn = 0;
  private step = 0;
  private index = 0;
  private id: string | undefined;
  private name: string | undefined;
  private named = false;
  private payloads: string[] = [];
  private times: number[] = [];
  private objects: Obj[] = [];

  /** Does `o` (runnable as `kind`) continue the current run? */
  continues(o: Obj, kind: RunKind): boolean {
    if (kind !== this.kind) return false;
    const d = o.data as Obj;
    const c = d.chunk as Obj;
    if (d.turn !== this.turn || d.step !== this.step || c.index !== this.index) return false;
    if (kind !== 'tool-call-delta') return true;
    return c.id === this.id && 'name' in c === this.named && c.name === this.name;
  }

  start(o: Obj, kind: RunKind): void {
    const d = o.data as Obj;
    const c = d.chunk as Obj;
    this.kind = kind;
    this.seq0 = o.seq as number;
    this.turn = d.turn as number;
    this.step = d.step as number;
    this.index = c.index as number;
    this.id = kind === 'tool-call-delta' ? (c.id as string) : undefined;
    this.named = kind === 'tool-call-delta' && 'name' in c;
    this.name = this.named ? (c.name as string) : undefined;
    this.add(o);
  }

  add(o: Obj): void {
    const c = (o.data as Obj).chunk as Obj;
    this.payloads.push((this.kind === 'tool-call-delta' ? c.argumentsDelta : c.text) as string);
    this.times.push(o.time as number);
    this.objects.push(o);
  }

  /** The gathered run: one ChunkRun when it is long enough to pay off, else its objects. */
  flush(into: (Obj | ChunkRun)[]): void {
    if (this.kind === undefined) return;
    if (this.objects.length >= MIN_RUN) {
      into.push(new ChunkRun(this.seq0, this.turn, this.step, this.index, this.kind, this.id, this.name, this.payloads, this.times, true));
    } else {
      for (const o of this.objects) into.push(o);
    }
    this.kind = undefined;
    this.payloads = [];
    this.times = [];
    this.objects = [];
  }
}

function runOf(r: RowParts): ChunkRun {
  // The row's parsed payload array is kept as is: joining would cost a copy on every load.
  return new ChunkRun(r.seq0, r.turn, r.step, r.index, r.kind, r.id, r.name, r.payload, r.times, false);
}

/**
 * Load a log from its text, or from its bytes: bytes are decoded as UTF-8 and checked, so a line
 * holding bytes that are not UTF-8 is reported (`INVALID_UTF8`) as the streamed readers report it.
 */
export function loadJsonl(input: string | Uint8Array, opts: LoadOptions = {}): LoadedLog {
  if (typeof input === 'string') return nextFormat(input, opts) ?? loadLines(new StringLines(input), opts);
  const bytes = Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  const check = new Utf8Check();
  check.feed(bytes, 1, true);
  const text = bytes.toString('utf8');
  return nextFormat(text, opts) ?? loadLines(new StringLines(text, check), opts);
}

/**
 * A log of dsh's formats 1–4: converted to format 0 in memory (`next.ts`) and loaded as such;
 * lines in warnings, errors and `lineOf` are the source file's. Undefined for any other text.
 */
function nextFormat(text: string, opts: LoadOptions): LoadedLog | undefined {
  const nl = text.indexOf('\n');
  if (nextVersionOf(nl < 0 ? text : text.slice(0, nl)) === undefined) return undefined;
  const conv = convertNextToV0(text, opts.file);
  const toSource = (line: number | undefined): number | undefined => (line === undefined ? undefined : (conv.sourceLine[line - 1] ?? line));
  let loaded: LoadedLog;
  try {
    loaded = loadLines(new StringLines(conv.text), opts);
  } catch (e) {
    throw sourceLines(e, conv, opts.file);
  }
  const lineOf = loaded.lineOf;
  for (const w of loaded.warnings) {
    const l = toSource(w.line);
    if (w.line !== undefined && l !== w.line) {
      w.message = w.message.replace(new RegExp(`\\bline ${w.line}\\b`), `line ${l}`);
      w.line = l!;
    }
  }
  if (loaded.tornTail) loaded.tornTail = { ...loaded.tornTail, line: toSource(loaded.tornTail.line)! };
  loaded.warnings.unshift(...conv.warnings);
  return { ...loaded, lineOf: (seq) => toSource(lineOf(seq)) };
}

/** An error from loading the converted text, with the source file's line. */
function sourceLines(e: unknown, conv: ConvertedLog, file: string | undefined): unknown {
  if (!(e instanceof SessionError) || typeof e.details.line !== 'number') return e;
  const line = e.details.line;
  const src = conv.sourceLine[line - 1] ?? line;
  if (src === line) return e;
  const where = file ? `${file}:${line}` : `line ${line}`;
  const msg = e.message.startsWith(where)
    ? `${file ? `${file}:${src}` : `line ${src}`}${e.message.slice(where.length)}`
    : e.message.replace(new RegExp(`\\bline ${line}\\b`), `line ${src}`);
  return new SessionError(e.code, `${msg} (format ${conv.version}, read as format 0)`, { ...e.details, line: src }, { cause: e });
}

/**
 * `loadJsonl` straight from a file, streamed: the file is read in chunks and only the current
 * line is held, so loading costs the session's memory, not the file's on top of it. `file` in
 * the options defaults to the path.
 */
export function loadJsonlFile(path: string, opts: FileLoadOptions = {}): LoadedLog {
  return loadFrom(path, { file: path, ...opts });
}

/**
 * `loadJsonlFile` for an input that is already open (standard input, a pipe), read once as it
 * arrives; the descriptor is not closed.
 */
export function loadJsonlFd(fd: number, opts: FileLoadOptions = {}): LoadedLog {
  return loadFrom({ fd }, opts);
}

/**
 * `loadJsonl` over any source of lines: a store that keeps the header line and one line per
 * event elsewhere (the PostgreSQL store's rows) gets exactly the load, validation and crash
 * repair a file gets.
 */
export function loadJsonlLines(src: LineSource, opts: LoadOptions = {}): LoadedLog {
  return loadLines(src, opts);
}

export interface FileLoadOptions extends LoadOptions {
  /** Sees the first bytes read (empty for an empty input) before they are decoded; may throw to refuse them. */
  inspectHead?: (head: Buffer) => void;
}

function loadFrom(source: string | { fd: number }, opts: FileLoadOptions): LoadedLog {
  const { inspectHead, ...load } = opts;
  const src = new FileLines(source, { ...(inspectHead ? { inspectHead } : {}), ...(load.file !== undefined ? { file: load.file } : {}) });
  try {
    return loadLines(src, load);
  } catch (e) {
    // A header of formats 1–4 (refused by the format 0 reader at line 1): a file is read again
    // whole and converted. Standard input cannot be read twice; it stays refused.
    if (typeof source === 'string' && e instanceof SessionError && e.details.rule === 'format-version') {
      const text = readFileSync(source, 'utf8');
      const converted = nextFormat(text, load);
      if (converted) return converted;
    }
    throw e;
  } finally {
    src.close();
  }
}

/** How many decoded records wait before they are validated (small: they are still young). */
const BATCH = 64;

/** Thrown inside the seed feed to abandon a session whose verdict is already known. */
const ABANDON = Symbol('abandon');

/**
 * One pass: each record is validated and committed shortly after it is parsed, while it is still
 * young in the collector's sense and in cache, rather than in a second pass over the whole log.
 * The verdicts keep their precedence all the same: storage corruption (thrown by the scan as it
 * meets it) over an unknown event type anywhere in the file over the first invalid event or
 * header. So a validation error is only noted when met; validation stops there while the scan
 * goes on to the end, and the error is thrown once the scan has found nothing that outranks it.
 */
/**
 * A prefix of the log read another way (the resume index): its header, what it holds, and a feed
 * that hands its events and deferred runs to the session before the rest is scanned.
 */
export interface LoadPrefix {
  header: Record<string, unknown>;
  /** Events in the prefix (the first seq of the rest). */
  count: number;
  /** Lines in the prefix, header included (the rest starts on the next). */
  line: number;
  /** Rows (event lines and packed rows) in the prefix. */
  rows: number;
  /** The prefix's seq-to-line map; the scan of the rest continues it. */
  lines: LineMap;
  feed(sink: SeedSink): void;
}

/** `loadJsonlLines` for the lines after a prefix read another way (`resume-index.ts`). */
export function loadWithPrefix(src: LineSource, opts: LoadOptions, prefix: LoadPrefix): LoadedLog {
  const loaded = loadLines(src, opts, prefix);
  return { ...loaded, rowCount: loaded.rowCount + prefix.rows };
}

function loadLines(src: LineSource, opts: LoadOptions, prefix?: LoadPrefix): LoadedLog {
  const file = opts.file;
  const known = opts.knownTypes;
  const early: LogWarning[] = [];
  const header = prefix ? prefix.header : scanHeader(src, file, early);
  const start = prefix ? { count: prefix.count, line: prefix.line, lines: prefix.lines } : undefined;
  const sessionId = typeof header.id === 'string' ? header.id : '';
  const legacy: LogWarning[] = [];
  const importer = new LegacyImporter(sessionId);
  let firstUnknown: { type: string; seq: number; line: number } | undefined;
  /** The first validation error, thrown after the scan unless a worse verdict turns up. */
  let invalid: { error: unknown } | undefined;
  const pending = new RunBuilder();
  const batch: (Obj | ChunkRun)[] = [];
  /** Where validated records go; undefined before the session exists and once validation stopped. */
  let sink: SeedSink | undefined;

  const drain = (): void => {
    if (sink !== undefined) {
      try {
        for (let i = 0; i < batch.length; i++) {
          const r = batch[i]!;
          if (r instanceof ChunkRun) sink.run(r);
          else sink.parsed(r);
        }
      } catch (e) {
        invalid = { error: e };
        sink = undefined;
      }
    }
    batch.length = 0;
  };
  const handlers: ScanHandlers = {
    event: (o, line) => {
      const kind = chunkRunKind(o);
      if (kind !== undefined) {
        if (pending.continues(o, kind)) pending.add(o);
        else {
          pending.flush(batch);
          pending.start(o, kind);
        }
        return;
      }
      pending.flush(batch);
      const seq = o.seq as number;
      let what: string | undefined;
      let upgraded = true;
      try {
        what = importer.import(o);
      } catch (e) {
        upgraded = false;
        // A malformed old shape: refused like an invalid event (validation stops here).
        if (invalid === undefined && firstUnknown === undefined) {
          pending.flush(batch);
          drain();
          if (sink !== undefined) invalid = { error: e };
        }
        sink = undefined;
      }
      if (what) legacy.push({ code: 'LEGACY_IMPORT', seq, line, message: `seq ${seq}: ${what}` });
      const t = o.type;
      if (
        upgraded &&
        firstUnknown === undefined &&
        typeof t === 'string' &&
        !KNOWN_EVENT_TYPES.has(t) &&
        !known?.has(t) &&
        o.ignorable !== true
      ) {
        // A newer writer's log: refused as a decode-time verdict, whatever else is wrong with it.
        firstUnknown = { type: t, seq, line };
        sink = undefined;
      }
      batch.push(o);
      if (batch.length >= BATCH) drain();
    },
    row: (r) => {
      pending.flush(batch);
      batch.push(runOf(r));
      if (batch.length >= BATCH) drain();
    },
    lossy: (err) => {
      // Ranked as an invalid event at its seq: anything invalid before it is found first.
      pending.flush(batch);
      drain();
      if (sink !== undefined && invalid === undefined) invalid = { error: err };
      sink = undefined;
    },
  };

  // Placeholder hits are formatted once the scan is over, when every seq has its line.
  const placeholders: { seq: number; path: string; token: string; eventType: string }[] = [];
  const validation: ValidationOptions = {};
  if (opts.placeholders === 'warn') validation.onPlaceholder = (hit) => void placeholders.push(hit);

  let scanned: Scanned | undefined;
  let repaired: EventDraft[] = [];
  let openTurn: number | undefined;
  let session: Session | undefined;
  let outside: { seq: number; type: string } | undefined;
  let fed = false;
  try {
    session = Session[restoreWith](header, { validation, clock: opts.clock ?? Date.now }, (s: SeedSink) => {
      fed = true;
      sink = s;
      prefix?.feed(s);
      scanned = scanBody(src, file, header, handlers, early, start);
      pending.flush(batch);
      drain();
      if (firstUnknown !== undefined || invalid !== undefined) throw ABANDON;
      outside = s.outsideTurn;
      if (opts.repair === false) return;
      // The stored events are all valid here (a repair must never paper over a defect): close.
      const open = s.openTurnEvents();
      if (open.length === 0) return;
      repaired = interruptedTurnClosers(open);
      openTurn = (open[0] as SessionEvent<'turn/start'>).data.turn;
      for (const d of repaired) s.event(d);
    });
  } catch (e) {
    if (e !== ABANDON) {
      // From the scan (storage corruption outranks everything) or from crash repair.
      if (fed) throw located(e, scanned, file);
      // Before the scan: the header was refused. That still ranks below what the scan may find.
      invalid = { error: e };
    }
  }
  if (scanned === undefined) {
    sink = undefined;
    scanned = scanBody(src, file, header, handlers, early, start);
  }
  if (firstUnknown) throw unknownTypeError(firstUnknown.type, firstUnknown.seq, firstUnknown.line, file);
  if (invalid !== undefined) throw located(invalid.error, scanned, file);

  const lines = scanned.lines;
  const lineOf = (seq: number): number | undefined => lines.lineOf(seq);
  const eventCount = scanned.count;
  const warnings = scanned.warnings;
  warnings.push(...legacy);
  utf8Warnings(src, scanned.tornTail, warnings);
  for (const { seq, path, token, eventType } of placeholders) {
    const line = seq < 0 ? 1 : lineOf(seq);
    const w: LogWarning = {
      code: 'PLACEHOLDER',
      message:
        `${line !== undefined ? `line ${line}: ` : ''}${seq < 0 ? 'header' : `${eventType} at seq ${seq}`} has the placeholder ` +
        `${token} at ${path}`,
    };
    if (line !== undefined) w.line = line;
    if (seq >= 0) w.seq = seq;
    warnings.push(w);
  }
  if (outside !== undefined) {
    const line = lineOf(outside.seq);
    const w: LogWarning = {
      code: 'OUTSIDE_TURN',
      seq: outside.seq,
      message:
        `${line !== undefined ? `line ${line}: ` : ''}${outside.type} at seq ${outside.seq} sits outside any open ` +
        (outside.type === 'turn/end' ||
        outside.type === 'step/start' ||
        outside.type.startsWith('request/') ||
        outside.type === 'todo/write'
          ? 'turn'
          : 'step') +
        '; dsh restores such logs without checking turn enclosure, so it (and any like it after) was loaded outside the turn ' +
        'structure',
    };
    if (line !== undefined) w.line = line;
    warnings.push(w);
  }
  if (openTurn !== undefined) {
    warnings.push({
      code: 'OPEN_TURN',
      seq: eventCount - 1,
      message:
        `turn ${openTurn} was left open (the writer stopped mid-turn); crash repair closed it with ` +
        `${repaired.map((d) => d.type).join(', ')}`,
    });
  }

  const out: LoadedLog = { session: session!, header: session!.header, warnings, rowCount: scanned.rowCount, eventCount, repaired, lineOf };
  if (scanned.tornTail) out.tornTail = scanned.tornTail;
  return out;
}

/**
 * Lines whose bytes were not UTF-8 (a damaged byte decodes to U+FFFD): loaded as decoded, and
 * reported, never passed over in silence. Lines of a torn tail are reported with the tail.
 */
function utf8Warnings(src: LineSource, torn: TornTail | undefined, warnings: LogWarning[]): void {
  const listed = (src.invalidUtf8Lines ?? []).filter((l) => torn === undefined || l < torn.line);
  for (const line of listed) {
    warnings.push({
      code: 'INVALID_UTF8',
      line,
      message: `line ${line} holds bytes that are not valid UTF-8; each was read as U+FFFD (the replacement character)`,
    });
  }
  const more = (src.invalidUtf8Count ?? 0) - (src.invalidUtf8Lines?.length ?? 0);
  if (more > 0 && torn === undefined)
    warnings.push({ code: 'INVALID_UTF8', message: `${more} more line(s) hold bytes that are not valid UTF-8` });
}

/** A seed error with the file and line of the seq it names (errors that have a line keep it). */
function located(e: unknown, scanned: Scanned | undefined, file: string | undefined): unknown {
  if (!(e instanceof SessionError) || e.details.line) return e;
  const seq = e.details.seq;
  const line = seq === undefined ? (e.code === 'INVALID_HEADER' ? 1 : undefined) : seq < 0 ? 1 : scanned?.lines.lineOf(seq);
  const prefix = [file, line === undefined ? '' : `line ${line}`].filter(Boolean).join(':');
  return new SessionError(
    e.code,
    prefix ? `${prefix}: ${e.message}` : e.message,
    { ...e.details, ...(line !== undefined ? { line } : {}), ...(file ? { file } : {}) },
    { cause: e },
  );
}
