/**
 * `stats`: what a session did and cost, per session, turn and step, in one pass over the log.
 *
 * **Tokens** are counted per billed model call: each `assistant/message` with its usage; an
 * attempt that failed after the provider reported usage (a `usage` chunk and no message), since
 * the provider billed it; a compaction summariser's call (`compaction/summary.usage`); and a
 * format's own failed-attempt record (`assistant/attempt.usage`, logs of newer dsh formats).
 * Kinds stay disjoint as the log keeps them: `input` excludes cache reads and writes,
 * `inputWithCache` includes them, `reasoning` is part of `output`. The cache-hit ratio is
 * `cacheRead / inputWithCache`.
 *
 * **Cost** prices each call at its model and time ([`PriceTable`](../llm/pricing.ts)); a call
 * whose model has no price is counted as unpriced, by model and reason, never as zero.
 *
 * **Times** are differences of two events' times: time to first token is from the event before
 * an attempt's first chunk (the request being sent: the log has no better instant) to its first
 * delta; decode time from the first delta to the finish; a tool's time from its `tool/call` to its
 * `tool/result`. Event times are a wall clock that real logs show going backwards; a difference
 * that comes out negative counts as 0.
 *
 * **Turns** end with a reason; a turn the log leaves open is `live` when a live process holds the
 * session's lock (its writer is still at work) and `dangling` otherwise. Crash repair's closers
 * added when a log is loaded are not the log's own, so such a turn counts as open too.
 */
import type { SessionEvent } from '../session/events.js';
import type { TokenUsage } from '../model/usage.js';
import { toolResultCallId } from '../session/trace.js';
import { PriceTable, type PricePeriod } from '../llm/pricing.js';
import { distOf, type Dist } from './dist.js';
import { isChunkRun, num, obj, str, viewOf, type ChunkRunView, type LogView, type QueryInput } from './input.js';

// ---------------------------------------------------------------------------------------------
// Result shapes

export interface Tokens {
  /** Billed model calls counted. */
  calls: number;
  /** Prompt tokens neither read from nor written to the cache. */
  input: number;
  /** All prompt tokens: input + cacheRead + cacheWrite. */
  inputWithCache: number;
  cacheRead: number;
  cacheWrite: number;
  /** Output tokens, reasoning included. */
  output: number;
  reasoning: number;
  /** cacheRead / inputWithCache; null with no prompt tokens. */
  cacheHitRatio: number | null;
}

export interface UnpricedModel {
  /** `provider:model` as recorded (`?` where the log names none). */
  model: string;
  calls: number;
  reason: 'no-model' | 'unknown-model' | 'no-price-at-time';
  message: string;
}

export interface Cost {
  /** Totals of priced calls by currency (USD for DeepSeek's prices). */
  byCurrency: Record<string, number>;
  pricedCalls: number;
  unpricedCalls: number;
  /** Priced calls by tier: `peak`, `off-peak`, `flat`. */
  byPeriod: Partial<Record<PricePeriod, number>>;
  unpriced: UnpricedModel[];
}

export interface ModelUse {
  provider: string | null;
  model: string | null;
  tokens: Tokens;
  cost: Cost;
}

export interface ToolStats {
  name: string;
  calls: number;
  failures: number;
  /** Failures by error code (`IS_ERROR` for a result marked isError without a code). */
  errors: Record<string, number>;
  unanswered: number;
  /** Call to result. */
  duration: Dist;
}

export interface CallRef {
  callId: string;
  name: string;
  turn: number | undefined;
  step: number | undefined;
  seq: number;
}

export interface ErrorsByCode {
  /** Failed model attempts (a `finish` with `error` or `aborted`), by failure code. */
  model: Record<string, number>;
  /** Failed tool calls, by error code. */
  tool: Record<string, number>;
  /** Turns that ended `error`, by failure code. */
  turn: Record<string, number>;
}

export interface StepStats {
  step: number;
  start: number;
  end?: number;
  tokens: Tokens;
  cost: Cost;
  /** Model attempts (streams); more than one when a failed attempt was retried. */
  attempts: number;
  retries: number;
  /** The last attempt's finish (`stop`, `tool-calls`, `max-tokens`, `error CODE`, `aborted CODE`). */
  finish?: string;
  ttftMs?: number;
  decodeMs?: number;
  /** Tool time summed over the step's calls. */
  toolMs: number;
  toolCalls: number;
  toolFailures: number;
  wallMs?: number;
}

