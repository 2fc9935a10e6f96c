/**
 * An ACP prompt (content blocks) as the user message the agent records. Text stays text; an image
 * is stored as an attachment and referenced (attachments.ts); an embedded resource (a file the
 * editor attached, with its current, possibly unsaved, text) becomes text naming its URI; a
 * resource link becomes a line naming it (the model can read it with its tools). Audio is refused:
 * the agent does not advertise it. A bad block is an `INVALID_PROMPT` naming its JSON path.
 */
import type { ContentBlock as AcpContent } from '@agentclientprotocol/sdk/unstable';
import type { ContentBlock } from '../model/message.js';
import { IMAGE_TYPES, type AttachmentStore } from './attachments.js';
import { AcpError } from './errors.js';

function fence(text: string): string {
  let ticks = '```';
  while (text.includes(ticks)) ticks += '`';
  return ticks;
}

function block(b: AcpContent, path: string, attachments: AttachmentStore): ContentBlock {
  switch (b.type) {
    case 'text':
      return { type: 'text', text: b.text };
    case 'image':
      return { type: 'image', attachment: attachments.putBase64(b.data, b.mimeType, b.uri ?? undefined) };
    case 'resource': {
      const r = b.resource;
      if ('text' in r) {
        const f = fence(r.text);
        const nl = r.text.endsWith('\n') ? '' : '\n';
        return { type: 'text', text: `Attached ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ''}:\n${f}\n${r.text}${nl}${f}` };
      }
      if (r.mimeType && IMAGE_TYPES.has(r.mimeType)) return { type: 'image', attachment: attachments.putBase64(r.blob, r.mimeType, r.uri) };
      return { type: 'text', text: `[attached ${r.uri}: binary${r.mimeType ? ` ${r.mimeType}` : ''} content, not shown]` };
    }
    case 'resource_link':
      return {
        type: 'text',
        text: `[linked ${b.uri}${b.name && b.name !== b.uri ? ` (${b.name})` : ''}${b.mimeType ? `, ${b.mimeType}` : ''}]`,
      };
    case 'audio':
      throw new AcpError('INVALID_PROMPT', 'audio prompts are not supported (the agent does not advertise them)', `${path}.type`);
    default:
      throw new AcpError('INVALID_PROMPT', `unknown content type ${JSON.stringify((b as { type?: unknown }).type)}`, `${path}.type`);
  }
}

export function promptContent(blocks: readonly AcpContent[], attachments: AttachmentStore): ContentBlock[] {
  if (blocks.length === 0) throw new AcpError('INVALID_PROMPT', 'the prompt is empty', '$.prompt');
  return blocks.map((b, i) => {
    const path = `$.prompt[${i}]`;
    try {
      return block(b, path, attachments);
    } catch (e) {
      if (e instanceof AcpError && e.path === undefined) throw new AcpError('INVALID_PROMPT', e.message, path);
      throw e;
    }
  });
}
