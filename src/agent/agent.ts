/**
 * The agent: an inbox, a turn driver and a step loop over one session log.
 *
 * A **turn** opens (`turn/start`) before any input is claimed and closes (`turn/end`, from a
 * `finally`, so every turn is balanced) when no work is owed. A **step** is one model request
 * plus the tools it calls:
 *
 *   turn/start → claim inbox → agent/pre-step → step/start → user/message… → request/header?
 *   → llm/stream → assistant/chunk… → assistant/message → tool/call → tool/result… → step/end
 *   → (more steps while tools ran or input is waiting) → agent/turn-stopping → turn/end
 *
 * Everything the model sees is read back from the log (`deriveMessages()` and the latest
 * `request/header`), and checked to be so before every model call.
 */
import { CodedError } from '../model/coded-error.js';
import { randomUUID } from 'node:crypto';
import type { AssistantMessage, ContentBlock, ToolCallBlock, UserMessage } from '../model/message.js';
import type { StreamChunk } from '../model/stream.js';
import { LlmError, toLlmFailure } from '../model/failure.js';
import type { GenerateRequest, LlmCallConfig } from '../model/request.js';
import type { AgentCancelCause, InboxTarget, TurnEndReason } from '../session/events.js';
import { Session } from '../session/session.js';
import { HookBus, type Disposer, type HookName, type Listener, type ListenOptions } from '../hooks/bus.js';
import type { LlmAdapter } from '../llm/adapter.js';
import { AdapterRegistry } from '../llm/registry.js';
import { redactJson, redactSecrets, withoutSecrets } from '../llm/failures.js';
import { createAdapter, knownProviders, MissingCredentialError, ModelSelectionError, parseModelRef, resolveProvider } from '../llm/select.js';
import type { LlmConfig } from '../llm/config.js';
import '../llm/hooks.js';
import { ToolRegistry } from '../tools/registry.js';
import type { ToolDefinition } from '../tools/types.js';
import type { ToolHost } from '../tools/host.js';
import { nonInteractiveApproval, type ApprovalHandler } from '../tools/pipeline.js';
import { Inbox } from './inbox.js';
import { BlockAssembler } from './assembler.js';
import { PromptSections } from './prompt.js';
import { buildRequest } from './request.js';
import { assertModelVisibleRecorded } from './invariant.js';
import { streamModelRequest } from './model-stream.js';
import { runToolCalls } from './tool-calls.js';
import { retryPolicy, type RetryPolicyOptions } from './retry.js';
import type { AgentContext, AgentHost, AgentOptions, AgentStatus, Plugin, UserInput } from './context.js';
import './hooks.js';

export type { AgentHost, AgentOptions, Plugin, UserInput } from './context.js';

type StepOutcome = 'completed' | 'max-tokens' | 'continue';

export function userMessage(input: UserInput): UserMessage {
  if (typeof input === 'string') return { id: randomUUID(), role: 'user', content: [{ type: 'text', text: input }], source: { kind: 'user' } };
  if (Array.isArray(input)) return { id: randomUUID(), role: 'user', content: input, source: { kind: 'user' } };
  return input;
}

export class AgentError extends CodedError<'DISPOSED'> {
  constructor(code: 'DISPOSED', message: string) {
    super(code, message);
    this.name = 'AgentError';
  }
}

function isCancelCause(v: unknown): v is AgentCancelCause {
  const k = (v as { kind?: unknown } | null)?.kind;
  return k === 'user' || k === 'parent' || k === 'disposed' || (k === 'hook' && typeof (v as { reason?: unknown }).reason === 'string');
}

