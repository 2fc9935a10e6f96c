/**
 * The session event vocabulary. A session is an append-only log of these
 * events; the model-visible history is derived from it and never stored beside it.
 *
 * `SessionEventMap` is merge-extensible: a plugin adds an event type by declaration merging
 *
 *     declare module 'dsh' { interface SessionEventMap { 'my/event': { n: number } } }
 *
 * and `SessionEvent` is derived from the map, so `switch (event.type)` narrows `event.data`
 * without a type assertion. Because the map is open, consumers must not `assertNever` on it.
 */
import type { AssistantMessage, CallId, ContentBlock, ToolResultMessage, UserMessage } from '../model/message.js';
import type { StreamChunk } from '../model/stream.js';
import type { TokenUsage } from '../model/usage.js';
import type { LlmFailure } from '../model/failure.js';
import type { AdapterDefaults, LlmCallConfig, ToolSchema } from '../model/request.js';
import type { JsonValue, JsonObject } from '../model/json.js';

/** The on-disk format version. dsh pins 0 and refuses any other; so do we. */
export const SESSION_FORMAT_VERSION = 0;

export type SessionId = string;

// ---------------------------------------------------------------------------------------------
// Turn end reasons and cancellation causes

export type AgentCancelCause = { kind: 'user' } | { kind: 'parent' } | { kind: 'hook'; reason: string } | { kind: 'disposed' };

/** `legacy` appears only in imports of old logs whose aborted turns recorded no cause. */
export type TurnEndCancelCause = AgentCancelCause | { kind: 'legacy' };

export interface TurnEndReasonMap {
  completed: { kind: 'completed' };
  aborted: { kind: 'aborted'; reason: TurnEndCancelCause };
  /** `agent/pre-step` rejected the turn's first claim. */
  blocked: { kind: 'blocked' };
  /** `error` is the `LlmFailure` verbatim, or `{ message, code: 'UNKNOWN' }` for any other throw. */
  error: { kind: 'error'; error: LlmFailure };
  /** Sticky: some step hit the output cap, even if a later step completed. */
  'max-tokens': { kind: 'max-tokens' };
  /** Written only by crash repair; the loop never ends a turn this way. */
  interrupted: { kind: 'interrupted' };
}
export type TurnEndReason = TurnEndReasonMap[keyof TurnEndReasonMap];
export type TurnEndKind = TurnEndReason['kind'];
export const TURN_END_KINDS: readonly TurnEndKind[] = ['completed', 'aborted', 'blocked', 'error', 'max-tokens', 'interrupted'];

// ---------------------------------------------------------------------------------------------
// Request header

/** Everything about a request except its messages. Canonical form: empty system/tools are absent. */
export interface EpochHeader {
  config: LlmCallConfig;
  adapterDefaults?: AdapterDefaults;
  system?: string;
  tools?: ToolSchema[];
}
export type RequestHeaderReason = 'initial' | 'resume' | 'change';

export interface RequestContext {
  provider: string;
  model: string;
  contextWindow?: number;
}

export interface TodoItem {
  content: string;
  status: 'pending' | 'in_progress' | 'completed';
}

// ---------------------------------------------------------------------------------------------
// Plugin-owned (log-only) payloads that dsh writes and this harness also writes.

export type InboxTarget = 'next-turn' | 'next-step';

/** The durable inbox: every inbox change is recorded as a splice before it takes effect. */
export interface InboxSplice {
  target: InboxTarget;
  start: number;
  removedCount?: number;
  inserted: UserMessage[];
  outcome?: 'canceled';
}

export interface LlmRetryData {
  retryId: string;
  turn: number;
  step: number;
  provider: string;
  mode: 'normal' | 'always';
  policyKey: string;
  retry: number;
  maxRetries?: number;
  delayMs: number;
  failure: LlmFailure;
}

export type ApprovalOutcome = 'allowed-once' | 'rejected' | 'cancelled' | 'unavailable';

/**
 * Compaction brackets (dsh's shapes). `compaction/start` is also the lock: an unmatched start
 * after the latest `session/end-seed` means a compaction is running. `turn` is the open turn for
 * an automatic compaction and null for a manual one between turns.
 */
export interface CompactionStartData {
  compactionId: string;
  sourceCommandId?: string;
  turn: number | null;
}

/** A surface position span (first and last shadowed node), not a numeric seq interval. */
export interface ShadowedRange {
  start: number;
  end: number;
}

/**
 * The summariser's call as recorded: what it summarised, what came back, and the call facts that
 * make the request reconstructable. `llmStreamCall: true` means exactly one model call produced
 * it, and then `rawOutput` holds that call's complete output.
 */
