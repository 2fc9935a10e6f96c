/**
 * Chat-completions chunks (as the `openai` SDK yields them) → our stream chunks. Pure state machine,
 * one instance per attempt. It reads chunks defensively because compatible servers differ: explicit
 * nulls, usage-only chunks with `choices: []` (or with an empty delta), usage inside the finish
 * chunk, a first chunk carrying only `prompt_filter_results`, tool-call continuations that repeat
 * `"id":""`, a first tool index that is not 0, whole tool calls in one delta, reasoning under
 * `reasoning_content` (DeepSeek, xAI) or `reasoning` (OpenRouter, Ollama, newer vLLM).
 *
 * Block indexes are ours, dense and in order of first appearance; provider tool indexes only key
 * the calls. Blocks stay open until the provider finishes (as dsh does), then close in index order.
 */
import { randomUUID } from 'node:crypto';
import type { ContentBlock } from '../model/message.js';
import type { FinishReason, StreamBlockType, StreamChunk } from '../model/stream.js';
import { usageFromChatCompletion } from './usage-map.js';

interface TextState {
  index: number;
  type: 'text' | 'reasoning';
  text: string;
}
interface ToolState {
  index: number;
  type: 'tool-call';
  /** The id recorded and sent back: the provider's, unless missing or already used. */
  id: string;
  /** The id the provider gave (its deltas may repeat it), to tell a continuation from a new call. */
  providerId: string | undefined;
  name: string;
  args: string;
  /** Set once the first delta (the one carrying `name`) went out. */
  announced: boolean;
  pending: string;
}
type BlockState = TextState | ToolState;

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}
function rec(v: unknown): Record<string, unknown> | undefined {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

export class ChatCompletionTranslator {
  private readonly blocks: BlockState[] = [];
  private readonly toolsByProviderIndex = new Map<number, ToolState>();
  private last: BlockState | undefined;
  private lastTool: ToolState | undefined;
  private finishReason: string | undefined;
  private rawUsage: unknown;
  /** The response's id and model as the server named them (first non-empty), for `finish.replayState.response`. */
  private responseId: string | undefined;
  private responseModel: string | undefined;

  constructor(
    private readonly provider: string,
    private readonly newCallId: () => string = () => `call_dsh_${randomUUID()}`,
  ) {}

  /** One parsed SSE payload; returns the chunks it produces (possibly none). */
  push(payload: unknown): StreamChunk[] {
    const out: StreamChunk[] = [];
    const chunk = rec(payload);
    if (!chunk) return out;
    if (rec(chunk['usage'])) this.rawUsage = chunk['usage'];
    this.responseId ??= str(chunk['id']) || undefined;
    this.responseModel ??= str(chunk['model']) || undefined;
    const choices = Array.isArray(chunk['choices']) ? chunk['choices'] : [];
    for (const c of choices) {
      const choice = rec(c);
      // We never ask for n > 1; a stray second choice must not interleave with the first.
      if (!choice || (typeof choice['index'] === 'number' && choice['index'] !== 0)) continue;
      const delta = rec(choice['delta']) ?? {};
      const reasoning = str(delta['reasoning_content']) ?? str(delta['reasoning']);
      if (reasoning) this.appendText('reasoning', reasoning, out);
      const content = str(delta['content']);
      if (content) this.appendText('text', content, out);
      // A refusal is the model's answer in words; it is shown and kept as text (see docs/providers.md).
      const refusal = str(delta['refusal']);
      if (refusal) this.appendText('text', refusal, out);
      if (Array.isArray(delta['tool_calls'])) for (const tc of delta['tool_calls']) this.toolDelta(rec(tc), out);
      const finish = str(choice['finish_reason']);
      if (finish) this.finishReason = finish;
    }
    return out;
  }

  /** The SDK stream ended normally ([DONE] or EOF): close blocks, report usage, finish. */
  end(): StreamChunk[] {
    const out: StreamChunk[] = [];
    const usage = usageFromChatCompletion(this.rawUsage);
    if (this.finishReason === undefined) {
      if (usage) out.push({ type: 'usage', usage });
      out.push({
        type: 'finish',
        reason: { kind: 'error', failure: { code: 'STREAM_CLOSED', message: `${this.provider}: stream ended without a finish_reason` } },
      });
      return out;
    }
    for (const b of this.blocks) {
      if (b.type === 'tool-call' && !b.announced) this.announce(b, out);
      out.push({ type: 'block-end', index: b.index, block: assembled(b) });
    }
    if (usage) out.push({ type: 'usage', usage });
    const reason = this.mapFinish(this.finishReason);
    // Which response this was (the server's id and the model that really answered, which can differ
    // from the one asked for): kept in the log for observability (gen_ai.response.id / .model).
    const response: Record<string, string> = {};
    if (this.responseId !== undefined) response['id'] = this.responseId;
    if (this.responseModel !== undefined) response['model'] = this.responseModel;
    out.push(
      reason.kind !== 'error' && Object.keys(response).length > 0
        ? { type: 'finish', reason, replayState: { response: { api: 'chat-completions', provider: this.provider, ...response } } }
        : { type: 'finish', reason },
    );
    return out;
  }

  private mapFinish(reason: string): FinishReason {
    const hasTools = this.blocks.some((b) => b.type === 'tool-call');
    switch (reason) {
      case 'length':
        return { kind: 'max-tokens' };
      case 'stop':
      case 'tool_calls':
      case 'function_call':
        // Some local servers report `stop` on a tool-call turn; the calls are what matters.
        if (hasTools) return { kind: 'tool-calls' };
        if (this.blocks.length === 0) {
          return { kind: 'error', failure: { code: 'EMPTY_RESPONSE', message: 'model returned a completed response with no content' } };
        }
        return { kind: 'stop' };
      case 'content_filter':
        return {
          kind: 'error',
          failure: { code: 'CONTENT_FILTER', message: `${this.provider}: output stopped by the provider's content filter` },
        };
      case 'insufficient_system_resource':
        // DeepSeek: generation interrupted by inference capacity; a server-side condition.
        return {
          kind: 'error',
          failure: { code: 'SERVER', message: `${this.provider}: generation interrupted (insufficient_system_resource)` },
        };
      default:
        return {
          kind: 'error',
          failure: { code: 'UNKNOWN', message: `${this.provider}: unknown finish_reason ${JSON.stringify(reason)}` },
        };
    }
  }

  private open<T extends BlockState>(block: T, out: StreamChunk[]): T {
    this.blocks.push(block);
    this.last = block;
    out.push({ type: 'block-start', index: block.index, blockType: block.type as StreamBlockType });
    return block;
  }

  private appendText(type: 'text' | 'reasoning', text: string, out: StreamChunk[]): void {
    let block = this.last;
    if (!block || block.type !== type) block = this.open({ index: this.blocks.length, type, text: '' }, out);
    block.text += text;
    out.push({ type: type === 'text' ? 'text-delta' : 'reasoning-delta', index: block.index, text });
  }

  private toolDelta(tc: Record<string, unknown> | undefined, out: StreamChunk[]): void {
    if (!tc) return;
    const fn = rec(tc['function']);
    const id = str(tc['id']) || undefined;
    const name = str(fn?.['name']) || undefined;
    const args = str(fn?.['arguments']) ?? '';
    const providerIndex = typeof tc['index'] === 'number' ? tc['index'] : undefined;

    let call = providerIndex !== undefined ? this.toolsByProviderIndex.get(providerIndex) : this.lastTool;
    // A different non-empty id under a known index is a new call (some gateways reuse index 0);
    // an empty or repeated id is a continuation.
    if (!call || (id !== undefined && id !== call.providerId)) {
      // Ids must be unique within a response (each result answers one call): a missing id, or
      // one an earlier call of this response already has, gets a fresh one. What is recorded,
      // and sent back next time, is the id given here.
      const unique = id !== undefined && !this.blocks.some((b) => b.type === 'tool-call' && b.id === id) ? id : this.newCallId();
      call = this.open(
        { index: this.blocks.length, type: 'tool-call', id: unique, providerId: id, name: '', args: '', announced: false, pending: '' },
        out,
      );
      if (providerIndex !== undefined) this.toolsByProviderIndex.set(providerIndex, call);
    }
    this.lastTool = call;
    if (!call.name && name) call.name = name;
    call.args += args;
    if (!call.announced) {
      call.pending += args;
      if (call.name) this.announce(call, out);
    } else if (args) {
      out.push({ type: 'tool-call-delta', index: call.index, id: call.id, argumentsDelta: args });
    }
  }

  /** The first delta of a call carries its name; fragments that arrived before the name ride along. */
  private announce(call: ToolState, out: StreamChunk[]): void {
    out.push({ type: 'tool-call-delta', index: call.index, id: call.id, name: call.name, argumentsDelta: call.pending });
    call.announced = true;
    call.pending = '';
  }
}

function assembled(b: BlockState): ContentBlock {
  if (b.type === 'tool-call') return { type: 'tool-call', id: b.id, name: b.name, arguments: b.args };
  return { type: b.type, text: b.text };
}
