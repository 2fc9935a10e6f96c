/**
 * `startServe`: the HTTP API of `dsh serve` over a PostgreSQL store. It never runs a model: it
 * creates sessions, queues input (prompt, steer, inject, cancel) for the workers (`dsh worker`)
 * and reads and follows the log. Routes, bodies and answers are described by the OpenAPI
 * document at `/openapi.json` (generated from api.ts).
 *
 * Security: loopback only unless `allowRemote`; every route but the document needs
 * `Authorization: Bearer <token>` (compared in constant time); on loopback the Host header must
 * name loopback (a DNS-rebinding page sends its own name); no CORS headers; `no-store`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomUUID, timingSafeEqual, createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { isAbsolute } from 'node:path';
import type { PoolClient } from 'pg';
import type { PgStore } from '../postgres/store.js';
import type { StoredRow, Tail } from '../postgres/follow.js';
import { rowEvent } from '../postgres/follow.js';
import { CodedError } from '../model/coded-error.js';
import { matchRoute, type OperationId } from './api.js';
import { intParam, messageContent, onlyFields, optionalString, readJsonBody } from './body.js';
import { ServeError, STATUS } from './errors.js';
import { openApiDocument } from './openapi.js';

export interface ServeOptions {
  store: PgStore;
  /** At least 16 characters. */
  token: string;
  /** Default `127.0.0.1`. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  allowRemote?: boolean;
  /** Reported in the document. */
  version?: string;
  /** SSE keep-alive comment interval (default 15 s). */
  heartbeatMs?: number;
  /**
   * Event streams open at once (default 64): each holds a follower (a pooled read on every
   * append). Past it a new stream is refused with 503 TOO_MANY_STREAMS and Retry-After.
   */
  maxStreams?: number;
}

export const DEFAULT_MAX_STREAMS = 64;
/** Seconds a client refused for too many streams is told to wait. */
const STREAM_RETRY_AFTER_S = 5;

export interface Serve {
  url: string;
  port: number;
  close(): Promise<void>;
}

