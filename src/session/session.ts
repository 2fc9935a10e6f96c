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
import { nodeCrypto } from '../model/node-crypto.js';
import type { MessageHistory } from '../model/history.js';
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
import { copyJson, freezeInPlace, freezeParsed, preview, snapshotJson } from './json.js';
import { SurfaceState, type EventLookup, type SurfaceReplacement } from './surface.js';
import { ChunkRun, materialise, slotType, type Slot } from './chunk-runs.js';
import { TraceState } from './trace.js';
import { MessageProjection } from './derive.js';
import { validateEnvelope, validateEventData, type ValidationOptions } from './validate.js';
import { buildEvent } from './new-event.js';
import { validateHeader } from './header.js';
import { canonicalHeader } from './request-header.js';
import { TypeIndex } from './type-index.js';

/**
 * A run of same-block chunk deltas as a loaded log stores it (`Session.records`): shared placement,
 * and each member's payload and time by index; `member(k)` materialises the event at `seq0 + k`.
 */
export type ChunkRunView = Pick<
  ChunkRun,
  'seq0' | 'length' | 'turn' | 'step' | 'index' | 'kind' | 'id' | 'name' | 'payload' | 'time' | 'member'
>;

/** Is a record of `Session.records` a compact chunk run (rather than one event)? */
export function isChunkRun(r: SessionEvent | ChunkRunView): r is ChunkRunView {
  return r instanceof ChunkRun;
}

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

/**
 * The loader's channel into a session under construction (internal: `session.ts` exports it,
 * the package index does not). Everything fed through it is validated exactly like a seed.
 */
export interface SeedSink {
  /** A raw stored event; ownership transfers (validated and frozen in place, not copied). */
  event(raw: unknown): void;
  /**
   * An event the loader itself has just parsed from one line with `JSON.parse` (ownership
   * transfers): validated like `event`, with the lossless-JSON walk that such a value needs.
   */
  parsed(raw: Record<string, unknown>): void;
  /** A run of chunk deltas the decoder built itself from a row or event lines it parsed. */
  run(run: ChunkRun): void;
  /** Seqs fed so far. */
  readonly length: number;
  /** Events of the turn left open at the end so far (from its turn/start), or [] if none is open. */
  openTurnEvents(): SessionEvent[];
  /** The first event fed that sat outside the turn or step it needs (dsh restores such logs). */
  readonly outsideTurn: { readonly seq: number; readonly type: string } | undefined;
}
export const restoreWith: unique symbol = Symbol('Session.restoreWith');

const NO_VALIDATION: ValidationOptions = Object.freeze({});

/** A seed or restore list must be an array (a string would be walked character by character). */
function requireEventList(v: unknown, what: string): void {
  if (!Array.isArray(v)) {
    throw new SessionError('INVALID_EVENT', `${what} must be an array of events, got ${v === null ? 'null' : typeof v}`, { rule: 'seed' });
  }
}

function defaultListenerError(error: unknown, event: SessionEvent): void {
  console.error(`[dsh] session/event listener threw on ${event.type} #${event.seq}:`, error);
}

export class Session {
  readonly id: string;
  readonly header: Readonly<SessionHeader>;
  /** Seq of the first event written by this process (the seed length). */
  readonly firstLiveSeq: number;

