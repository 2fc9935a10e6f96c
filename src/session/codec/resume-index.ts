/**
 * The resume index: a cache of where things are in a log file, so a resume reads what the
 * model-visible history, the trace and the open tail need and leaves the bulk of the file (the
 * streamed deltas, `assistant/chunk`, hundreds per answer) on disk until something reads it.
 *
 * It is never the truth. It is built from a full load of the file (every line parsed and
 * validated) and records what proves the file still holds the bytes it describes (the indexed
 * prefix): SHA-256 digests of the prefix, a segment per load that grew it, and the file's inode,
 * size, mtime and ctime in nanoseconds. When the file's stat is still the recorded one, nothing
 * was written to it since (ctime cannot be set back from user space), and the prefix is taken
 * as recorded without reading it: a resume reads the header, the kept events and the tail, not
 * the bulk of the file. When the stat differs (another writer appended, the file was touched or
 * edited), the prefix is read once and must match its digests. A different inode, a file shorter
 * than the prefix, a digest mismatch, an index that does not parse, whose own digest or structure
 * is off, or whose lines do not hold what it says, and the caller loads the whole file as before.
 * Bytes after the prefix (turns appended since the index was built) are loaded as a full load
 * reads them; the index grows to cover them.
 *
 * The store keeps the stat current: a session it opened, appended to under its lock and closed
 * gets its index's stat refreshed at close (`restatResumeIndex`), so the next resume of it does not
 * read the prefix again, when its writer saw no other program write to the file meanwhile (the
 * lock binds only dsh: an edit in place while the session was open leaves the stat unrecorded).
 *
 * What an indexed load holds in memory: the header, every event that is not a run of chunk
 * deltas (messages, tool calls and results, turn and step boundaries, request headers), each
 * parsed and validated as a full load validates it, and for each chunk run its placement only
 * (seq, turn, step, block, byte range). A run's deltas are read from the file on the first read
 * of one of its members, and checked then against the placement (STORAGE_CHANGED if the file no
 * longer holds them).
 *
 * `dsh log check` never uses the index: validation of every line stays the full load's.
 */
import { nodeCrypto } from '../../model/node-crypto.js';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { ChunkRun, type RunBody, type RunKind } from '../chunk-runs.js';
import { SessionError } from '../errors.js';
import { isChunkRun, type SeedSink } from '../session.js';
import type { SessionEvent } from '../events.js';
import { LineMap, scanHeader, StringLines } from './jsonl.js';
import { Utf8Check } from './file-lines.js';
import { checkRow, isRowTag } from './rows.js';
import { readAt, SpanReader } from './span-reader.js';
import { loadWithPrefix, type LoadedLog, type LoadOptions } from './load.js';

export const RESUME_INDEX_FORMAT = 'dsh-resume-index';
export const RESUME_INDEX_VERSION = 3;

const KINDS: readonly RunKind[] = ['text-delta', 'reasoning-delta', 'tool-call-delta'];

/**
 * Events on consecutive lines: `[start, end, seq0, count, line]` (bytes `[start, end)` of the
 * file, newlines included; `line` is the first one's 1-based line).
 */
export type KeptEntry = [start: number, end: number, seq0: number, count: number, line: number];
/**
 * A chunk run: `[start, end, seq0, length, line, turn, step, index, kind, id, name, row]`, where
 * `kind` indexes text/reasoning/tool-call deltas, `row` is 1 for a packed row (one line).
 */
export type RunEntry = [
  start: number,
  end: number,
  seq0: number,
  length: number,
  line: number,
  turn: number,
  step: number,
  index: number,
  kind: number,
  id: string | null,
  name: string | null,
  row: 0 | 1,
];
export type IndexEntry = KeptEntry | RunEntry;

export interface FileStamp {
  /** Decimal: an inode number can pass 2^53 (NTFS file ids through WSL, some FUSE and NFS servers). */
  ino: string;
  size: number;
  mtimeNs: string;
  ctimeNs: string;
}

/** The stamp of an open file (nanosecond times: a millisecond float loses the writes inside one millisecond). */
export function fileStamp(fd: number): FileStamp {
  const st = fstatSync(fd, { bigint: true });
  return { ino: String(st.ino), size: Number(st.size), mtimeNs: String(st.mtimeNs), ctimeNs: String(st.ctimeNs) };
}

