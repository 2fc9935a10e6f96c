/**
 * `dsh serve`'s API against a real PostgreSQL, with in-process workers running the sessions:
 * the bearer token guards every route but the document; the document describes exactly the
 * routes the server answers; sessions are created and driven through the API; events come back
 * as the stored texts, by seq, as JSON and as Server-Sent Events that resume from Last-Event-ID
 * without a gap or a duplicate; bad input gets a typed error naming its JSON path.
 */
import { request } from 'node:http';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { stringifyJson, textResponse, type GenerateRequest, type SessionEvent } from '../../src/index.js';
import { PgStore, inputMessageId } from '../../src/postgres/index.js';
import { ROUTES, startServe, type Serve } from '../../src/serve/index.js';
import type { RouteSpec } from '../../src/serve/api.js';
import { describePg, freshSchema, pgUrl, sql } from '../postgres/support/pg.js';
import { lastUserText, startWorker, until, type TestWorker } from '../worker/support.js';

const TOKEN = 'test-token-0123456789abcdef';
let schema: string;
let store: PgStore;
let serve: Serve;
const workers: TestWorker[] = [];

beforeEach(async () => {
  if (!pgUrl) return;
  schema = freshSchema('serve');
  store = new PgStore({ url: pgUrl, schema, role: 'client', poolSize: 4 });
  serve = await startServe({ store, token: TOKEN, version: 'test', heartbeatMs: 200 });
});
afterEach(async () => {
  if (!pgUrl) return;
  for (const w of workers.splice(0)) {
    await w.worker.stop();
    await w.store.close();
  }
  await serve.close();
  await store.close();
});

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

function call(
  method: string,
  path: string,
  opts: { body?: unknown; raw?: string; token?: string | null; headers?: Record<string, string>; base?: string } = {},
): Promise<Reply> {
  const u = new URL(path, opts.base ?? serve.url);
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token !== null) headers.authorization = `Bearer ${opts.token ?? TOKEN}`;
  const body = opts.raw ?? (opts.body !== undefined ? JSON.stringify(opts.body) : undefined);
  if (body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const req = request(u, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

interface SseEvent {
  id: number;
  event: string;
  data: string;
}

/** Read a stream until `stop` says so (or `n` events), then hang up. */
function sse(
  path: string,
  opts: { lastEventId?: number; stop: (got: SseEvent[]) => boolean },
): Promise<{ status: number; events: SseEvent[]; comments: number }> {
  const u = new URL(path, serve.url);
  const headers: Record<string, string> = { authorization: `Bearer ${TOKEN}`, accept: 'text/event-stream' };
  if (opts.lastEventId !== undefined) headers['last-event-id'] = String(opts.lastEventId);
  return new Promise((resolve, reject) => {
    const events: SseEvent[] = [];
    let comments = 0;
    let buf = '';
    const req = request(u, { headers }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        resolve({ status: res.statusCode ?? 0, events, comments });
        return;
      }
      res.setEncoding('utf8');
      res.on('data', (s: string) => {
        buf += s;
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          if (block.startsWith(':')) {
            comments++;
            continue;
          }
          const f: Record<string, string> = {};
          for (const line of block.split('\n')) {
            const c = line.indexOf(': ');
            f[line.slice(0, c)] = line.slice(c + 2);
          }
          events.push({ id: Number(f.id), event: f.event!, data: f.data! });
        }
        if (opts.stop(events)) {
          req.destroy();
          resolve({ status: 200, events, comments });
        }
      });
      res.on('end', () => resolve({ status: 200, events, comments }));
    });
    req.on('error', (e) => (req.destroyed ? undefined : reject(e)));
    req.end();
  });
}

async function storedTexts(id: string): Promise<string[]> {
  const v = await store.inspect(id, { repair: false });
  return v.session.events.slice(0, v.eventCount).map((e) => stringifyJson(e));
}
const turnEnds = (texts: readonly string[]): number => texts.filter((t) => (JSON.parse(t) as SessionEvent).type === 'turn/end').length;

