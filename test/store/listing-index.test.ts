/**
 * The listing index (src/store/listing-index.ts, listing-journal.ts): a listing that trusts what
 * the store's writers did not announce. Writers are real processes (test/store/fixtures/child.ts)
 * where the point is another process; every expected turn count comes from what the writer
 * reported (or the test appended), never from a listing.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { SessionStore, logPath, projectKey, type Listing, type ListingSummarizer } from '../../src/store/index.js';
import type { JsonValue } from '../../src/model/json.js';
import { appendTurn, fixedClock } from './support/events.js';
import { Child } from './support/proc.js';
import { tempDir } from './support/tmp.js';

const INDEX = 'listing-index';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The summary: how many turns the log holds, read from the whole file (and how many reads were made). */
function turnCounter(): ListingSummarizer<JsonValue> & { reads: string[] } {
  const reads: string[] = [];
  return {
    key: 'test/turn-count/1',
    reads,
    summarize: async ({ path }) => {
      reads.push(path);
      return {
        turns: readFileSync(path, 'utf8')
          .split('\n')
          .filter((l) => l.startsWith('{"type":"turn/start"')).length,
      };
    },
    check: (v): v is JsonValue => typeof v === 'object' && v !== null && typeof (v as { turns?: unknown }).turns === 'number',
  };
}

async function list(root: string, opts: { rescan?: boolean } = {}, summarizer = turnCounter()): Promise<Listing> {
  return new SessionStore({ root, listingIndex: true }).list(summarizer, opts);
}

/** id → turns, as a listing says. */
function turns(l: Listing): Record<string, number> {
  return Object.fromEntries(l.sessions.map((s) => [s.id, (s.summary as { turns: number }).turns]));
}

async function runChild(args: string[], until: string): Promise<string> {
  const c = new Child(args);
  const line = await c.waitFor(until);
  await c.exited;
  return line;
}

/** A log written by hand as another program would (the real dsh): no store, no journal. */
function handLog(root: string, cwd: string, id: string, turnCount: number): string {
  const path = logPath(root, cwd, id);
  const lines = [JSON.stringify({ type: 'session', version: 0, id, createdAt: 1_000 + turnCount, cwd })];
  for (let t = 1; t <= turnCount; t++) lines.push(JSON.stringify({ type: 'turn/start', seq: t - 1, time: 1, data: { turn: t } }));
  const script =
    `const f=require('fs');f.mkdirSync(${JSON.stringify(join(path, '..'))},{recursive:true});` +
    `f.writeFileSync(${JSON.stringify(path)},${JSON.stringify(`${lines.join('\n')}\n`)})`;
  expect(spawnSync(process.execPath, ['-e', script]).status).toBe(0);
  return path;
}

