/**
 * The compaction engine of one agent, and the plugin that installs it.
 *
 * Triggers:
 * - pressure, at `agent/pre-step`: once the step's input is decided, if the next request would
 *   fill `thresholdRatio` of the context window, the oldest history is summarised, keeping the
 *   retain budget verbatim;
 * - overflow, at `agent/request-error` on CONTEXT_WINDOW_EXCEEDED: as much as can be summarised
 *   is (all but the newest indivisible unit and the step's own input), and the request is retried
 *   only if the surface really changed; at most `maxOverflowRetries` times per step;
 * - manual, `compactNow(agent)` while idle (`turn: null`).
 *
 * An automatic compaction that fails is on record (`compaction/end.error`), reported on
 * `compaction/failed`, and the turn goes on with the full history; a cancel still cancels.
 */
import type { AgentContext, Plugin } from '../agent/context.js';
import '../agent/hooks.js';
import type { Message } from '../model/message.js';
import type { Session } from '../session/session.js';
import type { SessionEvent } from '../session/events.js';
import { deriveEventMessage } from '../session/derive.js';
import { chooseCut, safeCuts, type RegionMode } from './boundaries.js';
import { resolvePolicy, retainBudget, type CompactionConfig, type CompactionPolicy } from './policy.js';
import { CompactionError } from './errors.js';
import type { CompactionTrigger } from './hooks.js';
import './hooks.js';
import { estimateMessage, measure, nodeTokens, type TokenMeasurement } from './meter.js';
import { checkpointMessage } from './checkpoint.js';
import { modelSummarizer, type Summarizer } from './summarize.js';
import { openCompaction } from './tracker.js';
import { runCompaction, type CompactionResult, type RegionPlan } from './transaction.js';

export interface CompactionOptions extends CompactionConfig {
  /** How summaries are made; by default one call to the conversation's model. */
  summarizer?: Summarizer;
  /** The context window to measure against, instead of the log's route context or the adapter's model info. */
  contextWindow?: number;
}

const CONFIG_KEYS = ['auto', 'thresholdRatio', 'retainRatio', 'retainTokens', 'maxTokens', 'maxOverflowRetries'] as const;

function configOf(opts: CompactionOptions): CompactionConfig {
  const c: Record<string, unknown> = {};
  for (const k of CONFIG_KEYS) if (opts[k] !== undefined) c[k] = opts[k];
  return c as CompactionConfig;
}

export interface CompactOptions {
  turn: number | null;
  signal: AbortSignal;
  /** Surface positions from here on are never shadowed. */
  protectFrom?: number;
  sourceCommandId?: string;
}

export class CompactionEngine {
  readonly policy: CompactionPolicy;
  private readonly summarizer: Summarizer;
  private readonly windowOverride: number | undefined;
  private manual: Promise<unknown> | undefined;

  constructor(
    readonly agent: AgentContext,
    opts: CompactionOptions = {},
  ) {
    this.policy = resolvePolicy(configOf(opts));
    this.summarizer = opts.summarizer ?? modelSummarizer;
    this.windowOverride = opts.contextWindow;
  }

  get session(): Session {
    return this.agent.session;
  }

  /** The route's window: this engine's override, else the logged route context, else the adapter's model info. */
  contextWindow(): number | undefined {
    if (this.windowOverride !== undefined) return this.windowOverride;
    const header = this.session.requestHeader();
    const provider = header?.config.provider ?? this.agent.options.provider;
    const model = header?.config.model ?? this.agent.options.model;
    const ctx = this.session.requestContext();
    if (ctx && ctx.provider === provider && ctx.model === model && ctx.contextWindow !== undefined) return ctx.contextWindow;
    return this.agent.adapters.get(provider)?.modelInfo?.(model)?.contextWindow;
  }

  /** Tokens the next request would take, with `pending` about to be entered. */
  measure(pending: readonly Message[] = []): TokenMeasurement {
    const window = this.contextWindow();
    return measure(this.session, { pending, ...(window !== undefined ? { contextWindow: window } : {}) });
  }

