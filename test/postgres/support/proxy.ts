/**
 * A TCP proxy on 127.0.0.1 in front of the test database, to cut a client off the way a network
 * does: `cut()` destroys every open connection and makes new ones hang (as a partition would,
 * not refuse them); `restore()` lets connections through again.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface PgProxy {
  /** The database URL through the proxy. */
  url: string;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
  /** Connections accepted so far. */
  readonly accepted: number;
}

export async function startProxy(targetUrl: string): Promise<PgProxy> {
  const target = new URL(targetUrl);
  const host = target.hostname;
  const port = Number(target.port || 5432);
  let mode: 'open' | 'cut' = 'open';
  const pairs = new Set<[Socket, Socket]>();
  const waiting = new Set<Socket>();
  let accepted = 0;

  const pipe = (client: Socket): void => {
    const upstream = connect(port, host);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const end = (): void => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  };

  const server: Server = createServer((client) => {
    accepted++;
    client.on('error', () => client.destroy());
    if (mode === 'open') pipe(client);
    else {
      // A partitioned network: the connection neither opens nor fails; it just waits.
      client.pause();
      waiting.add(client);
      client.on('close', () => waiting.delete(client));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(targetUrl);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as AddressInfo).port);

  return {
    url: proxied.toString(),
    get accepted() {
      return accepted;
    },
    cut() {
      mode = 'cut';
      for (const [a, b] of [...pairs]) {
        a.destroy();
        b.destroy();
      }
      pairs.clear();
    },
    restore() {
      mode = 'open';
      for (const c of [...waiting]) {
        waiting.delete(c);
        c.resume();
        pipe(c);
      }
    },
    async close() {
      for (const [a, b] of pairs) {
        a.destroy();
        b.destroy();
      }
      for (const c of waiting) c.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