/** Do two stamps name the same file, unchanged? */
export const sameStamp = (a: FileStamp, b: FileStamp): boolean =>
  a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;

export interface ResumeIndex {
  format: typeof RESUME_INDEX_FORMAT;
  version: typeof RESUME_INDEX_VERSION;
  /**
   * The log file's stat when the index was last known to describe a prefix of it (its inode must
   * still match; with the same size, mtime and ctime the prefix is not read again). Nanosecond
   * times as decimal strings.
   */
  file: FileStamp;
  /**
   * The bytes described: `[0, bytes)`; the SHA-256 of each segment `[previous end, end)` of them
   * (`digests`, in order, the last ending at `bytes`); events, lines and rows in them; where the
   * header line ends.
   */
  prefix: { bytes: number; digests: [end: number, sha256: string][]; events: number; lines: number; rows: number; headerEnd: number };
  entries: IndexEntry[];
}

/** A loaded log with what an index of it needs: the file's line starts and the prefix digest so far. */
export interface IndexedLoad extends LoadedLog {
  /** Built on this load (full, or the old index plus the tail): the index of the file as loaded, or undefined when it may not have one. */
  resumeIndex: ResumeIndex | undefined;
  /** Was the prefix read through an index (rather than line by line)? */
  fromIndex: boolean;
  /**
   * What showed the prefix to be the bytes indexed: `stat` (the file's stat was the one recorded:
   * the prefix was not read) or `digests` (it was read and hashed).
   */
  prefixCheckedBy?: 'stat' | 'digests';
}

/**
 * The index file's text: a first line `{"format","version","check"}`, where `check` is the
 * SHA-256 of the second line, the rest of the index as JSON (`{file, prefix, entries}`), so a
 * damaged or hand-edited index is found by hashing its text, without serialising it again.
 */
export function serializeResumeIndex(index: ResumeIndex): Buffer {
  // Bytes throughout: the body is hashed and written as the same buffer, encoded once.
  const body = Buffer.from(JSON.stringify({ file: index.file, prefix: index.prefix, entries: index.entries }));
  const check = nodeCrypto().createHash('sha256').update(body).digest('hex');
  return Buffer.concat([Buffer.from(`${JSON.stringify({ format: index.format, version: index.version, check })}\n`), body]);
}

