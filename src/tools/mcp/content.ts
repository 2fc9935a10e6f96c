/**
 * MCP tool results as content blocks. Text stays text; an image becomes an attachment when the
 * host can store one, else a placeholder that says what was there; an embedded resource becomes
 * its text (binary resources and audio become placeholders); `isError` is kept.
 */
import type { ContentBlock, ImageAttachmentRef } from '../../model/message.js';
import type { ToolResultValue } from '../types.js';

/** Store image bytes outside the log and return the reference an image block carries. */
export type StoreImage = (data: Buffer, mediaType: string) => ImageAttachmentRef | Promise<ImageAttachmentRef>;

interface McpContentItem {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  uri?: string;
  name?: string;
  description?: string;
  resource?: { uri: string; mimeType?: string; text?: string; blob?: string };
}

const bytesOf = (b64: string | undefined): number => (b64 ? Buffer.from(b64, 'base64').length : 0);

async function block(item: McpContentItem, storeImage: StoreImage | undefined): Promise<ContentBlock> {
  switch (item.type) {
    case 'text':
      return { type: 'text', text: item.text ?? '' };
    case 'image': {
      const mediaType = item.mimeType ?? 'application/octet-stream';
      if (storeImage && item.data) {
        try {
          return { type: 'image', attachment: await storeImage(Buffer.from(item.data, 'base64'), mediaType) };
        } catch (e) {
          return {
            type: 'text',
            text: `[image: ${mediaType}, ${bytesOf(item.data)} bytes, not shown: storing it failed (${(e as Error).message})]`,
          };
        }
      }
      return { type: 'text', text: `[image: ${mediaType}, ${bytesOf(item.data)} bytes, not shown: this session has no attachment store]` };
    }
    case 'audio':
      return { type: 'text', text: `[audio: ${item.mimeType ?? 'unknown type'}, ${bytesOf(item.data)} bytes, not shown]` };
    case 'resource': {
      const r = item.resource;
      if (!r) return { type: 'text', text: '[resource: (empty)]' };
      const mime = r.mimeType ? ` (${r.mimeType})` : '';
      if (typeof r.text === 'string') return { type: 'text', text: `[resource ${r.uri}${mime}]\n${r.text}` };
      return { type: 'text', text: `[resource ${r.uri}${mime}: binary, ${bytesOf(r.blob)} bytes, not shown]` };
    }
    case 'resource_link':
      return {
        type: 'text',
        text: `[resource link: ${item.uri ?? '?'}${item.name ? ` "${item.name}"` : ''}${item.description ? ` — ${item.description}` : ''}]`,
      };
    default:
      return { type: 'text', text: `[${item.type} content: ${JSON.stringify(item).slice(0, 2000)}]` };
  }
}

export async function mapCallToolResult(
  result: { content?: unknown; isError?: unknown; structuredContent?: unknown; toolResult?: unknown },
  storeImage?: StoreImage,
): Promise<ToolResultValue> {
  const items = Array.isArray(result.content) ? (result.content as McpContentItem[]) : [];
  const content: ContentBlock[] = [];
  for (const item of items) content.push(await block(item, storeImage));
  if (content.length === 0 && result.structuredContent !== undefined)
    content.push({ type: 'text', text: JSON.stringify(result.structuredContent) });
  // Pre-2024-11 servers answer `{ toolResult }` instead of content.
  if (content.length === 0 && result.toolResult !== undefined) content.push({ type: 'text', text: JSON.stringify(result.toolResult) });
  if (content.length === 0) content.push({ type: 'text', text: '(no output)' });
  const out: ToolResultValue = { content };
  if (result.isError === true) {
    out.isError = true;
    out.error = { name: 'McpToolError', code: 'MCP_TOOL_ERROR' };
  }
  return out;
}
