/**
 * Message content in the OpenTelemetry GenAI shape (`gen_ai.input.messages`,
 * `gen_ai.output.messages`, `gen_ai.system_instructions`, tool arguments and results), and the
 * per-attribute size cap. Only used when content capture is opted in.
 *
 * The cap keeps JSON attributes valid JSON (backends parse them): it drops the oldest messages
 * first (the newest are what a reader debugging a call needs), then shortens long strings, each
 * cut marked with how much was removed.
 */
import type { ContentBlock, Message } from '../model/message.js';
import type { MessageList } from '../model/history.js';

export interface OtelPart {
  type: string;
  [k: string]: unknown;
}
export interface OtelMessage {
  role: string;
  parts: OtelPart[];
  finish_reason?: string;
}

function part(b: ContentBlock): OtelPart {
  switch (b.type) {
    case 'text':
      return { type: 'text', content: b.text };
    case 'reasoning':
      return { type: 'reasoning', content: b.text };
    case 'tool-call':
      // The raw argument text, as the model produced and the log keeps it (it may not parse).
      return { type: 'tool_call', id: b.id, name: b.name, arguments: b.arguments };
    case 'tool-result':
      return { type: 'tool_call_response', id: b.toolCallId, response: blocksText(b.content) };
    case 'image':
      return { type: 'file', modality: 'image', mime_type: b.attachment.mediaType, file_id: b.attachment.attachmentId };
    default:
      return { type: (b as { type: string }).type };
  }
}

/** The text of a tool result (or any block list); non-text blocks become a short placeholder. */
export function blocksText(blocks: readonly ContentBlock[]): string {
  return blocks.map((b) => (b.type === 'text' || b.type === 'reasoning' ? b.text : `[${b.type}]`)).join('\n');
}

export function toOtelMessage(m: Message, finishReason?: string): OtelMessage {
  const isToolResult = m.role === 'user' && m.content.length > 0 && m.content.every((b) => b.type === 'tool-result');
  const out: OtelMessage = { role: isToolResult ? 'tool' : m.role, parts: m.content.map(part) };
  if (finishReason !== undefined) out.finish_reason = finishReason;
  return out;
}

// ---------------------------------------------------------------------------------------------
// The cap

const MIN_STRING_KEEP = 64;

/** Cut `s` to at most `max` code units without splitting a surrogate pair. */
function safeSlice(s: string, max: number): string {
  if (s.length <= max) return s;
  let end = Math.max(0, max);
  const c = s.charCodeAt(end - 1);
  if (end > 0 && c >= 0xd800 && c <= 0xdbff) end--;
  return s.slice(0, end);
}

/** A plain string capped at `cap` code units, the cut marked. */
export function capString(s: string, cap: number): { value: string; truncated: boolean } {
  if (s.length <= cap) return { value: s, truncated: false };
  const marker = `…[truncated ${s.length} chars]`;
  return { value: safeSlice(s, cap - marker.length) + marker, truncated: true };
}

function clip(v: unknown, limit: number): unknown {
  if (typeof v === 'string') return v.length > limit ? `${safeSlice(v, limit)}…[+${v.length - limit} chars]` : v;
  if (Array.isArray(v)) return v.map((x) => clip(x, limit));
  if (typeof v === 'object' && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = clip(x, limit);
    return out;
  }
  return v;
}

function longestString(v: unknown): number {
  if (typeof v === 'string') return v.length;
  if (Array.isArray(v)) return v.reduce((m: number, x) => Math.max(m, longestString(x)), 0);
  if (typeof v === 'object' && v !== null) return Object.values(v).reduce((m: number, x) => Math.max(m, longestString(x)), 0);
  return 0;
}

/**
 * A JSON array serialised within `cap` code units, still valid JSON: the newest items that fit
 * with strings clipped to a minimum are kept, then the longest string limit that fits is used.
 */
export function capJsonArray(items: readonly unknown[], cap: number): { value: string; truncated: boolean } {
  const whole = JSON.stringify(items);
  if (whole.length <= cap) return { value: whole, truncated: false };
  // Keep the newest suffix whose minimally clipped size fits (2 for the brackets, 1 per comma).
  let size = 2;
  let from = items.length;
  while (from > 0) {
    const s = JSON.stringify(clip(items[from - 1], MIN_STRING_KEEP)).length + (from < items.length ? 1 : 0);
    if (size + s > cap) break;
    size += s;
    from--;
  }
  if (from === items.length) {
    // Not even the newest item fits clipped: say so, in valid JSON.
    const note = [
      { role: 'system', parts: [{ type: 'text', content: `[dsh: ${items.length} message(s) omitted: over the ${cap}-character cap]` }] },
    ];
    const json = JSON.stringify(note);
    return { value: json.length <= cap ? json : '[]', truncated: true };
  }
  const kept = items.slice(from);
  // The largest per-string limit that fits; MIN_STRING_KEEP is known to fit.
  let lo = MIN_STRING_KEEP;
  let hi = longestString(kept);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (JSON.stringify(clip(kept, mid)).length <= cap) lo = mid;
    else hi = mid - 1;
  }
  return { value: JSON.stringify(clip(kept, lo)), truncated: true };
}

/**
 * What a call saw, capped: messages are converted newest first and only until the cap is surely
 * exceeded, so a long session does not convert its whole history again for every call.
 */
export function capMessages(messages: MessageList, cap: number): { value: string; truncated: boolean } {
  const suffix: OtelMessage[] = [];
  let size = 2;
  let cut = false;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (size > cap) {
      cut = true;
      break;
    }
    const m = toOtelMessage(messages.at(i)!);
    suffix.push(m);
    size += JSON.stringify(m).length + 1;
  }
  const r = capJsonArray(suffix.reverse(), cap);
  return { value: r.value, truncated: r.truncated || cut };
}
