/**
 * The listing cache (src/store/listing-cache.ts): a memo of what a listing read from each log,
 * reused only while the log and its directory are unchanged, and never trusted otherwise. Each
 * test compares a cached listing with what the logs themselves say (a listing with the cache
 * file removed, and the summaries recomputed from the files by the test's own summarizer).
 */
import { appendFileSync, existsSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LISTING_CACHE_FILE, SessionStore, type ListingSummarizer, type SessionInfo } from '../../src/store/index.js';
import type { JsonValue } from '../../src/model/json.js';
import { appendTurn, fixedClock } from './support/events.js';
import { tempDir } from './support/tmp.js';

/** Counts calls; the summary is the log's line count, read from the file. */
function lineCounter(): ListingSummarizer<JsonValue> & { calls: string[] } {
  const calls: string[] = [];
  return {
    key: 'test/line-count/1',
    calls,
    summarize: async ({ path }) => {
      calls.push(path);
      return { lines: readFileSync(path, 'utf8').split('\n').length - 1 };
    },
    check: (v): v is JsonValue => typeof v === 'object' && v !== null && typeof (v as { lines?: unknown }).lines === 'number',
  };
}

async function populate(root: string, n: number): Promise<string[]> {
  const st = new SessionStore({ root, clock: fixedClock() });
  const paths: string[] = [];
  for (let i = 0; i < n; i++) {
    const s = await st.create({ cwd: `/work/p${i % 2}`, id: `s${i}` });
    for (let t = 0; t <= i % 3; t++) appendTurn(s.session);
    paths.push(s.path);
  }
  await st.close();
  return paths;
}

/** id → what a listing says, in listing order. */
const view = (sessions: readonly SessionInfo[]): unknown[] =>
  sessions.map((s) => ({ id: s.id, header: s.header, size: s.size, mtimeMs: s.mtimeMs, summary: s.summary, lockedBy: s.lockedBy }));

/** The listing with no cache file, summaries computed from the files. */
async function truth(root: string): Promise<unknown[]> {
  rmSync(join(root, LISTING_CACHE_FILE), { force: true });
  return view((await new SessionStore({ root }).list(lineCounter())).sessions);
}

