/**
 * What the model sees of a compaction: the checkpoint message that replaces the summarised span,
 * and the instruction the summariser gets. Both are fixed text, so a log plus this code
 * reconstructs every request exactly.
 */
import { randomUUID } from 'node:crypto';
import type { ContentBlock, MessageSource, PluginSource, UserMessage } from '../model/message.js';

/** The plugin name on checkpoint messages (dsh's, so checkpoints from either harness are recognised). */
export const CHECKPOINT_PLUGIN = 'compact';

export const CHECKPOINT_PREAMBLE =
  'Earlier parts of this conversation were condensed into the summary below to make room in the context window. ' +
  'It is an accurate record of what was said and done: rely on it as background and do not repeat work it reports as finished. ' +
  'Carry on with the task from the messages after it, without mentioning this summary.';

export const SUMMARY_OPEN = '<compacted-summary>';
export const SUMMARY_CLOSE = '</compacted-summary>';

/** The checkpoint's content: preamble, the summary blocks verbatim, the closing tag. */
export function checkpointContent(summary: readonly ContentBlock[]): ContentBlock[] {
  return [{ type: 'text', text: `${CHECKPOINT_PREAMBLE}\n\n${SUMMARY_OPEN}` }, ...summary, { type: 'text', text: SUMMARY_CLOSE }];
}

export function checkpointSource(compactionId: string, sourceCommandId?: string): PluginSource {
  const s: PluginSource = { kind: 'plugin', plugin: CHECKPOINT_PLUGIN, compactionId };
  if (sourceCommandId !== undefined) s.sourceCommandId = sourceCommandId;
  return s;
}

export function isCheckpointSource(source: MessageSource): boolean {
  return source.kind === 'plugin' && source.plugin === CHECKPOINT_PLUGIN && typeof source.compactionId === 'string';
}

export function checkpointMessage(summary: readonly ContentBlock[], compactionId: string, sourceCommandId?: string): UserMessage {
  return { id: randomUUID(), role: 'user', content: checkpointContent(summary), source: checkpointSource(compactionId, sourceCommandId) };
}

/**
 * The summariser's last message, after the history it is to condense. One array entry per line
 * (a long line is split with `+`, so the text has no break there).
 */
export const SUMMARY_INSTRUCTION = [
  'Stop working on the task for a moment. Your job now is to write a handover note that replaces the conversation above, ' +
    'so that work can continue from it alone once the conversation is gone.',
  '',
  'Write it in Markdown, under these headings, in this order (write "None." under a heading with nothing to say):',
  '',
  '### Goal',
  'What the user asked for, and how the request changed along the way. Quote the user where the exact words matter.',
  '',
  '### Decisions and constraints',
  'Choices made and why, rules the user set, preferences and corrections they gave.',
  '',
  '### Files and commands',
  'Every file read, created or changed (exact paths), what changed in it, and commands that were run with what they showed. ' +
    'Keep exact names, identifiers, error messages and numbers.',
  '',
  '### Done',
  'What is finished and how it was checked.',
  '',
  '### Open',
  'What is unfinished, what failed and why, and questions still waiting for an answer.',
  '',
  '### Next',
  'The next concrete action.',
  '',
  'Rules: be brief but lose nothing needed to continue. Write only the note: no tool calls, no preface, no remarks about this request. ' +
    `If the conversation begins with an earlier summary inside ${SUMMARY_OPEN} tags, ` +
    'fold what is still true in it into this note rather than copying it.',
].join('\n');

export function instructionMessage(): UserMessage {
  return {
    id: randomUUID(),
    role: 'user',
    content: [{ type: 'text', text: SUMMARY_INSTRUCTION }],
    source: { kind: 'plugin', plugin: CHECKPOINT_PLUGIN },
  };
}
