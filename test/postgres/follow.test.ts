/**
 * Live tail across processes' worth of distance: a follower on its own store (its own pool and
 * LISTEN connection) gets every event another store writes, from any seq, exactly once and in
 * order: while the writer is mid-burst, through a fork's ancestors, and across a killed LISTEN
 * connection.
 */
import { afterEach, expect, it } from 'vitest';
import fc from 'fast-check';
import { stringifyJson, type SessionEvent } from '../../src/session/index.js';
import { PgStore } from '../../src/postgres/index.js';
import { StoreError } from '../../src/store/errors.js';
import { appendTurn, fixedClock } from '../store/support/events.js';
import { describePg, freshSchema, pgUrl, sql } from './support/pg.js';
import { startProxy } from './support/proxy.js';

const stores: PgStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0).reverse()) await s.close();
});
function store(schema: string): PgStore {
  const s = new PgStore({ url: pgUrl!, schema, clock: fixedClock(), poolSize: 3 });
  stores.push(s);
  return s;
}
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const texts = (events: readonly SessionEvent[]): string[] => events.map((e) => stringifyJson(e));

/** Collect a follow until it holds `n` events (or time runs out). */
async function collect(it: AsyncGenerator<SessionEvent>, n: number, ms = 20_000): Promise<SessionEvent[]> {
  const out: SessionEvent[] = [];
  const deadline = Date.now() + ms;
  const timer = setInterval(() => {
    if (Date.now() > deadline) void it.return(undefined);
  }, 100);
  try {
    for await (const e of it) {
      out.push(e);
      if (out.length >= n) break;
    }
  } finally {
    clearInterval(timer);
  }
  return out;
}

