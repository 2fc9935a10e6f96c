/**
 * A DeepSeek-style provider on 127.0.0.1 whose streams can be held open at a chosen point until
 * the test releases them. Tests of interaction (steering while a turn runs, Ctrl-C mid-stream)
 * need the agent to be provably busy when they act; a hold makes that a fact the test waits for
 * rather than a race against a timer. Wire format and stream builders are the shared fake's.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { encodePart, type RecordedRequest, type SsePart } from '../../support/fake-provider.js';

export interface GatedResponse {
  /** A streamed body; or `status` + `body` for an error answer. */
  sse?: SsePart[];
  status?: number;
  body?: unknown;
  /** Send this many parts, then wait for `release(n)` (or forever: a hanging stream). */
  holdAfter?: number;
}

export interface GatedProvider {
  url: string;
  requests: RecordedRequest[];
  /** Resolves when request `n` (0-based) has arrived. */
  requested(n: number): Promise<RecordedRequest>;
  /** Let response `n` continue past its hold. */
  release(n: number): void;
  close(): Promise<void>;
}

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

export async function startGatedProvider(script: readonly GatedResponse[] | ((n: number) => GatedResponse)): Promise<GatedProvider> {
  const requests: RecordedRequest[] = [];
  const arrivals: ReturnType<typeof deferred<RecordedRequest>>[] = [];
  const gates: ReturnType<typeof deferred<void>>[] = [];
  const slot = <T>(list: ReturnType<typeof deferred<T>>[], n: number): ReturnType<typeof deferred<T>> => (list[n] ??= deferred<T>());
  const sockets = new Set<Socket>();

  const server = createServer((req, res) => void handle(req, res));
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    const n = requests.length;
    const recorded: RecordedRequest = { method: req.method ?? 'GET', path: req.url ?? '/', headers: {}, body };
    requests.push(recorded);
    const r: GatedResponse =
      typeof script === 'function'
        ? script(n)
        : (script[n] ?? { status: 500, body: { error: { message: 'gated provider: script exhausted', type: 'server_error' } } });
    slot(arrivals, n).resolve(recorded);
    if (!r.sse) {
      res.writeHead(r.status ?? 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(r.body ?? {}));
      return;
    }
    res.writeHead(r.status ?? 200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    for (let i = 0; i < r.sse.length; i++) {
      if (i === r.holdAfter) await slot(gates, n).promise;
      if (res.destroyed) return;
      const part = r.sse[i]!;
      if ('data' in part || 'comment' in part || 'raw' in part) res.write(encodePart(part));
    }
    if (r.holdAfter !== undefined && r.holdAfter >= r.sse.length) await slot(gates, n).promise;
    res.end();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    requested: (n) => slot(arrivals, n).promise,
    release: (n) => slot(gates, n).resolve(),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