describe('the listing index', () => {
  it('a session appended by another process through the store shows its new turn count in the next listing', async () => {
    const root = tempDir();
    expect(await runChild(['turns', root, 'a', '1'], 'done')).toBe('done 1');
    expect(await runChild(['turns', root, 'b', '2'], 'done')).toBe('done 2');
    expect(turns(await list(root))).toEqual({ a: 1, b: 2 });
    expect(existsSync(join(root, INDEX))).toBe(true);
    const quiet = turnCounter();
    expect(turns(await list(root, {}, quiet))).toEqual({ a: 1, b: 2 });
    expect(quiet.reads, 'an unchanged store: no log read').toEqual([]);
    expect(await runChild(['turns', root, 'a', '2'], 'done')).toBe('done 3');
    const after = turnCounter();
    expect(turns(await list(root, {}, after))).toEqual({ a: 3, b: 2 });
    expect(after.reads, 'only the announced log is read').toEqual([logPath(root, '/w', 'a')]);
  });

  it('a writer killed with SIGKILL leaves its session re-checked: the row says what the log holds, and no holder', async () => {
    const root = tempDir();
    const child = new Child(['hold', root, 'k', '1']);
    try {
      expect(await child.waitFor('held')).toBe('held 1');
      const open = await list(root);
      expect(turns(open)).toEqual({ k: 1 });
      expect(open.sessions[0]!.lockedBy?.pid).toBe(child.pid);
      child.send('turn');
      expect(await child.waitFor('turned 2')).toBe('turned 2');
      expect(turns(await list(root))).toEqual({ k: 2 }); // still held: checked again
      child.send('turn');
      expect(await child.waitFor('turned 3')).toBe('turned 3');
    } finally {
      await child.kill();
    }
    const dead = await list(root);
    expect(turns(dead)).toEqual({ k: 3 });
    expect(dead.sessions[0]!.lockedBy).toBeUndefined();
    const settled = turnCounter();
    expect(turns(await list(root, {}, settled))).toEqual({ k: 3 });
    expect(settled.reads, 'after the check that found the holder dead, the row is trusted').toEqual([]);
  });

  it('a session directory made by another program appears, a removed one disappears (the project directory is read again)', async () => {
    const root = tempDir();
    const st = new SessionStore({ root, clock: fixedClock() });
    for (const id of ['p1', 'p2']) {
      const s = await st.create({ cwd: '/w', id });
      appendTurn(s.session);
    }
    await st.close();
    expect(turns(await list(root))).toEqual({ p1: 1, p2: 1 });
    // Past the window in which a directory's mtime might not move: the stamp is trusted from here.
    await sleep(2100);
    expect(turns(await list(root))).toEqual({ p1: 1, p2: 1 });
    const meta = JSON.parse(readFileSync(join(root, INDEX), 'utf8').split('\n')[0]!) as { stamps: [string, number | null][] };
    expect(meta.stamps.find((p) => p[0] === projectKey('/w'))![1], 'the project directory is stamped').not.toBeNull();
    // A snapshot without p2's row whose project stamp still holds: only the journal can bring p2 back.
    const [metaLine, bodyLine] = readFileSync(join(root, INDEX), 'utf8').split('\n') as [string, string];
    const projects = JSON.parse(bodyLine) as [string, [string, ...unknown[]][]][];
    for (const p of projects) p[1] = p[1].filter((r) => r[0] !== 'p2');
    const lessBody = JSON.stringify(projects);
    const digest = createHash('sha256').update(lessBody).digest('hex');
    writeFileSync(join(root, INDEX), `${JSON.stringify({ ...(JSON.parse(metaLine) as object), digest })}\n${lessBody}\n`);
    expect(turns(await list(root)), 'a row missing, nothing announced: not seen (the snapshot is trusted)').toEqual({ p1: 1 });
    const reopened = await new SessionStore({ root, clock: fixedClock() }).open('p2');
    appendTurn(reopened.session);
    await reopened.close();
    expect(turns(await list(root))).toEqual({ p1: 1, p2: 2 });
    handLog(root, '/w', 'foreign', 4);
    expect(turns(await list(root))).toEqual({ p1: 1, p2: 2, foreign: 4 });
    expect(spawnSync('rm', ['-rf', join(logPath(root, '/w', 'p1'), '..')]).status).toBe(0);
    expect(turns(await list(root))).toEqual({ p2: 2, foreign: 4 });
  });

  it('a torn journal line is ignored, and the line a writer appends after it is read', async () => {
    const root = tempDir();
    expect(await runChild(['turns', root, 'a', '1'], 'done')).toBe('done 1');
    expect(await runChild(['turns', root, 'b', '1'], 'done')).toBe('done 1');
    expect(turns(await list(root))).toEqual({ a: 1, b: 1 });
    const journal = readdirSync(root).find((n) => n.startsWith('listing-journal.'))!;
    // A writer killed inside its append: half a line, no newline; then garbage of every kind.
    appendFileSync(join(root, journal), '\n["w","--w--/b');
    expect(await runChild(['turns', root, 'a', '1'], 'done')).toBe('done 2');
    appendFileSync(join(root, journal), '\n{not json}\n["w"]\n["w","../../etc"]\n["x","--w--/a"]\n');
    expect(turns(await list(root))).toEqual({ a: 2, b: 1 });
    expect(turns(await list(root))).toEqual({ a: 2, b: 1 });
  });

  it('a damaged, foreign or other-version snapshot is not trusted: the listing rebuilds it from the logs', async () => {
    const root = tempDir();
    const st = new SessionStore({ root, clock: fixedClock() });
    const want: Record<string, number> = {};
    for (let i = 0; i < 4; i++) {
      const s = await st.create({ cwd: `/w/${i % 2}`, id: `d${i}` });
      for (let t = 0; t < i; t++) appendTurn(s.session);
      want[`d${i}`] = i;
    }
    await st.close();
    expect(turns(await list(root))).toEqual(want);
    // Each damage is made from the snapshot as it is then (its journal number must still be current).
    const damages: ((good: string, metaLine: string, bodyLine: string) => string)[] = [
      () => '',
      () => 'not an index',
      (good) => good.slice(0, good.length >> 1),
      (_, m, b) => `${m}\n${b.replaceAll('"turns":3', '"turns":99')}\n`, // a lie that would show if trusted: the digest says no
      (_, m, b) => `${JSON.stringify({ ...(JSON.parse(m) as object), version: 99 })}\n${b}\n`,
      (_, m, b) => `${JSON.stringify({ ...(JSON.parse(m) as object), root: '/elsewhere' })}\n${b}\n`,
      (_, m, b) => `${m}\n${b}`, // no final newline: cut short
      (_, m, b) => `${JSON.stringify({ ...(JSON.parse(m) as { stamps: unknown[] }), stamps: [] })}\n${b}\n`, // rows of unstamped projects
      (_, m, b) => {
        const meta = JSON.parse(m) as { stamps: [string, ...unknown[]][] };
        return `${JSON.stringify({ ...meta, stamps: meta.stamps.map(([, ...rest]) => ['--else--', ...rest]) })}\n${b}\n`;
      }, // stamps naming other projects than the rows
    ];
    for (const damage of damages) {
      const good = readFileSync(join(root, INDEX), 'utf8');
      const [metaLine, bodyLine] = good.split('\n') as [string, string];
      expect(bodyLine).toContain('"turns":3');
      const text = damage(good, metaLine, bodyLine);
      writeFileSync(join(root, INDEX), text);
      expect(turns(await list(root)), JSON.stringify(text.slice(0, 60))).toEqual(want);
      expect(readFileSync(join(root, INDEX), 'utf8'), 'rewritten').not.toBe(text);
      expect(turns(await list(root))).toEqual(want);
    }
  });

  it('a hand edit is seen by --rescan, not by the fast path (what docs/store.md says it does not see)', async () => {
    const root = tempDir();
    const st = new SessionStore({ root, clock: fixedClock() });
    const s = await st.create({ cwd: '/w', id: 'h' });
    appendTurn(s.session);
    await st.close();
    expect(turns(await list(root))).toEqual({ h: 1 });
    appendFileSync(logPath(root, '/w', 'h'), `${JSON.stringify({ type: 'turn/start', seq: 99, time: 1, data: { turn: 2 } })}\n`);
    expect(turns(await list(root)), 'the fast path trusts the row').toEqual({ h: 1 });
    expect(turns(await new SessionStore({ root }).list(turnCounter())), 'a listing without the index stats every log').toEqual({ h: 2 });
    expect(turns(await list(root, { rescan: true }))).toEqual({ h: 2 });
    expect(turns(await list(root)), 'the rescan rebuilt the index').toEqual({ h: 2 });
  });

  it('two listings racing with a writer process lose nothing: afterwards a listing says what the writer reported', async () => {
    const root = tempDir();
    mkdirSync(root, { recursive: true });
    expect(await list(root)).toMatchObject({ sessions: [], problems: [] }); // the index exists before the writer starts
    const writer = new Child(['write-loop', root, '5']);
    const lister = new Child(['list-loop', root]);
    await Promise.all([writer.waitFor('ready'), lister.waitFor('ready')]);
    let mine = 0;
    while (writer.lines.filter((l) => l.startsWith('turns ')).length < 40) {
      await list(root);
      mine++;
    }
    await Promise.all([writer.finish(), lister.finish()]);
    const reported: Record<string, number> = {};
    for (const l of writer.lines) {
      const [tag, id, n] = l.split(' ');
      if (tag === 'turns') reported[id!] = Number(n);
    }
    expect(mine).toBeGreaterThan(0);
    expect(lister.lines.some((l) => l.startsWith('listed '))).toBe(true);
    expect(turns(await list(root))).toEqual(reported);
    expect(turns(await list(root, { rescan: true }))).toEqual(reported);
  });

  it('property: listings interleaved with the store writing (in one process, at every await) lose nothing', async () => {
    type Op = { kind: 'create' } | { kind: 'turn'; pick: number } | { kind: 'list' } | { kind: 'race'; pick: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.constant<Op>({ kind: 'create' }),
      fc.nat(50).map<Op>((pick) => ({ kind: 'turn', pick })),
      fc.constant<Op>({ kind: 'list' }),
      fc.nat(50).map<Op>((pick) => ({ kind: 'race', pick })),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 10 }), async (ops) => {
        const root = tempDir();
        const model: Record<string, number> = {};
        const st = new SessionStore({ root, clock: fixedClock() });
        const ids = (): string[] => Object.keys(model);
        const turn = async (pick: number): Promise<void> => {
          if (ids().length === 0) return;
          const id = ids()[pick % ids().length]!;
          const s = await st.open(id);
          appendTurn(s.session);
          model[id] = model[id]! + 1;
          await s.close();
        };
        for (const o of ops) {
          if (o.kind === 'create') {
            const id = `s${ids().length}`;
            await (await st.create({ cwd: `/w/${ids().length % 3}`, id })).close();
            model[id] = 0;
          } else if (o.kind === 'turn') await turn(o.pick);
          else if (o.kind === 'list') expect(turns(await list(root))).toEqual(model);
          else await Promise.all([list(root), turn(o.pick), list(root)]);
        }
        expect(turns(await list(root))).toEqual(model);
      }),
      { numRuns: 12 },
    );
  });

  it('a root without an index gets no journal from writers; the first indexed listing starts both', async () => {
    const root = tempDir();
    const st = new SessionStore({ root, clock: fixedClock() });
    const s = await st.create({ cwd: '/w', id: 'n' });
    appendTurn(s.session);
    await st.close();
    expect(readdirSync(root).filter((n) => n.startsWith('listing-'))).toEqual([]);
    expect(turns(await list(root))).toEqual({ n: 1 });
    expect(
      readdirSync(root)
        .filter((n) => n.startsWith('listing-'))
        .sort(),
    ).toEqual(['listing-cache.json', INDEX, 'listing-journal.0']);
    rmSync(join(root, 'listing-journal.0'));
    expect(turns(await list(root)), 'a journal gap: rebuilt').toEqual({ n: 1 });
  });
});

