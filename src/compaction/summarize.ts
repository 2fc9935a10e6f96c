/**
 * The summariser: one direct model call, outside the turn loop. It replays the request prefix the
 * conversation model saw (same system prompt, same tools, the span's messages verbatim) so the
 * provider's prompt cache still serves it, then asks for a summary. It takes the loop's own path
 * to the model (`streamModelRequest`: the recorded check, the agent's `llm/stream` waterfall with
 * store checkpoints and middleware, the check again at the adapter, one normalised finish), with
 * purpose `compaction`. Only text is kept: reasoning is private, and a tool call would be an orphan.
 *
 * The call is recorded in `compaction/summary` (provider, model, cap, usage, complete output):
 * with the request header in force and the shadowed seqs, the log reconstructs the request
 * (`assertSummaryRequestRecorded` says exactly how, and checks it before the call).
 */
import type { AgentContext } from '../agent/context.js';
import { BlockAssembler } from '../agent/assembler.js';
import { headerDifference, InvariantError, messagesDifference } from '../agent/invariant.js';
import { streamModelRequest } from '../agent/model-stream.js';
import type { ContentBlock, Message } from '../model/message.js';
import type { GenerateRequest, LlmCallConfig } from '../model/request.js';
import type { StreamChunk } from '../model/stream.js';
import { LlmError } from '../model/failure.js';
import { deriveEventMessage } from '../session/derive.js';
import type { CompactionSummaryData, EpochHeader } from '../session/events.js';
import type { Session } from '../session/session.js';
import { instructionMessage } from './checkpoint.js';
import { CompactionError } from './errors.js';

export interface SummarizeInput {
  agent: AgentContext;
  compactionId: string;
  /** The span to summarise, as the model saw it. */
  messages: readonly Message[];
  /** The surface seqs of that span (recorded in `compaction/summary`), in surface order. */
  shadowedSeqs: readonly number[];
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
export type SummaryResult = Pick<
  CompactionSummaryData,
  'summary' | 'provider' | 'model' | 'maxTokens' | 'usage' | 'rawOutput' | 'llmStreamCall'
>;

export type Summarizer = (input: SummarizeInput) => Promise<SummaryResult>;

/** The route and sampling of the summariser's call: the conversation's, with its own cap. */
export function summaryConfig(agent: AgentContext, header: EpochHeader | undefined, maxTokens: number): LlmCallConfig {
  const base: LlmCallConfig = header ? { ...header.config } : { provider: agent.options.provider, model: agent.options.model };
  // A stop sequence could cut the summary; the cap is the summariser's own.
  delete base.stop;
  return { ...base, maxTokens };
}

/**
 * "Model-visible means recorded", for the summariser's call. Its request is not the
 * conversation's next one, so the loop's check (`deriveMessages()` and the latest header) does
 * not fit. What the log records of it, and so what the request must equal:
 *
 * - messages: the shadowed span as the log derives it (the events are in the log; their seqs go
 *   into `compaction/summary.shadowedSeqs`), then the summariser's instruction, which is fixed
 *   text of this code (`SUMMARY_INSTRUCTION`; only its id is minted per call and kept nowhere);
 * - provider, model, reasoning effort, temperature, system prompt and tools: the request header
 *   in force before `compaction/start`, without its stop sequences (they could cut the summary);
 *   with no header in force, the agent's configured route, which only `compaction/summary` records;
 * - the output cap: `compaction.maxTokens`, recorded in `compaction/summary.maxTokens`;
 * - defaults the adapter fills in (`resolveCall`) are this code's, as for the loop, but unlike
 *   the loop's they are not marked in the log (`compaction/summary` has no `adapterDefaults`).
 *
 * `config` is that header configuration as the adapter resolved it. Checked before the
 * `llm/stream` waterfall and again where the request reaches the adapter, like the loop's check.
 */
export function assertSummaryRequestRecorded(
  request: GenerateRequest,
  session: Session,
  recorded: { shadowedSeqs: readonly number[]; header: EpochHeader | undefined; config: LlmCallConfig },
): void {
  const span = recorded.shadowedSeqs.map((s) => deriveEventMessage(session.at(s)!)).filter((m): m is Message => m !== null);
  const last = request.messages.at(-1);
  const m = messagesDifference(request.messages, [...span, { ...instructionMessage(), id: last?.id ?? '' }]);
  if (m) throw new InvariantError(`the summary request's input is not recorded in session ${session.id}: ${m}`);
  const header: EpochHeader = { config: recorded.config };
  if (recorded.header?.system !== undefined) header.system = recorded.header.system;
  if (recorded.header?.tools !== undefined) header.tools = recorded.header.tools;
  const h = headerDifference(request, header);
  if (h) throw new InvariantError(`the summary request's ${h[0]} differs from what session ${session.id} records for it: ${h[1]}`);
}

export const modelSummarizer: Summarizer = async ({ agent, messages, shadowedSeqs, header, maxTokens, signal }) => {
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

  const session = agent.session;
  const check = agent.options.invariants
    ? (req: GenerateRequest) => assertSummaryRequestRecorded(req, session, { shadowedSeqs, header, config: resolved })
    : undefined;
  let stream: AsyncIterable<StreamChunk>;
  try {
    stream = streamModelRequest(agent.bus, request, adapter, check);
  } catch (e) {
    // The check before the waterfall; the one at the adapter ends the stream with the same failure.
    if (!(e instanceof LlmError)) throw e;
    throw new CompactionError('SUMMARY_FAILED', `${e.failure.message} [${e.failure.code}]`, e.failure);
  }
  const asm = new BlockAssembler();
  for await (const chunk of stream) asm.push(chunk);
  const finish = asm.finish;
  if (signal.aborted) throw new CompactionError('ABORTED', 'the summary was cancelled', undefined, { cause: signal.reason });
  if (!finish || finish.kind === 'aborted' || finish.kind === 'error') {
    const failure =
      finish && (finish.kind === 'aborted' || finish.kind === 'error')
        ? finish.failure
        : { code: 'STREAM_CLOSED', message: 'the stream ended without a finish' };
    throw new CompactionError('SUMMARY_FAILED', `${failure.message} [${failure.code}]`, failure);
  }
  if (finish.kind === 'max-tokens') {
    throw new CompactionError(
      'SUMMARY_TRUNCATED',
      `the summary reached its ${maxTokens}-token cap (compaction.maxTokens) and would be cut off`,
    );
  }
  const { content } = asm.blocks();
  const summary = content
    .filter((b): b is Extract<ContentBlock, { type: 'text' }> => b.type === 'text' && b.text.trim() !== '')
    .map((b) => ({ type: 'text' as const, text: b.text }));
  if (summary.length === 0)
    throw new CompactionError(
      'SUMMARY_EMPTY',
      `the model returned no summary text (${content.map((b) => b.type).join(', ') || 'no content'})`,
    );
  const out: SummaryResult = { summary, provider: resolved.provider, model: resolved.model, rawOutput: content, llmStreamCall: true };
  if (resolved.maxTokens !== undefined) out.maxTokens = resolved.maxTokens;
  if (asm.usage) out.usage = asm.usage;
  return out;
};
