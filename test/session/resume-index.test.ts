/**
 * The resume index (session/codec/resume-index.ts) is a cache: a resume through it must give the
 * session a full load gives (events, derived messages, trace, surface, lines), the index grown
 * over an appended tail must equal one rebuilt from the whole file, and an index that does not
 * fit the file (changed bytes, another inode, a shorter file, a damaged or edited index) is not
 * used. Expected values come from full loads of the same bytes.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateWorkload, type Draft } from '../../bench/generate.js';
import {
  buildResumeIndex,
  encodeEvents,
  encodeHeaderLine,
  loadJsonl,
  loadJsonlIndexed,
  parseResumeIndex,
  sameStamp,
  serializeResumeIndex,
  Session,
  SessionError,
  type LoadedLog,
  type ResumeIndex,
  type SessionEvent,
} from '../../src/session/index.js';
import { tempDir } from '../cli/support/agent.js';
import { describeShared, sharedPath } from '../support/shared.js';

function sessionOf(drafts: readonly Draft[]): Session {
  let now = 0;
  const s = Session.create({ id: 'idx-session', header: { cwd: '/w', createdAt: 1 }, clock: () => now });
  const append = s.append as unknown as (type: string, data: unknown, o?: unknown) => SessionEvent;
  for (const d of drafts) {
    now = d.time;
    const o =
      d.surfaceOp === undefined
        ? undefined
        : d.sourceEventSeqs === undefined
          ? { surfaceOp: d.surfaceOp }
          : { surfaceOp: d.surfaceOp, sourceEventSeqs: d.sourceEventSeqs };
    append.call(s, d.type, d.data, o);
  }
  return s;
}

/** The parts of a loaded log a resume depends on, read in full (deferred runs are read here). */
function observe(l: LoadedLog) {
  const s = l.session;
  const lines: (number | undefined)[] = [];
  for (let seq = 0; seq < l.eventCount; seq++) lines.push(l.lineOf(seq));
  return {
    header: l.header,
    eventCount: l.eventCount,
    rowCount: l.rowCount,
    warnings: l.warnings,
    repaired: l.repaired,
    events: s.events,
    messages: s.deriveMessages().toArray(),
    trace: s.trace,
    surface: s.surface,
    requestHeader: s.requestHeader(),
    lines,
  };
}

/** Load options of both loads: one clock, so the end-seed markers they add are equal. */
const opts = (path: string) => ({ file: path, clock: () => 7, placeholders: 'warn' as const });
const full = (path: string): LoadedLog => loadJsonl(readFileSync(path), opts(path));

/** A workload split at a turn boundary: the first `turns` turns, then `more`. */
function workload(
  turns: number,
  more: number,
  shape: { deltas: number; reasoning: number; call: number },
): { head: SessionEvent[]; all: SessionEvent[] } {
  const drafts = generateWorkload({
    turns: turns + more,
    deltasPerAnswer: shape.deltas,
    reasoningDeltas: shape.reasoning,
    toolCallDeltas: shape.call,
    toolResultBytes: 64,
  });
  const s = sessionOf(drafts);
  const all = [...s.events];
  let cut = 0;
  let seen = 0;
  for (const e of all) {
    if (e.type === 'turn/end' && ++seen === turns) {
      cut = e.seq + 1;
      break;
    }
  }
  return { head: all.slice(0, cut), all };
}

function writeLog(path: string, events: readonly SessionEvent[], pack: boolean): void {
  const header = Session.create({ id: 'idx-session', header: { cwd: '/w', createdAt: 1 } }).header;
  writeFileSync(path, encodeHeaderLine(header) + encodeEvents(events, { pack }));
}

/** A two-turn log and its index. */
function smallIndexedLog(): { dir: string; path: string; index: ResumeIndex } {
  const dir = tempDir('dsh-idx-');
  const path = join(dir, 'session.jsonl');
  writeLog(path, workload(2, 0, { deltas: 6, reasoning: 3, call: 3 }).all, false);
  return { dir, path, index: buildResumeIndex(path, full(path))! };
}

