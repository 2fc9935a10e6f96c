/**
 * Workers in this process, each on its own store (pool, LISTEN connection, lease owner), against
 * a real PostgreSQL: input enters the log exactly once and in queue order; a worker that died
 * between the log and the queue is reconciled, not repeated; a worker cut off from the database
 * loses its session to another and writes nothing after the takeover; 100 sessions on 4 workers
 * lose and duplicate nothing.
 */
import { afterEach, expect, it } from 'vitest';
import { createAgent, stringifyJson, textResponse, type GenerateRequest, type SessionEvent } from '../../src/index.js';
import { PgStore, inputMessageId } from '../../src/postgres/index.js';
import { persist } from '../../src/store/index.js';
import { TAKEOVER_NOTICE } from '../../src/worker/worker.js';
import { describePg, freshSchema, pgUrl, sql } from '../postgres/support/pg.js';
import { startProxy, type PgProxy } from '../postgres/support/proxy.js';
import { Responder, echo, lastUserText, startWorker, until, type TestWorker } from './support.js';

const workers: TestWorker[] = [];
const stores: PgStore[] = [];
const proxies: PgProxy[] = [];
afterEach(async () => {
  for (const p of proxies) p.restore();
  for (const w of workers.splice(0)) {
    await w.worker.stop();
    await w.store.close();
  }
  for (const s of stores.splice(0)) await s.close();
  for (const p of proxies.splice(0)) await p.close();
});

function client(schema: string): PgStore {
  const s = new PgStore({ url: pgUrl!, schema, poolSize: 4 });
  stores.push(s);
  return s;
}
async function worker(schema: string, opts: Parameters<typeof startWorker>[1] = {}): Promise<TestWorker> {
  const w = await startWorker(schema, opts);
  workers.push(w);
  return w;
}
const text = (t: string) => [{ type: 'text' as const, text: t }];
const texts = (events: readonly SessionEvent[]): string[] => events.map((e) => stringifyJson(e));

/** A new, closed session (what `dsh serve` creates). */
async function newSession(store: PgStore, id: string): Promise<void> {
  await (await store.create({ cwd: '/tmp', id })).close();
}

async function stored(store: PgStore, id: string): Promise<SessionEvent[]> {
  const v = await store.inspect(id, { repair: false });
  return v.session.events.slice(0, v.eventCount);
}

const userMessages = (events: readonly SessionEvent[]) =>
  events.filter((e): e is SessionEvent<'user/message'> => e.type === 'user/message');
const turnEnds = (events: readonly SessionEvent[]) =>
  events.filter((e): e is SessionEvent<'turn/end'> => e.type === 'turn/end').map((e) => e.data.reason.kind);

