/**
 * The provider-neutral stream vocabulary. An adapter turns one provider attempt
 * into a sequence of `StreamChunk`s with this grammar: blocks open with `block-start`, receive
 * deltas of their own kind, close with `block-end` carrying the assembled block; at most one
 * `usage`; exactly one terminal `finish`, after which nothing follows.
 */
import type { ContentBlock, CallId, ReplayState } from './message.js';
import type { TokenUsage } from './usage.js';
import type { LlmFailure } from './failure.js';

export type StreamBlockType = 'text' | 'reasoning' | 'tool-call';

export interface BlockStartChunk {
  type: 'block-start';
  index: number;
  blockType: StreamBlockType;
}
export interface TextDeltaChunk {
  type: 'text-delta';
  index: number;
  text: string;
}
export interface ReasoningDeltaChunk {
  type: 'reasoning-delta';
  index: number;
  text: string;
}
export interface ToolCallDeltaChunk {
  type: 'tool-call-delta';
  index: number;
  id: CallId;
  name?: string;
  argumentsDelta: string;
}
export interface BlockEndChunk {
  type: 'block-end';
  index: number;
  block: ContentBlock;
}
export interface UsageChunk {
  type: 'usage';
  usage: TokenUsage;
}
export interface FinishChunk {
  type: 'finish';
  reason: FinishReason;
  replayState?: ReplayState;
}

export type StreamChunk =
  | BlockStartChunk
  | TextDeltaChunk
  | ReasoningDeltaChunk
  | ToolCallDeltaChunk
  | BlockEndChunk
  | UsageChunk
  | FinishChunk;

export type DeltaChunk = TextDeltaChunk | ReasoningDeltaChunk | ToolCallDeltaChunk;

export interface FinishReasonMap {
  stop: { kind: 'stop' };
  'tool-calls': { kind: 'tool-calls' };
  'max-tokens': { kind: 'max-tokens' };
  aborted: { kind: 'aborted'; failure: LlmFailure };
  error: { kind: 'error'; failure: LlmFailure };
}
export type FinishReason = FinishReasonMap[keyof FinishReasonMap];

export function isTerminalFailure(r: FinishReason): r is FinishReasonMap['aborted'] | FinishReasonMap['error'] {
  return r.kind === 'aborted' || r.kind === 'error';
}
