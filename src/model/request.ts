/**
 * What one model request is made of. `LlmCallConfig` plus `system` and `tools` is what
 * `request/header` records; `messages` always come from `Session.deriveMessages()`.
 */
import type { JsonObject } from './json.js';
import type { Message } from './message.js';
import type { MessageList } from './history.js';

/** A tool as the model sees it: name, description and a JSON Schema for its arguments. */
export interface ToolSchema {
  name: string;
  description: string;
  parameters: JsonObject;
}

export interface LlmCallConfig {
  /** Registered provider route, e.g. `deepseek`, `openai`, `anthropic`. */
  provider: string;
  model: string;
  /** Provider-specific effort label (`off|low|high|max` for DeepSeek). */
  reasoningEffort?: string;
  temperature?: number;
  maxTokens?: number;
  stop?: string[];
}

/** Which `LlmCallConfig` fields the adapter filled in rather than the caller. */
export interface AdapterDefaults {
  reasoningEffort?: true;
  maxTokens?: true;
}

export type RequestPurpose = 'agent' | 'compaction' | 'session-title';

/** A request as a recording adapter keeps it: the history copied to an array, for inspection. */
export interface SeenRequest extends Omit<GenerateRequest, 'messages'> {
  messages: readonly Message[];
}

export interface GenerateRequest extends LlmCallConfig {
  /** The model-visible history: `Session.deriveMessages()`, or messages a caller assembled. */
  messages: MessageList;
  system?: string;
  tools?: readonly ToolSchema[];
  signal?: AbortSignal;
  sessionId?: string;
  purpose?: RequestPurpose;
}