export interface CompactionSummaryData {
  compactionId: string;
  sourceCommandId?: string;
  summary: ContentBlock[];
  shadowedRange: ShadowedRange;
  shadowedSeqs: number[];
  shadowedTokenCount: number;
  provider: string;
  model: string;
  maxTokens?: number;
  usage?: TokenUsage;
  rawOutput?: ContentBlock[];
  llmStreamCall?: true;
}

export interface CompactionEndData {
  compactionId: string;
  sourceCommandId?: string;
  turn: number | null;
  /** Present when the attempt failed; the surface was then left as it was. */
  error?: string;
}

export interface CompactionPruneData {
  shadowedRange: ShadowedRange;
  shadowedSeqs: number[];
  shadowedTokenCount: number;
}

// ---------------------------------------------------------------------------------------------
// The map

export interface SessionEventMap {
  'turn/start': { turn: number };
  'turn/end': { turn: number; reason: TurnEndReason };
  'step/start': { turn: number; step: number };
  'step/end': { turn: number; step: number };
  /** The whole user message is the payload: prompts, injected context, steering, snapshots. */
  'user/message': UserMessage;
  /** One raw stream chunk; token-level replay fidelity. Never dropped from the canonical log. */
  'assistant/chunk': { turn: number; step: number; chunk: StreamChunk };
  /** One per successful provider call, even with empty content (it still carries usage). */
  'assistant/message': {
    turn: number;
    step: number;
    message: AssistantMessage;
    usage?: TokenUsage;
    interrupted?: true;
  };
  /** `arguments` is the raw JSON text the model produced. Appended when the call starts. */
  'tool/call': { turn: number; step: number; callId: CallId; name: string; arguments: string };
  'tool/result': {
    turn: number;
    step: number;
    message: ToolResultMessage;
    error?: { name: string; code: string };
    meta?: JsonValue;
  };
  'todo/write': { todos: TodoItem[] };
  'request/header': { header: EpochHeader; reason: RequestHeaderReason };
  'request/context': RequestContext;
  /** Written only by the Session constructor after a seed (resume, fork, replay). */
  'session/end-seed': Record<string, never>;

  // Plugin events dsh writes; log-only, never on the surface. Typed where this harness writes
  // them itself, otherwise kept as opaque JSON so real dsh logs load untouched.
  'agent/inbox/spliced': InboxSplice;
  'llm/retry': LlmRetryData;
  'llm/retry-started': { retryId: string; turn: number; step: number; retry: number };
  'approval/asked': { id: string; toolName: string; callId?: CallId; reason?: string };
  /** `reason`: why the user refused, given to the model in the call's error result (this harness's addition). */
  'approval/decided': { id: string; outcome: ApprovalOutcome; reason?: string };
  /**
   * A rule the user added while answering approval `id` ("allow for this session"): calls it
   * matches run without asking for the rest of this session, resumes and forks included, since the
   * permissions plugin reads these from the log. Written `ignorable` (dsh does not know it).
   */
  'approval/rule': { id: string; rule: string; effect: 'allow'; scope: 'session' };
  'approval/policy': { policy: 'ask' | 'never'; source?: 'delegation' };
  /** `network: 'disabled'` when shell commands ran without a network; absent (as dsh writes it) means enabled. */
  'sandbox/mode': { mode: string; source?: string; network?: string };
  'permission/preset': { preset: string };
  'plan/mode': { active: boolean };
  'session/title': JsonObject;
  'session/title-llm-request': JsonObject;
  'hook/invoked': JsonObject;
  'hook/result': JsonObject;
  'compaction/start': CompactionStartData;
  'compaction/end': CompactionEndData;
  'compaction/summary': CompactionSummaryData;
  'compaction/prune': CompactionPruneData;
  'compact/start': JsonObject;
  'compact/end': JsonObject;
  'compact/summary': JsonObject;
  'compact/prune': JsonObject;
  'command/run': JsonObject;
  'command/done': JsonObject;
  'tool/code-dispatch-start': JsonObject;
  'tool/code-dispatch': JsonObject;
  'goal/change': JsonObject;
  'schedule/change': JsonObject;
  'subagent/descriptor': JsonObject;
  'team/member': JsonObject;
  'team/message/delivered': JsonObject;
  'team/message/queued': JsonObject;
  'team/task': JsonObject;
  'tool-workflow/run-start': JsonObject;
  'tool-workflow/run-end': JsonObject;
  'tool-workflow/agent-start': JsonObject;
  'tool-workflow/agent-end': JsonObject;
  'feedback/record': JsonObject;
  'agent-preset/selected': JsonObject;
  'web/deepseek-search-llm-request': JsonObject;

  /**
   * This harness's own log-only marker (dsh does not write it; written `ignorable`, so a reader
   * that does not know it skips it): `dsh worker` applied the queued cancel `inputId`. A cancel
   * puts no message in the log, so without it a worker taking over could not tell whether the
   * cancel it finds queued was applied before its predecessor died (docs/scale.md).
   */
  'worker/cancel': WorkerCancelData;
}

