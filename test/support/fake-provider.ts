/**
 * A scripted LLM provider on 127.0.0.1 for tests: it answers each request with the next scripted
 * response (an SSE stream, or an error status with a body) and can inject transport faults: a
 * socket reset, a stall, headers that never come, arbitrary byte slicing. The real SDK clients
 * talk to it through their normal HTTP stack, so the adapters are exercised end to end.
 *
 * Shared with the agent-loop tests: `startFakeProvider({ script })` → `{ url, close, requests }`;
 * see `faults.ts` for named faults and stream builders.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterEach } from 'vitest';
import type { AddressInfo, Socket } from 'node:net';

export type SsePart =
  /** One SSE event: `event:` line when given, then `data:` (multi-line data is split into lines). */
  | { data: string; event?: string }
  /** An SSE comment line, e.g. `: keep-alive`. */
  | { comment: string }
  /** Bytes written verbatim (raw recorded wire text, or deliberately broken framing). */
  | { raw: string }
  /** Pause before the next part. */
  | { pauseMs: number }
  /** Send nothing more and keep the connection open until the client or `close()` ends it. */
  | { hang: true }
  /** Reset the TCP connection (the client sees ECONNRESET mid-body). */
  | { reset: true };

export interface FakeResponse {
  /** Default 200. */
  status?: number;
  headers?: Record<string, string>;
  /** Body of a non-streaming response: strings are sent as-is, anything else as JSON. */
  body?: unknown;
  /** A streamed `text/event-stream` body. */
  sse?: SsePart[];
  /** Write the stream in slices of this many bytes (splits lines and UTF-8 sequences). */
  sliceBytes?: number;
  /** Never send response headers (the client waits until its own timeout). */
  withholdHeaders?: boolean;
  /** Reset the connection after reading the request, before any response byte. */
  resetBeforeHeaders?: boolean;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  /** Parsed JSON when the body is JSON, otherwise the text. */
  body: unknown;
}

export type FakeScript = readonly FakeResponse[] | ((request: RecordedRequest, n: number) => FakeResponse);

export interface FakeProvider {
  /** Base URL, e.g. `http://127.0.0.1:41234`; point an SDK's baseURL at it (OpenAI-style clients usually add `/v1`). */
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

const EXHAUSTED: FakeResponse = { status: 500, body: { error: { message: 'fake provider: script exhausted', type: 'fake_error' } } };

export async function startFakeProvider({ script }: { script: FakeScript }): Promise<FakeProvider> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    void handle(req, res);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readBody(req);
    const recorded: RecordedRequest = { method: req.method ?? 'GET', path: req.url ?? '/', headers: flatHeaders(req), body: parse(text) };
    const n = requests.length;
    requests.push(recorded);
    const response = typeof script === 'function' ? script(recorded, n) : (script[n] ?? EXHAUSTED);
    await respond(res, response);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

async function respond(res: ServerResponse, r: FakeResponse): Promise<void> {
  if (r.withholdHeaders) return;
  if (r.resetBeforeHeaders) {
    res.socket?.resetAndDestroy();
    return;
  }
  const status = r.status ?? 200;
  if (!r.sse) {
    const body = r.body === undefined ? '' : typeof r.body === 'string' ? r.body : JSON.stringify(r.body);
    const type = typeof r.body === 'string' ? 'text/plain' : 'application/json';
    res.writeHead(status, { 'content-type': type, ...r.headers });
    res.end(body);
    return;
  }
  res.writeHead(status, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...r.headers });
  res.flushHeaders();
  for (const part of r.sse) {
    if ('pauseMs' in part) await sleep(part.pauseMs);
    else if ('hang' in part) return;
    else if ('reset' in part) {
      res.socket?.resetAndDestroy();
      return;
    } else if (!(await write(res, encodePart(part), r.sliceBytes))) return;
  }
  res.end();
}

export function encodePart(part: { data: string; event?: string } | { comment: string } | { raw: string }): string {
  if ('raw' in part) return part.raw;
  if ('comment' in part) return `: ${part.comment}\n\n`;
  const event = part.event === undefined ? '' : `event: ${part.event}\n`;
  return `${event}${part.data
    .split('\n')
    .map((l) => `data: ${l}`)
    .join('\n')}\n\n`;
}

async function write(res: ServerResponse, text: string, sliceBytes: number | undefined): Promise<boolean> {
  const bytes = Buffer.from(text, 'utf8');
  const step = sliceBytes && sliceBytes > 0 ? sliceBytes : bytes.length;
  for (let i = 0; i < bytes.length; i += step) {
    if (res.destroyed) return false;
    await new Promise<void>((resolve) => res.write(bytes.subarray(i, i + step), () => resolve()));
  }
  return !res.destroyed;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parse(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function flatHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * For a test file whose tests each start one fake: `const fake = fakeProviderPerTest()` at the
 * top level, then `await fake(script)` in a test; it is closed after each test.
 */
export function fakeProviderPerTest(): (script: FakeScript) => Promise<FakeProvider> {
  let provider: FakeProvider | undefined;
  afterEach(async () => {
    await provider?.close();
    provider = undefined;
  });
  return async (script) => {
    provider = await startFakeProvider({ script });
    return provider;
  };
}