export type TurnState = 'ended' | 'live' | 'dangling';

export interface TurnStats {
  turn: number;
  start: number;
  /** Seq of `turn/end` in the log; absent for an open turn. */
  end?: number;
  state: TurnState;
  /** The end reason's kind (`completed`, `error`, …); absent for an open turn. */
  reason?: string;
  /** Failure code (error), cancel cause (aborted). */
  reasonDetail?: string;
  steps: StepStats[];
  tokens: Tokens;
  cost: Cost;
  attempts: number;
  retries: number;
  toolCalls: number;
  toolFailures: number;
  ttft: Dist;
  decode: Dist;
  toolMs: number;
  wallMs?: number;
  unanswered: CallRef[];
}

export interface WriterState {
  /** `live`: a live process holds the session's lock; `none`: nobody does; `unknown`: not known (no lock to look at). */
  state: 'live' | 'none' | 'unknown';
  holder?: { pid: number; host: string; since: number };
}

/** What a session's and a fleet's statistics both give. */
export interface Totals {
  /** Events the logs hold (crash repair's in-memory closers excluded). */
  events: number;
  turns: number;
  steps: number;
  attempts: number;
  toolCalls: number;
  toolFailures: number;
  tokens: Tokens;
  cost: Cost;
  models: ModelUse[];
  ttft: Dist;
  decode: Dist;
  tool: Dist;
  /** Turns by end reason, plus `live` and `dangling` for open turns. */
  reasons: Record<string, number>;
  retries: { count: number; byCode: Record<string, number> };
  errors: ErrorsByCode;
  /** By number of calls, then name. */
  tools: ToolStats[];
}

export interface SessionStats extends Totals {
  id: string;
  createdAt: number | null;
  cwd: string | null;
  parentSession: string | null;
  firstTime: number | null;
  lastTime: number | null;
  dangling: number[];
  live: number[];
  unanswered: CallRef[];
  writer: WriterState;
  /** Per turn (absent when asked for totals only). */
  perTurn?: TurnStats[];
}

export interface StatsOptions {
  prices?: PriceTable;
  /** Who writes the log now; decides whether an open turn is live or dangling (default: unknown, i.e. dangling). */
  writer?: WriterState;
  /** Keep per-turn and per-step figures (default true). */
  detail?: boolean;
}

// ---------------------------------------------------------------------------------------------
// Accumulators

class TokenAcc {
  calls = 0;
  input = 0;
  cacheRead = 0;
  cacheWrite = 0;
  output = 0;
  reasoning = 0;

  add(u: TokenUsage): void {
    this.calls++;
    this.input += u.inputTokens;
    this.cacheRead += u.cacheReadTokens ?? 0;
    this.cacheWrite += u.cacheWriteTokens ?? 0;
    this.output += u.outputTokens;
    this.reasoning += u.reasoningTokens ?? 0;
  }

  merge(o: Tokens): void {
    this.calls += o.calls;
    this.input += o.input;
    this.cacheRead += o.cacheRead;
    this.cacheWrite += o.cacheWrite;
    this.output += o.output;
    this.reasoning += o.reasoning;
  }

  clone(): TokenAcc {
    return Object.assign(new TokenAcc(), this);
  }

  done(): Tokens {
    const all = this.input + this.cacheRead + this.cacheWrite;
    return {
      calls: this.calls,
      input: this.input,
      inputWithCache: all,
      cacheRead: this.cacheRead,
      cacheWrite: this.cacheWrite,
      output: this.output,
      reasoning: this.reasoning,
      cacheHitRatio: all > 0 ? this.cacheRead / all : null,
    };
  }
}

class CostAcc {
  byCurrency: Record<string, number> = {};
  priced = 0;
  unpricedCalls = 0;
  byPeriod: Partial<Record<PricePeriod, number>> = {};
  unpriced = new Map<string, UnpricedModel>();

  addPriced(amount: number, currency: string, period: PricePeriod): void {
    this.byCurrency[currency] = (this.byCurrency[currency] ?? 0) + amount;
    this.priced++;
    this.byPeriod[period] = (this.byPeriod[period] ?? 0) + 1;
  }

  addUnpriced(model: string, reason: UnpricedModel['reason'], message: string, calls = 1): void {
    this.unpricedCalls += calls;
    const key = `${model}\0${reason}`;
    const u = this.unpriced.get(key);
    if (u) u.calls += calls;
    else this.unpriced.set(key, { model, calls, reason, message });
  }