describe('the listing generation', () => {
  const named = (root: string, summarizer = turnCounter()) => new SessionStore({ root, listingIndex: true }).listingGeneration(summarizer);
  const gen = async (root: string, summarizer = turnCounter()): Promise<string | undefined> => (await named(root, summarizer))?.generation;
  const row = (s: Listing['sessions'][number]) => [s.id, s.size, s.summary, s.lockedBy?.pid ?? null];
  /** The listing's content as a caller sees it but for its live sessions (ids only): ids, sizes, turns, holders, problems. */
  const content = (l: Listing): string =>
    JSON.stringify([l.sessions.map((s) => (s.lockedBy === undefined ? row(s) : s.id)), l.problems.map((p) => p.path)]);
  /** The live sessions as a listing holds them. */
  const liveOf = (l: Listing) => l.sessions.filter((s) => s.lockedBy !== undefined).map(row);

  it('a settled snapshot names its listing; a change a listing would see unnames it until a listing settles again', async () => {
    const root = tempDir();
    const st = new SessionStore({ root, clock: fixedClock() });
    for (const [cwd, id] of [
      ['/w/1', 'a'],
      ['/w/1', 'b'],
      ['/w/2', 'c'],
    ] as const) {
      const s = await st.create({ cwd, id });
      appendTurn(s.session);
      await s.close();
    }
    expect(await gen(root), 'no index yet').toBeUndefined();
    expect((await list(root)).generation, 'a full scan').toBeUndefined();
    await sleep(2100); // past the window in which a project directory's mtime may not move
    /** Listings until one carries a generation (each compacts what the one before saw): at most 3. */
    const settle = async (): Promise<Listing> => {
      for (let i = 0; i < 3; i++) {
        const before = await gen(root);
        const l = await list(root);
        if (before !== undefined) expect(l.generation, 'the generation said before the listing is its own').toBe(before);
        if (l.generation !== undefined) return l;
      }
      throw new Error('no listing settled');
    };
    const first = await settle();
    const g = first.generation!;
    expect(await gen(root)).toBe(g);
    const again = await list(root);
    expect(again.generation).toBe(g);
    expect(content(again)).toBe(content(first));
    expect(
      await gen(root, { ...turnCounter(), key: 'test/other/1' }),
      'another summarizer: its summaries are not in the snapshot',
    ).toBeUndefined();

    // An append through the store: announced, so no generation until it is listed.
    const a = await st.open('a');
    appendTurn(a.session);
    await a.close();
    expect(await gen(root)).toBeUndefined();
    const afterAppend = await list(root);
    expect(afterAppend.generation, 'the listing that compacts the append names the snapshot it wrote').toBeDefined();
    expect(await gen(root)).toBe(afterAppend.generation);
    expect(afterAppend.generation).not.toBe(g);
    expect(turns(afterAppend)).toEqual({ a: 2, b: 1, c: 1 });

    // A session held open: live, re-checked by every listing. Its appends keep the generation;
    // the generation gives it as it is now.
    const held = await st.open('b');
    expect(await gen(root), 'announced').toBeUndefined();
    const open = await settle();
    expect(liveOf(open)).toEqual([['b', open.sessions.find((x) => x.id === 'b')!.size, { turns: 1 }, process.pid]]);
    appendTurn(held.session);
    await held.flush();
    const now = await named(root);
    expect(now?.generation, 'a live session appending keeps the generation').toBe(open.generation);
    const grown = await list(root);
    expect(grown.generation).toBe(open.generation);
    expect(turns(grown)).toEqual({ a: 2, b: 2, c: 1 });
    expect(now?.live.map(row)).toEqual(liveOf(grown));
    expect(content(grown)).toBe(content(open));
    expect(await gen(root), 'the compaction of its new size keeps it too').toBe(open.generation);
    await held.close();
    expect(await gen(root), 'closed: its row is no longer live').toBeUndefined();
    const released = await settle();
    expect(released.sessions.find((s) => s.id === 'b')!.lockedBy).toBeUndefined();
    expect(released.generation).not.toBe(open.generation);

    // A project directory made by another program, and a session directory removed by one.
    handLog(root, '/w/3', 'foreign', 2);
    expect(await gen(root)).toBeUndefined();
    await sleep(2100);
    expect(turns(await settle())).toEqual({ a: 2, b: 2, c: 1, foreign: 2 });
    rmSync(join(logPath(root, '/w/1', 'b'), '..'), { recursive: true });
    expect(await gen(root)).toBeUndefined();
    await sleep(2100);
    const removed = await settle();
    expect(turns(removed)).toEqual({ a: 2, c: 1, foreign: 2 });
    expect(await gen(root)).toBe(removed.generation);
  });

  it('a metadata line longer than any real one (16 MiB) is not read to its end: no generation, and the listing rebuilds', async () => {
    const root = tempDir();
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 10_000, shouldAdvanceTime: true });
    try {
      const st = new SessionStore({ root, clock: fixedClock() });
      await (await st.create({ cwd: '/w', id: 'm' })).close();
      await list(root);
      const settled = await list(root);
      expect(settled.generation).toBeDefined();
      expect(await gen(root)).toBe(settled.generation);
      // JSON allows the spaces: read to its end, this line would still name the listing.
      writeFileSync(join(root, INDEX), `${' '.repeat(17 << 20)}${readFileSync(join(root, INDEX), 'utf8')}`);
      expect(await gen(root)).toBeUndefined();
      expect(turns(await list(root))).toEqual({ m: 0 });
    } finally {
      vi.useRealTimers();
    }
  });

  it('property: equal generations, equal listings but for live sessions; what is said before a listing is that listing’s', async () => {
    type Op = { kind: 'create' } | { kind: 'turn'; pick: number } | { kind: 'hold'; pick: number } | { kind: 'release' } | { kind: 'list' };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.constant<Op>({ kind: 'create' }),
      fc.nat(50).map<Op>((pick) => ({ kind: 'turn', pick })),
      fc.nat(50).map<Op>((pick) => ({ kind: 'hold', pick })),
      fc.constant<Op>({ kind: 'release' }),
      fc.constant<Op>({ kind: 'list' }),
      fc.constant<Op>({ kind: 'list' }),
      fc.constant<Op>({ kind: 'list' }),
    );
    let namedCount = 0;
    let namedLive = 0;
    // Directories look older than the racy window at once: Date runs 10 s ahead of the files' clock.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 10_000, shouldAdvanceTime: true });
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 14 }), async (ops) => {
          const root = tempDir();
          const model: Record<string, number> = {};
          const seen = new Map<string, string>();
          const st = new SessionStore({ root, clock: fixedClock() });
          const holding: Awaited<ReturnType<SessionStore['open']>>[] = [];
          const ids = (): string[] => Object.keys(model);
          try {
            for (const o of [...ops, { kind: 'release' } as Op, { kind: 'list' } as Op, { kind: 'list' } as Op, { kind: 'list' } as Op]) {
              if (o.kind === 'create') {
                const id = `s${ids().length}`;
                await (await st.create({ cwd: `/w/${ids().length % 3}`, id })).close();
                model[id] = 0;
              } else if ((o.kind === 'turn' || o.kind === 'hold') && ids().length > 0) {
                const id = ids()[o.pick % ids().length]!;
                if (holding.some((h) => h.session.header.id === id)) continue;
                const s = await st.open(id);
                appendTurn(s.session);
                model[id] = model[id]! + 1;
                if (o.kind === 'hold') holding.push(s);
                else await s.close();
              } else if (o.kind === 'release') {
                for (const h of holding.splice(0)) await h.close();
              } else if (o.kind === 'list') {
                const said = await named(root);
                const l = await list(root);
                expect(turns(l)).toEqual(model);
                if (said !== undefined) expect(l.generation).toBe(said.generation);
                if (l.generation === undefined) continue;
                namedCount++;
                if (holding.length > 0) namedLive++;
                expect(liveOf(l).map((r) => r[0])).toEqual(
                  l.sessions.filter((x) => holding.some((h) => h.session.header.id === x.id)).map((x) => x.id),
                );
                if (said !== undefined) expect(said.live.map(row)).toEqual(liveOf(l));
                const was = seen.get(l.generation);
                if (was !== undefined) expect(content(l)).toBe(was);
                seen.set(l.generation, content(l));
              }
            }
          } finally {
            for (const h of holding) await h.close();
          }
        }),
        {
          numRuns: 15,
          // One run that surely names a listing with a live session (the random ones may not).
          examples: [
            [
              [
                { kind: 'create' },
                { kind: 'create' },
                { kind: 'hold', pick: 0 },
                { kind: 'list' },
                { kind: 'list' },
                { kind: 'turn', pick: 1 },
                { kind: 'list' },
                { kind: 'list' },
              ],
            ],
            // Two live sessions in two projects: said in the listing's order (newest first), not
            // project by project (found by CI with seed -712426725).
            [
              [
                { kind: 'create' },
                { kind: 'create' },
                { kind: 'hold', pick: 0 },
                { kind: 'hold', pick: 3 },
                { kind: 'list' },
                { kind: 'list' },
                { kind: 'turn', pick: 0 },
              ],
            ],
          ],
        },
      );
    } finally {
      vi.useRealTimers();
    }
    expect(namedCount, 'some listings were named (the property is not vacuous)').toBeGreaterThan(10);
    expect(namedLive, 'some of them with live sessions').toBeGreaterThan(0);
  });
});