  /** The surface span a compaction of this kind would take (positions, inclusive), if any. */
  region(mode: RegionMode, protectFrom?: number): { first: number; last: number } | undefined {
    const nodes = this.session.surface.nodes;
    const messages = nodes.map((s) => deriveEventMessage(this.session.at(s)!));
    const budget = retainBudget(this.policy, this.contextWindow());
    const cut = chooseCut({
      tokens: nodes.map((s) => nodeTokens(this.session, s)),
      safe: safeCuts(messages),
      protectFrom: protectFrom ?? nodes.length,
      mode,
      ...(budget !== undefined ? { retainBudget: budget } : {}),
    });
    if (cut === undefined) return undefined;
    // One node that is already a checkpoint gains nothing from being summarised again.
    if (cut === 1 && isCheckpoint(this.session.at(nodes[0]!))) return undefined;
    // A span no bigger than an empty checkpoint cannot shrink: no model call for that.
    const spanTokens = nodes.slice(0, cut).reduce((a, s) => a + nodeTokens(this.session, s), 0);
    if (spanTokens <= EMPTY_CHECKPOINT_TOKENS) return undefined;
    return { first: 0, last: cut - 1 };
  }

  /** Compact now for `trigger`; null when there is nothing to compact. Throws `CompactionError`. */
  async compact(trigger: CompactionTrigger, o: CompactOptions): Promise<CompactionResult | null> {
    const mode: RegionMode = trigger === 'context-overflow' ? 'overflow' : trigger === 'manual' ? 'manual' : 'pressure';
    const span = this.region(mode, o.protectFrom);
    if (!span) return null;
    const plan: RegionPlan = { ...span, turn: o.turn };
    if (o.sourceCommandId !== undefined) plan.sourceCommandId = o.sourceCommandId;
    try {
      const result = await runCompaction(this.agent, plan, {
        summarizer: this.summarizer,
        maxTokens: this.policy.maxTokens,
        signal: o.signal,
      });
      this.agent.bus.emit('compaction/done', { agent: this.agent, trigger, result });
      return result;
    } catch (e) {
      if (e instanceof CompactionError && trigger !== 'manual')
        this.agent.bus.emit('compaction/failed', { agent: this.agent, trigger, error: e });
      throw e;
    }
  }

  /** Manual compaction between turns (`turn: null`). */
  async compactNow(opts: { signal?: AbortSignal; sourceCommandId?: string } = {}): Promise<CompactionResult | null> {
    if (this.agent.status === 'running') throw new CompactionError('NOT_IDLE', 'a turn is running; compact when the agent is idle');
    const open = openCompaction(this.session);
    if (open) throw new CompactionError('BUSY', `compaction ${open.data.compactionId} (started at seq ${open.seq}) is still running`);
    const run = this.compact('manual', {
      turn: null,
      signal: opts.signal ?? new AbortController().signal,
      ...(opts.sourceCommandId !== undefined ? { sourceCommandId: opts.sourceCommandId } : {}),
    });
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.manual = settled;
    try {
      return await run;
    } finally {
      if (this.manual === settled) this.manual = undefined;
    }
  }

  /**
   * A turn started while a manual compaction runs waits for it at its first pre-step, so its
   * request already sees the checkpoint (the agent has no way to hold a turn back before it opens).
   */
  async manualSettled(signal: AbortSignal): Promise<void> {
    const m = this.manual;
    if (!m) return;
    await Promise.race([m, new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }))]);
  }
}

function isCheckpoint(e: SessionEvent | undefined): boolean {
  return e?.type === 'user/message' && e.data.source.kind === 'plugin' && e.data.source.plugin === 'compact';
}

const EMPTY_CHECKPOINT_TOKENS = estimateMessage(checkpointMessage([], 'none'));

const engines = new WeakMap<AgentContext, CompactionEngine>();

/** The agent's engine (installed by the plugin), or one with the default policy. */
export function engineFor(agent: AgentContext): CompactionEngine {
  let e = engines.get(agent);
  if (!e) engines.set(agent, (e = new CompactionEngine(agent)));
  return e;
}

