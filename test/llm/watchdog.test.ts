import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AttemptWatchdog } from '../../src/llm/watchdog.js';

// Real HTTP servers on 127.0.0.1 and Node's own fetch (undici). On `base`: /moved answers 307 to
// /echo, /see-other 303 and /found 302 to /echo, /away 307 to the other server (another origin:
// another port), /loop 307 to itself; /echo answers with the method, path, content type, API key
// and body it received. `other` records every request that reaches it.
let server: Server;
let base: string;
let other: Server;
let otherBase: string;
const otherSaw: string[] = [];
const REDIRECTS: Record<string, [number, () => string]> = {
  '/moved': [307, () => '/echo'],
  '/see-other': [303, () => '/echo'],
  '/found': [302, () => '/echo'],
  '/away': [307, () => `${otherBase}/x`],
  '/loop': [307, () => '/loop'],
};

async function listen(s: Server): Promise<string> {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  other = createServer((req, res) => {
    otherSaw.push(`${req.method} ${req.url} ${String(req.headers['x-api-key'])}`);
    res.end('other');
  });
  otherBase = await listen(other);
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const to = REDIRECTS[req.url ?? ''];
      if (to) {
        res.writeHead(to[0], { location: to[1]() });
        res.end();
      } else res.end(`${req.method} ${req.url} ${String(req.headers['content-type'])} ${String(req.headers['x-api-key'])} ${body}`);
    });
  });
  base = await listen(server);
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  await new Promise<void>((r) => other.close(() => r()));
});

/** A POST as the SDKs send one: a JSON string body and a key header undici would not drop. */
const post = (body: string): RequestInit => ({
  method: 'POST',
  body,
  headers: { 'content-type': 'application/json', 'x-api-key': 'k-secret' },
});

/** A watchdog over Node's fetch that records the redirect mode of every request it sends. */
function watched(): { dog: AttemptWatchdog; modes: (RequestRedirect | undefined)[] } {
  const modes: (RequestRedirect | undefined)[] = [];
  const baseFetch: typeof fetch = (input, init) => {
    modes.push(init?.redirect);
    return fetch(input, init);
  };
  const dog = new AttemptWatchdog({ idleTimeoutMs: 10_000, baseFetch });
  return { dog, modes };
}

describe('AttemptWatchdog.fetch: how a request goes out, and redirects', () => {
  it("sends a request whose redirects were left to the default with redirect 'error' (no cloned body)", async () => {
    const { dog, modes } = watched();
    const r = await dog.fetch(`${base}/echo`, post('hello'));
    expect(await r.text()).toBe('POST /echo application/json k-secret hello');
    expect(modes).toEqual(['error']);
    dog.dispose();
  });

  it('follows a redirect within the origin, hop by hop, keeping a 307 a POST with its body', async () => {
    const { dog, modes } = watched();
    const r = await dog.fetch(`${base}/moved`, post('hello'));
    expect(await r.text()).toBe('POST /echo application/json k-secret hello');
    // Sent once under 'error' (refused: a redirect), then again, and to the target, under 'manual'.
    expect(modes).toEqual(['error', 'manual', 'manual']);
    dog.dispose();
  });

  it('turns the request into a GET without its body and content type after a 303, and a POST after a 302', async () => {
    for (const path of ['/see-other', '/found']) {
      const { dog } = watched();
      const r = await dog.fetch(`${base}${path}`, post('hello'));
      expect(await r.text(), path).toBe('GET /echo undefined k-secret ');
      dog.dispose();
    }
  });

  it('does not follow a redirect to another origin: the request and its key never reach it', async () => {
    otherSaw.length = 0;
    const { dog } = watched();
    const r = await dog.fetch(`${base}/away`, post('hello'));
    expect(r.status).toBe(307);
    const body = (await r.json()) as { error: { message: string } };
    expect(body.error.message).toContain(`redirected the request to ${otherBase}, another origin than ${base}`);
    expect(otherSaw).toEqual([]);
    dog.dispose();
  });

  it('does not follow a streamed body to another origin either', async () => {
    otherSaw.length = 0;
    const { dog } = watched();
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('streamed'));
        c.close();
      },
    });
    const init = { method: 'POST', body: stream, duplex: 'half', headers: { 'x-api-key': 'k-secret' } } as RequestInit;
    const r = await dog.fetch(`${base}/away`, init);
    expect(r.status).toBe(307);
    expect(((await r.json()) as { error: { message: string } }).error.message).toContain(`redirected the request to ${otherBase}`);
    expect(otherSaw).toEqual([]);
    dog.dispose();
  });

  it('gives up after 20 redirects, as undici does', async () => {
    const { dog, modes } = watched();
    await expect(dog.fetch(`${base}/loop`, post('x'))).rejects.toThrow(TypeError);
    // The first try, then the original request and 20 redirects followed under 'manual'.
    expect(modes.length).toBe(22);
    dog.dispose();
  });

  it('keeps a redirect mode the caller chose; sends a body that cannot be sent twice once', async () => {
    const { dog, modes } = watched();
    const manual = await dog.fetch(`${base}/moved`, { method: 'POST', body: 'x', redirect: 'manual' });
    expect(manual.status).toBe(307);
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('streamed'));
        c.close();
      },
    });
    // (A streamed body cannot follow a redirect in any mode: it is sent once, as it is.)
    const r = await dog.fetch(`${base}/echo`, { method: 'POST', body: stream, duplex: 'half' } as RequestInit);
    expect(await r.text()).toBe('POST /echo undefined undefined streamed');
    expect(modes).toEqual(['manual', 'manual']);
    dog.dispose();
  });

  it('does not send again after a failure that is not a redirect', async () => {
    const closed = createServer();
    const url = await listen(closed);
    await new Promise<void>((r) => closed.close(() => r()));
    const { dog, modes } = watched();
    await expect(dog.fetch(`${url}/`, { method: 'POST', body: 'x' })).rejects.toThrow(TypeError);
    expect(modes).toEqual(['error']);
    dog.dispose();
  });
});