/** Iterate a stream, but stop waiting the moment `signal` aborts (a hung provider cannot pin a cancel). */
async function* untilAborted<T>(source: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<'aborted'>((resolve) => {
    onAbort = () => resolve('aborted');
    if (signal.aborted) resolve('aborted');
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    for (;;) {
      const r = await Promise.race([it.next(), aborted]);
      if (r === 'aborted') return;
      if (r.done) return;
      yield r.value;
    }
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
    // Not awaited: a generator blocked in a pending next() would hold its return() forever.
    void Promise.resolve(it.return?.()).catch(() => undefined);
  }
}

export class Agent implements AgentContext {
  readonly session: Session;
  readonly bus: HookBus;
  readonly inbox: Inbox;
  readonly tools = new ToolRegistry();
  readonly systemPrompt = new PromptSections();
  readonly adapters = new AdapterRegistry();
  readonly options: AgentOptions;
  approve: ApprovalHandler;

  private statusValue: AgentStatus = 'idle';
  private activity: { controller: AbortController } | undefined;
  private wakePending = false;
  private disposed = false;
  private startedOnce = false;
  private firstRequest = true;
  private idleWaiters: (() => void)[] = [];
  private disposers: Disposer[] = [];

  constructor(session: Session, options: AgentOptions, bus = new HookBus(), approve: ApprovalHandler = nonInteractiveApproval) {
    this.session = session;
    this.options = options;
    this.bus = bus;
    this.approve = approve;
    this.inbox = new Inbox(session, {
      inserted: (message, target) => this.bus.emit('agent/inbox/inserted', { agent: this, message, target }),
      claimed: (message, turn) => this.bus.emit('agent/inbox/claimed', { agent: this, message, turn }),
      discarded: (message) => this.bus.emit('agent/inbox/discarded', { agent: this, message }),
    });
  }

  get id(): string {
    return this.session.id;
  }

  redact(text: string): string {
    return redactSecrets(text, this.options.secrets);
  }

  /** `value` (an error record bound for the log) with every configured secret in any of its strings replaced. */
  redactRecord<T>(value: T): T {
    return redactJson(value, this.options.secrets);
  }
  get status(): AgentStatus {
    return this.statusValue;
  }

  // ------------------------------------------------------------------------------------------
  // Extension

  on<K extends HookName>(hook: K, fn: Listener<K>, opts?: ListenOptions): Disposer {
    return this.bus.on(hook, fn, opts);
  }

  use(plugin: Plugin): Disposer {
    const own: Disposer[] = [];
    const track = (d: Disposer): Disposer => {
      own.push(d);
      return d;
    };
    const host: AgentHost = {
      agent: this,
      session: this.session,
      cwd: this.options.cwd,
      getTool: (name) => this.tools.get(name),
      on: (hook, fn, opts) => track(this.bus.on(hook, fn, opts)),
      tool: (def) => track(this.tools.register(def)),
      section: (s) => track(this.systemPrompt.add(s)),
      adapter: (a) => track(this.adapters.register(a)),
    };
    const d = plugin(host);
    let done = false;
    const dispose: Disposer = () => {
      if (done) return;
      done = true;
      this.disposers = this.disposers.filter((x) => x !== dispose);
      if (d) d();
      for (const x of own.splice(0).reverse()) x();
    };
    this.disposers.push(dispose);
    return dispose;
  }

  // ------------------------------------------------------------------------------------------
  // Input

  /** A new prompt: it becomes the sole ordinary message of its own turn. */
  prompt(input: UserInput): UserMessage {
    return this.followup(input);
  }
  followup(input: UserInput): UserMessage {
    return this.send(userMessage(input), 'next-turn', true);
  }
  /** Steering: consumed at the next step boundary (starts a turn when idle). */
  steer(input: UserInput): UserMessage {
    return this.send(userMessage(input), 'next-step', true);
  }
  /** Context for the next step; waits, without waking, until something else starts one. */
  inject(input: UserInput): UserMessage {
    return this.send(userMessage(input), 'next-step', false);
  }

  send(message: UserMessage, target: InboxTarget, wake: boolean): UserMessage {
    if (this.disposed) throw new AgentError('DISPOSED', `agent ${this.id} is disposed; it takes no more input`);
    if (wake && this.activity?.controller.signal.aborted) {
      // The current activity is dying: a waking message belongs to the next turn, which the
      // driver starts once it has wound down.
      target = 'next-turn';
    }
    const stored = this.inbox.append(target, message);
    if (wake) {
      this.wakePending = true;
      if (!this.activity) this.startDriver();
    }
    return stored;
  }

  /** Stop the current activity. Clears pending input unless `keepInbox`. No-op when idle. */
  cancel(cause: AgentCancelCause = { kind: 'user' }, opts: { keepInbox?: boolean } = {}): void {
    if (!this.activity) return;
    if (!opts.keepInbox) {
      this.inbox.clear();
      this.wakePending = false;
    }
    if (!this.activity.controller.signal.aborted) this.activity.controller.abort(cause);
  }

  /**
   * Start on input an earlier process left in the durable inbox (the inbox is rebuilt from the
   * log on resume, but nothing wakes the agent for it). Returns whether a turn started: false
   * when running, disposed, or the inbox is empty.
   */
  resume(): boolean {
    if (this.disposed || this.activity || this.inbox.size === 0) return false;
    this.wakePending = true;
    this.startDriver();
    return true;
  }

  /** Resolves when the agent is idle with nothing pending (follows replacement work). */
  whenIdle(): Promise<void> {
    if (!this.activity) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.cancel({ kind: 'disposed' });
    this.disposed = true;
    await this.whenIdle();
    for (const d of this.disposers.splice(0).reverse()) {
      try {
        d();
      } catch {
        // a plugin's teardown failure must not stop the others
      }
    }
  }

  // ------------------------------------------------------------------------------------------
  // Driver

  private setStatus(status: AgentStatus): void {
    if (this.statusValue === status) return;
    this.statusValue = status;
    this.bus.emit('agent/status', { agent: this, status });
  }

  private startDriver(): void {
    this.activity = { controller: new AbortController() };
    this.setStatus('running');
    void this.drive();
  }

  private async drive(): Promise<void> {
    try {
      // Start on the next microtask: input sent in the same synchronous run (a prompt plus its
      // injected context, say) is claimed together.
      await null;
      if (!this.startedOnce) {
        this.startedOnce = true;
        this.bus.emit('agent/session-start', { agent: this, source: this.session.firstLiveSeq > 0 ? 'resume' : 'startup' });
      }
      for (;;) {
        this.wakePending = false;
        await this.runTurn(this.activity!.controller.signal);
        if (this.disposed || !(this.inbox.nextTurn.length > 0 || this.wakePending)) break;
        this.activity = { controller: new AbortController() };
      }
    } catch (error) {
      // runTurn contains its own failures; this only catches a broken log append in turn/end.
      this.bus.emit('agent/error', { agent: this, turn: this.session.trace.lastTurn, step: 0, error });
    } finally {
      this.activity = undefined;
      this.setStatus('idle');
      if (!this.activity) for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  private async runTurn(signal: AbortSignal): Promise<void> {
    const s = this.session;
    const turn = s.trace.lastTurn + 1;
    s.append('turn/start', { turn });
    let reason: TurnEndReason | undefined;
    let step = 0;
    let maxTokensHit = false;
    let wouldEnd: TurnEndReason | undefined;
    let target: InboxTarget = 'next-turn';
    try {
      for (;;) {
        signal.throwIfAborted();
        const claimed = this.inbox.claim(target, turn);
        this.wakePending = false; // a claim takes all of next-step: any pending steer is served
        const decision = await this.bus.waterfall('agent/pre-step', { agent: this, messages: claimed, turn, step: step + 1, signal }, (p) => ({
          kind: 'enter' as const,
          messages: p.messages,
        }));
        signal.throwIfAborted();
        if (decision.kind === 'reject') {
          reason = { kind: 'blocked' };
          break;
        }
        const entered = decision.messages;
        if (entered.length === 0) {
          // The first proposal rewritten to nothing: a turn with no step still closes, so the
          // attempt is on record. A later empty batch just means the turn was about to end.
          if (step === 0) {
            reason = { kind: 'completed' };
            break;
          }
          if (wouldEnd) {
            reason = wouldEnd;
            break;
          }
        }
        step += 1;
        s.append('step/start', { turn, step });
        let outcome: StepOutcome;
        try {
          for (const m of entered) s.append('user/message', m, { surfaceOp: 'append' });
          outcome = await this.runStep(turn, step, signal);
        } finally {
          s.append('step/end', { turn, step });
        }
        signal.throwIfAborted();
        if (outcome === 'max-tokens') maxTokensHit = true;
        wouldEnd = outcome === 'continue' ? undefined : maxTokensHit ? { kind: 'max-tokens' } : { kind: 'completed' };
        if (wouldEnd && this.inbox.nextStep.length === 0) await this.bus.serial('agent/turn-stopping', { agent: this, turn, signal });
        if (wouldEnd && this.inbox.nextStep.length === 0) {
          reason = wouldEnd;
          break;
        }
        target = 'next-step';
      }
    } catch (error) {
      if (signal.aborted) {
        reason = { kind: 'aborted', reason: isCancelCause(signal.reason) ? signal.reason : { kind: 'user' } };
      } else {
        reason = { kind: 'error', error: toLlmFailure(error) };
        this.bus.emit('agent/error', { agent: this, turn, step, error });
      }
    } finally {
      // Any error, not only an adapter's (which already took out its own secrets), may quote one:
      // a throwing hook, a tool pipeline, a plugin; so may a hook's cancel reason.
      if (reason) reason = this.redactRecord(reason);
      s.append('turn/end', { turn, reason: reason ?? { kind: 'error', error: { message: 'turn ended without a reason', code: 'UNKNOWN' } } });
    }
  }

  private async runStep(turn: number, step: number, signal: AbortSignal): Promise<StepOutcome> {
    const s = this.session;
    for (;;) {
      const { request, adapter } = await buildRequest(this, turn, step, signal, this.firstRequest);
      this.firstRequest = false;
      signal.throwIfAborted();
      const asm = new BlockAssembler();
      const chunkSeqs: number[] = [];
      for await (const raw of untilAborted(this.openStream(request, adapter), signal)) {
        // Every configured secret, not only the adapter's own: the failure goes on to the log
        // (assistant/chunk), to retry listeners (llm/retry) and to the turn's end.
        const chunk = withoutSecrets(raw, this.options.secrets);
        chunkSeqs.push(s.append('assistant/chunk', { turn, step, chunk }).seq);
        asm.push(chunk);
      }
      const finish = asm.finish;
      if (signal.aborted || finish === undefined || finish.kind === 'aborted') {
        // "The model sees what the user saw": visible text streamed before a cancel is kept.
        const visible = asm.interruptedBlocks();
        if (visible.length > 0) {
          s.append(
            'assistant/message',
            { turn, step, message: this.assistantMessage(request, visible), interrupted: true, ...(asm.usage ? { usage: asm.usage } : {}) },
            { surfaceOp: 'append', sourceEventSeqs: chunkSeqs },
          );
        }
        signal.throwIfAborted();
        throw new LlmError(finish?.kind === 'aborted' ? finish.failure : { code: 'STREAM_CLOSED', message: 'the stream ended without a finish' });
      }
      if (finish.kind === 'error') {
        const decision = await this.bus.waterfall(
          'agent/request-error',
          { agent: this, turn, step, provider: request.provider, failure: finish.failure, signal },
          () => undefined,
        );
        signal.throwIfAborted();
        if (decision?.kind === 'retry') continue; // the failed attempt's chunks stay in the log
        throw new LlmError(finish.failure);
      }
      const { content, replayState } = asm.blocks();
      const message = this.assistantMessage(request, content);
      if (replayState) message.source.replayState = replayState;
      s.append('assistant/message', { turn, step, message, ...(asm.usage ? { usage: asm.usage } : {}) }, { surfaceOp: 'append', sourceEventSeqs: chunkSeqs });
      if (finish.kind === 'max-tokens') return 'max-tokens';
      const calls = content.filter((b): b is ToolCallBlock => b.type === 'tool-call');
      if (calls.length === 0) return 'completed';
      const result = await runToolCalls(calls, {
        session: s,
        turn,
        step,
        signal,
        maxParallel: this.options.maxParallelToolCalls,
        deps: { registry: this.tools, bus: this.bus, session: s, cwd: this.options.cwd, approve: (r, sig) => this.approve(r, sig) },
        redact: (v) => this.redactRecord(v),
      });
      for (const m of result.deferred) this.inbox.append('next-step', m);
      signal.throwIfAborted();
      return result.concludesTurn ? 'completed' : 'continue';
    }
  }

  private assistantMessage(request: GenerateRequest, content: ContentBlock[]): AssistantMessage {
    return { id: randomUUID(), role: 'assistant', content, source: { kind: 'model', provider: request.provider, model: request.model } };
  }

  /** The model stream: invariant check, `llm/stream` waterfall, adapter, normalised to one finish. */
  private openStream(request: GenerateRequest, adapter: LlmAdapter | undefined): AsyncIterable<StreamChunk> {
    const session = this.session;
    return streamModelRequest(this.bus, request, adapter, this.options.invariants ? (req) => assertModelVisibleRecorded(req, session) : undefined);
  }
}

// ---------------------------------------------------------------------------------------------
// createAgent

export interface CreateAgentOptions {
  /**
   * `provider:model` (e.g. `deepseek:deepseek-v4-flash`; a bare name is a DeepSeek model) or the
   * parts. For a built-in or configured provider with no adapter given, the adapter is created
   * from the environment and `llmConfig` (a missing key fails here, naming the variable to set).
   */
  model: string | LlmCallConfig;
  /** The log to run on; a new in-memory session when absent. */
  session?: Session;
  adapters?: LlmAdapter | LlmAdapter[];
  /** Provider declarations and keys, as in the config file's `providers` section. */
  llmConfig?: LlmConfig;
  tools?: ToolDefinition[];
  plugins?: Plugin[];
  /** Base system prompt (a section named `base`). */
  system?: string;
  cwd?: string;
  approve?: ApprovalHandler;
  maxParallelToolCalls?: number;
  /** Default on. `DSH_INVARIANTS=0` turns it off when the option is not given. */
  invariants?: boolean;
  /** The default retry policy's options, or `false` for none. */
  retry?: RetryPolicyOptions | false;
  /**
   * Secret values no recorded error may carry (`AgentOptions.secrets`); values shorter than 8
   * characters are ignored. `createCodingAgent` passes every configured secret.
   */
  secrets?: readonly string[];
}

/**
 * Read a model reference. Known providers follow the selection rules (a bare name is a DeepSeek
 * model; model names may hold colons); any other `provider:model` names a custom route that an
 * adapter passed in, or a plugin, must serve.
 */
export function parseModelSpec(spec: string, config?: LlmConfig): { provider: string; model: string } {
  try {
    return parseModelRef(spec, config);
  } catch (e) {
    const i = spec.indexOf(':');
    if (i > 0 && i < spec.length - 1) return { provider: spec.slice(0, i), model: spec.slice(i + 1) };
    throw e;
  }
}

export function createAgent(opts: CreateAgentOptions): Agent {
  const model = typeof opts.model === 'string' ? parseModelSpec(opts.model, opts.llmConfig) : opts.model;
  const cwd = opts.cwd ?? opts.session?.header.cwd ?? process.cwd();
  const session = opts.session ?? Session.create({ header: { cwd } });
  const options: AgentOptions = {
    ...model,
    cwd,
    maxParallelToolCalls: opts.maxParallelToolCalls ?? 10,
    invariants: opts.invariants ?? process.env.DSH_INVARIANTS !== '0',
    secrets: [...(opts.secrets ?? [])],
  };
  const agent = new Agent(session, options, new HookBus(), opts.approve ?? nonInteractiveApproval);
  const adapters = opts.adapters === undefined ? [] : Array.isArray(opts.adapters) ? opts.adapters : [opts.adapters];
  for (const a of adapters) agent.adapters.register(a);
  for (const t of opts.tools ?? []) agent.tools.register(t);
  if (opts.system) agent.systemPrompt.add({ name: 'base', order: -100, render: () => opts.system! });
  if (opts.retry !== false) agent.use(retryPolicy(opts.retry ?? {}));
  for (const p of opts.plugins ?? []) agent.use(p);
  if (!agent.adapters.get(model.provider) && knownProviders(opts.llmConfig).includes(model.provider)) {
    try {
      agent.adapters.register(createAdapter(resolveProvider(model.provider, { config: opts.llmConfig })));
    } catch (e) {
      // A bare model name beside a passed-in adapter: the likely fix is the prefix, not a key.
      const served = adapters.flatMap((a) => a.providers);
      if (e instanceof MissingCredentialError && typeof opts.model === 'string' && !opts.model.includes(':') && served.length > 0) {
        throw new ModelSelectionError(
          `model ${JSON.stringify(opts.model)} has no provider prefix, so it goes to ${model.provider}, and ${e.message}; to use the adapter you passed, name its provider: ${JSON.stringify(`${served[0]}:${opts.model}`)}`,
        );
      }
      throw e;
    }
  }
  return agent;
}