describe('the resume index', () => {
  it('a resume through it equals a full load, and the index grown over the tail equals one rebuilt from the file (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 0, max: 2 }),
        fc.record({
          deltas: fc.integer({ min: 0, max: 8 }),
          reasoning: fc.integer({ min: 0, max: 5 }),
          call: fc.integer({ min: 0, max: 4 }),
        }),
        fc.boolean(),
        fc.boolean(),
        (turns, more, shape, packHead, packTail) => {
          const dir = tempDir('dsh-idx-');
          const path = join(dir, 'session.jsonl');
          const { head, all } = workload(turns, more, shape);
          writeLog(path, head, packHead);
          const first = full(path);
          const index = buildResumeIndex(path, first);
          expect(index).toBeDefined();
          // Nothing appended: the index is the file's, and the resume equals the full load.
          const same = loadJsonlIndexed(path, index!, opts(path));
          expect(same?.fromIndex).toBe(true);
          expect(observe(same!)).toEqual(observe(first));
          // Turns appended after the index was built: the prefix through the index, the tail scanned.
          const text = readFileSync(path, 'utf8') + encodeEvents(all.slice(head.length), { pack: packTail });
          writeFileSync(path, text);
          const whole = full(path);
          const resumed = loadJsonlIndexed(path, index!, opts(path));
          expect(resumed).toBeDefined();
          expect(observe(resumed!)).toEqual(observe(whole));
          // Grown: the entries and counts a rebuild gives, and one more digest, of the tail's bytes.
          const grown = resumed!.resumeIndex!;
          const rebuilt = buildResumeIndex(path, whole)!;
          expect(withoutProof(grown)).toEqual(withoutProof(rebuilt));
          expect(grown.file).toEqual(rebuilt.file);
          const bytes = readFileSync(path);
          const segments = [index!.prefix.bytes, bytes.length].map((end, i, all) => [end, sha256(bytes.subarray(i ? all[i - 1] : 0, end))]);
          expect(grown.prefix.digests).toEqual(all.length > head.length ? segments : segments.slice(0, 1));
        },
      ),
      { numRuns: 25 },
    );
  });

  it('the bench workload: resume through the index derives the messages of a full load, and holds its runs unread until read', () => {
    const dir = tempDir('dsh-idx-');
    const path = join(dir, 'session.jsonl');
    const { all } = workload(6, 0, { deltas: 60, reasoning: 10, call: 8 });
    writeLog(path, all, false);
    const whole = full(path);
    const index = buildResumeIndex(path, whole)!;
    const resumed = loadJsonlIndexed(path, index, opts(path))!;
    const deferred = [...resumed.session.records()].filter((r) => 'isDeferred' in r && (r as { isDeferred: boolean }).isDeferred).length;
    expect(deferred).toBe(index.entries.filter((e) => e.length === 12).length);
    expect(deferred).toBeGreaterThan(0);
    expect(resumed.session.deriveMessages().toArray()).toEqual(whole.session.deriveMessages().toArray());
    expect(resumed.session.events).toEqual(whole.session.events);
  });

  it('is not used when the file changed: a byte of a delta, another inode, a shorter file', () => {
    const { dir, path, index } = smallIndexedLog();
    const text = readFileSync(path, 'utf8');
    // The same size, one delta's letter changed: only the digest sees it.
    const at = text.indexOf('"text":" ') + 9;
    const edited = text.slice(0, at) + (text[at] === 'a' ? 'b' : 'a') + text.slice(at + 1);
    writeFileSync(path, edited);
    expect(loadJsonlIndexed(path, index, opts(path))).toBeUndefined();
    writeFileSync(path, text);
    expect(loadJsonlIndexed(path, index, opts(path))?.fromIndex).toBe(true);
    const copy = join(dir, 'copy.jsonl');
    copyFileSync(path, copy);
    expect(loadJsonlIndexed(copy, index, opts(copy))).toBeUndefined();
    writeFileSync(path, text.slice(0, text.length - 10));
    expect(loadJsonlIndexed(path, index, opts(path))).toBeUndefined();
  });

  it('with the stat it recorded the prefix is taken as indexed, unread; with another stat it is read and must match its digests', () => {
    const { path, index } = smallIndexedLog();
    const fast = loadJsonlIndexed(path, index, opts(path))!;
    expect(fast.prefixCheckedBy).toBe('stat');
    expect(observe(fast)).toEqual(observe(full(path)));
    // Digests that describe other bytes are not consulted while the stat is the recorded one...
    const wrongDigests = forged({ ...index, prefix: { ...index.prefix, digests: [[index.prefix.bytes, '0'.repeat(64)]] } })!;
    expect(loadJsonlIndexed(path, wrongDigests, opts(path))?.prefixCheckedBy).toBe('stat');
    // ...and are once the file was touched: the right ones pass, and the index is restamped.
    const later = new Date(Date.now() + 5_000);
    utimesSync(path, later, later);
    expect(loadJsonlIndexed(path, wrongDigests, opts(path))).toBeUndefined();
    const read = loadJsonlIndexed(path, index, opts(path))!;
    expect(read.prefixCheckedBy).toBe('digests');
    expect(read.resumeIndex!.file.mtimeNs).not.toBe(index.file.mtimeNs);
    expect(loadJsonlIndexed(path, read.resumeIndex!, opts(path))!.prefixCheckedBy).toBe('stat');
  });

  it('a same-size edit with its mtime set back is still seen: the ctime moved, so the digests are checked and refuse it', () => {
    const { path, index } = smallIndexedLog();
    const text = readFileSync(path, 'utf8');
    const { ctimeMs } = statSync(path);
    // The kernel stamps times with a coarse clock: let it tick past the recorded ctime first.
    while (Date.now() <= ctimeMs + 20) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    const at = text.indexOf('"text":" ') + 9;
    writeFileSync(path, text.slice(0, at) + (text[at] === 'a' ? 'b' : 'a') + text.slice(at + 1));
    // touch sets nanoseconds (Node's utimes goes through a double and cannot).
    const ns = index.file.mtimeNs;
    execFileSync('touch', ['-m', '-d', `@${ns.slice(0, -9)}.${ns.slice(-9)}`, path]);
    expect(String(statSync(path, { bigint: true }).mtimeNs)).toBe(index.file.mtimeNs);
    expect(loadJsonlIndexed(path, index, opts(path))).toBeUndefined();
  });

  it('a kept span that does not sit on whole lines is refused (STORAGE_CHANGED inside the load: the full load decides)', () => {
    const { path, index } = smallIndexedLog();
    const k = index.entries.findIndex((e, i) => e.length === 5 && e[3] > 1 && i + 1 < index.entries.length);
    const moved = JSON.parse(JSON.stringify(index)) as ResumeIndex;
    // Ends one byte short of its last newline, the next entry starting there (the entries still tile the prefix).
    (moved.entries[k] as number[])[1]! -= 1;
    (moved.entries[k + 1] as number[])[0]! -= 1;
    const bad = forged(moved);
    expect(bad).toBeDefined();
    expect(loadJsonlIndexed(path, bad!, opts(path))).toBeUndefined();
  });

  it('a damaged or edited index does not parse; a forged one (check recomputed) is refused by its lines or the run it misplaces', () => {
    const { path, index } = smallIndexedLog();
    const text = serializeResumeIndex(index).toString('utf8');
    expect(parseResumeIndex(text)).toEqual(index);
    expect(parseResumeIndex(text.slice(0, text.length / 2))).toBeUndefined();
    expect(parseResumeIndex('[]')).toBeUndefined();
    // One count edited, the check left as it was.
    const nl = text.indexOf('\n');
    const events = `"events":${index.prefix.events}`;
    const edited = `${text.slice(0, nl + 1)}${text.slice(nl + 1).replace(events, `"events":${index.prefix.events + 1}`)}`;
    expect(edited).not.toBe(text);
    expect(parseResumeIndex(edited)).toBeUndefined();
    // The same edit with the check recomputed: it parses, and its structure refuses it (the seqs do not add up).
    expect(forged({ ...index, prefix: { ...index.prefix, events: index.prefix.events + 1 } })).toBeUndefined();

    const doc = JSON.stringify(index);
    const reCheck = (i: ResumeIndex): ResumeIndex => forged(i)!;
    // A kept span moved onto the next line: its lines are not the events it names.
    const shifted = JSON.parse(doc) as ResumeIndex;
    const k = shifted.entries.findIndex((e) => e.length === 5);
    const run = shifted.entries.findIndex((e) => e.length === 12);
    expect(k).toBeGreaterThanOrEqual(0);
    expect(run).toBeGreaterThanOrEqual(0);
    const forgedRun = JSON.parse(doc) as ResumeIndex;
    (forgedRun.entries[run] as unknown[])[7] = ((forgedRun.entries[run] as number[])[7]! + 1) % 3;
    const placed = reCheck(forgedRun);
    expect(placed).toBeDefined();
    const loaded = loadJsonlIndexed(path, placed, opts(path))!;
    expect(loaded).toBeDefined();
    let error: unknown;
    try {
      void loaded.session.events;
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SessionError);
    expect((error as SessionError).code).toBe('STORAGE_CHANGED');

    const swapped = JSON.parse(doc) as ResumeIndex;
    const span = swapped.entries[k] as number[];
    const next = swapped.entries.find((e, i) => i > k && e.length === 5) as number[];
    [span[0], span[1], next[0], next[1]] = [next[0]!, next[1]!, span[0]!, span[1]!];
    const bad = forged(swapped);
    expect(bad === undefined || loadJsonlIndexed(path, bad, opts(path)) === undefined).toBe(true);
  });

  it('entries that leave lines of the prefix uncovered are refused: a resume by stat would never read them', () => {
    const { path, index } = smallIndexedLog();
    const lines = readFileSync(path, 'utf8').split('\n');
    lines.pop(); // after the last newline
    const whole = full(path);
    expect(whole.eventCount).toBe(lines.length - 1);
    const doc = JSON.stringify(index);
    // The last event's line left out of the last entry (a gap before the prefix's end), the counts made to agree.
    const dropLast = JSON.parse(doc) as ResumeIndex;
    const last = dropLast.entries[dropLast.entries.length - 1] as number[];
    expect(last.length === 5 && last[3]! > 1).toBe(true);
    last[1]! -= Buffer.byteLength(lines[lines.length - 1]!) + 1;
    last[3]! -= 1;
    dropLast.prefix.events -= 1;
    // The first entry starting a line late (a gap after the header), the seqs, lines and bytes of the rest as they were.
    const lateStart = JSON.parse(doc) as ResumeIndex;
    const first = lateStart.entries[0] as number[];
    expect(first.length === 5 && first[3]! > 1).toBe(true);
    first[0]! += Buffer.byteLength(lines[1]!) + 1;
    for (const bad of [dropLast, lateStart]) {
      const parsed = forged(bad);
      // Refused, or used only to give the full load's events (never fewer, never a crash repair of a closed turn).
      if (parsed !== undefined) {
        const l = loadJsonlIndexed(path, parsed, opts(path));
        if (l !== undefined) expect(observe(l)).toEqual(observe(whole));
      }
      expect(parsed).toBeUndefined();
    }
  });

  it('an inode number above 2^53 is kept exactly: the index parses, and stamps one apart are different', () => {
    // NTFS file ids through WSL, some FUSE and NFS servers: a Number would round it, and a safe-integer check refused it.
    const { index } = smallIndexedLog();
    const big = { ...index, file: { ...index.file, ino: '18446744073709551557' } };
    expect(parseResumeIndex(serializeResumeIndex(big))).toEqual(big);
    expect(sameStamp(big.file, { ...big.file, ino: '18446744073709551556' })).toBe(false);
    expect(sameStamp(big.file, { ...big.file })).toBe(true);
    // A number where the decimal string belongs (an index of the previous version) is not one of these.
    expect(forged({ ...index, file: { ...index.file, ino: Number(index.file.ino) as unknown as string } })).toBeUndefined();
  });

  it('a log with warnings, a torn tail or an open turn gets no index', () => {
    const dir = tempDir('dsh-idx-');
    const path = join(dir, 'session.jsonl');
    const { all } = workload(1, 0, { deltas: 4, reasoning: 0, call: 0 });
    writeLog(path, all.slice(0, all.length - 1), false); // the last turn/end cut off: crash repair
    expect(buildResumeIndex(path, full(path))).toBeUndefined();
    writeLog(path, all, false);
    writeFileSync(path, `${readFileSync(path, 'utf8')}{"type":"turn/st`);
    expect(buildResumeIndex(path, full(path))).toBeUndefined();
  });
});