  /**
   * The log as records: each an event, or a compact run of chunk events (loaded logs). Without
   * runs, record i is seq i; once a run is stored, `starts` maps records to their first seq.
   */
  private readonly log: Slot[] = [];
  /**
   * Record indices of the events of each type, in log order (chunk runs are not listed: their
   * members are found by walking the log), so reading the events of a few types after a resume
   * does not walk the whole log.
   */
  private readonly byType = new TypeIndex();
  private starts: number[] | undefined;
  /** Events in the log (run members counted one by one): the next seq. */
  private count = 0;
  private snapshot: readonly SessionEvent[] | undefined;
  private readonly surfaceState = new SurfaceState();
  private readonly traceState = new TraceState();
  private readonly projection = new MessageProjection();
  /** Copy-on-write, so publishing needs no per-event copy of the list. */
  private listeners: readonly SessionListener[] = [];
  private preCommit: readonly PreCommitCheck[] = [];
  private readonly lookup: EventLookup = (seq) => {
    if (!(seq >= 0 && seq < this.count)) return undefined;
    if (this.starts === undefined) return this.log[seq] as SessionEvent;
    return materialise(this.log[this.recordOf(seq)]!, seq);
  };
  private readonly surfaceAt = (seq: number): SessionEvent => this.lookup(seq)!;
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
    this.firstLiveSeq = this.count;
    // The marker is written before anyone can subscribe, so it is never published.
    const last = this.log[this.log.length - 1];
    if (markSeed && (last === undefined || slotType(last) !== 'session/end-seed')) this.append('session/end-seed', {});
  }

  // ------------------------------------------------------------------------------------------
  // Construction

  /** A new session, optionally seeded with foreign events (copied and validated like appends). */
  static create(opts: SeedOptions = {}): Session {
    const header = makeHeader(opts);
    const seed = opts.seed;
    if (seed !== undefined) requireEventList(seed, 'seed');
    return new Session(
      header,
      opts,
      (s) => {
        if (seed) for (let i = 0; i < seed.length; i++) s.adopt(seed[i], i, 'copy', opts.validation);
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
    requireEventList(events, 'events');
    return new Session(
      h,
      opts,
      (s) => {
        for (let i = 0; i < events.length; i++) s.adopt(events[i], i, 'own', opts.validation);
      },
      true,
    );
  }

  /**
   * A session restored from decoded storage (the JSONL loader): `feed` pushes the stored events
   * and chunk runs through a `SeedSink`, each validated like a seed; then the seed end is marked.
   */
  static [restoreWith](header: unknown, opts: Omit<SessionOptions, 'id' | 'header'>, feed: (sink: SeedSink) => void): Session {
    const h = validateHeader(header, opts.validation);
    const validation = opts.validation ?? NO_VALIDATION;
    return new Session(
      h,
      opts,
      (s) => {
        const sink: SeedSink = {
          event: (raw) => s.adopt(raw, s.count, 'own', validation),
          parsed: (raw) => s.adopt(raw, s.count, 'parsed', validation),
          run: (run) => s.adoptRun(run),
          get length() {
            return s.count;
          },
          openTurnEvents: () => {
            const from = s.traceState.openTurnSeq;
            return from === undefined ? [] : [...s.since(from)];
          },
          get outsideTurn() {
            return s.traceState.outside;
          },
        };
        // Stored logs are restored as dsh restores them: without the turn-enclosure check.
        s.traceState.lenient = true;
        try {
          feed(sink);
        } finally {
          s.traceState.lenient = false;
        }
      },
      true,
    );
  }

  /** Validate and take one stored event (seed path). */
  private adopt(raw: unknown, index: number, mode: 'copy' | 'own' | 'parsed', validation: ValidationOptions | undefined): void {
    try {
      validateEnvelope(raw, index);
      const type = (raw as { type: string }).type;
      const event = (
        mode === 'copy'
          ? copyJson(raw, type, '$', index)
          : mode === 'own'
            ? freezeInPlace(raw, type, '$', index)
            : freezeParsed(raw, type, '$', index)
      ) as SessionEvent;
      validateEventData(type, index, event.data, validation);
      this.commit(event);
    } catch (err) {
      throw seedError(err);
    }
  }

  /** Take a chunk run the loader decoded (seed path): the checks its members would get one by one. */
  private adoptRun(run: ChunkRun): void {
    const seq = this.count;
    try {
      // A deferred run (resume from the sidecar index) is checked by its placement alone: its
      // body is read only when a member is, and its events were validated when the index was
      // built from a full load of the same bytes (the index's digest says they are the same).
      const deferred = run.isDeferred;
      if (run.seq0 !== seq) validateEnvelope(deferred ? run.probe() : run.member(0), seq); // throws SEQ_GAP, as for an event line
      const first = run.probe();
      // Every member shares turn, step and chunk type: checking the first checks them all.
      if (!deferred) validateEventData('assistant/chunk', seq, first.data);
      this.commitRun(run, first);
    } catch (err) {
      throw seedError(err);
    }
  }

  /** Trace-check a run (as its first member; the others cannot differ) and commit all of it. */
  private commitRun(run: ChunkRun, first: SessionEvent = run.member(0)): void {
    this.traceState.check(first);
    if (this.preCommit.length > 0) for (let k = 0; k < run.length; k++) for (const check of this.preCommit) check(run.member(k), this);
    if (this.starts === undefined) {
      // Until now record i was seq i.
      const starts = new Array<number>(this.log.length);
      for (let i = 0; i < starts.length; i++) starts[i] = i;
      this.starts = starts;
    }
    this.starts.push(this.count);
    this.log.push(run);
    this.count += run.length;
    this.snapshot = undefined;
  }

  /** Index of the record holding `seq` (runs stored; `seq` in range). */
  private recordOf(seq: number): number {
    const starts = this.starts!;
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= seq) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  // ------------------------------------------------------------------------------------------
  // Reading

  /** Frozen snapshot of the whole log, shared until the next append. O(n) after an append. */
  get events(): readonly SessionEvent[] {
    if (this.snapshot === undefined) {
      const log = this.log;
      if (this.starts === undefined) this.snapshot = Object.freeze(log.slice() as SessionEvent[]);
      else {
        const out = new Array<SessionEvent>(this.count);
        let seq = 0;
        for (const slot of log) {
          if (slot instanceof ChunkRun) for (let k = 0; k < slot.length; k++) out[seq++] = slot.member(k);
          else out[seq++] = slot;
        }
        this.snapshot = Object.freeze(out);
      }
    }
    return this.snapshot;
  }

  /** Number of events; also the seq the next event gets. */
  get seq(): number {
    return this.count;
  }
  get length(): number {
    return this.count;
  }

  /**
   * The event at `seq`. A chunk of a loaded log is stored compactly and materialised here as an
   * equal frozen event (not necessarily the same object on every read).
   */
  at(seq: number): SessionEvent | undefined {
    return this.lookup(seq);
  }

  /** Events from `fromSeq` (inclusive) to the end, without copying the whole log. */
  *since(fromSeq: number): IterableIterator<SessionEvent> {
    // Record by record: the record holding `fromSeq` is searched once, not once per record.
    const log = this.log;
    const first = Math.max(0, fromSeq);
    if (first >= this.count) return;
    for (let r = this.starts === undefined ? first : this.recordOf(first); r < log.length; r++) {
      const slot = log[r]!;
      if (slot instanceof ChunkRun) for (let k = Math.max(0, first - slot.seq0); k < slot.length; k++) yield slot.member(k);
      else yield slot;
    }
  }

  /**
   * Records from `fromSeq` to the end: each event, or, where a loaded log stores a run of chunk
   * events compactly, the run itself with its members not materialised (a run starting before
   * `fromSeq` yields its remaining members one by one). For readers that can take a run whole
   * (statistics, a scan for one call id) instead of paying for an object per chunk.
   */
  *records(fromSeq = 0): IterableIterator<SessionEvent | ChunkRunView> {
    // Record by record, as `since`: a binary search per record was most of a timeline's pass.
    const log = this.log;
    const first = Math.max(0, fromSeq);
    if (first >= this.count) return;
    for (let r = this.starts === undefined ? first : this.recordOf(first); r < log.length; r++) {
      const slot = log[r]!;
      if (slot instanceof ChunkRun) {
        if (slot.seq0 >= first) yield slot;
        else for (let k = first - slot.seq0; k < slot.length; k++) yield slot.member(k);
      } else yield slot;
    }
  }

  /**
   * The events of one of `types` from `fromSeq` on, in log order. A compact chunk run holds only
   * `assistant/chunk`s, so unless that type is asked for a run is stepped over whole, never
   * materialised: a pass for the few other events of a loaded log (resume's start-up, which
   * looks for inbox splices and plugin messages) costs one step per record instead of building
   * a million chunk objects.
   */
  *eventsOfType<K extends SessionEventType>(types: readonly K[], fromSeq = 0): IterableIterator<SessionEvent<K>> {
    const wanted = new Set<string>(types);
    const log = this.log;
    const first = Math.max(0, fromSeq);
    if (first >= this.count) return;
    const firstRecord = this.starts === undefined ? first : this.recordOf(first);
    if (!wanted.has('assistant/chunk')) {
      for (const r of this.byType.records(wanted, firstRecord)) yield log[r] as SessionEvent<K>;
      return;
    }
    for (let r = firstRecord; r < log.length; r++) {
      const slot = log[r]!;
      if (slot instanceof ChunkRun)
        for (let k = Math.max(0, first - slot.seq0); k < slot.length; k++) yield slot.member(k) as SessionEvent<K>;
      else if (wanted.has(slot.type)) yield slot as SessionEvent<K>;
    }
  }

  /**
   * Records that start at or before `throughSeq` (default: all), last first: `records()` read
   * backwards, a run whole. For readers that want what the log ends with (the last line a
   * timeline shows) without a pass over everything before it.
   */
  *recordsBack(throughSeq = this.count - 1): IterableIterator<SessionEvent | ChunkRunView> {
    const log = this.log;
    const last = Math.min(throughSeq, this.count - 1);
    if (!(last >= 0)) return;
    for (let r = this.starts === undefined ? last : this.recordOf(last); r >= 0; r--) yield log[r]!;
  }

  /** How many events of `type` the log holds, in O(1) (chunks are not indexed: walk the records for those). */
  countOfType(type: Exclude<SessionEventType, 'assistant/chunk'>): number {
    return this.byType.count(type);
  }

  /** The last event of `type` for which `test` holds, walking back from the end (chunk runs stepped over whole, as in `eventsOfType`). */
  lastOfType<K extends Exclude<SessionEventType, 'assistant/chunk'>>(
    type: K,
    test: (e: SessionEvent<K>) => boolean = () => true,
  ): SessionEvent<K> | undefined {
    for (const r of this.byType.lastFirst(type)) {
      const e = this.log[r] as SessionEvent<K>;
      if (test(e)) return e;
    }
    return undefined;
  }

  /**
   * The model-visible history: an immutable snapshot, O(new surface nodes) per call and O(1)
   * when nothing changed (the same object until the history changes).
   */
  deriveMessages(): MessageHistory {
    // Surface nodes are surface events, never chunks, so their slots hold the events themselves.
    return this.projection.derive(this.surfaceState, this.surfaceAt);
  }

  /**
   * `deriveMessages().length` without projecting the history. While nothing was replaced, every
   * surface event is a node in log order and each is a message but an empty assistant message,
   * so the count is the nodes less those (found by type, not by walking the log).
   */
  messageCount(): number {
    const surface = this.surfaceState;
    if (surface.replaceGeneration !== 0) return this.deriveMessages().length;
    let empty = 0;
    for (const r of this.byType.records(['assistant/message'], 0)) {
      if ((this.log[r] as SessionEvent<'assistant/message'>).data.message.content.length === 0) empty++;
    }
    return surface.nodes.length - empty;
  }

  /** The ordered surface: a frozen snapshot, shared until the surface next changes. */
  get surface(): {
    readonly nodes: readonly number[];
    readonly replaceGeneration: number;
    readonly replacements: readonly SurfaceReplacement[];
  } {
    return this.surfaceState.view();
  }

  /** Turn/step position: what is open and what was numbered last (a frozen snapshot). */
  get trace(): {
    readonly openTurn: number | undefined;
    readonly openStep: number | undefined;
    readonly lastTurn: number;
    readonly lastStep: number;
  } {
    const t = this.traceState;
    return Object.freeze({ openTurn: t.openTurn, openStep: t.openStep, lastTurn: t.lastTurn, lastStep: t.lastStep });
  }

  /** The latest `request/header` snapshot (canonical form), if any. */
  requestHeader(): EpochHeader | undefined {
    if (this.lastHeaderSeq < 0) return undefined;
    if (this.headerCache?.seq !== this.lastHeaderSeq) {
      const e = this.lookup(this.lastHeaderSeq) as SessionEvent<'request/header'>;
      this.headerCache = { seq: this.lastHeaderSeq, header: Object.freeze(canonicalHeader(e.data.header)) };
    }
    return this.headerCache.header;
  }

  /** The latest `request/context`, if any. */
  requestContext(): RequestContext | undefined {
    return this.lastContextSeq < 0 ? undefined : (this.lookup(this.lastContextSeq) as SessionEvent<'request/context'>).data;
  }

  // ------------------------------------------------------------------------------------------
  // Writing

  /**
   * Append one event. Synchronous: when it returns, the event is committed and published.
   * Returns the frozen logged event (read it back rather than your own input).
   */
  append<K extends SessionEventType>(type: K, data: SessionEventMap[K], ...rest: OptsArg<K>): SessionEvent<K>;
  // The implementation takes the options positionally: no rest array per append.
  append(type: string, data: unknown, opts?: unknown): SessionEvent {
    const seq = this.count;
    if (this.busy !== undefined) {
      const where =
        this.busy === 'publishing' ? 'a session/event listener' : 'another append (a pre-commit check, the clock, or a getter in the data)';
      throw new SessionError('REENTRANT_APPEND', `cannot append "${String(type)}" from inside ${where} (seq ${seq}); schedule it instead`, {
        eventType: String(type),
        seq,
        rule: 'reentrancy',
      });
    }
    this.busy = 'appending';
    let committed: SessionEvent;
    try {
      committed = buildEvent(type, data, seq, opts, this.clock);
      this.commit(committed);
    } finally {
      this.busy = undefined;
    }
    if (this.listeners.length > 0) this.publish(committed);
    return committed;
  }

  /** Check every rule, then commit; a throw anywhere before the push leaves everything untouched. */
  private commit(event: SessionEvent): void {
    this.surfaceState.check(event, this.lookup);
    this.traceState.check(event);
    const checks = this.preCommit;
    for (let i = 0; i < checks.length; i++) checks[i]!(event, this);
    if (event.type !== 'assistant/chunk') this.byType.add(event.type, this.log.length);
    this.log.push(event);
    this.starts?.push(this.count);
    this.count++;
    this.snapshot = undefined;
    this.surfaceState.apply(event);
    this.traceState.apply(event);
    if (event.type === 'request/header') this.lastHeaderSeq = event.seq;
    else if (event.type === 'request/context') this.lastContextSeq = event.seq;
  }

  private publish(event: SessionEvent): void {
    // The list is copy-on-write: this reference is the list as it was at commit.
    const snapshot = this.listeners;
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
    this.listeners = [...this.listeners, listener];
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      const i = this.listeners.indexOf(listener);
      if (i >= 0) this.listeners = [...this.listeners.slice(0, i), ...this.listeners.slice(i + 1)];
    };
  }

  /** Add a check that runs before every later commit and may veto it by throwing. */
  addPreCommitCheck(check: PreCommitCheck): () => void {
    this.preCommit = [...this.preCommit, check];
    let added = true;
    return () => {
      if (!added) return;
      added = false;
      const i = this.preCommit.indexOf(check);
      if (i >= 0) this.preCommit = [...this.preCommit.slice(0, i), ...this.preCommit.slice(i + 1)];
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
    const n = this.count;
    const b = boundary ?? n - 1;
    if (boundary !== undefined && (!Number.isSafeInteger(boundary) || boundary < 0 || boundary >= n)) {
      const shown = typeof boundary === 'number' ? String(boundary) : `${preview(boundary)} (a ${typeof boundary}, not a number)`;
      throw new SessionError('INVALID_BOUNDARY', `fork boundary ${shown} is not a seq of this session (0…${n - 1})`, {
        ...(typeof boundary === 'number' ? { seq: boundary } : {}),
        rule: 'fork-boundary',
      });
    }
    // Records through the one holding b (a run never straddles a valid boundary: its members sit
    // inside a turn, and a boundary inside a turn is refused below).
    const prefix = this.log.slice(0, b < 0 ? 0 : (this.starts === undefined ? b : this.recordOf(b)) + 1);
    for (let i = prefix.length - 1; i >= 0; i--) {
      const t = slotType(prefix[i]!);
      if (t === 'turn/end') break;
      if (t === 'turn/start') {
        const start = prefix[i] as SessionEvent<'turn/start'>;
        throw new SessionError(
          'OPEN_TURN',
          `cannot fork at seq ${b}: turn ${start.data.turn} (opened at seq ${start.seq}) is still open there; pick a seq between turns`,
          {
            seq: b,
            rule: 'fork-boundary',
          },
        );
      }
    }
    const header: Partial<SessionHeader> = { ...opts.header, parentSession: this.id, seedLength: b + 1 };
    if (this.header.cwd !== undefined && header.cwd === undefined) header.cwd = this.header.cwd;
    if (this.header.delegationDepth !== undefined && header.delegationDepth === undefined)
      header.delegationDepth = this.header.delegationDepth;
    const childOpts: SessionOptions = { ...opts, header };
    if (childOpts.clock === undefined) childOpts.clock = this.clock;
    return new Session(
      makeHeader(childOpts),
      childOpts,
      (s) => {
        for (const slot of prefix) {
          if (slot instanceof ChunkRun) s.commitRun(slot);
          else s.commit(slot);
        }
      },
      true,
    );
  }
}

function seedError(err: unknown): unknown {
  return err instanceof SessionError ? new SessionError(err.code, `seed ${err.message}`, err.details, { cause: err }) : err;
}

function makeHeader(opts: SessionOptions): SessionHeader {
  const id = opts.id ?? opts.header?.id ?? nodeCrypto().randomUUID();
  const h: SessionHeader = {
    version: SESSION_FORMAT_VERSION,
    createdAt: (opts.clock ?? Date.now)(),
    ...opts.header,
    id,
  };
  return validateHeader(snapshotJson(h, { eventType: 'session', path: '$' }), opts.validation);
}