  merge(o: Cost): void {
    for (const [c, v] of Object.entries(o.byCurrency)) this.byCurrency[c] = (this.byCurrency[c] ?? 0) + v;
    this.priced += o.pricedCalls;
    for (const [p, v] of Object.entries(o.byPeriod) as [PricePeriod, number][]) this.byPeriod[p] = (this.byPeriod[p] ?? 0) + v;
    for (const u of o.unpriced) this.addUnpriced(u.model, u.reason, u.message, u.calls);
  }

  clone(): CostAcc {
    const c = new CostAcc();
    c.merge(this.done());
    return c;
  }

  done(): Cost {
    return {
      byCurrency: { ...this.byCurrency },
      pricedCalls: this.priced,
      unpricedCalls: this.unpricedCalls,
      byPeriod: { ...this.byPeriod },
      unpriced: [...this.unpriced.values()].sort((a, b) => b.calls - a.calls || (a.model < b.model ? -1 : 1)),
    };
  }
}

class ToolAcc {
  calls = 0;
  failures = 0;
  errors: Record<string, number> = {};
  unanswered = 0;
  durations: number[] = [];
  constructor(readonly name: string) {}
}

interface StepAcc {
  step: number;
  start: number;
  end?: number;
  t0: number;
  t1?: number;
  tokens: TokenAcc;
  cost: CostAcc;
  attempts: number;
  retries: number;
  finish?: string;
  ttft: number[];
  decode: number[];
  toolMs: number;
  toolCalls: number;
  toolFailures: number;
}

interface TurnAcc {
  turn: number;
  start: number;
  end?: number;
  t0: number;
  t1?: number;
  reason?: string;
  reasonDetail?: string;
  steps: StepAcc[];
  tokens: TokenAcc;
  cost: CostAcc;
  attempts: number;
  retries: number;
  toolCalls: number;
  toolFailures: number;
  ttft: number[];
  decode: number[];
  toolMs: number;
  unanswered: CallRef[];
}

interface Attempt {
  /** Time of the event before its first chunk. */
  t0: number;
  firstDelta?: number;
  usage?: TokenUsage | undefined;
  finished: boolean;
  /** Time of the finish chunk (raw, for pricing) and its provider/model context. */
  time: number;
}

interface PendingBill {
  usage: TokenUsage;
  provider: string | undefined;
  model: string | undefined;
  time: number;
}

interface OpenCall {
  name: string;
  seq: number;
  t: number;
  turn: number | undefined;
  step: number | undefined;
}

const DELTAS = new Set(['text-delta', 'reasoning-delta', 'tool-call-delta']);

function usageOf(v: unknown): TokenUsage | undefined {
  const u = obj(v);
  const input = num(u.inputTokens);
  const output = num(u.outputTokens);
  if (input === undefined || output === undefined) return undefined;
  const out: TokenUsage = { inputTokens: input, outputTokens: output };
  const cr = num(u.cacheReadTokens);
  const cw = num(u.cacheWriteTokens);
  const r = num(u.reasoningTokens);
  if (cr !== undefined) out.cacheReadTokens = cr;
  if (cw !== undefined) out.cacheWriteTokens = cw;
  if (r !== undefined) out.reasoningTokens = r;
  return out;
}

function finishLabel(reason: unknown): string {
  const r = obj(reason);
  const kind = str(r.kind) ?? 'unknown';
  return kind === 'error' || kind === 'aborted' ? `${kind} ${str(obj(r.failure).code) ?? 'UNKNOWN'}` : kind;
}

function bump(into: Record<string, number>, key: string, by = 1): void {
  into[key] = (into[key] ?? 0) + by;
}

/** Samples kept beside a session's stats, so fleet totals get exact percentiles. */
export interface StatsSamples {
  ttft: number[];
  decode: number[];
  tool: number[];
  toolDurations: Map<string, number[]>;
}

/**
 * The fold behind `stats`: push the log's events in seq order, then read the result. It keeps
 * per-turn state only while a turn is open (plus the finished turns' figures when `detail`).
 */
