/**
 * `startViewer`: a local web page over one session log.
 *
 * Security model (the log is untrusted, and so is every other page in the user's browser):
 * - listens on loopback only, unless the caller explicitly allows another host;
 * - every URL starts with a random per-run token (`http://127.0.0.1:PORT/<token>/`): another
 *   local process or web page cannot guess it, and requests without it get a bare 404;
 * - the Host header must name the loopback address (DNS-rebinding pages send their own name),
 *   and browsers' cross-site requests (`Sec-Fetch-Site`) are refused;
 * - no CORS headers, so other origins cannot read responses;
 * - a strict Content-Security-Policy: scripts and styles only from the page's own files, no
 *   inline script, Trusted Types required (so an HTML-string sink in the page would throw), no
 *   framing; `nosniff`, `no-referrer`, `no-store` on everything;
 * - the page renders log text with `textContent` only, so hostile content stays text.
 * Only GET (and HEAD) are served; nothing on the server writes.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { ViewerApi, type SessionsSearch } from './api.js';
import { loadAssets, type Asset } from './assets.js';
import { ViewerError, describeError } from './errors.js';
import { LogIndex } from './model/log-index.js';
import type { GrowMessage } from './model/views.js';
import { openSource, type ViewerSource } from './source/open.js';
import type { LogSource } from './source/source.js';

export interface ViewerOptions {
  source: ViewerSource;
  /** Default `127.0.0.1`. Loopback names only (`127.0.0.1`, `::1`, `localhost`) unless `allowRemote`. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /** Listen on a non-loopback host. The token still guards every request; the Host check is off. */
  allowRemote?: boolean;
  /** How often a followed file is checked for growth, in ms (default 250). */
  pollMs?: number;
  /** Plugin event types this reader owns, besides the built-in vocabulary. */
  knownTypes?: ReadonlySet<string>;
  /**
   * Search across sessions from the page (`api/sessions-search`): the JSONL store's root and the
   * search index (src/search). Without it the route answers that there is nothing to search.
   */
  sessions?: SessionsSearch;
}

export interface Viewer {
  /** The page's address, token included. */
  url: string;
  host: string;
  port: number;
  /** Events the source holds now. */
  events(): number;
  close(): Promise<void>;
}

const LOOPBACK: Readonly<Record<string, string>> = { '127.0.0.1': '127.0.0.1', localhost: '127.0.0.1', '::1': '::1' };

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; font-src 'self'; object-src " +
    "'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; require-trusted-types-for 'script'; trusted-types " +
    "'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};

/** Debounce of growth notifications: a streaming model appends a chunk every few ms. */
const NOTIFY_MS = 100;
const HEARTBEAT_MS = 15_000;

export async function startViewer(opts: ViewerOptions): Promise<Viewer> {
  const requested = opts.host ?? '127.0.0.1';
  const bind = LOOPBACK[requested] ?? (opts.allowRemote ? requested : undefined);
  if (bind === undefined) {
    throw new ViewerError(
      'HOST_NOT_ALLOWED',
      `the viewer listens on loopback only (127.0.0.1, ::1, localhost), not ${JSON.stringify(requested)}; pass allowRemote to override`,
    );
  }
  const assets = loadAssets();
  const src = await openSource(opts.source, {
    ...(opts.pollMs !== undefined ? { pollMs: opts.pollMs } : {}),
    ...(opts.knownTypes ? { knownTypes: opts.knownTypes } : {}),
  });
  try {
    return await serve(src, assets, bind, opts);
  } catch (e) {
    src.close();
    throw e;
  }
}

