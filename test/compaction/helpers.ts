/**
 * A model for compaction tests: conversation requests are answered from one script, summariser
 * requests (purpose `compaction`) from another, and every request is kept. Usage is reported the
 * way a provider would, from its own count of the request (JSON text / 4), not from the meter.
 */
import { z } from 'zod';
import type { Agent } from '../../src/agent/agent.js';
import { createAgent, type CreateAgentOptions } from '../../src/create-agent.js';
import type { LlmAdapter, ModelInfo } from '../../src/llm/adapter.js';
import type { GenerateRequest } from '../../src/model/request.js';
import type { StreamChunk } from '../../src/model/stream.js';
import { textResponse, toolCallResponse, errorResponse } from '../../src/llm/scripted.js';
import type { LlmFailure } from '../../src/model/failure.js';
import type { SessionEvent } from '../../src/session/events.js';
import { deriveMessagesFrom } from '../../src/session/derive.js';
import { withoutIds } from '../../src/session/json-diff.js';
import { compaction, type CompactionOptions } from '../../src/compaction/index.js';

export type Reply = (request: GenerateRequest) => StreamChunk[] | Promise<StreamChunk[]>;

/** What a provider would bill for this request: its JSON text, 4 characters a token. */
export function providerCount(r: GenerateRequest): number {
  return Math.ceil(JSON.stringify({ system: r.system, tools: r.tools, messages: r.messages }).length / 4);
}

export function usageFor(r: GenerateRequest): { inputTokens: number; outputTokens: number } {
  return { inputTokens: providerCount(r), outputTokens: 7 };
}

export class TestModel implements LlmAdapter {
  readonly providers = ['test'];
  readonly requests: GenerateRequest[] = [];
  readonly conversation: GenerateRequest[] = [];
  readonly summaries: GenerateRequest[] = [];
  constructor(
    private readonly talk: Reply[],
    private readonly summarise: Reply[] = [],
    private readonly info: ModelInfo | undefined = undefined,
  ) {}
  /** More conversation replies, for turns added later. */
  push(...replies: Reply[]): void {
    this.talk.push(...replies);
  }
  modelInfo(): ModelInfo | undefined {
    return this.info;
  }
  async *stream(request: GenerateRequest): AsyncGenerator<StreamChunk> {
    this.requests.push(request);
    const compacting = request.purpose === 'compaction';
    (compacting ? this.summaries : this.conversation).push(request);
    const next = (compacting ? this.summarise : this.talk).shift();
    if (!next) throw new Error(`test model: no ${compacting ? 'summary' : 'conversation'} reply left`);
    yield* await next(request);
  }
}

export const say =
  (text: string): Reply =>
  (r) =>
    textResponse(text, { usage: usageFor(r) });
export const call =
  (id: string, name: string, args: unknown): Reply =>
  (r) =>
    toolCallResponse([{ id, name, args }], { usage: usageFor(r) });
export const fail =
  (failure: LlmFailure): Reply =>
  () =>
    errorResponse(failure);

/** A tool whose result is `size` characters of recognisable text. */
export function bigTool(size: number) {
  return {
    name: 'read',
    description: 'Read a file.',
    parameters: z.object({ path: z.string() }),
    isConcurrencySafe: () => true,
    execute: ({ path }: { path: string }) => `${path}: ${'lorem ipsum dolor '.repeat(Math.ceil(size / 18)).slice(0, size)}`,
  };
}

export function testAgent(
  model: TestModel,
  opts: { compaction?: CompactionOptions | false; agent?: Partial<CreateAgentOptions> } = {},
): Agent {
  return createAgent({
    model: 'test:m1',
    adapters: model,
    system: 'You are a test agent.',
    retry: false,
    invariants: true,
    ...opts.agent,
    plugins: [...(opts.compaction === false ? [] : [compaction(opts.compaction ?? {})]), ...(opts.agent?.plugins ?? [])],
  });
}

/** Conversation requests as the log reconstructs them (history just before each attempt's first chunk). */
export function recordedRequests(events: readonly SessionEvent[]): unknown[][] {
  const out: unknown[][] = [];
  let attemptOpen = false;
  for (const e of events) {
    if (e.type === 'assistant/chunk') {
      if (!attemptOpen) out.push(withoutIds(deriveMessagesFrom(events, e.seq - 1)));
      attemptOpen = e.data.chunk.type !== 'finish';
    }
  }
  return out;
}

export const textOf = (m: { content: readonly { type: string; text?: string }[] }): string => m.content.map((b) => b.text ?? '').join('');

export function ofType<K extends SessionEvent['type']>(events: readonly SessionEvent[], type: K): SessionEvent<K>[] {
  return events.filter((e) => e.type === type) as unknown as SessionEvent<K>[];
}
