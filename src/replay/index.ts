/** LLM-free replay of recorded sessions: the harness, the log comparison and the recording index. */
export { replaySession, type ReplaySessionOptions, type ReplayResult } from './harness.js';
export {
  compareLogs,
  MUST_MATCH,
  type LogComparison,
  type LogDifference,
  type MustMatchCategory,
  type EventTally,
  type PlaceholderNote,
} from './compare.js';
export {
  indexRecording,
  type RecordedLog,
  type RecordedTurn,
  type RecordedStep,
  type RecordedAttempt,
  type RecordedToolCall,
  type InboxClaim,
} from '../session/recording.js';
export { assessReplay, turnWake, recordedCancelCause, type TurnWake } from './plan.js';
export { replayTools, recordedToolSchemas } from './tools.js';
export { firstDifference, type JsonDifference, type PlaceholderHit } from '../session/json-diff.js';
export {
  ReplayAdapter,
  ReplayError,
  recordedEvents,
  type ReplayAdapterOptions,
  type ReplayMode,
  type ReplaySource,
  type RequestDivergence,
  type PlaceholderMatch,
  type ReplayPosition,
} from '../llm/replay-adapter.js';
