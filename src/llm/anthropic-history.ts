/**
 * Our history → Anthropic Messages. Tool results become `tool_result` blocks in user turns;
 * consecutive same-role turns are merged (parallel tool results must share one user turn).
 * System messages join the top-level `system`, the only place Anthropic takes them.
 *
 * Reasoning is replayed only as signed `thinking` (or `redacted_thinking`) taken from the message's
 * `replayState` when this adapter produced it; reasoning without a signature (another provider's,
 * or an interrupted message) cannot be verified by the API and is left out.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { JsonValue } from '../model/json.js';
import type { AssistantMessage, ContentBlock, ImageBlock, Message, ToolResultBlock } from '../model/message.js';
import { imagePlaceholder, resolveImage, type AttachmentResolver } from './attachments.js';

type Param = Anthropic.Messages.MessageParam;
type Block = Anthropic.Messages.ContentBlockParam;
type ToolResultContent = Anthropic.Messages.ToolResultBlockParam['content'];

export interface AnthropicHistoryOptions {
  system?: string | undefined;
  /** Provider routes whose replay state this adapter wrote and may read back. */
  replayProviders: readonly string[];
  resolveAttachment?: AttachmentResolver | undefined;
}

export interface AnthropicHistory {
  system?: string;
  messages: Param[];
}

export async function toAnthropicMessages(messages: Iterable<Message>, opts: AnthropicHistoryOptions): Promise<AnthropicHistory> {
  const systemParts: string[] = opts.system ? [opts.system] : [];
  const out: Param[] = [];
  const push = (role: 'user' | 'assistant', blocks: Block[]): void => {
    if (blocks.length === 0) return;
    const prev = out[out.length - 1];
    if (prev && prev.role === role) (prev.content as Block[]).push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const m of messages) {
    if (m.role === 'system') {
      const text = m.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
      if (text) systemParts.push(text);
    } else if (m.role === 'assistant') {
      push('assistant', assistantBlocks(m as AssistantMessage, opts.replayProviders));
    } else {
      push('user', await userBlocks(m.content, opts.resolveAttachment));
    }
  }
  const history: AnthropicHistory = { messages: out };
  if (systemParts.length > 0) history.system = systemParts.join('\n\n');
  return history;
}

function replayEntries(m: AssistantMessage, replayProviders: readonly string[]): readonly JsonValue[] {
  const source = m.source;
  if (source?.kind !== 'model' || !replayProviders.includes(source.provider)) return [];
  return source.replayState?.blocks ?? [];
}

function assistantBlocks(m: AssistantMessage, replayProviders: readonly string[]): Block[] {
  const replay = replayEntries(m, replayProviders);
  const out: Block[] = [];
  m.content.forEach((b, i) => {
    const entry = replay[i];
    const state = entry && typeof entry === 'object' && !Array.isArray(entry) ? (entry as Record<string, JsonValue>) : undefined;
    // An entry only applies to the block kind it was written for; a shifted array must not mis-sign.
    const matches = state?.['type'] === b.type;
    switch (b.type) {
      case 'reasoning':
        if (matches && typeof state?.['redacted'] === 'string') out.push({ type: 'redacted_thinking', data: state['redacted'] });
        else if (matches && typeof state?.['signature'] === 'string') {
          out.push({ type: 'thinking', thinking: b.text, signature: state['signature'] });
        }
        break;
      case 'text':
        // The API rejects empty text blocks.
        if (b.text !== '') out.push({ type: 'text', text: b.text });
        break;
      case 'tool-call': {
        const input = parseInput(b.arguments);
        if (input === undefined) {
          out.push({
            type: 'text',
            text:
              `[dsh: the arguments of tool call ${b.id} (${b.name}) were not a JSON object and were sent as {}; the model wrote: ` +
              `${truncate(b.arguments, 2000)}]`,
          });
        }
        out.push({ type: 'tool_use', id: b.id, name: b.name, input: input ?? {} });
        break;
      }
      default:
        break;
    }
  });
  return out;
}

/** Anthropic takes `input` as an object; the empty string means no arguments. */
function parseInput(raw: string): Record<string, unknown> | undefined {
  if (raw.trim() === '') return {};
  try {
    const v: unknown = JSON.parse(raw);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

async function userBlocks(content: readonly ContentBlock[], resolver: AttachmentResolver | undefined): Promise<Block[]> {
  const out: Block[] = [];
  for (const b of content) {
    if (b.type === 'text') {
      if (b.text !== '') out.push({ type: 'text', text: b.text });
    } else if (b.type === 'image') {
      out.push(await imageBlock(b, resolver));
    } else if (b.type === 'tool-result') {
      out.push(await toolResult(b, resolver));
    }
  }
  return out;
}

async function toolResult(b: ToolResultBlock, resolver: AttachmentResolver | undefined): Promise<Block> {
  const content: Exclude<ToolResultContent, string | undefined> = [];
  for (const c of b.content) {
    if (c.type === 'text') {
      if (c.text !== '') content.push({ type: 'text', text: c.text });
    } else if (c.type === 'image') {
      content.push(await imageBlock(c, resolver));
    }
  }
  const block: Anthropic.Messages.ToolResultBlockParam = { type: 'tool_result', tool_use_id: b.toolCallId };
  if (content.length > 0) block.content = content;
  if (b.isError) block.is_error = true;
  return block;
}

const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

async function imageBlock(
  b: ImageBlock,
  resolver: AttachmentResolver | undefined,
): Promise<Anthropic.Messages.ImageBlockParam | Anthropic.Messages.TextBlockParam> {
  const img = await resolveImage(b.attachment, resolver);
  if (!img)
    return { type: 'text', text: imagePlaceholder(b.attachment, resolver ? 'not available' : 'image input is not sent to this model') };
  if (!IMAGE_TYPES.has(img.mediaType))
    return { type: 'text', text: imagePlaceholder(b.attachment, `unsupported image type ${img.mediaType}`) };
  return {
    type: 'image',
    source: { type: 'base64', media_type: img.mediaType as 'image/png', data: img.data },
  };
}

function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max)}…`;
}