describePg('dsh serve (HTTP API)', () => {
  it('needs the bearer token on every route but the document (401 with WWW-Authenticate)', async () => {
    for (const token of [null, 'wrong-token-0123456789abcdef', '', TOKEN.slice(0, -1)]) {
      const r = await call('GET', '/v1/sessions', { token });
      expect(r.status, String(token)).toBe(401);
      expect(r.headers['www-authenticate']).toBe('Bearer');
      expect(r.json.error.code).toBe('UNAUTHORIZED');
    }
    expect((await call('GET', '/openapi.json', { token: null })).status).toBe(200);
    expect((await call('GET', '/v1/sessions')).status).toBe(200);
    // A page that rebinds its own name to 127.0.0.1 sends that name as Host.
    expect((await call('GET', '/v1/sessions', { headers: { host: 'evil.example' } })).status).toBe(404);
    // Names every object has as inherited properties are no loopback names.
    for (const host of ['__proto__', 'constructor', 'toString'])
      expect((await call('GET', '/v1/sessions', { headers: { host } })).status, host).toBe(404);
    await expect(startServe({ store, token: 'short' })).rejects.toMatchObject({ code: 'WEAK_TOKEN' });
    await expect(startServe({ store, token: TOKEN, host: '0.0.0.0' })).rejects.toMatchObject({ code: 'HOST_NOT_ALLOWED' });
    for (const host of ['constructor', '__proto__', 'toString', 'hasOwnProperty'])
      await expect(startServe({ store, token: TOKEN, host }), host).rejects.toMatchObject({ code: 'HOST_NOT_ALLOWED' });
  });

  it('the OpenAPI document describes exactly the routes the server answers, with their statuses', async () => {
    const doc = (await call('GET', '/openapi.json', { token: null })).json;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    const ops = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, methods]) =>
      Object.entries(methods).map(([m, op]) => ({ path, method: m.toUpperCase(), op })),
    );
    expect(ops.map((o) => `${o.method} ${o.path}`).sort()).toEqual(ROUTES.map((r) => `${r.method} ${r.path}`).sort());
    expect(new Set(ops.map((o) => o.op.operationId)).size).toBe(ops.length);
    for (const { path, method, op } of ops) {
      const concrete = path.replace('{id}', 'no-such-session');
      const documented = Object.keys(op.responses).map(Number);
      const r =
        method === 'GET' && path.endsWith('/stream')
          ? await sse(concrete, { stop: () => true })
          : await call(
              method,
              concrete,
              method === 'POST'
                ? { body: path === '/v1/sessions' ? { cwd: '/tmp' } : path.endsWith('/cancel') ? undefined : { text: 'x' } }
                : {},
            );
      expect(documented, `${method} ${path} answered ${r.status}`).toContain(r.status);
      if (op.security.length > 0) expect((await call(method, concrete, { token: null })).status, `${method} ${path}`).toBe(401);
    }
    // A path the document does not have is 404; a documented path with another method is 405.
    expect((await call('GET', '/v1/nothing')).status).toBe(404);
    const r = await call('DELETE', '/v1/sessions');
    expect(r.status).toBe(405);
    expect(r.headers.allow).toBe('GET, POST');
  });

  // The matrix comes from the route table: a status the server answers without a document entry fails here.
  it('every status the server answers is in the document, and every documented status is answered', async () => {
    const doc = (await call('GET', '/openapi.json', { token: null })).json;
    await call('POST', '/v1/sessions', { body: { cwd: '/tmp', id: 'm' } });
    // The same server over a database that is not there: every route that reads it is a 503.
    const dead = new PgStore({ url: 'postgres://nobody@127.0.0.1:1/none', schema, connectTimeoutMs: 300 });
    const down = await startServe({ store: dead, token: TOKEN });
    let fresh = 0;
    const okBody = (r: RouteSpec): Parameters<typeof call>[2] =>
      r.method !== 'POST'
        ? {}
        : r.operationId === 'createSession'
          ? { body: { cwd: '/tmp', id: `m${++fresh}` } }
          : r.operationId === 'cancel'
            ? {}
            : { body: { text: 'x' } };
    const concrete = (r: RouteSpec, id: string): string => r.path.replace('{id}', id);
    try {
      for (const r of ROUTES) {
        const documented = Object.keys(doc.paths[r.path][r.method.toLowerCase()].responses).map(Number).sort();
        const cases: { why: string; want: number; path: string; opts: Parameters<typeof call>[2] }[] = [];
        const ok = Number(Object.keys(r.responses).find((k) => k.startsWith('2')));
        cases.push({ why: 'good input', want: ok, path: concrete(r, 'm'), opts: okBody(r) });
        cases.push({
          why: 'a Host that is not loopback',
          want: 404,
          path: concrete(r, 'm'),
          opts: { ...okBody(r), headers: { host: 'x.example' } },
        });
        if (r.auth) {
          cases.push({ why: 'no token', want: 401, path: concrete(r, 'm'), opts: { ...okBody(r), token: null } });
          cases.push({ why: 'the database is down', want: 503, path: concrete(r, 'm'), opts: { ...okBody(r), base: down.url } });
        }
        if (r.path.includes('{id}')) {
          cases.push({ why: 'an unknown session', want: 404, path: concrete(r, 'nope'), opts: okBody(r) });
          cases.push({ why: 'an id with a NUL', want: 400, path: concrete(r, 'a%00b'), opts: okBody(r) });
        }
        for (const q of r.query ?? [])
          cases.push({ why: `a bad ?${q.name}`, want: 400, path: `${concrete(r, 'm')}?${q.name}=-1`, opts: {} });
        const badHeader: Record<string, string> = { 'Last-Event-ID': 'x', 'Idempotency-Key': 'k'.repeat(201) };
        for (const h of r.headers ?? [])
          cases.push({
            why: `a bad ${h.name}`,
            want: 400,
            path: concrete(r, 'm'),
            opts: { ...okBody(r), headers: { [h.name.toLowerCase()]: badHeader[h.name]! } },
          });
        if (r.method === 'POST') {
          cases.push({ why: 'a body that is not JSON', want: 400, path: concrete(r, 'm'), opts: { raw: '{' } });
          cases.push({ why: 'a body too large', want: 413, path: concrete(r, 'm'), opts: { raw: `"${'x'.repeat(1.1 * (1 << 20))}"` } });
          cases.push({
            why: 'a body not JSON-typed',
            want: 415,
            path: concrete(r, 'm'),
            opts: { raw: 'text=x', headers: { 'content-type': 'text/plain' } },
          });
        }
        if (r.method === 'POST') {
          // The key of another request: prime it on another route first.
          const key = `reused-${r.operationId}`;
          const other = r.operationId === 'cancel' ? '/v1/sessions/m/inject' : '/v1/sessions/m/cancel';
          const primeBody = other.endsWith('/cancel') ? undefined : { text: 'y' };
          expect((await call('POST', other, { body: primeBody, headers: { 'idempotency-key': key } })).status).toBeLessThan(300);
          cases.push({
            why: 'a reused Idempotency-Key',
            want: 422,
            path: concrete(r, 'm'),
            opts: { ...okBody(r), headers: { 'idempotency-key': key } },
          });
        }
        if (r.operationId === 'createSession')
          cases.push({ why: 'an id that is taken', want: 409, path: r.path, opts: { body: { cwd: '/tmp', id: 'm' } } });
        cases.push({ why: 'another method', want: 405, path: concrete(r, 'm'), opts: {} });
        const seen = new Set<number>();
        for (const c of cases) {
          const method = c.why === 'another method' ? 'DELETE' : r.method;
          const status =
            r.operationId === 'streamEvents' && c.want === ok
              ? (await sse(c.path, { stop: () => true })).status
              : (await call(method, c.path, c.opts)).status;
          const label = `${r.method} ${r.path}, ${c.why}: answered ${status}`;
          expect(status, label).toBe(c.want);
          expect(documented, `${label}, which the document does not list`).toContain(status);
          seen.add(status);
        }
        expect(documented, `${r.method} ${r.path}: documented statuses that no input produced`).toEqual([...seen].sort());
      }
    } finally {
      await down.close();
      await dead.close();
    }
  });

  // SSE resumes from Last-Event-ID with no gap or duplicate.
  it('creates a session, workers run its prompts; events by seq are the stored texts', async () => {
    workers.push(await startWorker(schema, { model: async (req: GenerateRequest) => textResponse(`echo: ${lastUserText(req)}`) }));
    const created = await call('POST', '/v1/sessions', { body: { cwd: '/tmp', id: 'api-1', prompt: 'hello' } });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({ id: 'api-1', inputId: expect.any(Number) });
    await until(async () => turnEnds(await storedTexts('api-1')) === 1, 30_000, 'the first turn');

    // A follower from seq 0 while the second prompt runs: it sees everything, live.
    const live = sse('/v1/sessions/api-1/events/stream', { stop: (got) => got.filter((e) => e.event === 'turn/end').length === 2 });
    const queued = await call('POST', '/v1/sessions/api-1/prompt', { body: { text: 'again' } });
    expect(queued.status).toBe(202);
    expect(queued.json).toEqual({ inputId: expect.any(Number), sessionId: 'api-1', kind: 'prompt' });
    const streamed = await live;
    await until(async () => (await call('GET', '/v1/sessions/api-1')).json.queued.length === 0, 30_000, 'the queue to drain');
    const stored = await storedTexts('api-1');
    expect(streamed.events.map((e) => e.id)).toEqual(stored.slice(0, streamed.events.length).map((_, i) => i));
    expect(streamed.events.map((e) => e.data)).toEqual(stored.slice(0, streamed.events.length));
    expect(streamed.events.map((e) => e.event)).toEqual(
      stored.slice(0, streamed.events.length).map((t) => (JSON.parse(t) as SessionEvent).type),
    );

    // JSON by seq: the whole log, then a window; the stored texts byte for byte.
    const all = await call('GET', '/v1/sessions/api-1/events');
    expect(all.text).toBe(`{"events":[${stored.join(',')}],"next":${stored.length}}`);
    const win = await call('GET', '/v1/sessions/api-1/events?from=3&limit=2');
    expect(win.json).toEqual({ events: stored.slice(3, 5).map((t) => JSON.parse(t)), next: 5 });
    expect((await call('GET', `/v1/sessions/api-1/events?from=${stored.length}`)).json).toEqual({ events: [], next: stored.length });

    // Resume: hang up after k events, reconnect with Last-Event-ID = the last id received.
    const k = 4;
    const first = await sse('/v1/sessions/api-1/events/stream', { stop: (got) => got.length >= k });
    const lastId = first.events[k - 1]!.id;
    const rest = await sse('/v1/sessions/api-1/events/stream', {
      lastEventId: lastId,
      stop: (got) => got.length >= stored.length - lastId - 1,
    });
    const ids = [...first.events.slice(0, k), ...rest.events].map((e) => e.id);
    expect(ids).toEqual(stored.map((_, i) => i));
    expect(rest.events.map((e) => e.data)).toEqual(stored.slice(lastId + 1));
    // ?from= starts a stream at a seq too.
    const mid = await sse('/v1/sessions/api-1/events/stream?from=5', { stop: (got) => got.length >= 1 });
    expect(mid.events[0]!.id).toBe(5);

    const listed = await call('GET', '/v1/sessions');
    expect(listed.json.sessions.map((s: { id: string }) => s.id)).toEqual(['api-1']);
    const one = await call('GET', '/v1/sessions/api-1');
    expect(one.json).toMatchObject({ id: 'api-1', header: { id: 'api-1', cwd: '/tmp' }, queued: [] });
    const ids2 = (await store.inputs('api-1', { all: true })).map((i) => inputMessageId(i.id));
    const users = stored
      .map((t) => JSON.parse(t) as SessionEvent)
      .filter((e): e is SessionEvent<'user/message'> => e.type === 'user/message');
    expect(users.map((e) => e.data.id)).toEqual(ids2);
  });

  it('steer reaches the running turn, inject waits for the next prompt, cancel stops the turn', async () => {
    let release!: () => void;
    let gate = new Promise<void>((r) => (release = r));
    const seen: string[] = [];
    workers.push(
      await startWorker(schema, {
        model: async (req: GenerateRequest) => {
          seen.push(req.messages.map((m) => m.content.map((b) => (b.type === 'text' ? b.text : '')).join('')).join('|'));
          await gate;
          return textResponse(`ok ${seen.length}`);
        },
      }),
    );
    expect((await call('POST', '/v1/sessions', { body: { cwd: '/tmp', id: 'ctl', prompt: 'start' } })).status).toBe(201);
    await until(() => seen.length === 1, 30_000, 'the first model call');
    expect((await call('POST', '/v1/sessions/ctl/cancel')).status).toBe(202);
    await until(async () => turnEnds(await storedTexts('ctl')) === 1, 30_000, 'the cancelled turn to end');
    const ends = (await storedTexts('ctl'))
      .map((t) => JSON.parse(t) as SessionEvent)
      .filter((e): e is SessionEvent<'turn/end'> => e.type === 'turn/end');
    expect(ends.map((e) => e.data.reason.kind)).toEqual(['aborted']);

    release();
    gate = new Promise<void>((r) => (release = r));
    expect((await call('POST', '/v1/sessions/ctl/inject', { body: { text: 'background fact' } })).status).toBe(202);
    expect((await call('POST', '/v1/sessions/ctl/prompt', { body: { text: 'second' } })).status).toBe(202);
    await until(() => seen.length === 2, 30_000, 'the second model call');
    expect((await call('POST', '/v1/sessions/ctl/steer', { body: { text: 'steer now' } })).status).toBe(202);
    await until(async () => (await store.inputs('ctl')).length === 0, 30_000, 'the steer applied');
    release();
    await until(() => seen.length === 3, 30_000, 'the step after the steer');
    // The context entered with the prompt, in the same model call (no turn of its own).
    expect(seen[1]).toContain('second');
    expect(seen[1]).toContain('background fact');
    expect(seen[2]).toContain('steer now');
  });

  it('bad input: a typed error naming the JSON path, the query parameter or the header', async () => {
    await call('POST', '/v1/sessions', { body: { cwd: '/tmp', id: 'b' } });
    const cases: [string, string, Parameters<typeof call>[2], number, string, string | undefined][] = [
      ['POST', '/v1/sessions', { raw: '{"cwd": ' }, 400, 'BAD_REQUEST', '$'],
      ['POST', '/v1/sessions', { raw: '[1]' }, 400, 'BAD_REQUEST', '$'],
      ['POST', '/v1/sessions', { body: {} }, 400, 'BAD_REQUEST', '$.cwd'],
      ['POST', '/v1/sessions', { body: { cwd: 'relative/dir' } }, 400, 'BAD_REQUEST', '$.cwd'],
      ['POST', '/v1/sessions', { body: { cwd: '/tmp', id: '../x' } }, 400, 'BAD_REQUEST', '$.id'],
      ['POST', '/v1/sessions', { body: { cwd: '/tmp', prompt: 7 } }, 400, 'BAD_REQUEST', '$.prompt'],
      ['POST', '/v1/sessions', { body: { cwd: '/tmp', colour: 'red' } }, 400, 'BAD_REQUEST', '$.colour'],
      ['POST', '/v1/sessions', { body: { cwd: '/tmp', id: 'b' } }, 409, 'SESSION_EXISTS', undefined],
      ['POST', '/v1/sessions/b/prompt', { body: { text: '' } }, 400, 'BAD_REQUEST', '$.text'],
      ['POST', '/v1/sessions/b/steer', { body: {} }, 400, 'BAD_REQUEST', '$.text'],
      ['POST', '/v1/sessions/b/cancel', { body: { text: 'x' } }, 400, 'BAD_REQUEST', '$.text'],
      [
        'POST',
        '/v1/sessions/b/prompt',
        { raw: 'text=hi', headers: { 'content-type': 'text/plain' } },
        415,
        'UNSUPPORTED_MEDIA_TYPE',
        undefined,
      ],
      ['POST', '/v1/sessions/b/prompt', { body: { text: 'x'.repeat(1.1 * (1 << 20)) } }, 413, 'BODY_TOO_LARGE', undefined],
      ['POST', '/v1/sessions/nope/prompt', { body: { text: 'x' } }, 404, 'SESSION_NOT_FOUND', undefined],
      ['GET', '/v1/sessions/nope/events', {}, 404, 'SESSION_NOT_FOUND', undefined],
      ['GET', '/v1/sessions/b/events?from=-1', {}, 400, 'BAD_REQUEST', '?from'],
      ['GET', '/v1/sessions/b/events?limit=10001', {}, 400, 'BAD_REQUEST', '?limit'],
      ['GET', '/v1/sessions/b/events/stream', { headers: { 'last-event-id': 'abc' } }, 400, 'BAD_REQUEST', 'Last-Event-ID'],
      ['GET', '/v1/sessions/%E0%A4%A/events', {}, 400, 'BAD_REQUEST', '{id}'],
    ];
    for (const [method, path, opts, status, code, at] of cases) {
      const r = await call(method, path, opts);
      expect(
        [r.status, r.json?.error?.code, r.json?.error?.path],
        `${method} ${path} ${opts?.raw ?? JSON.stringify(opts?.body ?? '').slice(0, 60)}`,
      ).toEqual([status, code, at]);
    }
    // Nothing reached the queue or the log from the refused requests.
    expect(await store.inputs('b')).toEqual([]);
    expect(await storedTexts('b')).toEqual([]);
  });

  it('a NUL or a lone surrogate in a workspace, an id or a text is a 400 naming where, never a database error', async () => {
    await call('POST', '/v1/sessions', { body: { cwd: '/tmp', id: 'n' } });
    const cases: [string, string, Parameters<typeof call>[2], string][] = [
      ['POST', '/v1/sessions', { body: { cwd: '/tmp/a\u0000b' } }, '$.cwd'],
      ['POST', '/v1/sessions', { body: { cwd: '/tmp/\ud800x' } }, '$.cwd'],
      ['POST', '/v1/sessions', { body: { cwd: '/tmp/\udc00' } }, '$.cwd'],
      ['POST', '/v1/sessions', { body: { cwd: '/tmp', id: 'a\u0000' } }, '$.id'],
      ['POST', '/v1/sessions', { body: { cwd: '/tmp', prompt: 'hi \ud83d' } }, '$.prompt'],
      ['POST', '/v1/sessions/n/prompt', { body: { text: 'x\udc00y' } }, '$.text'],
      ['POST', '/v1/sessions/a%00b/prompt', { body: { text: 'x' } }, '{id}'],
      ['POST', '/v1/sessions/a%00b/cancel', {}, '{id}'],
      ['GET', '/v1/sessions/a%00b', {}, '{id}'],
      ['GET', '/v1/sessions/a%00b/events', {}, '{id}'],
      ['GET', '/v1/sessions/a%00b/events/stream', {}, '{id}'],
      ['GET', '/v1/sessions/%ED%A0%80/events', {}, '{id}'],
    ];
    for (const [method, path, opts, at] of cases) {
      const r = await call(method, path, opts);
      expect([r.status, r.json?.error?.code, r.json?.error?.path], `${method} ${path} ${JSON.stringify(opts?.body ?? '')}`).toEqual([
        400,
        'BAD_REQUEST',
        at,
      ]);
    }
    // A NUL inside a message is text like any other (stored escaped in the JSON): accepted.
    expect((await call('POST', '/v1/sessions/n/prompt', { body: { text: 'a\u0000b' } })).status).toBe(202);
    expect((await store.inputs('n')).map((i) => i.content)).toEqual([[{ type: 'text', text: 'a\u0000b' }]]);
  });

  it('caps open event streams (503 TOO_MANY_STREAMS with Retry-After); HEAD opens no follower', async () => {
    await serve.close();
    serve = await startServe({ store, token: TOKEN, maxStreams: 2 });
    await call('POST', '/v1/sessions', { body: { cwd: '/tmp', id: 's' } });
    const tail = vi.spyOn(store, 'tail');
    const head = await call('HEAD', '/v1/sessions/s/events/stream');
    expect([head.status, head.headers['content-type']]).toEqual([200, 'text/event-stream; charset=utf-8']);
    expect((await call('HEAD', '/v1/sessions/nope/events/stream')).status).toBe(404);
    expect(tail).not.toHaveBeenCalled();
    // Two streams held open, then a third is refused until one closes.
    const open: ReturnType<typeof request>[] = [];
    for (let i = 0; i < 2; i++)
      await new Promise<void>((resolve, reject) => {
        const req = request(
          new URL('/v1/sessions/s/events/stream', serve.url),
          { headers: { authorization: `Bearer ${TOKEN}` } },
          (res) => {
            expect(res.statusCode).toBe(200);
            res.once('data', () => resolve());
          },
        );
        req.on('error', (e) => (req.destroyed ? undefined : reject(e)));
        req.end();
        open.push(req);
      });
    const refused = await call('GET', '/v1/sessions/s/events/stream');
    expect([refused.status, refused.json?.error?.code, refused.headers['retry-after']]).toEqual([503, 'TOO_MANY_STREAMS', '5']);
    open.pop()!.destroy();
    await until(async () => (await sse('/v1/sessions/s/events/stream', { stop: () => true })).status === 200, 5000, 'a free stream');
    for (const r of open) r.destroy();
  });

  it('GET /v1/sessions/{id} reads that session, not the listing', async () => {
    await call('POST', '/v1/sessions', { body: { cwd: '/tmp', id: 'one', prompt: 'hello' } });
    const list = vi.spyOn(store, 'list');
    const r = await call('GET', '/v1/sessions/one');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ id: 'one', header: { id: 'one', cwd: '/tmp' }, queued: [{ sessionId: 'one', kind: 'prompt' }] });
    expect(list).not.toHaveBeenCalled();
    // Held by someone: the holder is reported.
    const h = await store.open('one');
    expect((await call('GET', '/v1/sessions/one')).json.lockedBy).toMatchObject({ pid: process.pid, role: 'client' });
    await h.close();
    expect((await call('GET', '/v1/sessions/one')).json.lockedBy).toBe(undefined);
  });

  it('a session created with a prompt is created with it or not at all (one transaction)', async () => {
    await store.list(); // the store makes its schema on first use
    const db = await sql();
    try {
      // The queue refuses the prompt: the session must not be left behind without it.
      await db.query(
        `CREATE FUNCTION "${schema}".no_input() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'queue down'; END $$`,
      );
      await db.query(`CREATE TRIGGER no_input BEFORE INSERT ON "${schema}".inputs FOR EACH ROW EXECUTE FUNCTION "${schema}".no_input()`);
      const failed = await call('POST', '/v1/sessions', { body: { cwd: '/tmp', id: 'atomic', prompt: 'do it' } });
      expect([failed.status, failed.json?.error?.code]).toEqual([503, 'DATABASE_ERROR']);
      expect((await call('GET', '/v1/sessions/atomic')).status).toBe(404);
      await db.query(`DROP TRIGGER no_input ON "${schema}".inputs`);
    } finally {
      await db.end();
    }
    // The client's retry succeeds (no 409): the first attempt left nothing.
    const retry = await call('POST', '/v1/sessions', { body: { cwd: '/tmp', id: 'atomic', prompt: 'do it' } });
    expect(retry.status).toBe(201);
    expect((await store.inputs('atomic')).map((i) => i.content)).toEqual([[{ type: 'text', text: 'do it' }]]);
  });

  it('Idempotency-Key: a retried POST gets the first answer and queues or creates nothing new, across a serve restart', async () => {
    const k = { 'idempotency-key': 'create-1' };
    const first = await call('POST', '/v1/sessions', { body: { cwd: '/tmp', prompt: 'hello' }, headers: k });
    expect(first.status).toBe(201);
    const again = await call('POST', '/v1/sessions', { body: { cwd: '/tmp', prompt: 'hello' }, headers: k });
    expect([again.status, again.text, again.headers['idempotency-replayed']]).toEqual([201, first.text, 'true']);
    const id = first.json.id as string;
    expect((await store.list()).sessions.map((s) => s.id)).toEqual([id]);
    const p = { 'idempotency-key': 'prompt-1' };
    const queued = await call('POST', `/v1/sessions/${id}/prompt`, { body: { text: 'more' }, headers: p });
    expect(queued.status).toBe(202);
    // The server restarts (a new process would do the same): the answers are in the database.
    await serve.close();
    const second = new PgStore({ url: pgUrl!, schema, poolSize: 2 });
    serve = await startServe({ store: second, token: TOKEN });
    for (const [path, body, headers, want] of [
      [`/v1/sessions/${id}/prompt`, { text: 'more' }, p, queued],
      ['/v1/sessions', { cwd: '/tmp', prompt: 'hello' }, k, first],
    ] as const) {
      const r = await call('POST', path, { body, headers });
      expect([r.status, r.text], path).toEqual([want.status, want.text]);
    }
    for (const kind of ['steer', 'inject', 'cancel'] as const) {
      const h = { 'idempotency-key': `${kind}-1` };
      const body = kind === 'cancel' ? undefined : { text: kind };
      const a = await call('POST', `/v1/sessions/${id}/${kind}`, { body, headers: h });
      const b = await call('POST', `/v1/sessions/${id}/${kind}`, { body, headers: h });
      expect([b.status, b.text], kind).toEqual([a.status, a.text]);
    }
    expect((await store.inputs(id)).map((i) => i.kind)).toEqual(['prompt', 'prompt', 'steer', 'inject', 'cancel']);
    // The same key with another body is refused; without a key a retry is a new request.
    const other = await call('POST', `/v1/sessions/${id}/prompt`, { body: { text: 'else' }, headers: p });
    expect([other.status, other.json?.error?.code, other.json?.error?.path]).toEqual([422, 'IDEMPOTENCY_KEY_REUSED', 'Idempotency-Key']);
    await call('POST', `/v1/sessions/${id}/prompt`, { body: { text: 'twice' } });
    await call('POST', `/v1/sessions/${id}/prompt`, { body: { text: 'twice' } });
    expect((await store.inputs(id)).length).toBe(7);
    await serve.close();
    await second.close();
    serve = await startServe({ store, token: TOKEN }); // for afterEach
  });
});
