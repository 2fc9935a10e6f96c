/**
 * Anthropic Messages stream events → our stream chunks. Pure state machine, one per attempt.
 *
 * Thinking signatures and redacted thinking are provider-private state the API wants back
 * verbatim; they travel in `finish.replayState.blocks`, one entry per block in block-index order
 * (the same positions as the assistant message's content), shaped like dsh's: `{type}` plus
 * `signature` for thinking or `redacted` data for redacted thinking.
 */
import type { JsonObject, JsonValue } from '../model/json.js';
import type { ContentBlock, ReplayState } from '../model/message.js';
import type { FinishReason, StreamBlockType, StreamChunk } from '../model/stream.js';
import { mergeAnthropicUsage, usageFromAnthropic, type AnthropicUsageFields } from './usage-map.js';

interface Block {
  index: number;
  type: StreamBlockType;
  text: string;
  /** tool-call */
  id?: string;
  name?: string;
  startInput?: unknown;
  /** thinking */
  signature?: string;
  redacted?: string;
  open: boolean;
}

function rec(v: unknown): Record<string, unknown> | undefined {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}
function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

export class AnthropicTranslator {
  /** Provider block index → our block; unsupported provider blocks (server tools) have no entry. */
  private readonly byProviderIndex = new Map<number, Block>();
  private readonly blocks: Block[] = [];
  private readonly usage: AnthropicUsageFields = {};
  private stopReason: string | undefined;
  private stopDetails: Record<string, unknown> | undefined;
  private messageId: string | undefined;
  private model: string | undefined;

  constructor(private readonly provider: string) {}

  push(event: unknown): StreamChunk[] {
    const out: StreamChunk[] = [];
    const ev = rec(event);
    if (!ev) return out;
    switch (ev['type']) {
      case 'message_start': {
        const message = rec(ev['message']);
        this.messageId = str(message?.['id']);
        this.model = str(message?.['model']);
        mergeAnthropicUsage(this.usage, message?.['usage']);
        break;
      }
      case 'content_block_start':
        this.start(ev, out);
        break;
      case 'content_block_delta':
        this.delta(ev, out);
        break;
      case 'content_block_stop': {
        const block = this.byProviderIndex.get(Number(ev['index']));
        if (block?.open) this.close(block, out);
        break;
      }
      case 'message_delta': {
        const delta = rec(ev['delta']);
        const reason = str(delta?.['stop_reason']);
        if (reason) this.stopReason = reason;
        const details = rec(delta?.['stop_details']);
        if (details) this.stopDetails = details;
        mergeAnthropicUsage(this.usage, ev['usage']);
        break;
      }
      default:
        // message_stop, ping and future event types carry nothing we need.
        break;
    }
    return out;
  }

  /** The stream ended: close what a successful finish needs closed, report usage, finish. */
  end(): StreamChunk[] {
    const out: StreamChunk[] = [];
    const usage = usageFromAnthropic(this.usage);
    const reason = this.mapStop();
    if (reason.kind !== 'error') for (const b of this.blocks) if (b.open) this.close(b, out);
    if (usage) out.push({ type: 'usage', usage });
    const replayState = reason.kind === 'error' ? undefined : this.replayState();
    out.push(replayState ? { type: 'finish', reason, replayState } : { type: 'finish', reason });
    return out;
  }

  private start(ev: Record<string, unknown>, out: StreamChunk[]): void {
    const cb = rec(ev['content_block']);
    const type = str(cb?.['type']);
    const blockType: StreamBlockType | undefined =
      type === 'text'
        ? 'text'
        : type === 'thinking' || type === 'redacted_thinking'
          ? 'reasoning'
          : type === 'tool_use'
            ? 'tool-call'
            : undefined;
    if (!cb || !blockType) return;
    const block: Block = { index: this.blocks.length, type: blockType, text: '', open: true };
    this.blocks.push(block);
    this.byProviderIndex.set(Number(ev['index']), block);
    out.push({ type: 'block-start', index: block.index, blockType });
    if (type === 'tool_use') {
      block.id = str(cb['id']) ?? '';
      block.name = str(cb['name']) ?? '';
      block.startInput = cb['input'];
      out.push({ type: 'tool-call-delta', index: block.index, id: block.id, name: block.name, argumentsDelta: '' });
    } else if (type === 'redacted_thinking') {
      block.redacted = str(cb['data']) ?? '';
    } else if (type === 'thinking') {
      const sig = str(cb['signature']);
      if (sig) block.signature = sig;
      this.appendText(block, str(cb['thinking']) ?? '', out);
    } else {
      this.appendText(block, str(cb['text']) ?? '', out);
    }
  }

