/**
 * Recorded provider traffic from ../shared/fixtures/real, ready to replay through the fake provider,
 * plus the fixture's own reading of what it contains (computed here from the JSON payloads, never
 * from adapter output) for tests to compare against.
 *
 * `*.chunks.txt` holds one `data:` payload per line; replaying it needs SSE framing: `data: …\n\n`
 * per line, then `data: [DONE]` for chat-completions, or an `event: <type>` line per event for
 * Anthropic (its SDK ignores events without one). `*.sse` and the anthropic-sdk `*.txt` files are
 * raw wire text and are replayed byte for byte.
 */
import { readFileSync } from 'node:fs';
import type { ContentBlock } from '../../src/model/message.js';
import type { SsePart } from './fake-provider.js';
import type { Flavor } from './faults.js';
import { sharedPath } from './shared.js';

export interface RecordedStream {
  file: string;
  flavor: Flavor;
  /** Every JSON data payload, in order (`[DONE]` excluded). */
  payloads: unknown[];
  parts: SsePart[];
}

export function loadRecordedStream(file: string, flavor: Flavor): RecordedStream {
  const text = readFileSync(sharedPath('fixtures', 'real', file), 'utf8');
  if (file.endsWith('.chunks.txt')) {
    const lines = text.split('\n').filter((l) => l.trim() !== '');
    const payloads = lines.map((l) => JSON.parse(l) as unknown);
    const parts: SsePart[] = lines.map((data, i) =>
      flavor === 'anthropic' ? { event: String((payloads[i] as { type?: unknown }).type), data } : { data },
    );
    if (flavor === 'openai') parts.push({ data: '[DONE]' });
    return { file, flavor, payloads, parts };
  }
  const payloads = text
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(5).trim())
    .filter((d) => d !== '[DONE]')
    .map((d) => JSON.parse(d) as unknown);
  return { file, flavor, payloads, parts: [{ raw: text }] };
}

type Rec = Record<string, unknown>;
const rec = (v: unknown): Rec => (v && typeof v === 'object' ? (v as Rec) : {});
const s = (v: unknown): string => (typeof v === 'string' ? v : '');

export interface ChatFixtureReading {
  /** Blocks in order of first appearance: runs of reasoning, runs of text/refusal, one per tool index. */
  blocks: ContentBlock[];
  finishReason: string | undefined;
  /** The last non-null `usage` object. */
  usage: Rec | undefined;
}

/** What a chat-completions fixture says, read straight from its payloads. */
export function readChatFixture(payloads: unknown[]): ChatFixtureReading {
  const blocks: ContentBlock[] = [];
  const tools = new Map<number, { id: string; name: string; arguments: string }>();
  let finishReason: string | undefined;
  let usage: Rec | undefined;
  const appendText = (type: 'text' | 'reasoning', t: string): void => {
    if (t === '') return;
    const last = blocks[blocks.length - 1];
    if (last && last.type === type) last.text += t;
    else blocks.push({ type, text: t });
  };
  for (const p of payloads) {
    if (rec(p)['usage'] && typeof rec(p)['usage'] === 'object') usage = rec(rec(p)['usage']);
    for (const c of (rec(p)['choices'] as unknown[] | undefined) ?? []) {
      const delta = rec(rec(c)['delta']);
      appendText('reasoning', s(delta['reasoning_content']) || s(delta['reasoning']));
      appendText('text', s(delta['content']));
      appendText('text', s(delta['refusal']));
      for (const tc of (delta['tool_calls'] as unknown[] | undefined) ?? []) {
        const key = Number(rec(tc)['index']);
        let call = tools.get(key);
        if (!call) {
          call = { id: '', name: '', arguments: '' };
          tools.set(key, call);
          blocks.push(call as unknown as ContentBlock);
        }
        call.id ||= s(rec(tc)['id']);
        call.name ||= s(rec(rec(tc)['function'])['name']);
        call.arguments += s(rec(rec(tc)['function'])['arguments']);
      }
      if (s(rec(c)['finish_reason'])) finishReason = s(rec(c)['finish_reason']);
    }
  }
  return {
    blocks: blocks.map((b) => ('arguments' in b ? { type: 'tool-call', id: b.id, name: b.name, arguments: b.arguments } : b)),
    finishReason,
    usage,
  };
}

export interface AnthropicFixtureReading {
  blocks: ContentBlock[];
  /** Signature per block position (thinking blocks only). */
  signatures: (string | undefined)[];
  stopReason: string | undefined;
  usage: { input_tokens?: number; output_tokens?: number; cache_read_input_tokens?: number; cache_creation_input_tokens?: number };
}

/** What an Anthropic fixture says: blocks by `content_block_start`, deltas concatenated, usage as last reported. */
export function readAnthropicFixture(payloads: unknown[]): AnthropicFixtureReading {
  const blocks: ContentBlock[] = [];
  const signatures: (string | undefined)[] = [];
  const byIndex = new Map<number, number>();
  let stopReason: string | undefined;
  const usage: AnthropicFixtureReading['usage'] = {};
  const takeUsage = (u: Rec): void => {
    for (const k of ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const) {
      if (typeof u[k] === 'number') usage[k] = u[k];
    }
  };
  for (const p of payloads) {
    const ev = rec(p);
    if (ev['type'] === 'message_start') takeUsage(rec(rec(ev['message'])['usage']));
    if (ev['type'] === 'message_delta') {
      stopReason = s(rec(ev['delta'])['stop_reason']) || stopReason;
      takeUsage(rec(ev['usage']));
    }
    if (ev['type'] === 'content_block_start') {
      const cb = rec(ev['content_block']);
      byIndex.set(Number(ev['index']), blocks.length);
      if (cb['type'] === 'text') blocks.push({ type: 'text', text: s(cb['text']) });
      if (cb['type'] === 'thinking') blocks.push({ type: 'reasoning', text: s(cb['thinking']) });
      if (cb['type'] === 'tool_use') blocks.push({ type: 'tool-call', id: s(cb['id']), name: s(cb['name']), arguments: '' });
      signatures.push(undefined);
    }
    if (ev['type'] === 'content_block_delta') {
      const pos = byIndex.get(Number(ev['index']));
      const b = pos === undefined ? undefined : blocks[pos];
      const d = rec(ev['delta']);
      if (!b || pos === undefined) continue;
      if (d['type'] === 'text_delta' && b.type === 'text') b.text += s(d['text']);
      if (d['type'] === 'thinking_delta' && b.type === 'reasoning') b.text += s(d['thinking']);
      if (d['type'] === 'signature_delta') signatures[pos] = (signatures[pos] ?? '') + s(d['signature']);
      if (d['type'] === 'input_json_delta' && b.type === 'tool-call') b.arguments += s(d['partial_json']);
    }
  }
  // An empty streamed input is Anthropic's way of saying `{}`.
  for (const b of blocks) if (b.type === 'tool-call' && b.arguments === '') b.arguments = '{}';
  return { blocks, signatures, stopReason, usage };
}
