/**
 * `Session`: the append-only event log, the single source of truth of an agent's interaction.
 *
 * Invariants enforced here, before an event commits (a refusal throws a `SessionError` and
 * leaves the log, surface and trace exactly as they were):
 * - data is lossless JSON, copied and deep-frozen (`json.ts`);
 * - known event types have their documented shapes (`validate.ts`);
 * - `seq` is the log length; `time` is epoch ms from the session clock;
 * - surface metadata appears exactly on the three surface types, with valid provenance
 *   (`surface.ts`);
 * - turns and steps nest and number correctly and tool results answer recorded calls
 *   (`trace.ts`);
 * - no append from inside a `session/event` listener (it would reorder what listeners see).
 *
 * After commit, subscribers get the frozen event; a throwing subscriber is reported and neither
 * undoes the append nor stops the others.
 */
import { randomUUID } from 'node:crypto';
import type { Message } from '../model/message.js';
import {
  SESSION_FORMAT_VERSION,
  type AppendOptions,
  type EpochHeader,
  type RequestContext,
  type SessionEvent,
  type SessionEventMap,
  type SessionEventType,
  type SessionHeader,
  type SurfaceOp,
} from './events.js';
import { SessionError } from './errors.js';
import { freezeJsonInPlace, snapshotJson } from './json.js';
import { SurfaceState, type SurfaceReplacement } from './surface.js';
import { TraceState } from './trace.js';
import { MessageProjection } from './derive.js';
import { validateEnvelope, validateEventData, type ValidationOptions } from './validate.js';
import { validateHeader } from './header.js';
import { canonicalHeader } from './request-header.js';

export type SessionListener = (event: SessionEvent) => void | Promise<void>;

/** A pre-commit check may veto an event by throwing; it must not append. */
export type PreCommitCheck = (candidate: EventCandidate, session: Session) => void;

export interface EventCandidate {
  readonly type: string;
  readonly seq: number;
  readonly time: number;
  readonly data: unknown;
  readonly surfaceOp?: SurfaceOp | undefined;
  readonly sourceEventSeqs?: readonly number[] | undefined;
}

export interface SessionOptions {
  /** Session id; also the header id. Minted when absent. */
  id?: string;
  /** Header fields; `version`, `id` and `createdAt` are filled in when absent. */
  header?: Partial<SessionHeader>;
  /** Source of event times (epoch ms). Defaults to `Date.now`. */
  clock?: () => number;
  /** Where a throwing subscriber's error goes. Defaults to stderr. */
  onListenerError?: (error: unknown, event: SessionEvent) => void;
  /** Placeholder handling and similar leniencies for seeds read from fixtures. */
  validation?: ValidationOptions;
}

export interface SeedOptions extends SessionOptions {
  /** Existing events to start from (resume, fork, replay). Validated like appends. */
  seed?: readonly unknown[];
}

type OptsArg<K extends SessionEventType> = K extends 'user/message' | 'assistant/message' | 'tool/result'
  ? [opts: AppendOptions<K>]
  : [opts?: AppendOptions<K>];

function defaultListenerError(error: unknown, event: SessionEvent): void {
  console.error(`[dsh] session/event listener threw on ${event.type} #${event.seq}:`, error);
}

export class Session {
  readonly id: string;
  readonly header: Readonly<SessionHeader>;
  /** Seq of the first event written by this process (the seed length). */
  readonly firstLiveSeq: number;

  private readonly log: SessionEvent[] = [];
  private snapshot: readonly SessionEvent[] | undefined;
  private readonly surfaceState = new SurfaceState();
  private readonly traceState = new TraceState();
  private readonly projection = new MessageProjection();
  private readonly listeners: SessionListener[] = [];
  private readonly preCommit: PreCommitCheck[] = [];
  /** Set while an append is being checked, committed or published: no append may nest in it. */
  private busy: 'appending' | 'publishing' | undefined;
  private readonly clock: () => number;
  private readonly onListenerError: (error: unknown, event: SessionEvent) => void;
  private lastHeaderSeq = -1;
  private lastContextSeq = -1;
  private headerCache: { seq: number; header: EpochHeader } | undefined;