export class StatsFold {
  private readonly prices: PriceTable;
  private readonly detail: boolean;
  private t = -Infinity;
  private firstTime: number | null = null;
  private lastTime: number | null = null;
  private events = 0;
  private readonly tokens = new TokenAcc();
  private readonly cost = new CostAcc();
  private readonly models = new Map<string, { provider: string | null; model: string | null; tokens: TokenAcc; cost: CostAcc }>();
  private readonly ttft: number[] = [];
  private readonly decode: number[] = [];
  private readonly toolDur: number[] = [];
  private readonly reasons: Record<string, number> = {};
  private readonly retryCodes: Record<string, number> = {};
  private retries = 0;
  private readonly errors: ErrorsByCode = { model: {}, tool: {}, turn: {} };
  private readonly tools = new Map<string, ToolAcc>();
  private readonly turns: TurnAcc[] = [];
  private readonly unanswered: CallRef[] = [];
  private turnCount = 0;
  private stepCount = 0;
  private attemptCount = 0;
  private toolCalls = 0;
  private toolFailures = 0;
  private turn: TurnAcc | undefined;
  private step: StepAcc | undefined;
  private attempt: Attempt | undefined;
  /** A finished attempt whose message has not come yet (its usage is billed either way). */
  private unmessaged: Attempt | undefined;
  private readonly open = new Map<string, OpenCall>();
  /**
   * Calls the open step's messages issued that no tool/call dispatched yet. Left so when the step
   * closes (or the log ends in a dangling turn) they are calls that got no answer, as callOf
   * reports them.
   */
  private readonly issued = new Map<string, OpenCall>();
  /** Tool-call blocks of the open step's messages: call id → tool name (for results without a call). */
  private readonly blockNames = new Map<string, string>();
  private route: { provider?: string; model?: string } = {};

  constructor(opts: { prices?: PriceTable; detail?: boolean } = {}) {
    this.prices = opts.prices ?? new PriceTable();
    this.detail = opts.detail !== false;
  }

