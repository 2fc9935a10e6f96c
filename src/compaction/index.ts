/**
 * Compaction: when the history outgrows the model's context window, the oldest
 * part of it is summarised by the model and replaced, on the surface, by one checkpoint message.
 * The log keeps everything; only the derived history shrinks. See docs/compaction.md.
 */
export { compaction, compactNow, engineFor, CompactionEngine, type CompactionOptions, type CompactOptions } from './engine.js';
export { runCompactCommand, describeResult, type CompactCommandOutcome } from './command.js';
export { runCompaction, type CompactionResult, type RegionPlan } from './transaction.js';
export { modelSummarizer, summaryConfig, type Summarizer, type SummarizeInput, type SummaryResult } from './summarize.js';
export {
  measure,
  estimateText,
  estimateBlocks,
  estimateMessage,
  estimateMessages,
  estimateHeader,
  ASCII_CHARS_PER_TOKEN,
  MESSAGE_OVERHEAD_TOKENS,
  TOOL_BLOCK_OVERHEAD_TOKENS,
  TOOL_SCHEMA_OVERHEAD_TOKENS,
  IMAGE_TOKENS,
  type TokenMeasurement,
  type MeasureOptions,
  type NodeTokens,
} from './meter.js';
export { safeCuts, chooseCut, type RegionMode, type RegionInput } from './boundaries.js';
export { openCompaction } from './tracker.js';
export {
  CHECKPOINT_PLUGIN,
  CHECKPOINT_PREAMBLE,
  SUMMARY_INSTRUCTION,
  SUMMARY_OPEN,
  SUMMARY_CLOSE,
  checkpointContent,
  checkpointSource,
  checkpointMessage,
  isCheckpointSource,
} from './checkpoint.js';
export { compactionConfigSchema, compactionConfigShape } from './config.js';
export {
  checkCompactionConfig,
  mergeCompactionConfig,
  resolvePolicy,
  retainBudget,
  DEFAULTS as COMPACTION_DEFAULTS,
  type CompactionConfig,
  type CompactionPolicy,
  type ConfigIssue as CompactionConfigIssue,
} from './policy.js';
export { CompactionError, type CompactionErrorCode } from './errors.js';
export { replayCompactions, recordedBrackets, type RecordedBracket, type BracketPlace } from './replay-compactions.js';
export type { CompactionTrigger } from './hooks.js';
