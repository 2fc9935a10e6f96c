/**
 * The summariser: one direct model call, outside the turn loop. It replays the request prefix the
 * conversation model saw (same system prompt, same tools, the span's messages verbatim) so the
 * provider's prompt cache still serves it, then asks for a summary. It goes through the agent's
 * `llm/stream` waterfall (store checkpoints, middleware) and its adapter, with purpose
 * `compaction`, and is normalised like any attempt (exactly one finish). Only text is kept:
 * reasoning is private, and a tool call would be an orphan.
 *
 * The call is recorded in `compaction/summary` (provider, model, cap, usage, complete output):
 * with the request header in force and the shadowed seqs, the log reconstructs the request.
 */
import type { AgentContext } from '../agent/context.js';
import { BlockAssembler } from '../agent/assembler.js';
import type { ContentBlock, Message } from '../model/message.js';
import type { GenerateRequest, LlmCallConfig } from '../model/request.js';
import type { StreamChunk } from '../model/stream.js';
import type { CompactionSummaryData, EpochHeader } from '../session/events.js';
import type { LlmAdapter } from '../llm/adapter.js';
import { normalizeStream } from '../llm/runtime.js';
import { LlmError } from '../model/failure.js';
import '../llm/hooks.js';
import { instructionMessage } from './checkpoint.js';
import { CompactionError } from './errors.js';

export interface SummarizeInput {
  agent: AgentContext;
  compactionId: string;
  /** The span to summarise, as the model saw it. */
  messages: readonly Message[];
  /** The request header in force (its system prompt, tools and route). */
  header: EpochHeader | undefined;
  maxTokens: number;
  signal: AbortSignal;
}

/**
 * What a summariser returns: the part of `compaction/summary` it is the source of (the summary
 * and the call facts), so the recorded event and the result cannot drift apart.
 * `rawOutput` is required when `llmStreamCall` is set.
 */
export type SummaryResult = Pick<CompactionSummaryData, 'summary' | 'provider' | 'model' | 'maxTokens' | 'usage' | 'rawOutput' | 'llmStreamCall'>;

export type Summarizer = (input: SummarizeInput) => Promise<SummaryResult>;

/** The route and sampling of the summariser's call: the conversation's, with its own cap. */
export function summaryConfig(agent: AgentContext, header: EpochHeader | undefined, maxTokens: number): LlmCallConfig {
  const base: LlmCallConfig = header ? { ...header.config } : { provider: agent.options.provider, model: agent.options.model };
  // A stop sequence could cut the summary; the cap is the summariser's own.
  delete base.stop;
  return { ...base, maxTokens };
}

export const modelSummarizer: Summarizer = async ({ agent, messages, header, maxTokens, signal }) => {
  const config = summaryConfig(agent, header, maxTokens);
  const adapter = agent.adapters.get(config.provider);
  if (!adapter && !agent.bus.has('llm/stream')) {
    throw new CompactionError('NO_ADAPTER', `no model adapter serves provider "${config.provider}" for the summary`);
  }
  const resolved = adapter?.resolveCall ? adapter.resolveCall(config).config : config;
  const request: GenerateRequest = {
    ...resolved,
    messages: [...messages, instructionMessage()],
    signal,
    sessionId: agent.session.id,
    purpose: 'compaction',
  };
  if (header?.system !== undefined) request.system = header.system;
  if (header?.tools !== undefined) request.tools = header.tools;

  const terminal = (req: GenerateRequest): AsyncIterable<StreamChunk> => {
    if (!adapter) throw new LlmError({ code: 'NO_ADAPTER', message: `no model adapter serves provider "${req.provider}"` });
    return adapter.stream(req);
  };
  const bus = agent.bus;
  const viaHooks: LlmAdapter = {
    providers: [],
    stream: (req) =>
      (async function* () {
        yield* await bus.waterfall('llm/stream', Object.freeze(req), terminal);
      })(),
  };
  const asm = new BlockAssembler();
  for await (const chunk of normalizeStream(viaHooks, request, { allowOpenBlocksAtMaxTokens: true })) asm.push(chunk);
  const finish = asm.finish;
  if (signal.aborted) throw new CompactionError('ABORTED', 'the summary was cancelled', undefined, { cause: signal.reason });
  if (!finish || finish.kind === 'aborted' || finish.kind === 'error') {
    const failure = finish && (finish.kind === 'aborted' || finish.kind === 'error') ? finish.failure : { code: 'STREAM_CLOSED', message: 'the stream ended without a finish' };
    throw new CompactionError('SUMMARY_FAILED', `${failure.message} [${failure.code}]`, failure);
  }
  if (finish.kind === 'max-tokens') {
    throw new CompactionError('SUMMARY_TRUNCATED', `the summary reached its ${maxTokens}-token cap (compaction.maxTokens) and would be cut off`);
  }
  const { content } = asm.blocks();
  const summary = content.filter((b): b is Extract<ContentBlock, { type: 'text' }> => b.type === 'text' && b.text.trim() !== '').map((b) => ({ type: 'text' as const, text: b.text }));
  if (summary.length === 0) throw new CompactionError('SUMMARY_EMPTY', `the model returned no summary text (${content.map((b) => b.type).join(', ') || 'no content'})`);
  const out: SummaryResult = { summary, provider: resolved.provider, model: resolved.model, rawOutput: content, llmStreamCall: true };
  if (resolved.maxTokens !== undefined) out.maxTokens = resolved.maxTokens;
  if (asm.usage) out.usage = asm.usage;
  return out;
};
