/**
 * The agent as everything around the driver sees it: the hook payloads (`agent/*` events), the
 * plugin host, request building, the step loop, compaction. These name this interface instead of
 * the `Agent` class, so none of them imports the module that drives the turns (and that module,
 * which imports them, closes no cycle). `Agent` implements it.
 */
import type { UserMessage } from '../model/message.js';
import type { LlmCallConfig } from '../model/request.js';
import type { AgentCancelCause, InboxTarget } from '../session/events.js';
import type { Session } from '../session/session.js';
import type { Disposer, HookBus, HookName, Listener, ListenOptions } from '../hooks/bus.js';
import type { LlmAdapter } from '../llm/adapter.js';
import type { AdapterRegistry } from '../llm/registry.js';
import type { ToolHost } from '../tools/host.js';
import type { ApprovalHandler } from '../tools/pipeline.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { ContentBlock } from '../model/message.js';
import type { Inbox } from './inbox.js';
import type { PromptSection, PromptSections } from './prompt.js';

export type AgentStatus = 'idle' | 'running';

/** The call configuration the agent starts from, plus how it runs. */
export interface AgentOptions extends LlmCallConfig {
  /** Workspace root for tools. */
  cwd: string;
  /** Calls that may run at once within a step (1 = serial). */
  maxParallelToolCalls: number;
  /** Check "model-visible means recorded" before every model call. */
  invariants: boolean;
  /**
   * Secret values (keys, header values, URL credentials) no error text may carry into the log or
   * to the model: `redact` replaces them wherever the agent records an error.
   */
  secrets: readonly string[];
}

export type UserInput = string | ContentBlock[] | UserMessage;

export interface AgentContext {
  readonly id: string;
  readonly status: AgentStatus;
  readonly session: Session;
  readonly bus: HookBus;
  readonly inbox: Inbox;
  readonly tools: ToolRegistry;
  readonly systemPrompt: PromptSections;
  readonly adapters: AdapterRegistry;
  readonly options: AgentOptions;
  approve: ApprovalHandler;

  /** `text` with every configured secret replaced by `[REDACTED]` (for error texts bound for the log). */
  redact(text: string): string;
  /** `redact` applied to every string of a JSON-like record (an error's fields, a tool's meta). */
  redactRecord<T>(value: T): T;

  on<K extends HookName>(hook: K, fn: Listener<K>, opts?: ListenOptions): Disposer;
  use(plugin: Plugin): Disposer;

  /** A new prompt: it becomes the sole ordinary message of its own turn. */
  prompt(input: UserInput): UserMessage;
  followup(input: UserInput): UserMessage;
  /** Steering: consumed at the next step boundary (starts a turn when idle). */
  steer(input: UserInput): UserMessage;
  /** Context for the next step; waits, without waking, until something else starts one. */
  inject(input: UserInput): UserMessage;
  send(message: UserMessage, target: InboxTarget, wake: boolean): UserMessage;
  /** Stop the current activity. Clears pending input unless `keepInbox`. No-op when idle. */
  cancel(cause?: AgentCancelCause, opts?: { keepInbox?: boolean }): void;
  /** Resolves when the agent is idle with nothing pending (follows replacement work). */
  whenIdle(): Promise<void>;
  dispose(): Promise<void>;
}

/** What a plugin gets: registration points, each returning a disposer. A superset of `ToolHost`. */
export interface AgentHost extends ToolHost {
  readonly agent: AgentContext;
  section(section: PromptSection): Disposer;
  adapter(adapter: LlmAdapter): Disposer;
}

/** A plugin registers listeners, tools, prompt sections and adapters, and returns its disposer. */
export type Plugin = (host: AgentHost) => Disposer | void;
