/**
 * `Worker`: runs sessions of a PostgreSQL store for whoever queued input for them (`dsh serve`,
 * another process, SQL). Any number of workers on any number of hosts share one store:
 *
 * - **Claiming.** A worker takes a session with queued input, or one whose worker died (its
 *   lease expired unreleased), with `FOR UPDATE SKIP LOCKED` (queue.ts): racing workers take
 *   different sessions. Taking it takes its lease; the lease is renewed on a heartbeat while the
 *   worker holds the session, and released once the session has been idle for `idleMs`.
 * - **Applying input.** Each queued input enters the agent through its public API (`prompt`,
 *   `steer`, `inject`, `cancel`), with the message id `input-<id>`, so the log records it (an
 *   `agent/inbox/spliced` event). Its row is marked applied once that event is durable. A new
 *   holder first reconciles: an input whose message id is already in the log was applied, and is
 *   only marked. So every input enters the log exactly once.
 * - **Takeover.** Opening a session a dead worker held closes its dangling turn with the
 *   crash-repair closers (the store does that on open). With `onTakeover: 'continue'` the worker
 *   then starts a turn with a recorded notice asking the model to continue the interrupted work,
 *   and the model sees the interrupted calls' results (TOOL_OUTCOME_UNKNOWN: they may have run).
 *   The log is exactly once; a tool's side effects are at least once (docs/scale.md).
 * - **Fencing.** A worker that loses its lease (cut off from the database past the lease, or
 *   paused) is refused by the database on its next append; its handle then refuses every append,
 *   the worker cancels the agent, and drops the session without writing anything more.
 */
import type { Agent } from '../agent/agent.js';
import type { UserMessage } from '../model/message.js';
import type { SessionEvent } from '../session/index.js';
import type { StoreError } from '../store/errors.js';
import type { PgStore } from '../postgres/store.js';
import type { PgOpenSession } from '../postgres/open-session.js';
import { inputIdOf, inputMessageId, type QueuedInput } from '../postgres/queue.js';

/** An agent running one session for the worker; `close` disposes it (and what it started). */
export interface WorkerAgent {
  agent: Agent;
  close(): Promise<void>;
}

export interface WorkerOptions {
  /** The store (its `role` should be `worker`, so other workers take over its sessions if it dies). */
  store: PgStore;
  /** An agent on `stored.session`, with `persist(stored)` among its plugins. */
  agentFor(stored: PgOpenSession): Promise<WorkerAgent>;
  /** Sessions held at once (default 8). */
  concurrency?: number;
  /** Release a session after it has been idle this long (default 2 s). */
  idleMs?: number;
  /** Look for work this often even without a notification (default 2 s). */
  pollMs?: number;
  /** After taking over a session whose turn a dead worker left open: start a turn to continue it (default), or just wait for input. */
  onTakeover?: 'continue' | 'wait';
  /** Progress lines (claims, takeovers, releases, failures). */
  log?: (line: string) => void;
  /** @internal Fault injection for tests: runs between the flush of applied input and its mark. */
  faults?: { beforeMarkApplied?: (stored: PgOpenSession, inputIds: readonly number[]) => void | Promise<void> };
}

const ids = (inputs: readonly QueuedInput[]): number[] => inputs.map((i) => i.id);

export const TAKEOVER_NOTICE =
  'The previous turn was interrupted: the worker running it stopped, and another worker took the session over. Tool calls it left ' +
  'without a result are marked above; they may or may not have taken effect. Check the state, then continue the task.';

function inputMessage(input: QueuedInput): UserMessage {
  return { id: inputMessageId(input.id), role: 'user', content: input.content ?? [], source: { kind: 'user' } };
}

/**
 * Input ids the log shows applied: messages spliced into the inbox (`input-<id>`), and cancels
 * (`worker/cancel` markers), from this session's own events on.
 */
function appliedInLog(events: Iterable<SessionEvent>): Set<number> {
  const out = new Set<number>();
  for (const e of events) {
    if (e.type === 'worker/cancel') {
      out.add(e.data.inputId);
      continue;
    }
    if (e.type !== 'agent/inbox/spliced') continue;
    for (const m of e.data.inserted) {
      const id = inputIdOf(m.id);
      if (id !== undefined) out.add(id);
    }
  }
  return out;
}

/** One session a worker holds. */
class Held {
  private running: WorkerAgent | undefined;
  private applying: Promise<void> | undefined;
  private again = false;
  private idleTimer: NodeJS.Timeout | undefined;
  private ending: Promise<void> | undefined;
  private readonly offs: (() => void)[] = [];
  /** Inputs this holder put in the log. */
  private readonly applied = new Set<number>();

  constructor(
    private readonly w: Worker,
    readonly stored: PgOpenSession,
  ) {}

  get id(): string {
    return this.stored.id;
  }

