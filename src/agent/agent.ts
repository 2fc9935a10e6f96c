/**
 * The agent: the driver of turns over one session log. It owns the inbox, the status, the
 * cancel signal and the plugins, and runs one turn after another while input is waiting; the turn
 * and the step themselves are ./turn.ts and ./step.ts:
 *
 *   turn/start → claim inbox → agent/pre-step → step/start → user/message… → request/header?
 *   → llm/stream → assistant/chunk… → assistant/message → tool/call → tool/result… → step/end
 *   → (more steps while tools ran or input is waiting) → agent/turn-stopping → turn/end
 *
 * Everything the model sees is read back from the log (`deriveMessages()` and the latest
 * `request/header`), and checked to be so before every model call.
 */
import { randomUUID } from 'node:crypto';
import { CodedError } from '../model/coded-error.js';
import type { UserMessage } from '../model/message.js';
import type { LlmCallConfig } from '../model/request.js';
import type { AgentCancelCause, InboxTarget } from '../session/events.js';
import { Session } from '../session/session.js';
import { HookBus, type Disposer, type HookName, type Listener, type ListenOptions } from '../hooks/bus.js';
import type { LlmAdapter } from '../llm/adapter.js';
import { AdapterRegistry } from '../llm/registry.js';
import { redactJson, redactSecrets } from '../llm/failures.js';
import { isModelChoice, type ModelChoice } from '../llm/model-choice.js';
import '../llm/hooks.js';
import { ToolRegistry } from '../tools/registry.js';
import type { ToolDefinition } from '../tools/types.js';
import { nonInteractiveApproval, type ApprovalHandler } from '../tools/pipeline.js';
import { Inbox } from './inbox.js';
import { PromptSections } from './prompt.js';
import type { LoopDriver } from './step.js';
import { runTurn } from './turn.js';
import { retryPolicy, type RetryPolicyOptions } from './retry.js';
import type { AgentContext, AgentHost, AgentOptions, AgentStatus, Plugin, UserInput } from './context.js';
import './hooks.js';

export type { AgentHost, AgentOptions, Plugin, UserInput } from './context.js';

export function userMessage(input: UserInput): UserMessage {
  if (typeof input === 'string')
    return { id: randomUUID(), role: 'user', content: [{ type: 'text', text: input }], source: { kind: 'user' } };
  if (Array.isArray(input)) return { id: randomUUID(), role: 'user', content: input, source: { kind: 'user' } };
  return input;
}

export class AgentError extends CodedError<'DISPOSED'> {
  constructor(code: 'DISPOSED', message: string) {
    super(code, message);
    this.name = 'AgentError';
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
  /** What the turn and step functions (turn.ts, step.ts) keep of this driver. */
  private readonly loop: LoopDriver = {
    agent: this,
    firstRequest: true,
    claimed: () => {
      this.wakePending = false;
    },
  };
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
        await runTurn(this.loop, this.activity!.controller.signal);
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
}

// ---------------------------------------------------------------------------------------------
// assembleAgent

export interface AssembleAgentOptions {
  /**
   * The model: a choice made by `chooseModel` (llm/select.ts), whose adapter serves the provider
   * when nothing passed in or registered by a plugin does; or a bare call configuration, whose
   * provider the adapters passed in (or a plugin, or an `llm/stream` middleware) must serve. No
   * adapter is made here: the agent layer loads no provider SDK.
   */
  model: ModelChoice | LlmCallConfig;
  /** The log to run on; a new in-memory session when absent. */
  session?: Session;
  adapters?: LlmAdapter | LlmAdapter[];
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
 * An agent on a chosen model: options, adapters, tools, base prompt, the default retry policy and
 * plugins, in that order; then, if no adapter serves the model's provider, the choice's own.
 * The package's `createAgent` (src/create-agent.ts) makes the choice from a `provider:model`
 * string and the environment first.
 */
export function assembleAgent(opts: AssembleAgentOptions): Agent {
  const choice = isModelChoice(opts.model) ? opts.model : undefined;
  const model: LlmCallConfig = choice ? choice.config : (opts.model as LlmCallConfig);
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
  if (choice && !agent.adapters.get(model.provider)) {
    const adapter = choice.adapter();
    if (adapter) agent.adapters.register(adapter);
  }
  return agent;
}