  private constructor(header: SessionHeader, opts: SessionOptions, seed: (log: Session) => void, markSeed: boolean) {
    this.header = Object.freeze({ ...header });
    this.id = header.id;
    this.clock = opts.clock ?? Date.now;
    this.onListenerError = opts.onListenerError ?? defaultListenerError;
    seed(this);
    this.firstLiveSeq = this.log.length;
    // The marker is written before anyone can subscribe, so it is never published.
    if (markSeed && this.log[this.log.length - 1]?.type !== 'session/end-seed') this.append('session/end-seed', {});
  }

  // ------------------------------------------------------------------------------------------
  // Construction

  /** A new session, optionally seeded with foreign events (copied and validated like appends). */
  static create(opts: SeedOptions = {}): Session {
    const header = makeHeader(opts);
    const seed = opts.seed;
    return new Session(
      header,
      opts,
      (s) => {
        if (seed) for (let i = 0; i < seed.length; i++) s.adopt(seed[i], i, true, opts.validation);
      },
      seed !== undefined,
    );
  }

  /**
   * A session restored from storage. Ownership of `events` transfers: they are validated and
   * frozen in place, not copied. The header is validated as stored.
   */
  static restore(header: unknown, events: unknown[], opts: Omit<SessionOptions, 'id' | 'header'> = {}): Session {
    const h = validateHeader(header, opts.validation);
    return new Session(
      h,
      opts,
      (s) => {
        for (let i = 0; i < events.length; i++) s.adopt(events[i], i, false, opts.validation);
      },
      true,
    );
  }

  /** Validate and take one stored event (seed path). */
  private adopt(raw: unknown, index: number, copy: boolean, validation: ValidationOptions | undefined): void {
    try {
      validateEnvelope(raw, index);
      const e = raw as SessionEvent;
      const ctx = { eventType: e.type, path: '$', seq: index };
      const event = copy ? snapshotJson(e, ctx) : freezeJsonInPlace(e, ctx);
      validateEventData(event.type, index, event.data, validation);
      this.commit(event);
    } catch (err) {
      if (err instanceof SessionError) {
        throw new SessionError(err.code, `seed ${err.message}`, err.details, { cause: err });
      }
      throw err;
    }
  }

  // ------------------------------------------------------------------------------------------
  // Reading

  /** Frozen snapshot of the whole log, shared until the next append. O(n) after an append. */
  get events(): readonly SessionEvent[] {
    return (this.snapshot ??= Object.freeze(this.log.slice()));
  }

  /** Number of events; also the seq the next event gets. */
  get seq(): number {
    return this.log.length;
  }
  get length(): number {
    return this.log.length;
  }

  at(seq: number): SessionEvent | undefined {
    return this.log[seq];
  }

  /** Events from `fromSeq` (inclusive) to the end, without copying the whole log. */
  *since(fromSeq: number): IterableIterator<SessionEvent> {
    for (let i = Math.max(0, fromSeq); i < this.log.length; i++) yield this.log[i]!;
  }

  /** The model-visible history: cached, O(new surface nodes) per call, frozen. */
  deriveMessages(): readonly Message[] {
    return this.projection.derive(this.surfaceState, (seq) => this.log[seq]!);
  }

  /** The ordered surface: a frozen snapshot, shared until the surface next changes. */
  get surface(): { readonly nodes: readonly number[]; readonly replaceGeneration: number; readonly replacements: readonly SurfaceReplacement[] } {
    return this.surfaceState.view();
  }

