/**
 * What is particular to the PostgreSQL store: leases, takeover after expiry, fencing enforced by
 * the database (a cut-off writer, a forged epoch or token, a second writer of a seq, rows changed
 * behind the log's back), commits whose outcome the writer never heard, damaged stored data.
 */
import { afterEach, expect, it } from 'vitest';
import { stringifyJson, type SessionEvent } from '../../src/session/index.js';
import { PgStore, type PgOpenSession } from '../../src/postgres/index.js';
import { appendTurn, fixedClock } from '../store/support/events.js';
import { describePg, freshSchema, pgUrl, sql } from './support/pg.js';
import { startProxy, type PgProxy } from './support/proxy.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const stores: PgStore[] = [];
const proxies: PgProxy[] = [];
afterEach(async () => {
  for (const p of proxies.splice(0)) p.restore();
  for (const s of stores.splice(0).reverse()) await s.close().catch(() => undefined);
  for (const p of proxies.splice(0)) await p.close();
});

function store(schema: string, opts: { url?: string; leaseMs?: number; connectTimeoutMs?: number } = {}): PgStore {
  const s = new PgStore({
    url: opts.url ?? pgUrl!,
    schema,
    clock: fixedClock(),
    leaseMs: opts.leaseMs ?? 30_000,
    poolSize: 3,
    connectTimeoutMs: opts.connectTimeoutMs ?? 3000,
  });
  stores.push(s);
  return s;
}

async function proxy(): Promise<PgProxy> {
  const p = await startProxy(pgUrl!);
  proxies.push(p);
  return p;
}

/** Stored bodies of a session, straight from the table. */
async function bodies(schema: string, id: string): Promise<{ seq: number; epoch: number; body: string }[]> {
  const c = await sql();
  try {
    const r = await c.query(
      `SELECT seq::int AS seq, epoch::int AS epoch, body FROM "${schema}".events WHERE session_id = $1 ORDER BY seq`,
      [id],
    );
    return r.rows as { seq: number; epoch: number; body: string }[];
  } finally {
    await c.end();
  }
}

async function sqlError(text: string, params: unknown[] = []): Promise<{ code?: string; message: string }> {
  const c = await sql();
  try {
    await c.query(text, params);
    return { message: 'no error' };
  } catch (e) {
    return e as { code?: string; message: string };
  } finally {
    await c.end();
  }
}

const texts = (events: readonly SessionEvent[]): string[] => events.map((e) => stringifyJson(e));

