import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AttemptWatchdog } from '../../src/llm/watchdog.js';

// A real HTTP server on 127.0.0.1 and Node's own fetch (undici): /moved answers 307 to /echo,
// which answers with the method, path and body it received.
let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      if (req.url === '/moved') {
        res.writeHead(307, { location: '/echo' });
        res.end();
      } else res.end(`${req.method} ${req.url} ${body}`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

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

describe('AttemptWatchdog.fetch redirect mode', () => {
  it("sends a request whose redirects were left to the default with redirect 'error' (no cloned body)", async () => {
    const { dog, modes } = watched();
    const r = await dog.fetch(`${base}/echo`, { method: 'POST', body: 'hello' });
    expect(await r.text()).toBe('POST /echo hello');
    expect(modes).toEqual(['error']);
    dog.dispose();
  });

  it('follows a provider that redirects, by sending the request again under the default mode', async () => {
    const { dog, modes } = watched();
    const r = await dog.fetch(`${base}/moved`, { method: 'POST', body: 'hello' });
    expect(await r.text()).toBe('POST /echo hello');
    expect(modes).toEqual(['error', undefined]);
    dog.dispose();
  });

  it('keeps a redirect mode the caller chose, and a body that cannot be sent twice', async () => {
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
    expect(await r.text()).toBe('POST /echo streamed');
    expect(modes).toEqual(['manual', undefined]);
    dog.dispose();
  });

  it('does not send again after a failure that is not a redirect', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const { dog, modes } = watched();
    await expect(dog.fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: 'x' })).rejects.toThrow(TypeError);
    expect(modes).toEqual(['error']);
    dog.dispose();
  });
});