describe('the listing cache', () => {
  it('a second listing reads no log again, and lists what the logs say', async () => {
    const root = tempDir();
    await populate(root, 6);
    const first = lineCounter();
    const a = await new SessionStore({ root }).list(first);
    expect(first.calls).toHaveLength(6);
    expect(existsSync(join(root, LISTING_CACHE_FILE))).toBe(true);
    const second = lineCounter();
    const b = await new SessionStore({ root }).list(second);
    expect(second.calls).toEqual([]);
    expect(view(b.sessions)).toEqual(view(a.sessions));
    expect(view(b.sessions)).toEqual(await truth(root));
  });

  it('an appended log is read again; the others are not', async () => {
    const root = tempDir();
    const paths = await populate(root, 4);
    await new SessionStore({ root }).list(lineCounter());
    appendFileSync(paths[2]!, `${JSON.stringify({ type: 'turn/start', seq: 99, time: 1, data: { turn: 99 } })}\n`);
    const c = lineCounter();
    const listed = view((await new SessionStore({ root }).list(c)).sessions);
    expect(c.calls).toEqual([paths[2]]);
    expect(listed).toEqual(await truth(root));
  });

  it('a log rewritten to the same size with its mtime set back is read again (its ctime moved)', async () => {
    const root = tempDir();
    const paths = await populate(root, 2);
    await new SessionStore({ root }).list(lineCounter());
    const p = paths[0]!;
    const before = statSync(p);
    const text = readFileSync(p, 'utf8');
    // Same bytes count, one more line: a summary that changes while size and mtime do not.
    const i = text.lastIndexOf('"turn"');
    writeFileSync(p, `${text.slice(0, i)}${text.slice(i)}`.replace(/\n$/, '').replace(/ /, '\n') + '\n');
    expect(statSync(p).size).toBe(before.size);
    utimesSync(p, before.atime, before.mtime);
    await new Promise((r) => setTimeout(r, 5));
    const c = lineCounter();
    const listed = view((await new SessionStore({ root }).list(c)).sessions);
    expect(c.calls).toContain(p);
    expect(listed).toEqual(await truth(root));
  });

  it('a corrupt, truncated, edited or foreign cache file is ignored whole and rebuilt', async () => {
    const root = tempDir();
    await populate(root, 3);
    await new SessionStore({ root }).list(lineCounter());
    const file = join(root, LISTING_CACHE_FILE);
    const good = readFileSync(file, 'utf8');
    const doc = JSON.parse(good) as {
      entries: Record<string, { summary: { lines: number }; header: { id: string } }>;
      root: string;
      version: number;
    };
    const edited = structuredClone(doc);
    for (const e of Object.values(edited.entries)) e.summary.lines = 12345;
    const damaged = [
      'not json at all',
      good.slice(0, good.length >> 1),
      JSON.stringify(edited), // digest no longer matches
      JSON.stringify({ ...doc, root: '/elsewhere' }),
      JSON.stringify({ ...doc, version: 99 }),
      '',
    ];
    for (const text of damaged) {
      writeFileSync(file, text);
      const c = lineCounter();
      const listed = view((await new SessionStore({ root }).list(c)).sessions);
      expect(c.calls, text.slice(0, 40)).toHaveLength(3);
      expect(listed).toEqual(await truth(root));
      // Rebuilt: the next listing uses it again.
      const again = lineCounter();
      await new SessionStore({ root }).list(again);
      expect(again.calls).toEqual([]);
    }
  });

  it('an entry whose header no longer names its file is read again, even under a matching digest', async () => {
    const root = tempDir();
    await populate(root, 2);
    await new SessionStore({ root }).list(lineCounter());
    const file = join(root, LISTING_CACHE_FILE);
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { entries: Record<string, { header: { id: string } }>; digest: string };
    for (const e of Object.values(doc.entries)) e.header.id = 'someone-else';
    const { createHash } = await import('node:crypto');
    doc.digest = createHash('sha256').update(JSON.stringify(doc.entries)).digest('hex');
    writeFileSync(file, JSON.stringify(doc));
    const c = lineCounter();
    const listed = view((await new SessionStore({ root }).list(c)).sessions);
    expect(c.calls).toHaveLength(2);
    expect(listed).toEqual(await truth(root));
  });

  it('a session opened for writing shows its lock holder; a deleted session leaves the listing', async () => {
    const root = tempDir();
    const paths = await populate(root, 3);
    await new SessionStore({ root }).list(lineCounter());
    const st = new SessionStore({ root, clock: fixedClock() });
    const open = await st.open('s1');
    const listed = (await new SessionStore({ root }).list(lineCounter())).sessions;
    expect(listed.find((s) => s.id === 's1')?.lockedBy?.pid).toBe(process.pid);
    await st.close();
    rmSync(join(paths[0]!, '..'), { recursive: true });
    const after = (await new SessionStore({ root }).list(lineCounter())).sessions;
    expect(after.map((s) => s.id).sort()).toEqual(['s1', 's2']);
    expect(after.find((s) => s.id === 's1')?.lockedBy).toBeUndefined();
    expect(view(after)).toEqual(await truth(root));
    expect(open.session.id).toBe('s1');
  });

  it('a listing without a summarizer keeps the summaries; nothing stored writes nothing', async () => {
    const root = tempDir();
    await populate(root, 2);
    await new SessionStore({ root }).list(lineCounter());
    await new SessionStore({ root }).list();
    const c = lineCounter();
    await new SessionStore({ root }).list(c);
    expect(c.calls).toEqual([]);
    const none = join(tempDir(), 'none');
    expect(await new SessionStore({ root: none }).list(lineCounter())).toEqual({ sessions: [], problems: [] });
    expect(existsSync(none)).toBe(false);
  });
});