describePg('PgStore leases and fencing', () => {
  it('a holder cut off from the database loses the session after expiry; its late appends are refused by the database', async () => {
    const schema = freshSchema();
    const cutoff = await proxy();
    const a = await store(schema, { url: cutoff.url, leaseMs: 1500, connectTimeoutMs: 500 }).create({ cwd: '/w', id: 's' });
    appendTurn(a.session);
    appendTurn(a.session, { stopAfter: 10 }); // mid-turn, right after a tool/call
    expect((await a.flush()).ok).toBe(true);
    const before = a.session.length;
    const lost: string[] = [];
    a.onLeaseLost((e) => lost.push(e.code));
    a.onError(() => undefined);

    cutoff.cut();
    // While the lease lives, nobody else may open the session.
    await expect(store(schema).open('s')).rejects.toMatchObject({ code: 'SESSION_LOCKED' });
    let b: PgOpenSession | undefined;
    for (let i = 0; i < 60 && !b; i++) {
      await sleep(100);
      b = await store(schema)
        .open('s')
        .catch((e: { code?: string }) => {
          if (e.code !== 'SESSION_LOCKED') throw e;
          return undefined;
        });
    }
    expect(b, 'the lease expired and was taken over').toBeDefined();
    expect(b!.epoch).toBe(a.epoch + 1);
    expect(b!.recovery.repaired).toEqual(['tool/result', 'step/end', 'turn/end']);

    // A comes back and tries to go on with its turn: the database refuses it.
    cutoff.restore();
    const t = a.session.trace;
    let fencedInMemory = false;
    try {
      a.session.append(
        'tool/result',
        {
          turn: t.openTurn!,
          step: t.openStep!,
          message: {
            id: 'late',
            role: 'user',
            content: [{ type: 'tool-result', toolCallId: 'call-2', content: [{ type: 'text', text: 'late' }] }],
            source: { kind: 'tool', callId: 'call-2' },
          },
        },
        { surfaceOp: 'append', sourceEventSeqs: [before - 1] },
      );
    } catch (e) {
      // already fenced by its own heartbeat: the append is refused in memory too (and only that
      // refusal may take this branch, which expects an ok close below)
      expect(e).toMatchObject({ code: 'LEASE_LOST' });
      fencedInMemory = true;
    }
    const r = await a.flush();
    // Either the database refuses the late append, or (under load, when the heartbeat noticed first)
    // nothing was queued to refuse; in both cases the loss was reported exactly once.
    if (!fencedInMemory) {
      expect(r.ok).toBe(false);
      expect(!r.ok && r.error.code).toBe('LEASE_LOST');
    } else expect(r.ok).toBe(true);
    expect(lost).toEqual(['LEASE_LOST']);
    expect(() => a.session.append('step/end', { turn: t.openTurn!, step: t.openStep! })).toThrow(
      expect.objectContaining({ code: 'LEASE_LOST' }),
    );

    const rows = await bodies(schema, 's');
    expect(rows.map((x) => x.body)).toEqual(texts(b!.session.events));
    expect(rows.filter((x) => x.seq >= before).every((x) => x.epoch === b!.epoch)).toBe(true);
    await b!.close();
    // The fenced handle closes without writing and without touching the new holder's lease. Its
    // close reports the refused late append; when the heartbeat fenced it first, nothing was queued
    // and everything it committed is stored, so the close is ok (as the flush above was).
    expect((await a.close()).ok).toBe(fencedInMemory);
  });

  it('the database refuses appends without the lease: no token, a wrong token, an old epoch, a forged epoch', async () => {
    const schema = freshSchema();
    const st = store(schema, { leaseMs: 800 });
    const a = await st.create({ cwd: '/w', id: 'f' });
    appendTurn(a.session);
    expect((await a.flush()).ok).toBe(true);
    const seq = a.session.length;
    const oldLease = { epoch: a.epoch, token: a.lease.token };
    const row = (epoch: number, token: string | null, at = seq) =>
      [
        `INSERT INTO "${schema}".events (session_id, seq, epoch, type, time, body)
       SELECT 'f', $1::bigint, $2::bigint, 'turn/start', 1, '{"type":"turn/start","seq":' || $1::text || ',"time":1,"data":{"turn":9}}'
         FROM (SELECT set_config('dsh.lease_token', coalesce($3::text, ''), true) AS v) c`,
        [at, epoch, token],
      ] as [string, unknown[]];
    expect((await sqlError(...row(a.epoch, null))).code).toBe('DS001');
    expect((await sqlError(...row(a.epoch, 'guessed'))).code).toBe('DS001');
    expect((await sqlError(...row(a.epoch + 1, a.lease.token))).code).toBe('DS001');
    // Rows cannot be changed or removed behind the log's back, by anyone.
    expect((await sqlError(`UPDATE "${schema}".events SET body = body WHERE session_id = 'f'`)).code).toBe('DS001');
    expect((await sqlError(`DELETE FROM "${schema}".events WHERE session_id = 'f'`)).code).toBe('DS001');
    // The holder's own token: a seq already stored fails on the key; a skipped seq on the trigger.
    expect((await sqlError(row(a.epoch, a.lease.token)[0], [0, a.epoch, a.lease.token])).code).toBe('23505');
    expect((await sqlError(row(a.epoch, a.lease.token)[0], [seq + 5, a.epoch, a.lease.token])).code).toBe('DS002');

    // After a takeover the old holder's epoch and token are worth nothing, and the new epoch
    // cannot be claimed without the new holder's token.
    a.abandon(); // dies without releasing
    await sleep(900);
    const b = await store(schema).open('f');
    expect(b.epoch).toBe(oldLease.epoch + 1);
    expect((await sqlError(...row(oldLease.epoch, oldLease.token, b.session.length))).code).toBe('DS001');
    expect((await sqlError(...row(b.epoch, oldLease.token, b.session.length))).code).toBe('DS001');
    expect((await bodies(schema, 'f')).map((x) => x.body)).toEqual(texts(b.session.events));
    await b.close();
  });

  it('commits cut off mid-flight are settled on the retry: every event stored exactly once', async () => {
    const schema = freshSchema();
    const net = await proxy();
    const a = await store(schema, { url: net.url, connectTimeoutMs: 400 }).create({ cwd: '/w', id: 'u' });
    a.onError(() => undefined);
    for (let round = 0; round < 12; round++) {
      appendTurn(a.session, { deltas: 20 + round });
      const flushing = a.flush();
      // Cut at a different moment each round: before, during or after the statement.
      await sleep(round % 4);
      net.cut();
      await flushing;
      await sleep(20);
      net.restore();
      let r = await a.flush();
      for (let i = 0; i < 20 && !r.ok; i++) r = await a.flush();
      expect(r.ok, !r.ok ? r.error.message : '').toBe(true);
    }
    expect((await bodies(schema, 'u')).map((x) => x.body)).toEqual(texts(a.session.events));
    await a.close();
  });

  it('refuses stored data that does not load: a damaged seed, a body that is not an event', async () => {
    const schema = freshSchema();
    const st = store(schema);
    const a = await st.create({ cwd: '/w', id: 'ok' });
    appendTurn(a.session);
    await a.close();
    const c = await sql();
    try {
      await c.query(`INSERT INTO "${schema}".sessions (id, header, cwd, created_at) VALUES ('seeded', $1, '/w', 1)`, [
        JSON.stringify({
          type: 'session',
          version: 0,
          id: 'seeded',
          createdAt: 1,
          cwd: '/w',
          parentSession: 'p',
          seedLength: 40,
          delegationDepth: 0,
        }),
      ]);
    } finally {
      await c.end();
    }
    await expect(store(schema).open('seeded')).rejects.toMatchObject({ code: 'SEED_TRUNCATED' });
    // A row whose body is not an event, written by a holder (the trigger checks the lease, not the JSON).
    const h = await store(schema).open('ok');
    const next = h.session.length;
    const bad = await sqlError(
      `INSERT INTO "${schema}".events (session_id, seq, epoch, type, time, body) SELECT 'ok', $1::bigint, $2::bigint, ` +
        `'turn/start', 1, '{"type":"turn/start"' FROM (SELECT set_config('dsh.lease_token', $3::text, true) AS v) c`,
      [next, h.epoch, h.lease.token],
    );
    expect(bad.message).toBe('no error');
    h.abandon();
    const view = store(schema).inspect('ok');
    await expect(view).rejects.toMatchObject({ code: 'CORRUPT_LOG' });
    await expect(view).rejects.toThrow(/postgres:.*\/ok: corrupt stored session/);
  });

  it('a schema written by a newer build is refused, not altered', async () => {
    const schema = freshSchema();
    const a = await store(schema).create({ cwd: '/w', id: 'v' });
    await a.close();
    const c = await sql();
    try {
      await c.query(`UPDATE "${schema}".meta SET value = '99' WHERE key = 'schema_version'`);
    } finally {
      await c.end();
    }
    await expect(store(schema).list()).rejects.toMatchObject({ code: 'SCHEMA_MISMATCH' });
  });

  it('names a database it cannot reach, with the password masked', async () => {
    const u = new URL(pgUrl!);
    u.password = 'hunter2';
    u.port = '1';
    const st = store(freshSchema(), { url: u.toString(), connectTimeoutMs: 500 });
    const err = await st.list().then(
      () => undefined,
      (e: Error & { code?: string }) => e,
    );
    expect(err?.code).toBe('CONNECT_FAILED');
    expect(err?.message).not.toContain('hunter2');
    expect(st.location).not.toContain('hunter2');
  });
});