describeShared('the resume index on real dsh logs', () => {
  it('every fixture that loads cleanly resumes through its index with the full load’s events and messages', () => {
    const root = sharedPath('fixtures', 'dsh');
    let indexed = 0;
    for (const name of readdirSync(root).filter((n) => n.endsWith('.jsonl'))) {
      const path = join(root, name);
      let whole: LoadedLog;
      try {
        whole = full(path);
      } catch {
        continue; // a fixture this build refuses (the loaders' tests cover it)
      }
      const index = buildResumeIndex(path, whole);
      if (index === undefined) continue;
      const resumed = loadJsonlIndexed(path, index, opts(path));
      expect(resumed, name).toBeDefined();
      expect(observe(resumed!), name).toEqual(observe(whole));
      indexed++;
    }
    expect(indexed).toBeGreaterThan(10);
  });
});

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** An index without its digests, to compare what it says of the file. */
function withoutProof(i: ResumeIndex) {
  const { digests: _d, ...prefix } = i.prefix;
  return { ...i, prefix };
}

/**
 * `i` written as a forger would, the check recomputed by hand from the documented format (a
 * first line with format, version and the SHA-256 of the second, the rest as JSON), then parsed.
 */
function forged(i: ResumeIndex): ResumeIndex | undefined {
  const body = JSON.stringify({ file: i.file, prefix: i.prefix, entries: i.entries });
  const check = createHash('sha256').update(body).digest('hex');
  return parseResumeIndex(`${JSON.stringify({ format: i.format, version: i.version, check })}\n${body}`);
}
