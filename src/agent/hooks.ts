/**
 * Live agent events. These carry the live agent (as its `AgentContext`) and steer work in
 * progress; they are not persisted. Durable facts go to the session log instead.
 */
import type { EmitHook, SerialHook, WaterfallHook } from '../hooks/bus.js';
import type { UserMessage } from '../model/message.js';
import type { LlmFailure } from '../model/failure.js';
import type { LlmCallConfig } from '../model/request.js';
import type { InboxTarget } from '../session/events.js';
import type { AgentContext, AgentStatus } from './context.js';

export type { AgentStatus };
export type PreStepDecision = { kind: 'enter'; messages: UserMessage[] } | { kind: 'reject' };
export type RequestErrorDecision = { kind: 'retry' } | undefined;

declare module '../hooks/bus.js' {
  interface HookMap {
    'agent/status': EmitHook<{ agent: AgentContext; status: AgentStatus }>;
    'agent/error': EmitHook<{ agent: AgentContext; turn: number; step: number; error: unknown }>;
    /** Fires once, before the first turn of this agent instance. A good place to `inject()`. */
    'agent/session-start': EmitHook<{ agent: AgentContext; source: 'startup' | 'resume' }>;
    'agent/inbox/inserted': EmitHook<{ agent: AgentContext; message: UserMessage; target: InboxTarget }>;
    'agent/inbox/claimed': EmitHook<{ agent: AgentContext; message: UserMessage; turn: number }>;
    'agent/inbox/discarded': EmitHook<{ agent: AgentContext; message: UserMessage }>;
    /**
     * Decides what the model sees: rewrite the claimed messages (what is passed on is what gets
     * logged and sent) or reject them (the turn ends `blocked`).
     */
    'agent/pre-step': WaterfallHook<
      { agent: AgentContext; messages: UserMessage[]; turn: number; step: number; signal: AbortSignal },
      PreStepDecision
    >;
    /** May change provider, model or sampling for this request; never messages. */
    'agent/request': WaterfallHook<{ agent: AgentContext; turn: number; step: number; signal: AbortSignal }, LlmCallConfig>;
    /** A provider attempt failed: return `{kind:'retry'}` to rebuild the request from the log and retry. */
    'agent/request-error': WaterfallHook<
      { agent: AgentContext; turn: number; step: number; provider: string; failure: LlmFailure; signal: AbortSignal },
      RequestErrorDecision
    >;
    /** The turn is about to end with nothing owed; a listener may `agent.steer(…)` to force another step. */
    'agent/turn-stopping': SerialHook<{ agent: AgentContext; turn: number; signal: AbortSignal }>;
  }
}