  push(e: SessionEvent): void {
    const prevT = this.t === -Infinity ? e.time : this.t;
    this.t = e.time;
    this.events++;
    this.firstTime ??= e.time;
    this.lastTime = e.time;
    const d = obj(e.data);
    if (e.type === 'assistant/chunk') {
      this.chunk(obj(d.chunk), prevT, e.time);
      return;
    }
    const attempt = this.attempt;
    if (e.type !== 'assistant/message') this.flushUnmessaged();
    this.attempt = undefined;
    // The type is a string here: loaders of other formats bring types of their own.
    switch (e.type as string) {
      case 'turn/start':
        this.closeTurn('dangling');
        this.turn = {
          turn: num(d.turn) ?? this.turnCount + 1,
          start: e.seq,
          t0: this.t,
          steps: [],
          tokens: new TokenAcc(),
          cost: new CostAcc(),
          attempts: 0,
          retries: 0,
          toolCalls: 0,
          toolFailures: 0,
          ttft: [],
          decode: [],
          toolMs: 0,
          unanswered: [],
        };
        this.turnCount++;
        return;
      case 'turn/end': {
        const turn = this.turn;
        if (!turn) return;
        this.closeStep();
        turn.end = e.seq;
        turn.t1 = this.t;
        const r = obj(d.reason);
        turn.reason = str(r.kind) ?? 'unknown';
        if (turn.reason === 'error') {
          const code = str(obj(r.error).code) ?? 'UNKNOWN';
          turn.reasonDetail = code;
          bump(this.errors.turn, code);
        } else if (turn.reason === 'aborted') {
          const c = obj(r.reason);
          turn.reasonDetail = str(c.kind) === 'hook' && str(c.reason) !== undefined ? `hook: ${str(c.reason)}` : (str(c.kind) ?? 'unknown');
        }
        this.closeTurn('ended');
        return;
      }
      case 'step/start':
        this.closeStep();
        if (!this.turn) return;
        this.step = {
          step: num(d.step) ?? this.turn.steps.length + 1,
          start: e.seq,
          t0: this.t,
          tokens: new TokenAcc(),
          cost: new CostAcc(),
          attempts: 0,
          retries: 0,
          ttft: [],
          decode: [],
          toolMs: 0,
          toolCalls: 0,
          toolFailures: 0,
        };
        this.turn.steps.push(this.step);
        this.stepCount++;
        return;
      case 'step/end':
        if (this.step) {
          this.step.end = e.seq;
          this.step.t1 = this.t;
        }
        this.closeStep();
        return;
      case 'assistant/message': {
        // The message's own usage, else what its attempt reported (finished or cut off).
        const a = this.unmessaged ?? attempt;
        this.unmessaged = undefined;
        const src = obj(obj(d.message).source);
        const usage = usageOf(d.usage) ?? a?.usage;
        const content = obj(d.message).content;
        if (Array.isArray(content))
          for (const b of content)
            if (obj(b).type === 'tool-call' && typeof obj(b).id === 'string') {
              const id = obj(b).id as string;
              const name = str(obj(b).name) ?? '?';
              this.blockNames.set(id, name);
              this.issued.set(id, { name, seq: e.seq, t: this.t, turn: this.turn?.turn, step: this.step?.step });
            }
        if (usage) this.bill(usage, str(src.provider) ?? this.route.provider, str(src.model) ?? this.route.model, e.time);
        return;
      }
      case 'assistant/attempt': {
        // Newer dsh formats record a failed attempt as its own event, with what it was billed.
        const usage = usageOf(d.usage);
        if (usage) this.bill(usage, str(d.provider) ?? this.route.provider, str(d.model) ?? this.route.model, e.time);
        return;
      }
      case 'compaction/summary': {
        const usage = usageOf(d.usage);
        if (usage) this.bill(usage, str(d.provider), str(d.model), e.time);
        return;
      }
      case 'request/context':
        this.route = { ...opt('provider', str(d.provider)), ...opt('model', str(d.model)) };
        return;
      case 'request/header': {
        const c = obj(obj(d.header).config);
        this.route = { ...opt('provider', str(c.provider)), ...opt('model', str(c.model)) };
        return;
      }
      case 'llm/retry': {
        this.retries++;
        bump(this.retryCodes, str(obj(d.failure).code) ?? 'UNKNOWN');
        if (this.turn) this.turn.retries++;
        if (this.step) this.step.retries++;
        return;
      }
      case 'tool/call': {
        const id = str(d.callId);
        const name = str(d.name) ?? '?';
        this.toolCalls++;
        this.toolAcc(name).calls++;
        if (this.turn) this.turn.toolCalls++;
        if (this.step) this.step.toolCalls++;
        if (id !== undefined) {
          this.issued.delete(id);
          this.open.set(id, { name, seq: e.seq, t: this.t, turn: this.turn?.turn, step: this.step?.step });
        }
        return;
      }
      case 'tool/result': {
        if (e.surfaceOp !== undefined && e.surfaceOp !== 'append') return; // a pruned copy, not a second outcome
        const id = toolResultCallId(e.data);
        const call = id === undefined ? undefined : this.open.get(id);
        if (id !== undefined) {
          this.open.delete(id);
          this.issued.delete(id);
        }
        const name = call?.name ?? (id !== undefined ? this.blockNames.get(id) : undefined) ?? '?';
        const tool = this.toolAcc(name);
        if (!call) {
          // A result for a call that never started (crash repair): a call, and a failed one.
          tool.calls++;
          this.toolCalls++;
          if (this.turn) this.turn.toolCalls++;
          if (this.step) this.step.toolCalls++;
        }
        const first = obj((obj(d.message).content as unknown[] | undefined)?.[0]);
        if (d.error !== undefined || first.isError === true) {
          const code = str(obj(d.error).code) ?? 'IS_ERROR';
          tool.failures++;
          bump(tool.errors, code);
          bump(this.errors.tool, code);
          this.toolFailures++;
          if (this.turn) this.turn.toolFailures++;
          if (this.step) this.step.toolFailures++;
        }
        if (call) {
          const ms = span(call.t, this.t);
          tool.durations.push(ms);
          this.toolDur.push(ms);
          if (this.turn) this.turn.toolMs += ms;
          if (this.step) this.step.toolMs += ms;
        }
        return;
      }
      default:
        return;
    }
  }

  /**
   * A run of delta chunks as a loaded log stores it: the same as pushing its members one by one
   * (they are all deltas of one block), without materialising them.
   */
  pushRun(r: ChunkRunView): void {
    const n = r.length;
    if (n === 0) return;
    const first = r.time(0);
    const last = r.time(n - 1);
    const prevT = this.t === -Infinity ? first : this.t;
    this.events += n;
    this.firstTime ??= first;
    this.lastTime = last;
    this.t = first;
    const a = this.attemptFor(prevT, first);
    a.firstDelta ??= first;
    this.t = last;
  }

