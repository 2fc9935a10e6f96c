/**
 * Run one normalised adapter attempt and take it apart for assertions. Every run is checked against
 * the stream grammar, so no adapter test can pass on a malformed stream.
 */
import { randomUUID } from 'node:crypto';
import type { LlmAdapter } from '../../src/llm/adapter.js';
import { checkStream } from '../../src/llm/grammar.js';
import { collectStream } from '../../src/llm/runtime.js';
import type { ContentBlock, Message } from '../../src/model/message.js';
import type { GenerateRequest } from '../../src/model/request.js';
import type { FinishChunk, StreamChunk } from '../../src/model/stream.js';
import type { TokenUsage } from '../../src/model/usage.js';

export interface AttemptResult {
  chunks: StreamChunk[];
  /** Blocks from `block-end`, in block-index order. */
  blocks: ContentBlock[];
  usage: TokenUsage | undefined;
  finish: FinishChunk;
  /** Text/reasoning/arguments deltas concatenated per block index. */
  deltas: Map<number, string>;
}

export async function runAttempt(adapter: LlmAdapter, request: GenerateRequest): Promise<AttemptResult> {
  const chunks = await collectStream(adapter, request);
  checkStream(chunks);
  const ends = chunks.filter((c) => c.type === 'block-end').sort((a, b) => a.index - b.index);
  const deltas = new Map<number, string>();
  for (const c of chunks) {
    if (c.type === 'text-delta' || c.type === 'reasoning-delta') deltas.set(c.index, (deltas.get(c.index) ?? '') + c.text);
    if (c.type === 'tool-call-delta') deltas.set(c.index, (deltas.get(c.index) ?? '') + c.argumentsDelta);
  }
  const usage = chunks.find((c) => c.type === 'usage');
  const finish = chunks[chunks.length - 1] as FinishChunk;
  return { chunks, blocks: ends.map((e) => e.block), usage: usage?.type === 'usage' ? usage.usage : undefined, finish, deltas };
}

export function userMessage(text: string): Message {
  return { id: randomUUID(), role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } };
}

export function request(provider: string, model: string, extra: Partial<GenerateRequest> = {}): GenerateRequest {
  return { provider, model, messages: [userMessage('Hello!')], ...extra };
}

/** The assistant message the loop would append for a finished attempt (blocks + replay state). */
export function assistantFrom(
  result: AttemptResult,
  provider: string,
  model: string,
): import('../../src/model/message.js').AssistantMessage {
  const replayState = result.finish.replayState;
  return {
    id: randomUUID(),
    role: 'assistant',
    content: result.blocks,
    source: { kind: 'model', provider, model, ...(replayState ? { replayState } : {}) },
  };
}
