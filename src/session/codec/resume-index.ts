/**
 * The resume index: a cache of where things are in a log file, so a resume reads what the
 * model-visible history, the trace and the open tail need and leaves the bulk of the file (the
 * streamed deltas, `assistant/chunk`, hundreds per answer) on disk until something reads it.
 *
 * It is never the truth. It is built from a full load of the file (every line parsed and
 * validated), records a SHA-256 digest of the bytes it describes (the indexed prefix) and the
 * file's inode, and a resume uses it only when the file still holds those bytes: a different
 * inode, a file shorter than the prefix or a digest mismatch, or an index that does not parse,
 * whose own digest or structure is off, or whose lines do not hold what it says, and the caller
 * loads the whole file as before. Bytes after the prefix (turns appended since the index was
 * built) are loaded as a full load reads them; the index grows to cover them.
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
import { createHash, type Hash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { ChunkRun, type RunBody, type RunKind } from '../chunk-runs.js';
import { SessionError } from '../errors.js';
import { isChunkRun, type SeedSink } from '../session.js';
import type { SessionEvent } from '../events.js';
import { LineMap, scanHeader, StringLines } from './jsonl.js';
import { Utf8Check } from './file-lines.js';
import { checkRow, isRowTag } from './rows.js';
import { loadWithPrefix, type LoadedLog, type LoadOptions } from './load.js';

export const RESUME_INDEX_FORMAT = 'dsh-resume-index';
export const RESUME_INDEX_VERSION = 1;

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

export interface ResumeIndex {
  format: typeof RESUME_INDEX_FORMAT;
  version: typeof RESUME_INDEX_VERSION;
  /** The log file when the index was built (its inode must still match). */
  file: { ino: number; size: number; mtimeMs: number };
  /** The bytes described: `[0, bytes)`, their SHA-256, events, lines and rows in them, where the header line ends. */
  prefix: { bytes: number; digest: string; events: number; lines: number; rows: number; headerEnd: number };
  entries: IndexEntry[];
  /** SHA-256 of the rest of the document, so a damaged or hand-edited index is not used. */
  check: string;
}

/** A loaded log with what an index of it needs: the file's line starts and the prefix digest so far. */
export interface IndexedLoad extends LoadedLog {
  /** Built on this load (full, or the old index plus the tail): the index of the file as loaded, or undefined when it may not have one. */
  resumeIndex: ResumeIndex | undefined;
  /** Was the prefix read through an index (rather than line by line)? */
  fromIndex: boolean;
}

function selfCheck(doc: Omit<ResumeIndex, 'check'>): string {
  return createHash('sha256')
    .update(JSON.stringify([doc.format, doc.version, doc.file, doc.prefix, doc.entries]))
    .digest('hex');
}

/** Is `v` a resume index of this version, whole and unedited? (Its fit to a file is checked on load.) */
export function parseResumeIndex(text: string): ResumeIndex | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const d = v as ResumeIndex;
  if (d.format !== RESUME_INDEX_FORMAT || d.version !== RESUME_INDEX_VERSION || !Array.isArray(d.entries)) return undefined;
  if (typeof d.check !== 'string' || typeof d.prefix !== 'object' || d.prefix === null || typeof d.file !== 'object' || d.file === null)
    return undefined;
  if (selfCheck(d) !== d.check) return undefined;
  return structureOk(d) ? d : undefined;
}

const int = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;