  async start(): Promise<void> {
    const s = this.stored;
    this.offs.push(s.onLeaseLost((e) => void this.fenced(e)));
    this.running = await this.w.opts.agentFor(s);
    const agent = this.running.agent;
    this.offs.push(agent.on('agent/status', ({ status }) => (status === 'idle' ? this.scheduleIdle() : this.cancelIdle())));
    if (s.tookOver)
      this.w.say(
        `took over session ${s.id} from pid ${s.tookOver.pid} on ${s.tookOver.host} (epoch ${s.tookOver.epoch} → ${s.epoch}` +
          `)${s.recovery.repaired.length ? `; closed its open turn (${s.recovery.repaired.join(', ')})` : ''}`,
      );
    // Serialised with every later read of the queue: nothing is applied twice by this holder.
    this.applying = (async () => {
      const queued = await this.reconcile();
      if (s.recovery.repaired.length > 0 && s.tookOver && this.w.opts.onTakeover !== 'wait' && !queued.some((i) => i.kind === 'cancel')) {
        agent.prompt({
          id: `takeover-${s.epoch}`,
          role: 'user',
          content: [{ type: 'text', text: TAKEOVER_NOTICE }],
          source: { kind: 'plugin', plugin: 'dsh-worker', form: 'notice', summary: 'takeover' },
        });
      }
      // Input an earlier holder put in the inbox but never ran (it is rebuilt from the log).
      agent.resume();
      await this.apply(queued);
    })().finally(() => {
      this.applying = undefined;
    });
    await this.applying;
    this.scheduleIdle();
    if (this.again) void this.wake();
  }

  /** Mark applied what the log already holds; return what is still to apply. */
  private async reconcile(): Promise<QueuedInput[]> {
    const queued = await this.w.store.inputs(this.id);
    const inLog = appliedInLog(this.stored.session.since(this.stored.session.header.seedLength ?? 0));
    const done = queued.filter((i) => inLog.has(i.id)).map((i) => i.id);
    if (done.length > 0) await this.w.store.markApplied(this.stored, done);
    return queued.filter((i) => !inLog.has(i.id));
  }

  /** Apply queued input (read now unless given), serially; a call during one runs once more after it. */
  wake(given?: QueuedInput[]): Promise<void> {
    if (this.ending) return Promise.resolve();
    if (this.applying) {
      this.again = true;
      return this.applying;
    }
    this.applying = (async () => {
      let next = given;
      do {
        this.again = false;
        try {
          await this.apply(next ?? (await this.w.store.inputs(this.id)));
        } catch (e) {
          this.w.say(`session ${this.id}: cannot apply input: ${(e as Error).message}`);
        }
        next = undefined;
      } while (this.again && !this.ending);
    })().finally(() => {
      this.applying = undefined;
    });
    return this.applying;
  }

  private async apply(all: readonly QueuedInput[]): Promise<void> {
    const agent = this.running?.agent;
    // Applied by this holder but not yet marked (the mark follows the flush): never again.
    const inputs = all.filter((i) => !this.applied.has(i.id));
    if (!agent || inputs.length === 0 || this.ending) return;
    for (const i of inputs) this.applied.add(i.id);
    // In queue order, in one synchronous run: a prompt and the context queued with it enter together.
    for (const input of inputs) {
      if (input.kind === 'prompt') agent.prompt(inputMessage(input));
      else if (input.kind === 'steer') agent.steer(inputMessage(input));
      else if (input.kind === 'inject') agent.inject(inputMessage(input));
      else {
        // A cancel leaves no message behind (and none at all when nothing runs): the marker is
        // what tells a later holder it was applied, so it is never applied twice.
        this.stored.session.append('worker/cancel', { inputId: input.id }, { ignorable: true });
        agent.cancel({ kind: 'user' });
      }
    }
    this.cancelIdle();
    // The splice events must be durable before the rows say "applied" (a crash in between is
    // settled by reconcile: the log holds the message ids).
    const r = await this.stored.flush();
    if (!r.ok) throw r.error;
    await this.w.opts.faults?.beforeMarkApplied?.(this.stored, ids(inputs));
    await this.w.store.markApplied(this.stored, ids(inputs));
    if (agent.status === 'idle') this.scheduleIdle();
  }

  private scheduleIdle(): void {
    this.cancelIdle();
    if (this.ending) return;
    this.idleTimer = setTimeout(() => void this.maybeRelease(), this.w.opts.idleMs ?? 2000);
    this.idleTimer.unref();
  }

