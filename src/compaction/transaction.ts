/**
 * One compaction, as a bracket in the log:
 *
 *   compaction/start            takes the lock (appended before anything is awaited)
 *   … the summariser's call …
 *   compaction/summary          the call, recorded (log-only)
 *   user/message  replace       the checkpoint, in place of the span (immediately after the summary)
 *   compaction/end              releases the lock
 *
 * or, when anything fails after the start, `compaction/end` with `error` and no replace: the
 * history stays exactly as it was. The summary and the replace are appended in one synchronous
 * run, so nothing can come between them.
 */
import { randomUUID } from 'node:crypto';
import type { AgentContext } from '../agent/context.js';
import type { ContentBlock, Message } from '../model/message.js';
import type { CompactionSummaryData, ShadowedRange } from '../session/events.js';
import { deriveEventMessage } from '../session/derive.js';
import { safeCuts } from './boundaries.js';
import { checkpointMessage } from './checkpoint.js';
import { CompactionError } from './errors.js';
import { estimateMessage, nodeTokens } from './meter.js';
import type { Summarizer, SummaryResult } from './summarize.js';
import { headerBefore, openCompaction } from './tracker.js';

export interface CompactionResult {
  compactionId: string;
  startSeq: number;
  summarySeq: number;
  /** The checkpoint `user/message`. */
  replaceSeq: number;
  endSeq: number;
  summary: ContentBlock[];
  shadowedRange: ShadowedRange;
  /** In surface order. */
  shadowedSeqs: number[];
  shadowedTokenCount: number;
  /** Heuristic tokens of the checkpoint message that replaced them. */
  checkpointTokens: number;
}

export interface RegionPlan {
  /** Surface positions, inclusive. */
  first: number;
  last: number;
  /** The open turn (automatic) or null (manual, between turns). */
  turn: number | null;
  sourceCommandId?: string;
}

export interface TransactionDeps {
  summarizer: Summarizer;
  maxTokens: number;
  signal: AbortSignal;
}

/** Refuse when another compaction holds the lock; the caller appends its start in the same tick. */
export function assertUnlocked(agent: AgentContext): void {
  const open = openCompaction(agent.session);
  if (open) throw new CompactionError('BUSY', `compaction ${open.data.compactionId} (started at seq ${open.seq}) is still running`);
}

export async function runCompaction(agent: AgentContext, plan: RegionPlan, deps: TransactionDeps): Promise<CompactionResult> {
  const session = agent.session;
  const surface = session.surface;
  if (plan.first < 0 || plan.last < plan.first || plan.last >= surface.nodes.length) {
    throw new CompactionError(
      'NOTHING_TO_COMPACT',
      `surface positions ${plan.first}…${plan.last} are not a span of the ${surface.nodes.length}-node surface`,
    );
  }
  const safe = safeCuts(surface.nodes.map((s) => deriveEventMessage(session.at(s)!)));
  if (!safe[plan.first] || !safe[plan.last + 1]) {
    const edge = !safe[plan.first] ? `its start (before surface position ${plan.first})` : `its end (after surface position ${plan.last})`;
    throw new CompactionError(
      'SPLITS_TOOL_PAIR',
      `the span ${plan.first}…${plan.last} would separate a tool call from its result at ${edge}`,
    );
  }
  assertUnlocked(agent);
  const shadowedSeqs = surface.nodes.slice(plan.first, plan.last + 1);
  const generation = surface.replaceGeneration;
  const shadowedTokenCount = shadowedSeqs.reduce((a, s) => a + nodeTokens(session, s), 0);
  const messages = shadowedSeqs.map((s) => deriveEventMessage(session.at(s)!)).filter((m): m is Message => m !== null);
  const compactionId = randomUUID();
  const owner = { compactionId, ...(plan.sourceCommandId !== undefined ? { sourceCommandId: plan.sourceCommandId } : {}) };
  const start = session.append('compaction/start', { ...owner, turn: plan.turn });
  const close = (error?: CompactionError): number =>
    session.append('compaction/end', { ...owner, turn: plan.turn, ...(error ? { error: agent.redact(error.logText()) } : {}) }).seq;

  let result: SummaryResult;
  try {
    result = await deps.summarizer({
      agent,
      compactionId,
      messages,
      shadowedSeqs,
      header: headerBefore(session, start.seq),
      maxTokens: deps.maxTokens,
      signal: deps.signal,
    });
    if (deps.signal.aborted) throw new CompactionError('ABORTED', 'the compaction was cancelled', undefined, { cause: deps.signal.reason });
  } catch (e) {
    const err =
      e instanceof CompactionError
        ? e
        : new CompactionError('SUMMARY_FAILED', e instanceof Error ? e.message : String(e), undefined, { cause: e });
    close(err);
    throw err;
  }

  const now = session.surface;
  const still = now.replaceGeneration === generation && now.nodes.slice(plan.first, plan.last + 1).every((s, i) => s === shadowedSeqs[i]);
  if (!still) {
    const err = new CompactionError('SURFACE_CHANGED', 'the history was rewritten while the summary was being made');
    close(err);
    throw err;
  }
  const checkpoint = checkpointMessage(result.summary, compactionId, plan.sourceCommandId);
  const checkpointTokens = estimateMessage(checkpoint);
  if (checkpointTokens >= shadowedTokenCount) {
    const err = new CompactionError(
      'SUMMARY_NOT_SMALLER',
      `the checkpoint (~${checkpointTokens} tokens) is not smaller than the ${shadowedSeqs.length} message(s) it would replace (~` +
        `${shadowedTokenCount} tokens)`,
    );
    close(err);
    throw err;
  }

  const range: ShadowedRange = { start: shadowedSeqs[0]!, end: shadowedSeqs[shadowedSeqs.length - 1]! };
  const record: CompactionSummaryData = {
    ...owner,
    summary: result.summary,
    shadowedRange: range,
    shadowedSeqs,
    shadowedTokenCount,
    provider: result.provider,
    model: result.model,
  };
  if (result.maxTokens !== undefined) record.maxTokens = result.maxTokens;
  if (result.usage !== undefined) record.usage = result.usage;
  if (result.rawOutput !== undefined) record.rawOutput = result.rawOutput;
  if (result.llmStreamCall) record.llmStreamCall = true;

  let summarySeq: number;
  let replaceSeq: number;
  try {
    summarySeq = session.append('compaction/summary', record).seq;
    replaceSeq = session.append('user/message', checkpoint, {
      surfaceOp: { op: 'replace', start: range.start, end: range.end },
      sourceEventSeqs: [start.seq, summarySeq, ...shadowedSeqs],
    }).seq;
  } catch (e) {
    const err = new CompactionError(
      'COMMIT_FAILED',
      `the checkpoint could not be appended: ${e instanceof Error ? e.message : String(e)}`,
      undefined,
      { cause: e },
    );
    close(err);
    throw err;
  }
  const endSeq = close();
  return {
    compactionId,
    startSeq: start.seq,
    summarySeq,
    replaceSeq,
    endSeq,
    summary: result.summary,
    shadowedRange: range,
    shadowedSeqs,
    shadowedTokenCount,
    checkpointTokens,
  };
}