  /** The attempt a chunk belongs to: the open one, or a new one after anything but its chunks. */
  private attemptFor(prevT: number, time: number): Attempt {
    if (!this.attempt || this.attempt.finished) {
      this.flushUnmessaged();
      this.attempt = { t0: prevT, finished: false, time };
      this.attemptCount++;
      if (this.turn) this.turn.attempts++;
      if (this.step) this.step.attempts++;
    }
    return this.attempt;
  }

  private chunk(c: Record<string, unknown>, prevT: number, time: number): void {
    const a = this.attemptFor(prevT, time);
    const type = c.type;
    if (typeof type === 'string' && DELTAS.has(type)) {
      a.firstDelta ??= this.t;
      return;
    }
    if (type === 'usage') {
      a.usage = usageOf(c.usage);
      return;
    }
    if (type !== 'finish') return;
    a.finished = true;
    a.time = time;
    const label = finishLabel(c.reason);
    if (this.step) this.step.finish = label;
    const kind = str(obj(c.reason).kind);
    if (kind === 'error' || kind === 'aborted') bump(this.errors.model, str(obj(obj(c.reason).failure).code) ?? 'UNKNOWN');
    if (a.firstDelta !== undefined) {
      const ttft = span(a.t0, a.firstDelta);
      const decode = span(a.firstDelta, this.t);
      this.ttft.push(ttft);
      this.decode.push(decode);
      this.turn?.ttft.push(ttft);
      this.turn?.decode.push(decode);
      if (this.step) {
        this.step.ttft.push(ttft);
        this.step.decode.push(decode);
      }
    }
    this.unmessaged = a.usage ? a : undefined;
  }

  /** An attempt that reported usage and assembled no message was billed all the same. */
  private flushUnmessaged(): void {
    const a = this.unmessaged ?? (this.attempt && !this.attempt.finished && this.attempt.usage ? this.attempt : undefined);
    this.unmessaged = undefined;
    if (a?.usage) {
      const usage = a.usage;
      a.usage = undefined;
      this.bill(usage, this.route.provider, this.route.model, a.time);
    }
  }

  private bill(u: TokenUsage, provider: string | undefined, model: string | undefined, time: number): void {
    const key = `${provider ?? '?'}:${model ?? '?'}`;
    let m = this.models.get(key);
    if (!m) {
      m = { provider: provider ?? null, model: model ?? null, tokens: new TokenAcc(), cost: new CostAcc() };
      this.models.set(key, m);
    }
    const accs: { tokens: TokenAcc; cost: CostAcc }[] = [{ tokens: this.tokens, cost: this.cost }, m];
    if (this.turn) accs.push(this.turn);
    if (this.step) accs.push(this.step);
    this.billInto(accs, { usage: u, provider, model, time });
  }

  private billInto(accs: readonly { tokens: TokenAcc; cost: CostAcc }[], b: PendingBill): void {
    const p = this.prices.price(b.usage, { provider: b.provider, model: b.model, time: b.time });
    const key = `${b.provider ?? '?'}:${b.model ?? '?'}`;
    for (const acc of accs) {
      acc.tokens.add(b.usage);
      if (p.priced) acc.cost.addPriced(p.amount, p.currency, p.period);
      else acc.cost.addUnpriced(key, p.reason, p.message);
    }
  }

  /**
   * Usage an attempt reported whose message has not come yet (the log ends there, or the next
   * event will say). `result` counts it without consuming it, so a later message still bills once.
   */
  private pendingBill(): PendingBill | undefined {
    const a = this.unmessaged ?? (this.attempt?.usage ? this.attempt : undefined);
    return a?.usage ? { usage: a.usage, provider: this.route.provider, model: this.route.model, time: a.time } : undefined;
  }

  /** Copies of `acc` with the pending bill added (or the accumulators themselves when none is). */
  private withPending<T extends { tokens: TokenAcc; cost: CostAcc }>(
    acc: T,
    pend: PendingBill | undefined,
  ): { tokens: TokenAcc; cost: CostAcc } {
    if (!pend) return acc;
    const copy = { tokens: acc.tokens.clone(), cost: acc.cost.clone() };
    this.billInto([copy], pend);
    return copy;
  }

  private toolAcc(name: string): ToolAcc {
    let t = this.tools.get(name);
    if (!t) {
      t = new ToolAcc(name);
      this.tools.set(name, t);
    }
    return t;
  }