  private cancelIdle(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  private async maybeRelease(): Promise<void> {
    this.idleTimer = undefined;
    if (this.ending || this.running?.agent.status !== 'idle') return; // a status change reschedules
    // Busy reading the queue (a poll): look again later rather than never.
    if (this.applying) return this.scheduleIdle();
    const queued = await this.w.store.inputs(this.id, { limit: 1 }).catch(() => undefined);
    if (queued === undefined || queued.length > 0 || this.applying || this.running?.agent.status !== 'idle') {
      this.scheduleIdle();
      if (queued?.length) void this.wake();
      return;
    }
    await this.end('idle');
  }

  /** The database refused this worker: stop the agent and drop the session, writing nothing. */
  private async fenced(e: StoreError): Promise<void> {
    this.w.say(`session ${this.id}: lost the lease (${e.code}); dropping it: ${e.message}`);
    await this.end('fenced');
  }

  /** Resolves when the agent has nothing to do. */
  idle(): Promise<void> {
    return this.running ? this.running.agent.whenIdle() : Promise.resolve();
  }

  /** Stop: cancel what runs, dispose the agent, close (release) or drop the session. */
  end(why: 'idle' | 'stop' | 'fenced'): Promise<void> {
    this.ending ??= (async () => {
      this.cancelIdle();
      for (const off of this.offs.splice(0)) off();
      const running = this.running;
      if (running) {
        if (why !== 'idle') running.agent.cancel({ kind: 'disposed' }, { keepInbox: true });
        try {
          await running.close();
        } catch (e) {
          this.w.say(`session ${this.id}: closing its agent failed: ${(e as Error).message}`);
        }
      }
      if (this.stored.fenced) this.stored.abandon();
      else {
        const r = await this.stored.close();
        if (!r.ok) {
          this.w.say(`session ${this.id}: could not close cleanly (${r.error.code}): ${r.error.message}; its lease expires by itself`);
          this.stored.abandon();
        }
      }
      this.w.released(this, why);
    })();
    return this.ending;
  }
}

export class Worker {
  readonly opts: WorkerOptions;
  readonly store: PgStore;
  private readonly held = new Map<string, Held>();
  private claiming: Promise<void> | undefined;
  private claimAgain = false;
  private pollTimer: NodeJS.Timeout | undefined;
  private offInput: (() => void) | undefined;
  private stopping = false;
  private readonly idleWaiters: (() => void)[] = [];

  constructor(opts: WorkerOptions) {
    this.opts = opts;
    this.store = opts.store;
  }

  /** Sessions held now. */
  get sessions(): string[] {
    return [...this.held.keys()];
  }

  say(line: string): void {
    this.opts.log?.(line);
  }

  /** Start listening for input and claiming work. Resolves once listening. */
  async start(): Promise<void> {
    this.offInput = await this.store.onInput(() => this.kick());
    this.pollTimer = setInterval(() => this.kick(), this.opts.pollMs ?? 2000);
    this.pollTimer.unref();
    this.kick();
  }

  /** Something may have arrived: held sessions read their queue, and free capacity claims. */
  private kick(): void {
    if (this.stopping) return;
    for (const h of this.held.values()) void h.wake();
    void this.claimLoop();
  }

  private claimLoop(): Promise<void> {
    if (this.claiming) {
      this.claimAgain = true;
      return this.claiming;
    }
    this.claiming = (async () => {
      do {
        this.claimAgain = false;
        while (!this.stopping && this.held.size < (this.opts.concurrency ?? 8)) {
          let claimed;
          try {
            claimed = await this.store.claim();
          } catch (e) {
            this.say(`cannot claim work: ${(e as Error).message}`);
            return;
          }
          if (!claimed) break;
          await this.take(claimed.lease.sessionId, claimed);
        }
      } while (this.claimAgain && !this.stopping);
    })().finally(() => {
      this.claiming = undefined;
    });
    return this.claiming;
  }

  private async take(id: string, claimed: NonNullable<Awaited<ReturnType<PgStore['claim']>>>): Promise<void> {
    let stored: PgOpenSession;
    try {
      stored = await this.store.open(id, { lease: claimed.lease, ...(claimed.tookOver ? { tookOver: claimed.tookOver } : {}) });
    } catch (e) {
      this.say(`cannot open session ${id}: ${(e as Error).message}`);
      return;
    }
    const h = new Held(this, stored);
    this.held.set(id, h);
    this.say(`holding session ${id} (epoch ${stored.epoch})`);
    try {
      await h.start();
    } catch (e) {
      this.say(`session ${id}: ${(e as Error).message}`);
      await h.end('fenced');
    }
  }

  /** @internal a session let go */
  released(h: Held, why: string): void {
    if (this.held.get(h.id) === h) this.held.delete(h.id);
    this.say(`released session ${h.id} (${why})`);
    if (this.held.size === 0) for (const w of this.idleWaiters.splice(0)) w();
    if (why === 'idle') this.kick();
  }

  /** Resolves when the worker holds no session. */
  whenEmpty(): Promise<void> {
    if (this.held.size === 0) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  /**
   * Stop: claim nothing more, let running turns finish for up to `graceMs`, then cancel what is
   * still running (input still pending stays in the log's inbox, and the next holder resumes it)
   * and close every session, releasing its lease.
   */
  async stop(graceMs = 0): Promise<void> {
    this.stopping = true;
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.offInput?.();
    await this.claiming;
    if (graceMs > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all([...this.held.values()].map((h) => h.idle())),
        new Promise<void>((r) => (timer = setTimeout(r, graceMs))),
      ]);
      clearTimeout(timer);
    }
    await Promise.all([...this.held.values()].map((h) => h.end('stop')));
  }
}
