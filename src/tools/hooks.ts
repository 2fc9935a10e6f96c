/** Capability events of the tool seam: three waterfalls and one observer. */
import type { WaterfallHook, EmitHook } from '../hooks/bus.js';
import type { ToolResultValue, ToolRunContext, ToolCallOutcome } from './types.js';

export interface ToolCallInfo {
  callId: string;
  name: string;
  /** The raw argument text the model produced. */
  rawArguments: string;
  turn: number;
  step: number;
}

export type PreExecuteDecision = { kind: 'allow' } | { kind: 'deny'; reason: string } | { kind: 'ask'; reason?: string };
export type PostExecuteDecision = { kind: 'accept'; content?: ToolResultValue['content'] } | { kind: 'block'; feedback: string };

declare module '../hooks/bus.js' {
  interface HookMap {
    /** Policy: allow, deny, or ask for approval. Arguments are frozen; they cannot be rewritten. */
    'tools/pre-execute': WaterfallHook<{ call: ToolCallInfo; args: unknown; ctx: ToolRunContext }, PreExecuteDecision>;
    /** Around-wrappers for the body (timeout, retry, metrics); they may replace only the signal. */
    'tools/execute': WaterfallHook<{ call: ToolCallInfo; args: unknown; ctx: ToolRunContext }, ToolResultValue>;
    /** Accept (optionally replacing what the model sees) or block the result with feedback. */
    'tools/post-execute': WaterfallHook<{ call: ToolCallInfo; args: unknown; output: ToolResultValue }, PostExecuteDecision>;
    /** Observe the final outcome (frozen). */
    'tools/result': EmitHook<{ call: ToolCallInfo; outcome: Readonly<ToolCallOutcome> }>;
  }
}