  /** Calls of a closed step that got no result. */
  private closeStep(): void {
    if (!this.step) return;
    this.flushUnmessaged();
    for (const [id, c] of this.open) this.markUnanswered(id, c);
    this.open.clear();
    // Issued, never dispatched: a call (as a result without a call is), and an unanswered one.
    for (const [id, c] of this.issued) {
      this.toolCalls++;
      this.toolAcc(c.name).calls++;
      if (this.turn) this.turn.toolCalls++;
      if (this.step) this.step.toolCalls++;
      this.markUnanswered(id, c);
    }
    this.issued.clear();
    this.blockNames.clear();
    this.step = undefined;
  }

  private markUnanswered(callId: string, c: OpenCall): void {
    const ref: CallRef = { callId, name: c.name, turn: c.turn, step: c.step, seq: c.seq };
    this.unanswered.push(ref);
    this.turn?.unanswered.push(ref);
    this.toolAcc(c.name).unanswered++;
  }

  private closeTurn(state: 'ended' | 'dangling'): void {
    const turn = this.turn;
    if (!turn) return;
    if (state === 'dangling') this.closeStep();
    this.turns.push(turn);
    if (state === 'ended') bump(this.reasons, turn.reason ?? 'unknown');
    else bump(this.reasons, 'dangling');
    this.turn = undefined;
  }