  /** Turn/step position: what is open and what was numbered last (a frozen snapshot). */
  get trace(): { readonly openTurn: number | undefined; readonly openStep: number | undefined; readonly lastTurn: number; readonly lastStep: number } {
    const t = this.traceState;
    return Object.freeze({ openTurn: t.openTurn, openStep: t.openStep, lastTurn: t.lastTurn, lastStep: t.lastStep });
  }

  /** The latest `request/header` snapshot (canonical form), if any. */
  requestHeader(): EpochHeader | undefined {
    if (this.lastHeaderSeq < 0) return undefined;
    if (this.headerCache?.seq !== this.lastHeaderSeq) {
      const e = this.log[this.lastHeaderSeq] as SessionEvent<'request/header'>;
      this.headerCache = { seq: this.lastHeaderSeq, header: Object.freeze(canonicalHeader(e.data.header)) };
    }
    return this.headerCache.header;
  }

  /** The latest `request/context`, if any. */
  requestContext(): RequestContext | undefined {
    return this.lastContextSeq < 0 ? undefined : (this.log[this.lastContextSeq] as SessionEvent<'request/context'>).data;
  }

  // ------------------------------------------------------------------------------------------
  // Writing

  /**
   * Append one event. Synchronous: when it returns, the event is committed and published.
   * Returns the frozen logged event (read it back rather than your own input).
   */
  append<K extends SessionEventType>(type: K, data: SessionEventMap[K], ...rest: OptsArg<K>): SessionEvent<K> {
    const seq = this.log.length;
    if (this.busy !== undefined) {
      const where = this.busy === 'publishing' ? 'a session/event listener' : 'another append (a pre-commit check, the clock, or a getter in the data)';
      throw new SessionError('REENTRANT_APPEND', `cannot append "${String(type)}" from inside ${where} (seq ${seq}); schedule it instead`, {
        eventType: String(type),
        seq,
        rule: 'reentrancy',
      });
    }
    this.busy = 'appending';
    let committed: SessionEvent;
    try {
      committed = this.build(type, data, seq, rest[0]);
      this.commit(committed);
    } finally {
      this.busy = undefined;
    }
    this.publish(committed);
    return committed as SessionEvent<K>;
  }

  /** Validate and freeze the new event (no state changes). */
  private build(type: string, data: unknown, seq: number, optsArg: unknown): SessionEvent {
    if (typeof type !== 'string' || type.length === 0) {
      throw new SessionError('INVALID_EVENT', `event type must be a non-empty string, got ${typeof type === 'string' ? '""' : typeof type}`, { seq, rule: 'envelope' });
    }
    const opts = optsArg as { surfaceOp?: SurfaceOp; sourceEventSeqs?: number[]; ignorable?: true } | undefined;
    const frozen = snapshotJson(data, { eventType: type, path: '$.data', seq });
    validateEventData(type, seq, frozen);
    const event: Record<string, unknown> = { type, seq, time: this.clock(), data: frozen };
    if (opts !== undefined) {
      if (opts.ignorable !== undefined) {
        if (opts.ignorable !== true) throw new SessionError('INVALID_EVENT', `event "${type}" at seq ${seq}: ignorable must be true when given`, { eventType: type, seq, rule: 'envelope' });
        event.ignorable = true;
      }
      if (opts.surfaceOp !== undefined) event.surfaceOp = snapshotJson(opts.surfaceOp, { eventType: type, path: '$.surfaceOp', seq });
      if (opts.sourceEventSeqs !== undefined) event.sourceEventSeqs = snapshotJson(opts.sourceEventSeqs, { eventType: type, path: '$.sourceEventSeqs', seq });
    }
    const time = event.time;
    if (typeof time !== 'number' || !Number.isSafeInteger(time)) {
      throw new SessionError('INVALID_EVENT', `the session clock returned ${String(time)}; event times are integer epoch ms`, { eventType: type, seq, rule: 'envelope' });
    }
    return Object.freeze(event) as unknown as SessionEvent;
  }