// A Map, not an object literal: `--host constructor` or `Host: __proto__` must not find an
// inherited property and pass for loopback.
const LOOPBACK: ReadonlyMap<string, string> = new Map([
  ['127.0.0.1', '127.0.0.1'],
  ['localhost', '127.0.0.1'],
  ['::1', '::1'],
]);
const HEADERS = { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer' } as const;
/** A client this far behind on a stream is dropped; it resumes with Last-Event-ID. */
const MAX_BUFFERED = 32 << 20;

type Ctx = { req: IncomingMessage; res: ServerResponse; params: Record<string, string>; query: URLSearchParams };
type Handler = (c: Ctx) => Promise<void>;

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { ...HEADERS, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

function sendError(res: ServerResponse, e: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const code = e instanceof CodedError ? e.code : 'INTERNAL';
  const status = STATUS[code] ?? (e instanceof ServeError ? 400 : e instanceof CodedError ? 400 : 500);
  const message = e instanceof Error && status !== 500 ? e.message : 'internal error';
  const path = e instanceof ServeError ? e.path : undefined;
  if (code === 'UNAUTHORIZED') res.setHeader('WWW-Authenticate', 'Bearer');
  sendJson(res, status, { error: { code, message, ...(path !== undefined ? { path } : {}) } });
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

export async function startServe(opts: ServeOptions): Promise<Serve> {
  const requested = opts.host ?? '127.0.0.1';
  const loopback = LOOPBACK.get(requested);
  const bind = loopback ?? (opts.allowRemote ? requested : undefined);
  if (bind === undefined)
    throw new ServeError(
      'HOST_NOT_ALLOWED',
      `dsh serve listens on loopback only (127.0.0.1, ::1, localhost), not ${JSON.stringify(requested)}, unless remote hosts are allowed`,
    );
  if (opts.token.length < 16) throw new ServeError('WEAK_TOKEN', 'the bearer token must be at least 16 characters');
  const store = opts.store;
  const tokenDigest = digest(opts.token);
  const doc = JSON.stringify(openApiDocument(opts.version ?? '0'));
  const streams = new Set<{ tail?: Tail; res: ServerResponse; timer?: NodeJS.Timeout }>();
  const maxStreams = opts.maxStreams ?? DEFAULT_MAX_STREAMS;

  const authorized = (req: IncomingMessage): boolean => {
    const m = /^Bearer ([^\s]+)$/i.exec(req.headers.authorization ?? '');
    // Digests: equal lengths for timingSafeEqual, whatever the client sent.
    return m !== null && timingSafeEqual(digest(m[1]!), tokenDigest);
  };

  /**
   * Answer a POST once per Idempotency-Key: without a key `run` runs as it is; with one, its
   * answer is stored with what it did (one transaction), and a retry gets that answer again.
   */
  const once = async (
    c: Ctx,
    op: OperationId,
    body: Record<string, unknown>,
    run: (tx?: PoolClient) => Promise<{ status: number; value: unknown }>,
  ): Promise<void> => {
    const key = c.req.headers['idempotency-key'];
    if (key === undefined) {
      const a = await run();
      sendJson(c.res, a.status, a.value);
      return;
    }
    if (typeof key !== 'string' || !/^[\x21-\x7e]{1,200}$/.test(key))
      throw new ServeError('BAD_REQUEST', 'Idempotency-Key: 1 to 200 visible ASCII characters', { path: 'Idempotency-Key' });
    const fingerprint = createHash('sha256')
      .update(JSON.stringify([op, c.params, body]))
      .digest('hex');
    const a = await store.answerOnce(key, fingerprint, async (tx) => {
      const r = await run(tx);
      return { status: r.status, body: JSON.stringify(r.value) };
    });
    if (a.fingerprint !== fingerprint)
      throw new ServeError('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used for another request (route, session or body)', {
        path: 'Idempotency-Key',
      });
    c.res.writeHead(a.status, {
      ...HEADERS,
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(a.body),
      ...(a.replayed ? { 'Idempotency-Replayed': 'true' } : {}),
    });
    c.res.end(a.body);
  };

  const queue = async (c: Ctx, kind: 'prompt' | 'steer' | 'inject' | 'cancel'): Promise<void> => {
    const body = await readJsonBody(c.req);
    onlyFields(body, kind === 'cancel' ? [] : ['text']);
    const content = kind === 'cancel' ? undefined : messageContent(body);
    await once(c, kind, body, async (tx) => {
      const q = await store.enqueue(c.params.id!, kind, content, tx);
      return { status: 202, value: { inputId: q.id, sessionId: q.sessionId, kind: q.kind } };
    });
  };

  const handlers: Record<OperationId, Handler> = {
    getOpenApi: async ({ res }) => {
      res.writeHead(200, { ...HEADERS, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(doc) });
      res.end(doc);
    },
    listSessions: async ({ res }) => {
      const { sessions } = await store.list();
      const out = sessions
        .map((s) => ({
          id: s.id,
          cwd: s.header.cwd,
          createdAt: s.header.createdAt,
          modifiedMs: s.modifiedMs,
          parentSession: s.header.parentSession,
          lockedBy: s.lockedBy,
        }))
        .sort((a, b) => b.createdAt - a.createdAt);
      sendJson(res, 200, { sessions: out });
    },
    createSession: async (c) => {
      const body = await readJsonBody(c.req);
      onlyFields(body, ['cwd', 'id', 'prompt']);
      const cwd = optionalString(body, 'cwd', { max: 4096 });
      if (cwd === undefined) throw new ServeError('BAD_REQUEST', 'required: the workspace, an absolute path', { path: '$.cwd' });
      if (!isAbsolute(cwd)) throw new ServeError('BAD_REQUEST', 'the workspace must be an absolute path', { path: '$.cwd' });
      const id =
        optionalString(body, 'id', { max: 200, pattern: /^[A-Za-z0-9._:-]+$/, hint: 'letters, digits, . _ : - only' }) ?? randomUUID();
      const prompt = optionalString(body, 'prompt', { allowNul: true });
      // Nobody holds it: a worker takes it for its prompt. Row and prompt commit together.
      await once(c, 'createSession', body, async (tx) => {
        const made = await store.createQueued({ cwd, id }, prompt !== undefined ? [{ type: 'text', text: prompt }] : undefined, tx);
        return { status: 201, value: { id, ...(made.input ? { inputId: made.input.id } : {}) } };
      });
    },
    getSession: async ({ res, params }) => {
      const { header, lockedBy } = await store.sessionInfo(params.id!);
      const queued = (await store.inputs(params.id!)).map((i) => ({ inputId: i.id, sessionId: i.sessionId, kind: i.kind }));
      sendJson(res, 200, {
        id: params.id,
        header: JSON.parse(header) as unknown,
        ...(lockedBy ? { lockedBy } : {}),
        queued,
      });
    },
    prompt: (c) => queue(c, 'prompt'),
    steer: (c) => queue(c, 'steer'),
    inject: (c) => queue(c, 'inject'),
    cancel: (c) => queue(c, 'cancel'),
    getEvents: async ({ res, params, query }) => {
      const from = intParam(query, 'from', 0);
      const limit = intParam(query, 'limit', 1000, 10_000);
      const { rows } = await store.rows(params.id!, from, limit);
      // The stored texts as they are (each already checked to be JSON carrying its seq).
      const body = `{"events":[${rows.map((r) => r.body).join(',')}],"next":${from + rows.length}}`;
      res.writeHead(200, { ...HEADERS, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    },
    streamEvents: async ({ req, res, params, query }) => {
      let from = intParam(query, 'from', 0);
      const last = req.headers['last-event-id'];
      if (last !== undefined) {
        if (typeof last !== 'string' || !/^\d{1,15}$/.test(last.trim()))
          throw new ServeError('BAD_REQUEST', 'Last-Event-ID must be the seq of the last event received', { path: 'Last-Event-ID' });
        from = Number(last.trim()) + 1;
      }
      const id = params.id!;
      if (req.method === 'HEAD') {
        // The headers a GET would get, and no follower: a HEAD has no body to stream.
        await store.sessionInfo(id);
        res.writeHead(200, { ...HEADERS, 'Content-Type': 'text/event-stream; charset=utf-8' });
        res.end();
        return;
      }
      if (streams.size >= maxStreams) {
        res.setHeader('Retry-After', String(STREAM_RETRY_AFTER_S));
        throw new ServeError('TOO_MANY_STREAMS', `${maxStreams} event streams are open (dsh serve --max-streams); retry later`);
      }
      const s: { tail?: Tail; res: ServerResponse; timer?: NodeJS.Timeout } = { res };
      const open = (): void => {
        if (res.headersSent) return;
        res.writeHead(200, {
          ...HEADERS,
          'Content-Type': 'text/event-stream; charset=utf-8',
          Connection: 'keep-alive',
          'X-Accel-Buffering': 'no',
        });
        res.write(': dsh events\n\n');
      };
      const end = (): void => {
        s.tail?.stop();
        if (s.timer) clearInterval(s.timer);
        streams.delete(s);
        if (!res.writableEnded) res.end();
      };
      const onRows = (rows: StoredRow[]): void => {
        if (rows.length === 0 || res.writableEnded) return;
        open();
        let out = '';
        for (const r of rows) out += `id: ${r.seq}\nevent: ${rowEvent(r, id).type}\ndata: ${r.body}\n\n`;
        res.write(out);
        if (res.writableLength > MAX_BUFFERED) end();
      };
      const onError = (e: CodedError): void => {
        open();
        res.write(`event: error\ndata: ${JSON.stringify({ code: e.code, message: e.message })}\n\n`);
        end();
      };
      streams.add(s);
      req.on('close', end);
      try {
        s.tail = await store.tail(id, onRows, { from, onError });
      } catch (e) {
        streams.delete(s);
        throw e;
      }
      if (res.destroyed) return end();
      open();
      s.timer = setInterval(() => res.write(': keep-alive\n\n'), opts.heartbeatMs ?? 15_000);
      s.timer.unref();
    },
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    try {
      const host = (req.headers.host ?? '').replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
      if (loopback && !LOOPBACK.has(host)) throw new ServeError('NOT_FOUND', 'unknown host');
      const url = new URL(req.url ?? '/', 'http://x');
      const m = matchRoute(req.method ?? 'GET', url.pathname);
      if (m.kind === 'none') throw new ServeError('NOT_FOUND', `no route ${url.pathname} (GET /openapi.json describes the API)`);
      if (m.kind === 'method') {
        res.setHeader('Allow', m.allowed.join(', '));
        throw new ServeError('METHOD_NOT_ALLOWED', `${req.method ?? ''} is not allowed here (${m.allowed.join(', ')})`);
      }
      if (m.spec.auth && !authorized(req))
        throw new ServeError('UNAUTHORIZED', 'send Authorization: Bearer <token> (the token dsh serve printed)');
      if (m.invalid !== undefined)
        throw new ServeError('BAD_REQUEST', 'not a session id: bad percent-encoding, a NUL or a lone surrogate', {
          path: `{${m.invalid}}`,
        });
      await handlers[m.spec.operationId]({ req, res, params: m.params, query: url.searchParams });
    } catch (e) {
      sendError(res, e);
    }
  };

  const server: Server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, bind, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shown = bind.includes(':') ? `[${bind}]` : bind;
  return {
    url: `http://${shown}:${port}`,
    port,
    close: async () => {
      for (const s of [...streams]) {
        s.tail?.stop();
        if (s.timer) clearInterval(s.timer);
        s.res.end();
      }
      streams.clear();
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      await closed;
    },
  };
}