/** Entries in file order, seqs contiguous from 0, ranges inside the prefix and after the header. */
function structureOk(d: ResumeIndex): boolean {
  const p = d.prefix;
  if (![p.bytes, p.events, p.lines, p.rows, p.headerEnd, d.file.ino, d.file.size].every(int) || typeof p.digest !== 'string') return false;
  let seq = 0;
  let at = p.headerEnd;
  let line = 1;
  for (const e of d.entries) {
    if (!Array.isArray(e) || (e.length !== 5 && e.length !== 12)) return false;
    const [start, end, seq0, n, l] = e;
    if (![start, end, seq0, n, l].every(int) || start < at || end <= start || end > p.bytes || seq0 !== seq || n < 1 || l <= line)
      return false;
    if (e.length === 12) {
      const [, , , , , turn, step, index, kind, id, name, row] = e;
      if (![turn, step, index].every(int) || !(kind === 0 || kind === 1 || kind === 2) || (row !== 0 && row !== 1)) return false;
      if (!(id === null || typeof id === 'string') || !(name === null || typeof name === 'string')) return false;
      line = l + (row === 1 ? 0 : n - 1);
    } else line = l + n - 1;
    seq += n;
    at = end;
  }
  return seq === p.events && line <= p.lines;
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

function finish(doc: Omit<ResumeIndex, 'check'>): ResumeIndex {
  return { ...doc, check: selfCheck(doc) };
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
 * Reads the file once more: line starts and the digest of the prefix.
 */
export function buildResumeIndex(path: string, loaded: LoadedLog): ResumeIndex | undefined {
  if (!indexable(loaded)) return undefined;
  const fd = openSync(path, 'r');
  try {
    const st = fstatSync(fd);
    const lastLine = loaded.lineOf(loaded.eventCount - 1)!;
    // starts[l]: the byte offset where 1-based line l starts.
    const starts: number[] = [0, 0];
    const hash = createHash('sha256');
    let line = 1;
    let bytes = -1;
    readRange(fd, 0, st.size, (chunk, at) => {
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
    const headerEnd = starts[2]!;
    const lineStart = (l: number): number => starts[l]!;
    const entries = entriesFor(loaded, 0, loaded.eventCount, lineStart);
    return finish({
      format: RESUME_INDEX_FORMAT,
      version: RESUME_INDEX_VERSION,
      file: { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs },
      prefix: { bytes, digest: hash.digest('hex'), events: loaded.eventCount, lines: lastLine, rows: loaded.rowCount, headerEnd },
      entries,
    });
  } finally {
    closeSync(fd);
  }
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

/**
 * Load `path` through `index`: the prefix's kept lines parsed and validated, its runs deferred,
 * the rest of the file (the tail) scanned and loaded as a full load does, and the index grown
 * over the tail. Undefined when the index does not fit the file (the caller loads it whole);
 * errors of the tail are the full load's errors.
 */
export function loadJsonlIndexed(path: string, index: ResumeIndex, opts: LoadOptions = {}): IndexedLoad | undefined {
  const fd = openSync(path, 'r');
  let headerText: string;
  const kept: Buffer[] = [];
  let hash: Hash;
  let tail: Buffer;
  let now: { size: number; mtimeMs: number };
  const p = index.prefix;
  try {
    const st = fstatSync(fd);
    now = { size: st.size, mtimeMs: st.mtimeMs };
    if (st.ino !== index.file.ino || st.size < p.bytes) return undefined;
    hash = createHash('sha256');
    const spans = index.entries.filter((e): e is KeptEntry => e.length === 5);
    const parts = spans.map((e) => Buffer.allocUnsafe(e[1] - e[0]));
    const header = Buffer.allocUnsafe(p.headerEnd);
    let next = 0;
    readRange(fd, 0, p.bytes, (chunk, at) => {
      hash.update(chunk);
      const chunkEnd = at + chunk.length;
      if (at < p.headerEnd) chunk.copy(header, at, 0, Math.min(chunk.length, p.headerEnd - at));
      // Copy the kept spans this chunk overlaps (a span may straddle chunks).
      for (let i = next; i < spans.length; i++) {
        const [s, e] = spans[i]!;
        if (s >= chunkEnd) break;
        const from = Math.max(s, at);
        const to = Math.min(e, chunkEnd);
        if (to > from) chunk.copy(parts[i]!, from - s, from - at, to - at);
        if (e <= chunkEnd) next = i + 1;
      }
    });
    const prefixHash = hash.copy();
    if (prefixHash.digest('hex') !== p.digest) return undefined;
    tail = Buffer.allocUnsafe(st.size - p.bytes);
    let got = 0;
    while (got < tail.length) {
      const n = readSync(fd, tail, got, tail.length - got, p.bytes + got);
      if (n === 0) break;
      got += n;
    }
    tail = tail.subarray(0, got);
    hash.update(tail);
    headerText = header.toString('utf8');
    for (const b of parts) kept.push(b);
  } finally {
    closeSync(fd);
  }

  const headerLine = new StringLines(headerText);
  let headerObj: Record<string, unknown>;
  try {
    headerObj = scanHeader(headerLine, path);
  } catch {
    return undefined;
  }
  const lines = new LineMap();
  const feed = (sink: SeedSink): void => {
    let k = 0;
    for (const e of index.entries) {
      if (e.length === 5) {
        const text = kept[k++]!.toString('utf8');
        let pos = 0;
        for (let i = 0; i < e[3]; i++) {
          const nl = text.indexOf('\n', pos);
          const one = text.slice(pos, nl < 0 ? text.length : nl);
          pos = nl + 1;
          sink.parsed(JSON.parse(one.endsWith('\r') ? one.slice(0, -1) : one) as Record<string, unknown>);
        }
        lines.events(e[2], e[3], e[4]);
      } else {
        const [, , seq0, length, line, turn, step, idx, kind, id, name, row] = e;
        sink.run(
          ChunkRun.deferred(
            seq0,
            length,
            { turn, step, index: idx, kind: KINDS[kind]!, id: id ?? undefined, name: name ?? undefined },
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
  let resumeIndex: ResumeIndex | undefined;
  if (indexable(loaded)) {
    const starts = new Map<number, number>();
    lineStarts(tail, p.bytes, p.lines + 1, starts);
    const lastLine = loaded.lineOf(loaded.eventCount - 1)!;
    const bytes = starts.get(lastLine + 1);
    if (tail.length === 0) {
      // The same bytes; a file rewritten with them (or touched) gets its stat refreshed.
      const same = index.file.size === now.size && index.file.mtimeMs === now.mtimeMs;
      const { check: _check, ...rest } = index;
      resumeIndex = same ? index : finish({ ...rest, file: { ino: index.file.ino, ...now } });
    } else if (bytes !== undefined && bytes === p.bytes + tail.length) {
      const more = entriesFor(loaded, p.events, loaded.eventCount, (l) => starts.get(l)!);
      resumeIndex = finish({
        format: RESUME_INDEX_FORMAT,
        version: RESUME_INDEX_VERSION,
        file: { ino: index.file.ino, size: now.size, mtimeMs: now.mtimeMs },
        prefix: {
          bytes,
          digest: hash.digest('hex'),
          events: loaded.eventCount,
          lines: lastLine,
          rows: loaded.rowCount,
          headerEnd: p.headerEnd,
        },
        entries: appendEntries(index.entries, more),
      });
    }
  }
  return { ...loaded, resumeIndex, fromIndex: true };
}