/** Is `doc` a resume index of this version, whole and unedited? (Its fit to a file is checked on load.) */
export function parseResumeIndex(doc: string | Buffer): ResumeIndex | undefined {
  const bytes = typeof doc === 'string' ? Buffer.from(doc) : doc;
  const nl = bytes.indexOf(0x0a);
  if (nl < 0) return undefined;
  let body: unknown;
  try {
    const head: unknown = JSON.parse(bytes.toString('utf8', 0, nl));
    if (typeof head !== 'object' || head === null) return undefined;
    const h = head as { format?: unknown; version?: unknown; check?: unknown };
    if (h.format !== RESUME_INDEX_FORMAT || h.version !== RESUME_INDEX_VERSION || typeof h.check !== 'string') return undefined;
    const bodyBytes = bytes.subarray(nl + 1);
    if (nodeCrypto().createHash('sha256').update(bodyBytes).digest('hex') !== h.check) return undefined;
    body = JSON.parse(bodyBytes.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof body !== 'object' || body === null) return undefined;
  const d = { format: RESUME_INDEX_FORMAT, version: RESUME_INDEX_VERSION, ...(body as object) } as ResumeIndex;
  if (!Array.isArray(d.entries) || typeof d.prefix !== 'object' || d.prefix === null || typeof d.file !== 'object' || d.file === null)
    return undefined;
  return structureOk(d) ? d : undefined;
}

const int = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
const NS = /^(0|[1-9][0-9]{0,24})$/;
/** A 64-bit stat field written in decimal (inode, nanosecond times). */
const decimal = (v: unknown): v is string => typeof v === 'string' && NS.test(v);
const HEX = /^[0-9a-f]{64}$/;

/** Segments in order, each non-empty, the last ending at `bytes`. */
function digestsOk(digests: unknown, bytes: number): boolean {
  if (!Array.isArray(digests) || digests.length === 0) return false;
  let at = 0;
  for (const d of digests) {
    if (!Array.isArray(d) || d.length !== 2 || !int(d[0]) || d[0] <= at || typeof d[1] !== 'string' || !HEX.test(d[1])) return false;
    at = d[0];
  }
  return at === bytes;
}

/**
 * Entries tile the prefix: bytes from the header's end to the prefix's end, lines from 2 to the
 * last, seqs from 0, each entry starting where the one before ended. A build always gives that
 * (every line after the header is an event or a row); a gap would be bytes a resume by stat never
 * reads, so the events on its lines would silently drop out of the session (and the next append
 * reuse their seqs).
 */
function structureOk(d: ResumeIndex): boolean {
  const p = d.prefix;
  if (![p.bytes, p.events, p.lines, p.rows, p.headerEnd, d.file.size].every(int)) return false;
  if (![d.file.ino, d.file.mtimeNs, d.file.ctimeNs].every(decimal) || !digestsOk(p.digests, p.bytes)) return false;
  let seq = 0;
  let at = p.headerEnd;
  let line = 1;
  for (const e of d.entries) {
    if (!Array.isArray(e) || (e.length !== 5 && e.length !== 12)) return false;
    // Field by field, no array per entry: a 1 GB log's index has ~100,000 entries.
    const start = e[0];
    const end = e[1];
    const seq0 = e[2];
    const n = e[3];
    const l = e[4];
    if (!int(start) || !int(end) || !int(seq0) || !int(n) || !int(l)) return false;
    if (start !== at || end <= start || end > p.bytes || seq0 !== seq || n < 1 || l !== line + 1) return false;
    if (e.length === 12) {
      // By index: array destructuring goes through the iterator protocol, which in code run once
      // (not yet optimised) cost ~20 ms over the ~8,000 run entries of a 40 MB log.
      const turn = e[5];
      const step = e[6];
      const index = e[7];
      const kind = e[8];
      const id = e[9];
      const name = e[10];
      const row = e[11];
      if (!int(turn) || !int(step) || !int(index) || !(kind === 0 || kind === 1 || kind === 2) || (row !== 0 && row !== 1)) return false;
      if (!(id === null || typeof id === 'string') || !(name === null || typeof name === 'string')) return false;
      line = l + (row === 1 ? 0 : n - 1);
    } else line = l + n - 1;
    seq += n;
    at = end;
  }
  return seq === p.events && at === p.bytes && line === p.lines;
}

// ---------------------------------------------------------------------------------------------
// Building

/**
 * May a loaded log have an index? Only a clean format 0 log: no torn tail, no repair, no warning
 * but placeholders (tokenised fixtures loaded with `placeholders: 'warn'`, found again in the
 * events an indexed load validates).
 */
function indexable(loaded: LoadedLog): boolean {
  return (
    loaded.warnings.every((w) => w.code === 'PLACEHOLDER') &&
    loaded.tornTail === undefined &&
    loaded.repaired.length === 0 &&
    loaded.eventCount > 0
  );
}

/**
 * Entries for the stored events `[fromSeq, toSeq)` of a loaded session: runs of chunk deltas as
 * run entries, other events merged into spans of consecutive lines. `lineStart(l)` is the byte
 * offset where 1-based line `l` starts.
 */
function entriesFor(loaded: LoadedLog, fromSeq: number, toSeq: number, lineStart: (line: number) => number): IndexEntry[] {
  const out: IndexEntry[] = [];
  let span: KeptEntry | undefined;
  for (const r of loaded.session.records(fromSeq)) {
    const seq = isChunkRun(r) ? r.seq0 : r.seq;
    if (seq >= toSeq) break;
    const line = loaded.lineOf(seq)!;
    if (isChunkRun(r)) {
      span = undefined;
      const last = loaded.lineOf(r.seq0 + r.length - 1)!;
      const row = last === line ? 1 : 0;
      out.push([
        lineStart(line),
        lineStart(last + 1),
        r.seq0,
        r.length,
        line,
        r.turn,
        r.step,
        r.index,
        KINDS.indexOf(r.kind),
        r.id ?? null,
        r.name ?? null,
        row,
      ]);
      continue;
    }
    const start = lineStart(line);
    if (span !== undefined && span[1] === start && span[4] + span[3] === line) {
      span[1] = lineStart(line + 1);
      span[3]++;
    } else {
      span = [start, lineStart(line + 1), seq, 1, line];
      out.push(span);
    }
  }
  return out;
}

/** Byte offsets where each line of `bytes` starts, from `base` (line `firstLine` starts at `base`). */
function lineStarts(bytes: Buffer, base: number, firstLine: number, into: Map<number, number>): void {
  let line = firstLine;
  into.set(line, base);
  let pos = 0;
  for (;;) {
    const nl = bytes.indexOf(0x0a, pos);
    if (nl < 0) break;
    pos = nl + 1;
    into.set(++line, base + pos);
  }
}

/** `entries` then `more`, a span of `more` that continues the last span of `entries` merged into it (as a rebuild would have it). */
function appendEntries(entries: readonly IndexEntry[], more: readonly IndexEntry[]): IndexEntry[] {
  const out = entries.slice();
  for (const e of more) {
    const last = out[out.length - 1];
    if (e.length === 5 && last?.length === 5 && last[1] === e[0] && last[2] + last[3] === e[2] && last[4] + last[3] === e[4]) {
      out[out.length - 1] = [last[0], e[1], last[2], last[3] + e[3], last[4]];
    } else out.push(e);
  }
  return out;
}

/** Read `[from, to)` of `fd` in 1 MiB chunks, handing each to `each`. */
function readRange(fd: number, from: number, to: number, each: (chunk: Buffer, at: number) => void): void {
  const buf = Buffer.allocUnsafe(1 << 20);
  for (let at = from; at < to; ) {
    const n = readSync(fd, buf, 0, Math.min(buf.length, to - at), at);
    if (n === 0)
      throw new SessionError('STORAGE_CHANGED', `the file ended at byte ${at} while ${to} were expected`, { rule: 'resume-index' });
    each(buf.subarray(0, n), at);
    at += n;
  }
}

/**
 * The index of `path` as a full load just read it (undefined when the log may not have one).
 * Reads the file once more: line starts and the digest of the prefix. `before` is the file's
 * stamp taken before the load: when given, the index is built only if the file still has it
 * after this read (else something wrote to it during the load or the read, and the digests
 * could describe bytes the loaded session was not made from).
 */
export function buildResumeIndex(path: string, loaded: LoadedLog, before?: FileStamp): ResumeIndex | undefined {
  if (!indexable(loaded)) return undefined;
  const fd = openSync(path, 'r');
  try {
    const stamp = fileStamp(fd);
    if (before !== undefined && !sameStamp(stamp, before)) return undefined;
    const lastLine = loaded.lineOf(loaded.eventCount - 1)!;
    // starts[l]: the byte offset where 1-based line l starts.
    const starts: number[] = [0, 0];
    const hash = nodeCrypto().createHash('sha256');
    let line = 1;
    let bytes = -1;
    readRange(fd, 0, stamp.size, (chunk, at) => {
      if (bytes >= 0) return;
      let pos = 0;
      for (;;) {
        const nl = chunk.indexOf(0x0a, pos);
        if (nl < 0) break;
        pos = nl + 1;
        starts[++line] = at + pos;
        if (line === lastLine + 1) {
          bytes = at + pos;
          break;
        }
      }
      hash.update(bytes >= 0 ? chunk.subarray(0, bytes - at) : chunk);
    });
    if (bytes < 0) return undefined; // the last event's line has no newline: nothing to index safely
    if (before !== undefined && !sameStamp(fileStamp(fd), before)) return undefined;
    const headerEnd = starts[2]!;
    const lineStart = (l: number): number => starts[l]!;
    const entries = entriesFor(loaded, 0, loaded.eventCount, lineStart);
    return {
      format: RESUME_INDEX_FORMAT,
      version: RESUME_INDEX_VERSION,
      file: stamp,
      prefix: {
        bytes,
        digests: [[bytes, hash.digest('hex')]],
        events: loaded.eventCount,
        lines: lastLine,
        rows: loaded.rowCount,
        headerEnd,
      },
      entries,
    };
  } finally {
    closeSync(fd);
  }
}

/**
 * `index` with the stat of the log it describes now (`stamp`), for a writer that appended to the
 * log under its lock after the index was made and knows the prefix untouched: the next resume
 * then skips reading the prefix. Undefined when the file is no longer the one indexed or is
 * shorter than the prefix.
 */
export function restatResumeIndex(index: ResumeIndex, stamp: FileStamp): ResumeIndex | undefined {
  if (stamp.ino !== index.file.ino || stamp.size < index.prefix.bytes) return undefined;
  if (sameStamp(stamp, index.file)) return index;
  return { ...index, file: stamp };
}

// ---------------------------------------------------------------------------------------------
// Loading

/** The deltas of one run, read from its bytes and checked against its placement. */
function readRunBody(path: string, e: RunEntry): RunBody {
  const [start, end, seq0, length, line, turn, step, index, kind, id, name, row] = e;
  const changed = (why: string): SessionError =>
    new SessionError(
      'STORAGE_CHANGED',
      `${path}:${line}: the log no longer holds the chunk run the resume index placed at seq ${seq0} (${why}); ` +
        'the file changed under the session',
      {
        file: path,
        line,
        seq: seq0,
        rule: 'resume-index',
      },
    );
  let text: string;
  try {
    const fd = openSync(path, 'r');
    try {
      const buf = Buffer.allocUnsafe(end - start);
      let got = 0;
      while (got < buf.length) {
        const n = readSync(fd, buf, got, buf.length - got, start + got);
        if (n === 0) break;
        got += n;
      }
      if (got !== buf.length) throw changed('the file is shorter');
      text = buf.toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    if (err instanceof SessionError) throw err;
    throw changed((err as Error).message);
  }
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const k = KINDS[kind]!;
  try {
    if (row === 1) {
      const o = JSON.parse(lines[0]!) as Record<string, unknown>;
      if (lines.length !== 1 || !isRowTag(o.type)) throw changed('not one packed row');
      const r = checkRow(o, o.type);
      if (r.seq0 !== seq0 || r.payload.length !== length || r.turn !== turn || r.step !== step || r.index !== index || r.kind !== k)
        throw changed('a different row');
      if ((r.id ?? null) !== id || (r.name ?? null) !== name) throw changed('a different call');
      return { payloads: r.payload, times: r.times };
    }
    if (lines.length !== length) throw changed(`${lines.length} lines for ${length} deltas`);
    const payloads: string[] = new Array(length);
    const times: number[] = new Array(length);
    for (let i = 0; i < length; i++) {
      const o = JSON.parse(lines[i]!) as SessionEvent<'assistant/chunk'>;
      const c = o.data?.chunk as
        | { type?: unknown; index?: unknown; id?: unknown; name?: unknown; text?: unknown; argumentsDelta?: unknown }
        | undefined;
      if (
        o.type !== 'assistant/chunk' ||
        o.seq !== seq0 + i ||
        o.data.turn !== turn ||
        o.data.step !== step ||
        c?.type !== k ||
        c.index !== index
      )
        throw changed(`line ${line + i} is not the delta at seq ${seq0 + i}`);
      if (k === 'tool-call-delta' && ((c.id ?? null) !== id || (name !== null ? c.name !== name : 'name' in c)))
        throw changed(`line ${line + i} names another call`);
      const p = k === 'tool-call-delta' ? c.argumentsDelta : c.text;
      if (typeof p !== 'string' || typeof o.time !== 'number') throw changed(`line ${line + i} has no delta`);
      payloads[i] = p;
      times[i] = o.time;
    }
    return { payloads, times };
  } catch (err) {
    if (err instanceof SessionError) throw err;
    throw changed((err as Error).message);
  }
}

/** Does `[0, prefix.bytes)` of `fd` hold the bytes the prefix's digests describe? */
function prefixMatches(fd: number, prefix: ResumeIndex['prefix']): boolean {
  let seg = 0;
  let hash = nodeCrypto().createHash('sha256');
  let ok = true;
  readRange(fd, 0, prefix.bytes, (chunk, at) => {
    let from = 0;
    while (ok && from < chunk.length) {
      const [end, digest] = prefix.digests[seg]!;
      const to = Math.min(chunk.length, end - at);
      hash.update(chunk.subarray(from, to));
      from = to;
      if (at + to === end) {
        ok = hash.digest('hex') === digest;
        hash = nodeCrypto().createHash('sha256');
        seg++;
      }
    }
  });
  return ok && seg === prefix.digests.length;
}

/**
 * Load `path` through `index`: the prefix's kept lines parsed and validated, its runs deferred,
 * the rest of the file (the tail) scanned and loaded as a full load does, and the index grown
 * over the tail. The prefix is read only for its digests, and only when the file's stat is not
 * the one recorded. Undefined when the index does not fit the file (the caller loads it whole);
 * errors of the tail are the full load's errors.
 */
export function loadJsonlIndexed(path: string, index: ResumeIndex, opts: LoadOptions = {}): IndexedLoad | undefined {
  const p = index.prefix;
  const fd = openSync(path, 'r');
  try {
    const now = fileStamp(fd);
    if (now.ino !== index.file.ino || now.size < p.bytes) return undefined;
    const unchanged = sameStamp(now, index.file);
    if (!unchanged && !prefixMatches(fd, p)) return undefined;
    const tail = readAt(fd, p.bytes, now.size - p.bytes);
    let headerObj: Record<string, unknown>;
    try {
      headerObj = scanHeader(new StringLines(readAt(fd, 0, p.headerEnd).toString('utf8')), path);
    } catch {
      return undefined;
    }
    const lines = new LineMap();
    const spans = new SpanReader(
      fd,
      path,
      index.entries.filter((e): e is KeptEntry => e.length === 5),
    );
    const feed = (sink: SeedSink): void => {
      for (const e of index.entries) {
        if (e.length === 5) {
          const text = spans.read();
          let pos = 0;
          for (let i = 0; i < e[3]; i++) {
            const nl = text.indexOf('\n', pos);
            if (nl < 0) throw new SessionError('STORAGE_CHANGED', `${path}:${e[4]}: fewer lines than the resume index recorded`);
            const end = nl > pos && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
            sink.parsed(JSON.parse(text.slice(pos, end)) as Record<string, unknown>);
            pos = nl + 1;
          }
          if (pos !== text.length) throw new SessionError('STORAGE_CHANGED', `${path}:${e[4]}: more lines than the resume index recorded`);
          lines.events(e[2], e[3], e[4]);
        } else {
          // By index, not destructured (see structureOk).
          const seq0 = e[2];
          const length = e[3];
          const line = e[4];
          const row = e[11];
          sink.run(
            ChunkRun.deferred(
              seq0,
              length,
              { turn: e[5], step: e[6], index: e[7], kind: KINDS[e[8]]!, id: e[9] ?? undefined, name: e[10] ?? undefined },
              () => readRunBody(path, e),
            ),
          );
          if (row === 1) lines.row(seq0, length, line);
          else lines.events(seq0, length, line);
        }
      }
    };
    const check = new Utf8Check();
    check.feed(tail, p.lines + 1, true);
    let loaded: LoadedLog;
    try {
      loaded = loadWithPrefix(
        new StringLines(tail.toString('utf8'), check),
        { file: path, ...opts },
        { header: headerObj, count: p.events, line: p.lines, rows: p.rows, lines, feed },
      );
    } catch {
      // The prefix did not load as the index said (or the tail is damaged): the full load decides.
      return undefined;
    }
    return {
      ...loaded,
      resumeIndex: grown(index, loaded, tail, now, unchanged),
      fromIndex: true,
      prefixCheckedBy: unchanged ? 'stat' : 'digests',
    };
  } finally {
    closeSync(fd);
  }
}

/** The index of the file as just loaded through `index` (with `tail` after its prefix), or undefined when it may not have one. */
function grown(index: ResumeIndex, loaded: LoadedLog, tail: Buffer, now: FileStamp, unchanged: boolean): ResumeIndex | undefined {
  if (!indexable(loaded)) return undefined;
  const p = index.prefix;
  // The same bytes; a file touched or rewritten with them gets its stat refreshed (its digests were just checked).
  if (tail.length === 0) return unchanged ? index : { ...index, file: now };
  const starts = new Map<number, number>();
  lineStarts(tail, p.bytes, p.lines + 1, starts);
  const lastLine = loaded.lineOf(loaded.eventCount - 1)!;
  const bytes = starts.get(lastLine + 1);
  if (bytes === undefined || bytes !== p.bytes + tail.length) return undefined;
  const more = entriesFor(loaded, p.events, loaded.eventCount, (l) => starts.get(l)!);
  return {
    ...index,
    file: now,
    prefix: {
      bytes,
      digests: [...p.digests, [bytes, nodeCrypto().createHash('sha256').update(tail).digest('hex')]],
      events: loaded.eventCount,
      lines: lastLine,
      rows: loaded.rowCount,
      headerEnd: p.headerEnd,
    },
    entries: appendEntries(index.entries, more),
  };
}