export interface WorkerCancelData {
  /** The id of the input-queue row (`PgStore.enqueue`) this cancel came from. */
  inputId: number;
}

export type SessionEventType = keyof SessionEventMap;

/** The only event types that project to messages and may carry surface metadata. */
export type SurfaceEventType = 'user/message' | 'assistant/message' | 'tool/result';
export const SURFACE_EVENT_TYPES: ReadonlySet<string> = new Set<SurfaceEventType>(['user/message', 'assistant/message', 'tool/result']);

/** How a surface event enters the ordered surface. */
export type SurfaceOp = 'append' | { op: 'replace'; start: number; end: number };

interface EnvelopeBase<K extends SessionEventType> {
  readonly type: K;
  /** Equals the log length at append: contiguous from 0, including chunks. */
  readonly seq: number;
  /** Epoch ms. A wall clock: not guaranteed monotonic; `seq` carries order. */
  readonly time: number;
  readonly data: SessionEventMap[K];
  /** A reader that does not know this type may skip it; without it, an unknown type refuses the load. */
  readonly ignorable?: true;
}

type SurfaceFields<K extends SessionEventType> = K extends SurfaceEventType
  ? { readonly surfaceOp: SurfaceOp; readonly sourceEventSeqs?: readonly number[] }
  : { readonly surfaceOp?: never; readonly sourceEventSeqs?: never };

/** One logged event; a discriminated union over `type`. */
export type SessionEvent<K extends SessionEventType = SessionEventType> = {
  [T in K]: EnvelopeBase<T> & SurfaceFields<T>;
}[K];

export type SurfaceEvent = SessionEvent<SurfaceEventType>;

/** Surface placement and provenance, required on surface events and refused elsewhere. */
export interface SurfaceIntent {
  surfaceOp: SurfaceOp;
  /** Complete known provenance; `[]` only on `assistant/message` (a known empty stream). */
  sourceEventSeqs?: number[];
}

export interface LogOnlyOptions {
  ignorable?: true;
}

/** `Session.append`'s options: surface types must say where they go; others cannot. */
export type AppendOptions<K extends SessionEventType> = K extends SurfaceEventType
  ? SurfaceIntent & LogOnlyOptions
  : LogOnlyOptions & { surfaceOp?: never; sourceEventSeqs?: never };

// ---------------------------------------------------------------------------------------------
// Session header (stored beside the log: line 0 of a JSONL file)

export interface SessionHeader {
  version: number;
  id: SessionId;
  /** Epoch ms, non-negative safe integer. */
  createdAt: number;
  /** Absolute working directory. */
  cwd?: string;
  parentSession?: SessionId;
  /** How many leading events were inherited through a seed (fork). */
  seedLength?: number;
  origin?: 'subagent';
  delegationDepth?: number;
  agentPreset?: string;
}

// ---------------------------------------------------------------------------------------------
// Known types

/** Every event type this build understands; a log with another non-ignorable type is refused. */
export const KNOWN_EVENT_TYPES: ReadonlySet<string> = new Set<string>([
  'turn/start',
  'turn/end',
  'step/start',
  'step/end',
  'user/message',
  'assistant/chunk',
  'assistant/message',
  'tool/call',
  'tool/result',
  'todo/write',
  'request/header',
  'request/context',
  'session/end-seed',
  'agent/inbox/spliced',
  'llm/retry',
  'llm/retry-started',
  'approval/asked',
  'approval/decided',
  'approval/rule',
  'approval/policy',
  'sandbox/mode',
  'permission/preset',
  'plan/mode',
  'session/title',
  'session/title-llm-request',
  'hook/invoked',
  'hook/result',
  'compaction/start',
  'compaction/end',
  'compaction/summary',
  'compaction/prune',
  'compact/start',
  'compact/end',
  'compact/summary',
  'compact/prune',
  'command/run',
  'command/done',
  'tool/code-dispatch-start',
  'tool/code-dispatch',
  'goal/change',
  'schedule/change',
  'subagent/descriptor',
  'team/member',
  'team/message/delivered',
  'team/message/queued',
  'team/task',
  'tool-workflow/run-start',
  'tool-workflow/run-end',
  'tool-workflow/agent-start',
  'tool-workflow/agent-end',
  'feedback/record',
  'agent-preset/selected',
  'web/deepseek-search-llm-request',
  'worker/cancel',
]);

/** Core execution events: each is written by a turn's work, so it must sit inside an open turn. */
export const TURN_ENCLOSED_TYPES: ReadonlySet<string> = new Set([
  'step/start',
  'step/end',
  'assistant/chunk',
  'assistant/message',
  'tool/call',
  'tool/result',
  'todo/write',
  'request/header',
  'request/context',
]);