  private delta(ev: Record<string, unknown>, out: StreamChunk[]): void {
    const block = this.byProviderIndex.get(Number(ev['index']));
    const d = rec(ev['delta']);
    if (!block?.open || !d) return;
    switch (d['type']) {
      case 'text_delta':
        if (block.type === 'text') this.appendText(block, str(d['text']) ?? '', out);
        break;
      case 'thinking_delta':
        if (block.type === 'reasoning') this.appendText(block, str(d['thinking']) ?? '', out);
        break;
      case 'signature_delta':
        block.signature = (block.signature ?? '') + (str(d['signature']) ?? '');
        break;
      case 'input_json_delta': {
        const part = str(d['partial_json']) ?? '';
        if (block.type === 'tool-call' && part !== '') {
          block.text += part;
          out.push({ type: 'tool-call-delta', index: block.index, id: block.id ?? '', argumentsDelta: part });
        }
        break;
      }
      default:
        // citations_delta and future kinds: nothing to assemble.
        break;
    }
  }

  private appendText(block: Block, text: string, out: StreamChunk[]): void {
    if (text === '') return;
    block.text += text;
    out.push({ type: block.type === 'text' ? 'text-delta' : 'reasoning-delta', index: block.index, text });
  }

  private close(block: Block, out: StreamChunk[]): void {
    block.open = false;
    out.push({ type: 'block-end', index: block.index, block: assembled(block) });
  }

  private mapStop(): FinishReason {
    const reason = this.stopReason;
    if (reason === undefined) {
      return { kind: 'error', failure: { code: 'STREAM_CLOSED', message: `${this.provider}: stream ended without a stop_reason` } };
    }
    const hasTools = this.blocks.some((b) => b.type === 'tool-call');
    switch (reason) {
      case 'end_turn':
      case 'stop_sequence':
        if (this.blocks.length === 0) {
          return { kind: 'error', failure: { code: 'EMPTY_RESPONSE', message: 'model returned a completed response with no content' } };
        }
        return hasTools ? { kind: 'tool-calls' } : { kind: 'stop' };
      case 'tool_use':
        return hasTools ? { kind: 'tool-calls' } : { kind: 'stop' };
      case 'max_tokens':
      // The output ran into the context window: truncated the same way as by max_tokens.
      case 'model_context_window_exceeded':
        return { kind: 'max-tokens' };
      case 'refusal': {
        const why = str(this.stopDetails?.['explanation']);
        const category = str(this.stopDetails?.['category']);
        const detail = [category, why].filter(Boolean).join(': ');
        return {
          kind: 'error',
          failure: { code: 'REFUSAL', message: `${this.provider}: the model declined to answer${detail ? ` (${detail})` : ''}` },
        };
      }
      default:
        // pause_turn (server tools, which we never send) and future reasons.
        return {
          kind: 'error',
          failure: { code: 'UNKNOWN', message: `${this.provider}: unhandled stop_reason ${JSON.stringify(reason)}` },
        };
    }
  }

  private replayState(): ReplayState | undefined {
    if (!this.blocks.some((b) => b.signature !== undefined || b.redacted !== undefined)) return undefined;
    const blocks: JsonValue[] = this.blocks.map((b) => {
      const entry: Record<string, JsonValue> = { type: b.type };
      if (b.redacted !== undefined) entry['redacted'] = b.redacted;
      else if (b.signature !== undefined) entry['signature'] = b.signature;
      return entry as JsonObject;
    });
    const response: Record<string, JsonValue> = { api: 'anthropic-messages', provider: this.provider };
    if (this.messageId) response['id'] = this.messageId;
    if (this.model) response['model'] = this.model;
    return { response, blocks };
  }
}

function assembled(b: Block): ContentBlock {
  if (b.type === 'tool-call') {
    let args = b.text;
    // Anthropic streams `{}` inputs as a single empty partial_json; some proxies put the whole input in the start event.
    if (args.trim() === '') {
      const start = rec(b.startInput);
      args = start && Object.keys(start).length > 0 ? JSON.stringify(start) : '{}';
    }
    return { type: 'tool-call', id: b.id ?? '', name: b.name ?? '', arguments: args };
  }
  return { type: b.type, text: b.text };
}
