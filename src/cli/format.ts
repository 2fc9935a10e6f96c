/**
 * Shared one-line renderings of log vocabulary (usage, sources, turn-end reasons, content
 * blocks), used by every command that prints a log. All text from the log goes through
 * `text.ts` here, so callers can print the result as is.
 */
import type { ContentBlock, MessageSource } from '../model/message.js';
import type { TokenUsage } from '../model/usage.js';
import type { LlmFailure } from '../model/failure.js';
import type { TurnEndReason } from '../session/index.js';
import { count, flatten, oneLine, preview, truncate } from './text.js';

/** Preview widths; `undefined` everywhere under `--full`. */
export interface Widths {
  text: number | undefined;
  args: number | undefined;
}
export const DEFAULT_WIDTHS: Widths = { text: 72, args: 60 };
export const FULL_WIDTHS: Widths = { text: undefined, args: undefined };

/** `in 2 882 · out 75 (reasoning 29) · cache read 0`: dsh's disjoint kinds, as recorded. */
export function formatUsage(u: TokenUsage | undefined): string {
  if (!u) return 'no usage';
  const parts = [
    `in ${count(u.inputTokens)}`,
    `out ${count(u.outputTokens)}${u.reasoningTokens !== undefined ? ` (reasoning ${count(u.reasoningTokens)})` : ''}`,
  ];
  if (u.cacheReadTokens !== undefined) parts.push(`cache read ${count(u.cacheReadTokens)}`);
  if (u.cacheWriteTokens !== undefined) parts.push(`cache write ${count(u.cacheWriteTokens)}`);
  return parts.join(' · ');
}

export function formatFailure(f: LlmFailure): string {
  const status = typeof f.status === 'number' ? ` (HTTP ${f.status})` : '';
  return `${oneLine(String(f.code))}${status}: ${oneLine(truncate(String(f.message), 200))}`;
}

export function formatTurnEnd(r: TurnEndReason): string {
  switch (r.kind) {
    case 'aborted': {
      // Only the cause's kind is validated on load.
      const c = r.reason as unknown as Record<string, unknown>;
      const kind = oneLine(String(c.kind));
      return `aborted (${kind === 'hook' && typeof c.reason === 'string' ? `hook: ${oneLine(c.reason)}` : kind})`;
    }
    case 'error':
      return `error ${formatFailure(r.error)}`;
    case 'interrupted':
      return 'interrupted (closed by crash repair)';
    default:
      return oneLine(r.kind);
  }
}

/** `user`, `plugin @x/y · snapshot`, `model deepseek/deepseek-chat`, `tool call_1`. */
export function formatSource(s: MessageSource | undefined): string {
  if (!s || typeof s !== 'object') return 'unknown source';
  const o = s as unknown as Record<string, unknown>;
  const parts = [oneLine(String(o.kind))];
  switch (o.kind) {
    case 'plugin':
      if (typeof o.plugin === 'string') parts.push(oneLine(o.plugin));
      break;
    case 'model':
      parts.push(`${oneLine(String(o.provider))}/${oneLine(String(o.model))}`);
      break;
    case 'tool':
      parts.push(oneLine(String(o.callId)));
      break;
    default:
      break;
  }
  const form = typeof o.form === 'string' ? ` · ${oneLine(o.form)}` : '';
  return parts.join(' ') + form;
}

/** Text of a tool result's content, flattened (images and nested blocks as short markers). */
export function flattenText(blocks: readonly ContentBlock[]): string {
  // Most content is one text block: its text, with no list to join. (A plugin payload's block is
  // not validated: a text that is not a string goes the join's way, which writes it as one.)
  const only = blocks.length === 1 ? blocks[0]! : undefined;
  if (only !== undefined && (only.type === 'text' || only.type === 'reasoning') && typeof only.text === 'string') return only.text;
  const out: string[] = [];
  for (const b of blocks) {
    if (b.type === 'text' || b.type === 'reasoning') out.push(b.text);
    else if (b.type === 'image') out.push(`[image ${b.attachment.mediaType}]`);
    else out.push(`[${b.type}]`);
  }
  return out.join(' ');
}

/** `[image image/png · 1 234 bytes · 640×480 · shot.png · sha256:…]`: a reference, never bytes. */
export function formatImageRef(a: unknown): string {
  const o = (a ?? {}) as Record<string, unknown>;
  const parts = [oneLine(String(o.mediaType ?? 'unknown type'))];
  if (typeof o.bytes === 'number') parts.push(`${count(o.bytes)} bytes`);
  if (typeof o.width === 'number' && typeof o.height === 'number') parts.push(`${o.width}×${o.height}`);
  if (typeof o.name === 'string') parts.push(oneLine(o.name));
  if (typeof o.attachmentId === 'string') parts.push(oneLine(truncate(o.attachmentId, 40)));
  return `[image ${parts.join(' · ')}]`;
}

/** One line per block, for the timeline. */
export function blockLine(b: ContentBlock, w: Widths): string {
  switch (b.type) {
    case 'text':
      return `text ${preview(b.text, w.text)}`;
    case 'reasoning':
      return `reasoning ${preview(b.text, w.text)} (${count(b.text.length)} chars)`;
    case 'tool-call':
      return `tool-call ${oneLine(b.name)} [${oneLine(b.id)}] ${argsPreview(b.arguments, w.args)}`;
    case 'tool-result':
      return `tool-result [${oneLine(b.toolCallId)}] ${b.isError ? 'error' : 'ok'} ${preview(flattenText(b.content), w.text)}`;
    case 'image':
      return formatImageRef(b.attachment);
    default:
      return `[${oneLine(String((b as { type: unknown }).type))} block]`;
  }
}

/** Raw argument JSON text, whitespace-collapsed, unquoted (it is already JSON). */
export function argsPreview(args: string, max: number | undefined): string {
  return oneLine(flatten(args, max));
}