describePg('PgStore follow', () => {
  it('followers started at any seq, mid-burst, each get exactly the events from there on', async () => {
    const schema = freshSchema();
    const w = await store(schema).create({ cwd: '/w', id: 'live' });
    const reader = store(schema);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 4 }),
        async (starts, bursts) => {
          const base = w.session.length;
          const followers = starts.map((d) => {
            const from = Math.min(base, d);
            return { from, got: [] as SessionEvent[] };
          });
          const ac = new AbortController();
          const runs = followers.map(async (f) => {
            for await (const e of reader.follow('live', { from: f.from, signal: ac.signal })) f.got.push(e);
          });
          for (let b = 0; b < bursts; b++) {
            appendTurn(w.session, { deltas: 30 });
            if (b % 2 === 0) await w.flush();
            await sleep(b * 7);
          }
          expect((await w.flush()).ok).toBe(true);
          const want = texts(w.session.events);
          for (let i = 0; i < 200 && followers.some((f) => f.from + f.got.length < want.length); i++) await sleep(25);
          ac.abort();
          await Promise.all(runs);
          for (const f of followers) expect(texts(f.got)).toEqual(want.slice(f.from));
        },
      ),
      { numRuns: 6 },
    );
    await w.close();
  });

  it("a fork's follower reads through its ancestors, then its own events as they come", async () => {
    const schema = freshSchema();
    const st = store(schema);
    const p = await st.create({ cwd: '/w', id: 'p' });
    appendTurn(p.session);
    const b = p.session.length - 1;
    appendTurn(p.session);
    await p.close();
    const c = await st.fork('p', b, { id: 'c' });
    const it = store(schema).follow('c', { from: 3 });
    const first = collect(it, c.session.length - 3 + (11 + 2 * 10) + (11 + 2 * 5)); // appendTurn writes 11 events plus two per delta
    appendTurn(c.session, { deltas: 10 });
    appendTurn(c.session, { deltas: 5 });
    await c.flush();
    const got = await first;
    expect(texts(got)).toEqual(texts(c.session.events).slice(3, 3 + got.length));
    expect(got.length).toBe(c.session.length - 3);
    await c.close();
  });

  it('a killed LISTEN connection loses nothing: the follower reconnects and reads from where it was', async () => {
    const schema = freshSchema();
    const w = await store(schema).create({ cwd: '/w', id: 'k' });
    const got: SessionEvent[] = [];
    const ac = new AbortController();
    const run = (async () => {
      for await (const e of store(schema).follow('k', { signal: ac.signal, pollMs: 60_000 })) got.push(e);
    })();
    appendTurn(w.session);
    await w.flush();
    for (let i = 0; i < 100 && got.length < w.session.length; i++) await sleep(20);
    const admin = await sql();
    try {
      const killed = await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'dsh follow' AND query LIKE 'LISTEN "` +
          `${schema}.events"%'`,
      );
      expect(killed.rowCount).toBeGreaterThan(0);
    } finally {
      await admin.end();
    }
    // Appends while the follower is deaf, then after it is back.
    appendTurn(w.session);
    await w.flush();
    await sleep(300);
    appendTurn(w.session);
    await w.flush();
    for (let i = 0; i < 300 && got.length < w.session.length; i++) await sleep(20);
    ac.abort();
    await run;
    expect(texts(got)).toEqual(texts(w.session.events));
    await w.close();
  });

  // Every backend of the followers and of the writer is killed, again and again.
  it('followers come through a storm of killed connections: each gets exactly events.slice(from)', async () => {
    const schema = freshSchema();
    const app = `dsh storm-${schema}`;
    const mk = (): PgStore => {
      const s = new PgStore({ url: pgUrl!, schema, clock: fixedClock(), poolSize: 3, applicationName: app, connectTimeoutMs: 2000 });
      stores.push(s);
      return s;
    };
    const w = await mk().create({ cwd: '/w', id: 'storm' });
    appendTurn(w.session);
    expect((await w.flush()).ok).toBe(true);
    const froms = [0, 5, 18];
    const ac = new AbortController();
    const followers = froms.map((from) => {
      const f = { from, got: [] as SessionEvent[], error: undefined as unknown };
      const run = (async () => {
        try {
          for await (const e of mk().follow('storm', { from, signal: ac.signal, pollMs: 60_000 })) f.got.push(e);
        } catch (e) {
          f.error = e;
        }
      })();
      return { f, run };
    });
    const admin = await sql();
    let kills = 0;
    try {
      const stormEnd = Date.now() + 3000;
      let b = 0;
      while (Date.now() < stormEnd) {
        const r = await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE $1 AND pid <> pg_backend_pid()`,
          [`${app}%`],
        );
        kills += r.rowCount ?? 0;
        appendTurn(w.session, { deltas: 2 + (b++ % 5) });
        void w.flush(); // a commit cut off is retried or settled by the writer; the last flush below must succeed
        await sleep(30 + Math.floor(Math.random() * 60));
      }
    } finally {
      await admin.end();
    }
    appendTurn(w.session);
    expect((await w.flush()).ok).toBe(true);
    const want = texts(w.session.events);
    for (let i = 0; i < 600 && followers.some(({ f }) => f.error === undefined && f.from + f.got.length < want.length); i++)
      await sleep(25);
    ac.abort();
    await Promise.all(followers.map((x) => x.run));
    expect(kills).toBeGreaterThan(20);
    for (const { f } of followers) {
      expect(f.error).toBe(undefined);
      expect(texts(f.got)).toEqual(want.slice(f.from));
    }
    await w.close();
  }, 60_000);

  it('gives up only after a sustained outage, with FOLLOW_FAILED naming the session and the last delivered seq', async () => {
    const schema = freshSchema();
    const w = await store(schema).create({ cwd: '/w', id: 'gone' });
    appendTurn(w.session);
    expect((await w.flush()).ok).toBe(true);
    const proxy = await startProxy(pgUrl!);
    try {
      const reader = new PgStore({ url: proxy.url, schema, poolSize: 2, connectTimeoutMs: 300 });
      stores.push(reader);
      const got: SessionEvent[] = [];
      let error: unknown;
      let cutAt = 0;
      try {
        for await (const e of reader.follow('gone', { from: 3, pollMs: 200, outageMs: 1500 })) {
          got.push(e);
          if (got.length === w.session.length - 3) {
            proxy.cut(); // a partition: open connections die, new ones hang
            cutAt = Date.now();
          }
        }
      } catch (e) {
        error = e;
      }
      expect(texts(got)).toEqual(texts(w.session.events).slice(3));
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).code).toBe('FOLLOW_FAILED');
      expect((error as StoreError).details).toMatchObject({ sessionId: 'gone', seq: w.session.length - 1 });
      expect((error as StoreError).message).toContain('"gone"');
      expect(Date.now() - cutAt).toBeGreaterThanOrEqual(1500);
    } finally {
      proxy.restore();
      await proxy.close();
    }
    await w.close();
  }, 60_000);
});