describe('the listing journal protocol', () => {
  it('a line that lands in a journal a compaction has already read is written again to the newer one', async () => {
    const { journalTouch, readJournal } = await import('../../src/store/listing-journal.js');
    const root = tempDir();
    writeFileSync(join(root, 'listing-journal.4'), '');
    let compacted = false;
    // Between the write and its check, a compaction starts journal 5 and drops 4 (having read it before the line).
    journalTouch(root, '--w--/a', (n) => {
      if (compacted) return;
      compacted = true;
      expect(n).toBe(4);
      writeFileSync(join(root, 'listing-journal.5'), '');
      rmSync(join(root, 'listing-journal.4'));
    });
    expect(readJournal(root, 5)?.keys).toEqual(['--w--/a']);
    // The same when the old journal is still there (the compaction has not unlinked it yet).
    journalTouch(root, '--w--/b', (n) => {
      if (n === 5) writeFileSync(join(root, 'listing-journal.6'), '');
    });
    expect(readJournal(root, 6)?.keys).toEqual(['--w--/b']);
    expect(readJournal(root, 5)?.keys).toEqual(['--w--/a', '--w--/b']);
  });

  it('no journal, no line; a line it cannot place removes the snapshot (the next listing rescans)', async () => {
    const { journalTouch } = await import('../../src/store/listing-journal.js');
    const root = tempDir();
    journalTouch(root, '--w--/a');
    expect(readdirSync(root)).toEqual([]);
    writeFileSync(join(root, 'listing-journal.0'), '');
    writeFileSync(join(root, INDEX), 'x');
    let n = 0;
    journalTouch(root, '--w--/a', () => writeFileSync(join(root, `listing-journal.${++n}`), '')); // a compaction every time
    expect(existsSync(join(root, INDEX))).toBe(false);
  });
});