describePg('dsh worker (in-process workers)', () => {
  it('applies input once each, in queue order; releases an idle session and takes it again for new input', async () => {
    const schema = freshSchema();
    const c = client(schema);
    await newSession(c, 'a');
    const p1 = await c.enqueue('a', 'prompt', text('first'));
    const i1 = await c.enqueue('a', 'inject', text('context for the first'));
    const p2 = await c.enqueue('a', 'prompt', text('second'));
    const w = await worker(schema);
    await until(
      async () => (await c.inputs('a')).length === 0 && w.worker.sessions.length === 0,
      30_000,
      'the inputs applied and the session released',
    );
    const first = await stored(c, 'a');
    expect(userMessages(first).map((e) => e.data.id)).toEqual([p1.id, i1.id, p2.id].map(inputMessageId));
    expect(turnEnds(first)).toEqual(['completed', 'completed']);
    // The injected context entered the first turn's step beside its prompt.
    const t1 = first.filter((e) => e.type === 'user/message' && (e.data as { turn?: number }).turn === undefined);
    expect(t1.length).toBe(3);

    const p3 = await c.enqueue('a', 'prompt', text('third'));
    await until(async () => (await c.inputs('a')).length === 0 && w.worker.sessions.length === 0, 30_000, 'the third prompt');
    const all = await stored(c, 'a');
    expect(userMessages(all).map((e) => e.data.id)).toEqual([p1.id, i1.id, p2.id, p3.id].map(inputMessageId));
    expect(turnEnds(all)).toEqual(['completed', 'completed', 'completed']);
    expect(
      all.filter((e) => e.type === 'assistant/message').map((e) => (e as SessionEvent<'assistant/message'>).data.message.content),
    ).toEqual([
      [{ type: 'text', text: 'echo: context for the first' }],
      [{ type: 'text', text: 'echo: second' }],
      [{ type: 'text', text: 'echo: third' }],
    ]);
    expect((await c.inputs('a', { all: true })).every((i) => i.state === 'applied')).toBe(true);
  });

  it('a worker that died after logging an input but before marking it: the next one marks it and runs it once', async () => {
    const schema = freshSchema();
    const c = client(schema);
    await newSession(c, 'r');
    const input = await c.enqueue('r', 'prompt', text('do it once'));
    // The dying worker: holds the session, puts the input in the durable inbox, and stops.
    const dying = new PgStore({ url: pgUrl!, schema, role: 'worker', leaseMs: 800 });
    stores.push(dying);
    const h = await dying.open('r');
    const agent = createAgent({ model: 'scripted:demo', adapters: new Responder(echo), session: h.session, plugins: [persist(h)] });
    agent.inbox.append('next-turn', { id: inputMessageId(input.id), role: 'user', content: text('do it once'), source: { kind: 'user' } });
    expect((await h.flush()).ok).toBe(true);
    h.abandon();
    const w = await worker(schema);
    await until(async () => (await c.inputs('r')).length === 0 && turnEnds(await stored(c, 'r')).length === 1, 30_000, 'the takeover');
    const events = await stored(c, 'r');
    expect(userMessages(events).map((e) => e.data.id)).toEqual([inputMessageId(input.id)]);
    expect(turnEnds(events)).toEqual(['completed']);
    expect(w.lines.some((l) => l.includes('took over session r'))).toBe(true);
  });

  it('a cancel applied by a worker that died before marking it is not applied again by the next holder', async () => {
    const schema = freshSchema();
    const c = client(schema);
    await newSession(c, 'x');
    let releaseA!: () => void;
    const gateA = new Promise<void>((r) => (releaseA = r));
    let died!: () => void;
    const dead = new Promise<void>((r) => (died = r));
    // Worker A's model never answers; A dies (stops writing and renewing) right after the flush
    // that holds [cancel, prompt], before it marks them applied.
    const a = await worker(schema, {
      leaseMs: 1000,
      model: async () => {
        await gateA;
        return textResponse('never used');
      },
      faults: {
        beforeMarkApplied: async (stored, ids) => {
          const kinds = (await c.inputs('x', { all: true })).filter((i) => ids.includes(i.id)).map((i) => i.kind);
          if (!kinds.includes('cancel')) return;
          // Dead: nothing more written or renewed, and this worker claims nothing again.
          stored.abandon();
          void a.worker.stop();
          died();
          await gateA;
        },
      },
    });
    const p1 = await c.enqueue('x', 'prompt', text('a long task'));
    await until(async () => (await stored(c, 'x')).some((e) => e.type === 'step/start'), 30_000, 'worker A mid-turn');
    // The cancel and a prompt queued in one transaction: A reads and applies them together.
    const db = await sql();
    let cancel: { id: number };
    let p2: { id: number };
    try {
      const r = await db.query<{ id: number }>(
        `INSERT INTO "${schema}".inputs (session_id, kind, message) VALUES ('x', 'cancel', NULL), ('x', 'prompt', $1) RETURNING id`,
        [JSON.stringify(text('after the cancel'))],
      );
      [cancel, p2] = r.rows.map((x) => ({ id: Number(x.id) })) as [{ id: number }, { id: number }];
    } finally {
      await db.end();
    }
    await dead;
    const b = await worker(schema, { leaseMs: 1000 });
    try {
      await until(
        async () => (await c.inputs('x')).length === 0 && b.worker.sessions.length === 0,
        30_000,
        'worker B to take over, finish and release',
      );
      const events = await stored(c, 'x');
      const dump = [
        ...events.map((e) => `${e.seq} ${e.type} ${JSON.stringify(e.data).slice(0, 100)}`),
        'A:',
        ...a.lines,
        'B:',
        ...b.lines,
      ].join('\n');
      // The cancel stopped the first turn, once; the prompt queued after it ran to the end on B (a
      // cancel applied again would have stopped it).
      const ends = events.filter((e): e is SessionEvent<'turn/end'> => e.type === 'turn/end').map((e) => e.data.reason);
      // (A's turn/end for it may not have been flushed before A died: then the takeover closed it.)
      expect(ends.filter((r) => r.kind === 'aborted').length, dump).toBeLessThanOrEqual(1);
      expect(ends.at(-1), dump).toEqual({ kind: 'completed' });
      const markers = events.filter((e): e is SessionEvent<'worker/cancel'> => e.type === 'worker/cancel');
      expect(markers.map((e) => e.data.inputId)).toEqual([cancel.id]);
      expect(markers.every((e) => e.ignorable === true)).toBe(true);
      const ids = userMessages(events).map((e) => e.data.id);
      expect(ids.filter((i) => i === inputMessageId(p1.id) || i === inputMessageId(p2.id))).toEqual(
        [p1, p2].map((i) => inputMessageId(i.id)),
      );
      expect(b.lines.some((l) => l.includes('took over session x'))).toBe(true);
      expect((await c.inputs('x', { all: true })).map((i) => i.state)).toEqual(['applied', 'applied', 'applied']);
    } finally {
      releaseA();
    }
  });

  // The first writes nothing after.
  it('a worker cut off from the database loses the session to another, which closes the open turn and continues', async () => {
    const schema = freshSchema();
    const c = client(schema);
    await newSession(c, 'cut');
    const net = await startProxy(pgUrl!);
    proxies.push(net);
    let releaseA!: () => void;
    const gateA = new Promise<void>((r) => (releaseA = r));
    const a = await worker(schema, {
      url: net.url,
      leaseMs: 1200,
      model: async (req: GenerateRequest) => {
        await gateA; // the model is slow: the worker is mid-turn when it is cut off
        return textResponse(`late answer to ${lastUserText(req)}`);
      },
    });
    await c.enqueue('cut', 'prompt', text('long task'));
    await until(async () => (await stored(c, 'cut')).some((e) => e.type === 'step/start'), 30_000, 'worker A mid-turn');
    const epochA = (await c.list()).sessions.find((s) => s.id === 'cut')!.lockedBy;
    expect(epochA?.role).toBe('worker');
    net.cut();
    const b = await worker(schema, { model: (req) => textResponse(`B continues after: ${lastUserText(req).slice(0, 30)}`) });
    await until(async () => turnEnds(await stored(c, 'cut')).length === 2, 30_000, 'worker B to take over and continue');
    net.restore();
    releaseA(); // A's model answers now; A must not get any of it into the log
    await until(() => a.lines.some((l) => l.includes('lost the lease')) || a.worker.sessions.length === 0, 30_000, 'A to drop the session');
    await until(async () => b.worker.sessions.length === 0, 30_000, 'B to release');
    const events = await stored(c, 'cut');
    expect(turnEnds(events)).toEqual(['interrupted', 'completed']);
    expect(userMessages(events).map((e) => e.data.content)).toEqual([text('long task'), text(TAKEOVER_NOTICE)]);
    expect(JSON.stringify(events)).not.toContain('late answer');
    // What B holds is what the database holds.
    expect(texts(b.sessions.at(-1)!.events.slice(0, events.length))).toEqual(texts(events));
    expect(b.lines.some((l) => /took over session cut from pid \d+ .*closed its open turn/.test(l))).toBe(true);
  });

  it('100 sessions on 4 workers: every input once, every turn closed, no event lost or duplicated', async () => {
    const schema = freshSchema();
    const c = client(schema);
    const ids = Array.from({ length: 100 }, (_, i) => `s${String(i).padStart(3, '0')}`);
    for (const id of ids) await newSession(c, id);
    const committed = new Map<string, Map<number, string>>();
    const conflicts: string[] = [];
    const record = (w: TestWorker): void => {
      // Every event any holder commits, to compare with what the database ends up holding.
      const seen = new Set<unknown>();
      setInterval(() => {
        for (const s of w.sessions) {
          if (seen.has(s)) continue;
          seen.add(s);
          const own = committed.get(s.id) ?? new Map<number, string>();
          committed.set(s.id, own);
          const note = (e: SessionEvent): void => {
            const t = stringifyJson(e);
            const prior = own.get(e.seq);
            if (prior !== undefined && prior !== t) conflicts.push(`${s.id}#${e.seq}`);
            own.set(e.seq, t);
          };
          for (const e of s.since(s.firstLiveSeq)) note(e);
          s.subscribe(note);
        }
      }, 5).unref();
    };
    const model = async (req: GenerateRequest) => {
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 30)));
      return textResponse(`echo: ${lastUserText(req)}`);
    };
    const ws = await Promise.all([0, 1, 2, 3].map(() => worker(schema, { concurrency: 30, model, idleMs: 200 })));
    for (const w of ws) record(w);
    const expected = new Map<string, number[]>();
    const push = (id: string, n: number) => expected.set(id, [...(expected.get(id) ?? []), n]);
    for (const id of ids) push(id, (await c.enqueue(id, 'prompt', text(`one ${id}`))).id);
    await new Promise((r) => setTimeout(r, 300));
    for (const id of ids) {
      push(id, (await c.enqueue(id, 'prompt', text(`two ${id}`))).id);
      if (id.endsWith('7')) push(id, (await c.enqueue(id, 'steer', text(`steer ${id}`))).id);
    }
    await until(
      async () => {
        const r = await c.list();
        return ws.every((w) => w.worker.sessions.length === 0) && r.sessions.every((s) => s.lockedBy === undefined);
      },
      240_000,
      'every session done and released',
    );
    let events = 0;
    for (const id of ids) {
      const log = await stored(c, id);
      events += log.length;
      const ins = log
        .filter((e) => e.type === 'agent/inbox/spliced')
        .flatMap((e) => (e as SessionEvent<'agent/inbox/spliced'>).data.inserted.map((m) => m.id));
      expect(ins, id).toEqual(expected.get(id)!.map(inputMessageId));
      expect(new Set(userMessages(log).map((e) => e.data.id)).size, id).toBe(expected.get(id)!.length);
      expect(
        turnEnds(log).every((k) => k === 'completed'),
        id,
      ).toBe(true);
      // Every event a holder committed is stored, as committed; nothing is stored that no holder committed.
      const mine = committed.get(id)!;
      expect(
        [...mine.keys()].every((seq) => mine.get(seq) === stringifyJson(log[seq]!)),
        id,
      ).toBe(true);
      expect(
        log.every((e) => mine.has(e.seq) || e.type === 'session/end-seed'),
        id,
      ).toBe(true);
    }
    expect(conflicts).toEqual([]);
    expect((await Promise.all(ids.map((id) => c.inputs(id)))).every((q) => q.length === 0)).toBe(true);
    const holders = new Set(ws.flatMap((w, i) => (w.sessions.length > 0 ? [i] : [])));
    expect(holders.size).toBeGreaterThan(1); // the work was shared
    console.log(
      `[worker] 100 sessions, ${events} events, held by ${holders.size} workers: ${ws.map((w) => w.sessions.length).join('/')}` +
        ' session openings',
    );
  }, 300_000);
});
