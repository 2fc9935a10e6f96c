/**
 * The resume index (session/codec/resume-index.ts) is a cache: a resume through it must give the
 * session a full load gives (events, derived messages, trace, surface, lines), the index grown
 * over an appended tail must equal one rebuilt from the whole file, and an index that does not
 * fit the file (changed bytes, another inode, a shorter file, a damaged or edited index) is not
 * used. Expected values come from full loads of the same bytes.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
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
          expect(resumed!.resumeIndex).toEqual(buildResumeIndex(path, whole));
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

  it('a damaged or edited index does not parse; a forged one (check recomputed) is refused by its lines or the run it misplaces', () => {
    const { path, index } = smallIndexedLog();
    const doc = JSON.stringify(index);
    expect(parseResumeIndex(doc)).toEqual(index);
    expect(parseResumeIndex(doc.slice(0, doc.length / 2))).toBeUndefined();
    expect(parseResumeIndex('[]')).toBeUndefined();
    const edited = JSON.parse(doc) as ResumeIndex;
    edited.prefix.events += 1;
    expect(parseResumeIndex(JSON.stringify(edited))).toBeUndefined();

    const reCheck = (i: ResumeIndex): ResumeIndex => {
      const { check: _c, ...rest } = i;
      const again = buildWithCheck(rest);
      return parseResumeIndex(JSON.stringify(again))!;
    };
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
    const bad = parseResumeIndex(JSON.stringify(buildWithCheck((({ check: _c, ...r }) => r)(swapped))));
    expect(bad === undefined || loadJsonlIndexed(path, bad, opts(path)) === undefined).toBe(true);
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

/** The index's self-check, recomputed as a forger would (the format is documented in resume-index.ts). */
function buildWithCheck(rest: Omit<ResumeIndex, 'check'>): ResumeIndex {
  const check = createHash('sha256')
    .update(JSON.stringify([rest.format, rest.version, rest.file, rest.prefix, rest.entries]))
    .digest('hex');
  return { ...rest, check };
}
