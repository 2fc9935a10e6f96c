/**
 * Message and content-block vocabulary. Messages are immutable values with an id minted at
 * creation; a tool result travels to the model as a *user*-role message holding one
 * `tool-result` block.
 *
 * The `…Map` interfaces are merge-extensible (declaration merging), and the unions are derived
 * from them, so a plugin can add a block kind or a message source without editing this file.
 */
import type { JsonValue } from './json.js';

export type MessageId = string;
export type CallId = string;

/** A stored image, referenced by content address; bytes live outside the log. */
export interface ImageAttachmentRef {
  attachmentId: string;
  mediaType: string;
  bytes?: number;
  width?: number;
  height?: number;
  name?: string;
}

export interface TextBlock {
  type: 'text';
  text: string;
}
export interface ReasoningBlock {
  type: 'reasoning';
  text: string;
}
export interface ImageBlock {
  type: 'image';
  attachment: ImageAttachmentRef;
}
export interface ToolCallBlock {
  type: 'tool-call';
  id: CallId;
  name: string;
  /** The raw JSON text the model produced; parsing is the tool pipeline's job, not the log's. */
  arguments: string;
}
export interface ToolResultBlock {
  type: 'tool-result';
  toolCallId: CallId;
  content: ContentBlock[];
  isError?: boolean;
}

export interface ContentBlockMap {
  text: TextBlock;
  reasoning: ReasoningBlock;
  image: ImageBlock;
  'tool-call': ToolCallBlock;
  'tool-result': ToolResultBlock;
}
export type ContentBlock = ContentBlockMap[keyof ContentBlockMap];
export type ContentBlockType = ContentBlock['type'];

/**
 * How a plugin-authored message was formed. Semantic metadata for UIs only: the model sees the
 * message `content` verbatim.
 */
export type ContextForm =
  | { form: 'instructions' }
  | { form: 'catalog' }
  | { form: 'snapshot'; sections: { name: string; text: string }[] }
  | { form: 'notice'; summary: string }
  | { form: 'relay' }
  | { form: 'recall' };

/** Provider-private state an adapter needs back on the next call (e.g. thinking signatures). */
export interface ReplayState {
  response?: JsonValue;
  blocks?: JsonValue[];
}

/** A message a plugin put in front of the model (runtime context, compaction summary, hook output…). */
export interface PluginSource {
  kind: 'plugin';
  plugin: string;
  form?: ContextForm['form'];
  sections?: { name: string; text: string }[];
  summary?: string;
  /** Plugins may attach more JSON metadata (e.g. a compaction id); the model never sees it. */
  [extra: string]: unknown;
}

export interface MessageSourceMap {
  user: { kind: 'user' };
  plugin: PluginSource;
  model: { kind: 'model'; provider: string; model: string; replayState?: ReplayState };
  tool: { kind: 'tool'; callId: CallId };
}
export type MessageSource = MessageSourceMap[keyof MessageSourceMap];

export type Role = 'system' | 'user' | 'assistant';

export interface MessageBase {
  id: MessageId;
  role: Role;
  content: ContentBlock[];
  source: MessageSource;
}

export interface UserMessage extends MessageBase {
  role: 'user';
  source: MessageSourceMap['user'] | MessageSourceMap['plugin'];
}

export interface AssistantMessage extends MessageBase {
  role: 'assistant';
  source: MessageSourceMap['model'];
}

export interface ToolResultMessage extends MessageBase {
  role: 'user';
  content: [ToolResultBlock];
  source: MessageSourceMap['tool'];
}

export interface SystemMessage extends MessageBase {
  role: 'system';
}

export type Message = UserMessage | AssistantMessage | ToolResultMessage | SystemMessage;
