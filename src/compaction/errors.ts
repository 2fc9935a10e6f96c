/**
 * Compaction failures, each with a stable code. A failure after `compaction/start` is also written
 * to the log as `compaction/end.error` (`CODE: message`), so the log alone says why an attempt
 * left the history as it was.
 */
import { CodedError } from '../model/coded-error.js';
import type { LlmFailure } from '../model/failure.js';

export type CompactionErrorCode =
  /** Another compaction holds the lock (an unmatched `compaction/start` since the latest seed). */
  | 'BUSY'
  /** Manual compaction asked for while a turn runs. */
  | 'NOT_IDLE'
  /** No balanced older span can be summarised (too little history, or one indivisible unit). */
  | 'NOTHING_TO_COMPACT'
  /** A span's start or end would separate a tool call from its result. */
  | 'SPLITS_TOOL_PAIR'
  /** No adapter serves the summariser's provider. */
  | 'NO_ADAPTER'
  /** The summariser's model call failed; `failure` holds the provider's failure. */
  | 'SUMMARY_FAILED'
  /** The summariser returned no text. */
  | 'SUMMARY_EMPTY'
  /** The summariser hit its output cap: a cut-off summary would silently lose context. */
  | 'SUMMARY_TRUNCATED'
  /** The checkpoint would not be smaller than the history it replaces. */
  | 'SUMMARY_NOT_SMALLER'
  /** The span chosen at the start is no longer where it was on the surface. */
  | 'SURFACE_CHANGED'
  /** The replace event itself was refused by the session. */
  | 'COMMIT_FAILED'
  /** Cancelled while the summary was being made. */
  | 'ABORTED'
  /** A configuration value is out of range or contradicts another. */
  | 'INVALID_CONFIG';

export class CompactionError extends CodedError<CompactionErrorCode> {
  constructor(
    code: CompactionErrorCode,
    message: string,
    readonly failure?: LlmFailure,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
    this.name = 'CompactionError';
  }

  /** The text recorded in `compaction/end.error`. */
  logText(): string {
    return `${this.code}: ${this.message}`;
  }
}
