/**
 * Building sessions for the mapping tests through the real Session API, with a clock the test
 * sets before each append, so every event time in an expected span is written by hand.
 */
import { Session } from '../../../src/session/session.js';
import type { AssistantMessage, ContentBlock, ToolResultMessage, UserMessage } from '../../../src/model/message.js';
import type { EpochHeader } from '../../../src/session/events.js';

export interface Clocked {
  session: Session;
  /** Set the clock for the next appends. */
  at(time: number): Session;
}

export function clockedSession(id: string, header: Partial<import('../../../src/session/events.js').SessionHeader> = {}): Clocked {
  let now = 0;
  const session = Session.create({ id, clock: () => now, header: { createdAt: 0, ...header } });
  return {
    session,
    at(time) {
      now = time;
      return session;
    },
  };
}

let n = 0;
const nextId = (): string => `m-${++n}`;

export function user(text: string): UserMessage {
  return { id: nextId(), role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } };
}

export function assistant(content: ContentBlock[], model = 'deepseek-chat', provider = 'deepseek'): AssistantMessage {
  return { id: nextId(), role: 'assistant', content, source: { kind: 'model', provider, model } };
}

export function toolResult(callId: string, text: string, isError = false): ToolResultMessage {
  return {
    id: nextId(),
    role: 'user',
    content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text }], isError }],
    source: { kind: 'tool', callId },
  };
}

export function header(config: EpochHeader['config'], system?: string): { header: EpochHeader; reason: 'initial' } {
  return { header: system === undefined ? { config } : { config, system }, reason: 'initial' };
}