/** Manual compaction: summarise the older history now. Null when there is nothing to compact. */
export function compactNow(
  agent: AgentContext,
  opts: { signal?: AbortSignal; sourceCommandId?: string } = {},
): Promise<CompactionResult | null> {
  return engineFor(agent).compactNow(opts);
}

/** Error finishes of CONTEXT_WINDOW_EXCEEDED so far in this step (the current one included). */
function overflowsInStep(session: Session, turn: number, step: number): number {
  let n = 0;
  for (let seq = session.length - 1; seq >= 0; seq--) {
    const e = session.at(seq)!;
    if (e.type === 'step/start' && e.data.turn === turn && e.data.step === step) break;
    if (
      e.type === 'assistant/chunk' &&
      e.data.chunk.type === 'finish' &&
      e.data.chunk.reason.kind === 'error' &&
      e.data.chunk.reason.failure.code === 'CONTEXT_WINDOW_EXCEEDED'
    )
      n++;
  }
  return n;
}

/** Surface position of the open step's first input message (what it entered before its model call). */
function stepInputStart(session: Session, turn: number, step: number): number {
  const entered = new Set<number>();
  let seq = session.length - 1;
  for (; seq >= 0; seq--) {
    const e = session.at(seq)!;
    if (e.type === 'step/start' && e.data.turn === turn && e.data.step === step) break;
  }
  for (const e of session.since(seq + 1)) {
    if (e.type === 'assistant/chunk') break;
    if (e.type === 'user/message' && e.surfaceOp === 'append') entered.add(e.seq);
  }
  const nodes = session.surface.nodes;
  const i = nodes.findIndex((s) => entered.has(s));
  return i < 0 ? nodes.length : i;
}

/**
 * Compaction for an agent: automatic triggers (unless `auto: false`) and the policy `compactNow`
 * uses. `createCodingAgent` installs it by default.
 */
export function compaction(opts: CompactionOptions = {}): Plugin {
  return (host) => {
    const agent = host.agent;
    const engine = new CompactionEngine(agent, opts);
    engines.set(agent, engine);
    const session = agent.session;
    const policy = engine.policy;
    if (policy.auto) {
      host.on(
        'agent/pre-step',
        async (p, next) => {
          await engine.manualSettled(p.signal);
          const decision = await next(p);
          // A first step entering nothing ends the turn without a request.
          if (decision.kind !== 'enter' || (p.step === 1 && decision.messages.length === 0)) return decision;
          const m = engine.measure(decision.messages);
          if (m.pressure === undefined || m.pressure < policy.thresholdRatio || openCompaction(session)) return decision;
          try {
            await engine.compact('pressure', { turn: p.turn, signal: p.signal });
          } catch (e) {
            if (!(e instanceof CompactionError) || p.signal.aborted) throw e;
          }
          return decision;
        },
        { name: 'dsh:compaction/pressure' },
      );
      if (policy.maxOverflowRetries > 0) {
        host.on(
          'agent/request-error',
          async (p, next) => {
            if (p.failure.code !== 'CONTEXT_WINDOW_EXCEEDED' || p.signal.aborted) return next(p);
            if (overflowsInStep(session, p.turn, p.step) > policy.maxOverflowRetries) return next(p);
            const generation = session.surface.replaceGeneration;
            try {
              await engine.compact('context-overflow', {
                turn: p.turn,
                signal: p.signal,
                protectFrom: stepInputStart(session, p.turn, p.step),
              });
            } catch (e) {
              if (!(e instanceof CompactionError)) throw e;
            }
            // Only a real change to the history makes a retry worth anything.
            if (session.surface.replaceGeneration > generation && !p.signal.aborted) return { kind: 'retry' };
            return next(p);
          },
          { name: 'dsh:compaction/overflow' },
        );
      }
    }
    return () => {
      if (engines.get(agent) === engine) engines.delete(agent);
    };
  };
}
