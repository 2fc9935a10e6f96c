/**
 * In-process workers for tests: each on its own store (own pool, own LISTEN connection, own
 * lease owner id), running a plain agent whose model answers every request from a function.
 */
import { createAgent, ScriptedAdapter, textResponse, type GenerateRequest } from '../../src/index.js';
import type { StreamChunk } from '../../src/model/stream.js';
import { PgStore, type PgOpenSession } from '../../src/postgres/index.js';
import { persist } from '../../src/store/index.js';
import { Worker, type WorkerOptions } from '../../src/worker/worker.js';
import type { Session } from '../../src/session/index.js';
import { pgUrl } from '../postgres/support/pg.js';

/** A scripted adapter that never runs out: each request is answered by `fn`. */
export class Responder extends ScriptedAdapter {
  constructor(private readonly fn: (req: GenerateRequest) => readonly StreamChunk[] | Promise<readonly StreamChunk[]>) {
    super([]);
  }
  override async *stream(request: GenerateRequest): AsyncGenerator<StreamChunk> {
    this.push((r) => this.fn(r));
    yield* super.stream(request);
  }
}

/** The text of the last user message a request holds. */
export function lastUserText(req: GenerateRequest): string {
  for (let i = req.messages.length - 1; i >= 0; i--) {
    const m = req.messages.at(i)!;
    if (m.role !== 'user') continue;
    const t = m.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    if (t) return t;
  }
  return '';
}

export const echo = (req: GenerateRequest): readonly StreamChunk[] => textResponse(`echo: ${lastUserText(req)}`);

export interface TestWorker {
  worker: Worker;
  store: PgStore;
  /** Every session object this worker held, in order. */
  sessions: Session[];
  lines: string[];
}

export async function startWorker(
  schema: string,
  opts: {
    url?: string;
    leaseMs?: number;
    model?: (req: GenerateRequest) => readonly StreamChunk[] | Promise<readonly StreamChunk[]>;
  } & Partial<Omit<WorkerOptions, 'store' | 'agentFor'>> = {},
): Promise<TestWorker> {
  const { url, leaseMs, model, ...rest } = opts;
  const store = new PgStore({ url: url ?? pgUrl!, schema, role: 'worker', leaseMs: leaseMs ?? 5000, poolSize: 4, connectTimeoutMs: 1000 });
  const sessions: Session[] = [];
  const lines: string[] = [];
  const worker = new Worker({
    store,
    idleMs: 300,
    pollMs: 250,
    log: (l) => lines.push(l),
    ...rest,
    agentFor: async (stored: PgOpenSession) => {
      sessions.push(stored.session);
      const agent = createAgent({
        model: 'scripted:demo',
        adapters: new Responder(model ?? echo),
        session: stored.session,
        plugins: [persist(stored)],
        retry: false,
      });
      return { agent, close: () => agent.dispose() };
    },
  });
  await worker.start();
  return { worker, store, sessions, lines };
}

export async function until(cond: () => boolean | Promise<boolean>, ms = 30_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
