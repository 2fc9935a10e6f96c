/**
 * `dsh serve`: the HTTP API (src/serve) over the PostgreSQL store DSH_STORE names. It queues
 * input; `dsh worker` processes (any number, any host) run the sessions. Prints the address on
 * stdout, and the bearer token when it made one (DSH_SERVE_TOKEN supplies a fixed one).
 */
import { randomBytes } from 'node:crypto';
import { startServe } from '../serve/index.js';
import { CliError, EXIT_OK } from './errors.js';
import type { Io } from './output.js';
import { pgStoreFor } from './store.js';
import { waitForSignal } from './view.js';
import { packageVersion } from './version.js';

export interface ServeCliOptions {
  port?: number;
  host?: string;
  maxStreams?: number;
}

export async function runServe(opts: ServeCliOptions, io: Io, until: Promise<unknown> = waitForSignal()): Promise<number> {
  const given = io.env.DSH_SERVE_TOKEN?.trim();
  if (given !== undefined && given !== '' && given.length < 16)
    throw new CliError('USAGE', 'DSH_SERVE_TOKEN must be at least 16 characters');
  const token = given || randomBytes(32).toString('base64url');
  const store = await pgStoreFor(io.env, 'dsh serve', { role: 'client' });
  let server: Awaited<ReturnType<typeof startServe>>;
  try {
    server = await startServe({
      store,
      token,
      version: packageVersion(),
      ...(opts.host !== undefined ? { host: opts.host } : {}),
      ...(opts.port !== undefined ? { port: opts.port } : {}),
      ...(opts.maxStreams !== undefined ? { maxStreams: opts.maxStreams } : {}),
    });
  } catch (e) {
    await store.close();
    const code = (e as NodeJS.ErrnoException).code;
    if (opts.port !== undefined && (code === 'EADDRINUSE' || code === 'EACCES'))
      throw new CliError(
        'PORT_UNAVAILABLE',
        `--port ${opts.port}: cannot listen there (${code}); pick another port, or leave --port out for any free one`,
        { cause: e },
      );
    throw e;
  }
  io.out.line(server.url);
  if (!given) io.out.line(`token ${token}`);
  io.out.flush();
  io.err.line(
    `serving ${store.location} on ${server.url} (loopback only); requests need Authorization: Bearer <token>; ${server.url}` +
      '/openapi.json describes the API. Run dsh worker to execute sessions. Ctrl-C stops.',
  );
  io.err.flush();
  try {
    await until;
  } finally {
    await server.close();
    await store.close();
  }
  return EXIT_OK;
}