  /** Check every rule, then commit; a throw anywhere before the push leaves everything untouched. */
  private commit(event: SessionEvent): void {
    this.surfaceState.check(event, (s) => this.log[s]);
    this.traceState.check(event);
    for (const check of this.preCommit) check(event, this);
    this.log.push(event);
    this.snapshot = undefined;
    this.surfaceState.apply(event);
    this.traceState.apply(event);
    if (event.type === 'request/header') this.lastHeaderSeq = event.seq;
    else if (event.type === 'request/context') this.lastContextSeq = event.seq;
  }

  private publish(event: SessionEvent): void {
    if (this.listeners.length === 0) return;
    const snapshot = this.listeners.slice();
    this.busy = 'publishing';
    try {
      for (const l of snapshot) {
        try {
          const r = l(event);
          if (r && typeof (r as Promise<void>).then === 'function') {
            (r as Promise<void>).then(undefined, (err: unknown) => this.onListenerError(err, event));
          }
        } catch (err) {
          this.onListenerError(err, event);
        }
      }
    } finally {
      this.busy = undefined;
    }
  }

  /** Subscribe to committed events (`session/event`). Returns the disposer. */
  subscribe(listener: SessionListener): () => void {
    this.listeners.push(listener);
    return () => {
      const i = this.listeners.indexOf(listener);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  /** Add a check that runs before every later commit and may veto it by throwing. */
  addPreCommitCheck(check: PreCommitCheck): () => void {
    this.preCommit.push(check);
    return () => {
      const i = this.preCommit.indexOf(check);
      if (i >= 0) this.preCommit.splice(i, 1);
    };
  }

  // ------------------------------------------------------------------------------------------
  // Fork

  /**
   * A new session seeded with this log's prefix through `boundary` (an inclusive seq; defaults
   * to the last event). The prefix must not end inside an open turn. Events are frozen, so the
   * child shares them rather than copying.
   */
  fork(boundary?: number, opts: SessionOptions = {}): Session {
    const n = this.log.length;
    const b = boundary ?? n - 1;
    if (boundary !== undefined && (!Number.isSafeInteger(boundary) || boundary < 0 || boundary >= n)) {
      throw new SessionError('INVALID_BOUNDARY', `fork boundary ${String(boundary)} is not a seq of this session (0…${n - 1})`, { seq: boundary, rule: 'fork-boundary' });
    }
    const prefix = this.log.slice(0, b + 1);
    for (let i = prefix.length - 1; i >= 0; i--) {
      const t = prefix[i]!.type;
      if (t === 'turn/end') break;
      if (t === 'turn/start') {
        throw new SessionError('OPEN_TURN', `cannot fork at seq ${b}: turn ${(prefix[i] as SessionEvent<'turn/start'>).data.turn} (opened at seq ${i}) is still open there; pick a seq between turns`, {
          seq: b,
          rule: 'fork-boundary',
        });
      }
    }
    const header: Partial<SessionHeader> = { ...opts.header, parentSession: this.id, seedLength: prefix.length };
    if (this.header.cwd !== undefined && header.cwd === undefined) header.cwd = this.header.cwd;
    if (this.header.delegationDepth !== undefined && header.delegationDepth === undefined) header.delegationDepth = this.header.delegationDepth;
    const childOpts: SessionOptions = { ...opts, header };
    if (childOpts.clock === undefined) childOpts.clock = this.clock;
    return new Session(
      makeHeader(childOpts),
      childOpts,
      (s) => {
        for (const e of prefix) s.commit(e);
      },
      true,
    );
  }
}

function makeHeader(opts: SessionOptions): SessionHeader {
  const id = opts.id ?? opts.header?.id ?? randomUUID();
  const h: SessionHeader = {
    version: SESSION_FORMAT_VERSION,
    createdAt: (opts.clock ?? Date.now)(),
    ...opts.header,
    id,
  };
  return validateHeader(snapshotJson(h, { eventType: 'session', path: '$' }), opts.validation);
}