async function serve(src: LogSource, assets: Map<string, Asset>, bind: string, opts: ViewerOptions): Promise<Viewer> {
  const index = new LogIndex();
  for (const e of src.since(0)) index.add(e);
  const api = new ViewerApi(src, index, opts.sessions);
  const token = randomBytes(32).toString('base64url');
  const tokenBytes = Buffer.from(token);
  const streams = new Set<ServerResponse>();
  let notifyTimer: NodeJS.Timeout | undefined;
  let port = 0;

  const notify = (): void => {
    notifyTimer = undefined;
    const msg: GrowMessage = { events: index.length, segments: index.segments.length, changed: index.takeChanged(), follow: src.follow() };
    const data = JSON.stringify(msg);
    for (const res of streams) res.write(`event: grow\ndata: ${data}\n\n`);
  };
  const unsubscribe = src.subscribe((batch) => {
    for (const e of batch) index.add(e);
    notifyTimer ??= setTimeout(notify, NOTIFY_MS);
  });
  const heartbeat = setInterval(() => {
    for (const res of streams) res.write(': ping\n\n');
  }, HEARTBEAT_MS);
  heartbeat.unref();

  const allowedHosts = new Set<string>();
  const hostOk = (req: IncomingMessage): boolean => {
    if (opts.allowRemote && LOOPBACK[opts.host ?? '127.0.0.1'] === undefined) return true;
    return allowedHosts.has((req.headers.host ?? '').toLowerCase());
  };

  const tokenOk = (path: string): boolean => {
    const seg = Buffer.from(path.slice(1, 1 + token.length));
    return seg.length === tokenBytes.length && timingSafeEqual(seg, tokenBytes) && path[1 + token.length] === '/';
  };

  const send = (res: ServerResponse, status: number, type: string, body: Buffer | string, head: boolean): void => {
    res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
    res.end(head ? undefined : body);
  };
  const sendJson = (res: ServerResponse, status: number, body: unknown, head: boolean): void =>
    send(res, status, 'application/json; charset=utf-8', JSON.stringify(body), head);
  const notFound = (res: ServerResponse, head: boolean): void => send(res, 404, 'text/plain; charset=utf-8', 'not found\n', head);

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const head = req.method === 'HEAD';
    if (req.method !== 'GET' && !head) {
      res.setHeader('Allow', 'GET, HEAD');
      return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n', false);
    }
    if (!hostOk(req)) return send(res, 403, 'text/plain; charset=utf-8', 'forbidden host\n', head);
    const site = req.headers['sec-fetch-site'];
    if (site === 'cross-site' || site === 'same-site')
      return send(res, 403, 'text/plain; charset=utf-8', 'cross-site request refused\n', head);
    const raw = req.url ?? '';
    const q = raw.indexOf('?');
    const path = q < 0 ? raw : raw.slice(0, q);
    if (!tokenOk(path)) return notFound(res, head);
    // Routes are matched as raw strings: nothing is decoded, so no encoding can reach a file.
    const rest = path.slice(token.length + 2);
    if (!rest.startsWith('api/')) {
      const asset = assets.get(rest === '' ? 'index.html' : rest);
      return asset ? send(res, 200, asset.type, asset.body, head) : notFound(res, head);
    }
    const route = rest.slice(4);
    if (route === 'follow') return head ? send(res, 200, 'text/event-stream; charset=utf-8', '', true) : openStream(res);
    try {
      sendJson(res, 200, api.handle(route, new URLSearchParams(q < 0 ? '' : raw.slice(q + 1))), head);
    } catch (e) {
      const d = describeError(e);
      const status = e instanceof ViewerError ? (e.code === 'BAD_REQUEST' ? 400 : e.code === 'NOT_FOUND' ? 404 : 500) : 500;
      sendJson(res, status, { error: d }, head);
    }
  };

  const openStream = (res: ServerResponse): void => {
    res.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': 'text/event-stream; charset=utf-8' });
    res.write(
      'retry: 2000\n\nevent: grow\ndata: ' +
        `${JSON.stringify({ events: index.length, segments: index.segments.length, changed: [], follow: src.follow() })}` +
        '\n\n',
    );
    streams.add(res);
    res.on('close', () => streams.delete(res));
  };

  const server = createServer(handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, bind, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  for (const h of ['127.0.0.1', 'localhost', '[::1]']) allowedHosts.add(`${h}:${port}`);
  const hostPart = bind.includes(':') ? `[${bind}]` : bind;

  let closed = false;
  return {
    url: `http://${hostPart}:${port}/${token}/`,
    host: bind,
    port,
    events: () => src.length(),
    close: async () => {
      if (closed) return;
      closed = true;
      unsubscribe();
      src.close();
      clearInterval(heartbeat);
      if (notifyTimer) clearTimeout(notifyTimer);
      for (const res of streams) res.end();
      streams.clear();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