  /** The statistics of the events pushed so far. */
  result(
    identity: { id: string; header?: { createdAt?: unknown; cwd?: unknown; parentSession?: unknown } | undefined },
    writer: WriterState = { state: 'unknown' },
  ): { stats: SessionStats; samples: StatsSamples } {
    const turns = [...this.turns];
    const reasons = { ...this.reasons };
    const openTurn = this.turn;
    const pend = this.pendingBill();
    const live = writer.state === 'live';
    const openState: TurnState = live ? 'live' : 'dangling';
    // Calls still open in a live turn are in flight; in a dangling one they will never be answered.
    // Issued but never dispatched: counted as calls too (closeStep does the same for a closed step).
    const notDispatched = openTurn && !live ? [...this.issued] : [];
    const openUnanswered: CallRef[] =
      openTurn && !live
        ? [...this.open, ...notDispatched].map(([callId, c]) => ({ callId, name: c.name, turn: c.turn, step: c.step, seq: c.seq }))
        : [];
    const unanswered = [...this.unanswered, ...openUnanswered];
    if (openTurn) {
      bump(reasons, openState);
      turns.push(openTurn);
    }
    const dangling: number[] = [];
    const liveTurns: number[] = [];
    const perTurn = turns.map((t): TurnStats => {
      const state: TurnState = t === openTurn ? openState : t.end === undefined ? 'dangling' : 'ended';
      if (state === 'dangling') dangling.push(t.turn);
      if (state === 'live') liveTurns.push(t.turn);
      const ts = this.turnStats(t, state, t === openTurn ? openUnanswered : [], t === openTurn ? pend : undefined);
      if (t === openTurn) ts.toolCalls += notDispatched.length;
      return ts;
    });
    for (const [, c] of notDispatched) this.toolAcc(c.name);
    const tools = [...this.tools.values()].map(
      (t): ToolStats => ({
        name: t.name,
        calls: t.calls + notDispatched.filter(([, c]) => c.name === t.name).length,
        failures: t.failures,
        errors: { ...t.errors },
        unanswered: t.unanswered + openUnanswered.filter((c) => c.name === t.name).length,
        duration: distOf(t.durations),
      }),
    );
    tools.sort((a, b) => b.calls - a.calls || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const session = this.withPending({ tokens: this.tokens, cost: this.cost }, pend);
    const models = [...this.models.entries()].map(([key, m]) =>
      pend && key === `${pend.provider ?? '?'}:${pend.model ?? '?'}` ? { ...m, ...this.withPending(m, pend) } : m,
    );
    if (pend && !this.models.has(`${pend.provider ?? '?'}:${pend.model ?? '?'}`)) {
      models.push({
        provider: pend.provider ?? null,
        model: pend.model ?? null,
        ...this.withPending({ tokens: new TokenAcc(), cost: new CostAcc() }, pend),
      });
    }
    const h = identity.header ?? {};
    const stats: SessionStats = {
      id: identity.id,
      createdAt: typeof h.createdAt === 'number' ? h.createdAt : null,
      cwd: typeof h.cwd === 'string' ? h.cwd : null,
      parentSession: typeof h.parentSession === 'string' ? h.parentSession : null,
      events: this.events,
      firstTime: this.firstTime,
      lastTime: this.lastTime,
      turns: this.turnCount,
      steps: this.stepCount,
      attempts: this.attemptCount,
      toolCalls: this.toolCalls + notDispatched.length,
      toolFailures: this.toolFailures,
      tokens: session.tokens.done(),
      cost: session.cost.done(),
      models: models
        .map((m) => ({ provider: m.provider, model: m.model, tokens: m.tokens.done(), cost: m.cost.done() }))
        .sort((a, b) => b.tokens.calls - a.tokens.calls),
      ttft: distOf(this.ttft),
      decode: distOf(this.decode),
      tool: distOf(this.toolDur),
      reasons,
      retries: { count: this.retries, byCode: { ...this.retryCodes } },
      errors: { model: { ...this.errors.model }, tool: { ...this.errors.tool }, turn: { ...this.errors.turn } },
      tools,
      dangling,
      live: liveTurns,
      unanswered,
      writer,
    };
    if (this.detail) stats.perTurn = perTurn;
    const toolDurations = new Map<string, number[]>();
    for (const t of this.tools.values()) toolDurations.set(t.name, [...t.durations]);
    return { stats, samples: { ttft: [...this.ttft], decode: [...this.decode], tool: [...this.toolDur], toolDurations } };
  }

  private turnStats(t: TurnAcc, state: TurnState, extraUnanswered: CallRef[], pend: PendingBill | undefined): TurnStats {
    const billed = this.withPending(t, pend);
    const open = this.step;
    const out: TurnStats = {
      turn: t.turn,
      start: t.start,
      state,
      steps: this.detail ? t.steps.map((s) => stepStats(s, s === open ? this.withPending(s, pend) : s)) : [],
      tokens: billed.tokens.done(),
      cost: billed.cost.done(),
      attempts: t.attempts,
      retries: t.retries,
      toolCalls: t.toolCalls,
      toolFailures: t.toolFailures,
      ttft: distOf(t.ttft),
      decode: distOf(t.decode),
      toolMs: t.toolMs,
      unanswered: [...t.unanswered, ...extraUnanswered],
    };
    if (t.end !== undefined) out.end = t.end;
    if (t.reason !== undefined && state === 'ended') out.reason = t.reason;
    if (t.reasonDetail !== undefined && state === 'ended') out.reasonDetail = t.reasonDetail;
    if (t.t1 !== undefined) out.wallMs = span(t.t0, t.t1);
    return out;
  }
}

function stepStats(s: StepAcc, billed: { tokens: TokenAcc; cost: CostAcc }): StepStats {
  const out: StepStats = {
    step: s.step,
    start: s.start,
    tokens: billed.tokens.done(),
    cost: billed.cost.done(),
    attempts: s.attempts,
    retries: s.retries,
    toolMs: s.toolMs,
    toolCalls: s.toolCalls,
    toolFailures: s.toolFailures,
  };
  if (s.end !== undefined) out.end = s.end;
  if (s.finish !== undefined) out.finish = s.finish;
  if (s.ttft.length) out.ttftMs = s.ttft[s.ttft.length - 1]!;
  if (s.decode.length) out.decodeMs = s.decode[s.decode.length - 1]!;
  if (s.t1 !== undefined) out.wallMs = span(s.t0, s.t1);
  return out;
}

/** Milliseconds from `a` to `b`; a clock that went backwards gives 0, not a negative duration. */
function span(a: number, b: number): number {
  return Math.max(0, b - a);
}

function opt<K extends string, V>(k: K, v: V | undefined): { [P in K]?: V } {
  return (v === undefined ? {} : { [k]: v }) as { [P in K]?: V };
}

/** Fold the events the log itself holds (not a loader's crash-repair closers). */
export function collectStats(view: LogView, opts: StatsOptions = {}): { stats: SessionStats; samples: StatsSamples } {
  const fold = new StatsFold({
    ...(opts.prices ? { prices: opts.prices } : {}),
    ...(opts.detail !== undefined ? { detail: opts.detail } : {}),
  });
  for (const r of view.records(0, view.written)) {
    if (isChunkRun(r)) fold.pushRun(r);
    else fold.push(r);
  }
  return fold.result({ id: view.id, header: view.header }, opts.writer);
}

/** The statistics of one session: totals, per turn and per step, reasons, tools, errors, cost. */
export function stats(input: QueryInput, opts: StatsOptions = {}): SessionStats {
  return collectStats(viewOf(input), opts).stats;
}

export { TokenAcc, CostAcc };
