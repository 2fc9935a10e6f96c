/**
 * The units the mapping folds events into while a turn is open: model attempts, tool calls and
 * the turn itself. Mutable build state, turned into spans when the turn ends (`span-builder.ts`).
 */
import type { AssistantMessage, ToolResultMessage, UserMessage } from '../model/message.js';
import type { FinishReason } from '../model/stream.js';
import type { MessageHistory } from '../model/history.js';
import type { TokenUsage } from '../model/usage.js';
import type { EpochHeader, LlmRetryData, RequestContext } from '../session/events.js';

export interface Attempt {
  firstSeq: number;
  lastSeq: number;
  start: number;
  end: number;
  step: number;
  /** 1-based position among the step's attempts. */
  number: number;
  /** The retry number from the `llm/retry-started` that preceded it. */
  retry?: number;
  header?: EpochHeader;
  context?: RequestContext;
  usage?: TokenUsage;
  finish?: FinishReason;
  message?: AssistantMessage;
  interrupted: boolean;
  /** What the provider said it answered with (`replayState.response`: its id, its model). */
  response?: { id?: string; model?: string };
  retryEvent?: { time: number; data: LlmRetryData };
  /** No more chunks belong to it (its message, a retry decision, a tool call or step end came). */
  done: boolean;
  input?: MessageHistory;
}

export interface ToolUnit {
  firstSeq: number;
  lastSeq: number;
  start: number;
  end: number;
  step: number;
  callId: string;
  name?: string;
  arguments?: string;
  callRecorded: boolean;
  result?: { message: ToolResultMessage; error?: { name: string; code: string } };
}

export interface TurnBuild {
  turn: number;
  startSeq: number;
  start: number;
  lastSeq: number;
  lastTime: number;
  steps: number;
  step: number;
  units: (Attempt | ToolUnit)[];
  attempt: Attempt | undefined;
  lastAttempt: Attempt | undefined;
  attemptsInStep: number;
  pendingRetry: number | undefined;
  /** The step's tool-call blocks by id, for names of results that have no recorded call. */
  blockNames: Map<string, { name: string; arguments: string }>;
  openTools: Map<string, ToolUnit>;
  userMessages: UserMessage[];
  lastOutput: AssistantMessage | undefined;
}
export const isAttempt = (u: Attempt | ToolUnit): u is Attempt => 'interrupted' in u;

/**
 * Still open when the log stops: an attempt with no finish that nothing closed yet (its message,
 * a retry, a tool call, step end), or a tool call without a result. Only a turn without
 * `turn/end` can hold one.
 */
export function unitOpen(u: Attempt | ToolUnit): boolean {
  return isAttempt(u) ? !u.done && u.finish === undefined : u.result === undefined;
}
