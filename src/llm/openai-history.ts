/**
 * Our history → chat-completions messages. A `ToolResultMessage` (user role, one tool-result block)
 * becomes a `role: "tool"` message; assistant tool-call blocks become `tool_calls` with the raw
 * argument text (sent as-is even when it is not valid JSON: the model should see what it wrote).
 * With `reasoningPassback` (DeepSeek), every assistant message that had reasoning carries it back
 * as `reasoning_content`; DeepSeek rejects a tool-call turn's history without it.
 */
import type OpenAI from 'openai';
import type { ContentBlock, ImageBlock, Message, ToolResultBlock } from '../model/message.js';
import { imagePlaceholder, resolveImage, type AttachmentResolver } from './attachments.js';

/**
 * Whether history sent on route `provider` carries reasoning back as `reasoning_content`, judged
 * from the route's name alone, for rebuilding a logged request without the config it ran with
 * (`dsh log export --format openai`): the DeepSeek route (its dialect passes reasoning back), and
 * a route named after it such as `deepseek-beta`, do; other routes by default do not.
 */
export function passesReasoningBack(provider: string): boolean {
  return provider.startsWith('deepseek');
}

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type UserPart = OpenAI.Chat.Completions.ChatCompletionContentPart;

export interface ChatHistoryOptions {
  system?: string | undefined;
  reasoningPassback: boolean;
  resolveAttachment?: AttachmentResolver | undefined;
}

export async function toChatMessages(messages: Iterable<Message>, opts: ChatHistoryOptions): Promise<ChatMessage[]> {
  const out: ChatMessage[] = [];
  if (opts.system) out.push({ role: 'system', content: opts.system });
  for (const m of messages) {
    if (m.role === 'system') {
      out.push({ role: 'system', content: joinText(m.content, '\n\n') });
    } else if (m.role === 'assistant') {
      out.push(assistantMessage(m.content, opts.reasoningPassback));
    } else {
      const rest: ContentBlock[] = [];
      for (const b of m.content) {
        if (b.type === 'tool-result') out.push({ role: 'tool', tool_call_id: b.toolCallId, content: toolResultText(b) });
        else rest.push(b);
      }
      if (rest.length > 0 || m.content.length === 0) out.push(await userMessage(rest, opts.resolveAttachment));
    }
  }
  return out;
}

function assistantMessage(content: readonly ContentBlock[], reasoningPassback: boolean): ChatMessage {
  const text = joinText(content, '');
  const calls = content.filter((b) => b.type === 'tool-call');
  const msg: OpenAI.Chat.Completions.ChatCompletionAssistantMessageParam = { role: 'assistant', content: text };
  if (calls.length > 0) {
    msg.tool_calls = calls.map((c) => ({
      id: c.id,
      type: 'function' as const,
      // Providers reject an empty arguments string; an empty call means "no arguments".
      function: { name: c.name, arguments: c.arguments.trim() === '' ? '{}' : c.arguments },
    }));
    if (text === '') msg.content = null;
  }
  if (reasoningPassback) {
    const reasoning = content.map((b) => (b.type === 'reasoning' ? b.text : '')).join('');
    // Not in the SDK's types: DeepSeek's field for thinking-mode history.
    if (reasoning !== '') (msg as { reasoning_content?: string }).reasoning_content = reasoning;
  }
  return msg;
}

async function userMessage(blocks: readonly ContentBlock[], resolver: AttachmentResolver | undefined): Promise<ChatMessage> {
  const images = blocks.filter((b): b is ImageBlock => b.type === 'image');
  // Plain string content is the form every compatible server accepts; parts only when pixels go out.
  if (images.length === 0 || !resolver) {
    return {
      role: 'user',
      content: blocks
        .map((b) => blockText(b))
        .filter((t) => t !== '')
        .join('\n\n'),
    };
  }
  const parts: UserPart[] = [];
  for (const b of blocks) {
    if (b.type === 'image') {
      const img = await resolveImage(b.attachment, resolver);
      if (img) parts.push({ type: 'image_url', image_url: { url: `data:${img.mediaType};base64,${img.data}` } });
      else parts.push({ type: 'text', text: imagePlaceholder(b.attachment, 'not available') });
    } else {
      const text = blockText(b);
      if (text !== '') parts.push({ type: 'text', text });
    }
  }
  return { role: 'user', content: parts };
}

/** Tool messages carry text only; images in a result are described, not sent. */
function toolResultText(block: ToolResultBlock): string {
  return block.content
    .map((b) => blockText(b))
    .filter((t) => t !== '')
    .join('\n');
}

function blockText(b: ContentBlock): string {
  switch (b.type) {
    case 'text':
      return b.text;
    case 'image':
      return imagePlaceholder(b.attachment, 'image input is not sent to this model');
    case 'tool-result':
      return toolResultText(b);
    default:
      // Reasoning and tool calls only exist in assistant turns.
      return '';
  }
}

function joinText(content: readonly ContentBlock[], sep: string): string {
  return content
    .filter((b) => b.type === 'text')
    .map((b) => (b as { text: string }).text)
    .join(sep);
}
