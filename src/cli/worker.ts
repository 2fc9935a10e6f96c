/**
 * `dsh worker`: run sessions of the PostgreSQL store (DSH_STORE) for whoever queues input for
 * them (`dsh serve`, or any client of the database), each in its own workspace (the session's
 * cwd) with the coding agent, as `dsh run` would. Several workers, on any hosts, share the work;
 * a worker that dies has its sessions taken over once their leases expire (src/worker). Progress
 * goes to stderr. The first Ctrl-C (or SIGTERM) stops claiming and lets running turns finish for
 * --grace-ms, then cancels them and releases every session; a second one leaves at once.
 */
import { createCodingAgent } from '../coding/agent.js';
import { persist } from '../store/index.js';
import { Worker } from '../worker/worker.js';
import { agentSetup } from './agent/start.js';
import type { ModelFlags } from './agent/flags.js';
import { EXIT_OK, EXIT_SIGINT } from './errors.js';
import type { Io } from './output.js';
import { pgStoreFor } from './store.js';
import { oneLine } from './text.js';

export interface WorkerCliOptions extends ModelFlags {
  concurrency?: number;
  leaseMs?: number;
  idleMs?: number;
  pollMs?: number;
  graceMs?: number;
  onTakeover?: 'continue' | 'wait';
}

export async function runWorker(opts: WorkerCliOptions, io: Io): Promise<number> {
  const store = await pgStoreFor(io.env, 'dsh worker', {
    role: 'worker',
    ...(opts.leaseMs !== undefined ? { leaseMs: opts.leaseMs } : {}),
  });
  const say = (line: string): void => {
    io.err.line(`worker: ${oneLine(line)}`);
    io.err.flush();
  };
  // The model and its key, checked once before any session is taken (each session's workspace
  // may still add a project config).
  await agentSetup(process.cwd(), opts, io);
  const worker = new Worker({
    store,
    ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}),
    ...(opts.idleMs !== undefined ? { idleMs: opts.idleMs } : {}),
    ...(opts.pollMs !== undefined ? { pollMs: opts.pollMs } : {}),
    ...(opts.onTakeover !== undefined ? { onTakeover: opts.onTakeover } : {}),
    log: say,
    agentFor: async (stored) => {
      const cwd = stored.session.header.cwd ?? process.cwd();
      const setup = await agentSetup(cwd, opts, io);
      const coding = await createCodingAgent({ ...setup.coding, session: stored.session, plugins: [persist(stored)] });
      return { agent: coding.agent, close: () => coding.close() };
    },
  });
  let signals = 0;
  let stopped!: () => void;
  const stop = new Promise<void>((r) => (stopped = r));
  const removers: (() => void)[] = [];
  const proc = io.proc;
  if (proc) {
    const on = (): void => {
      if (++signals > 1) proc.exitNow(EXIT_SIGINT);
      stopped();
    };
    removers.push(proc.onSignal('SIGINT', on), proc.onSignal('SIGTERM', on));
  }
  try {
    await worker.start();
    say(`${store.owner} (pid ${process.pid}) on ${store.location}; lease ${store.leaseMs} ms; up to ${opts.concurrency ?? 8} sessions`);
    await stop;
    say('stopping: no more claims; running turns get a grace period');
    await worker.stop(opts.graceMs ?? 10_000);
  } finally {
    for (const r of removers) r();
    await store.close();
  }
  return EXIT_OK;
}
