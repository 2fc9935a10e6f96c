export * from './events.js';
export * from './errors.js';
export { snapshotJson, freezeJsonInPlace, isLosslessJson, stringifyJson, preview } from './json.js';
export { SurfaceState, foldSurface, deepEqual, type SurfaceReplacement } from './surface.js';
export { TraceState } from './trace.js';
export { deriveEventMessage, deriveMessagesFrom, MessageProjection } from './derive.js';
export { validateEventData, validateEnvelope, PLACEHOLDER, type ValidationOptions } from './validate.js';
export { validateHeader } from './header.js';
export { canonicalHeader, headerEquals, foldRequestHeader } from './request-header.js';
export { interruptedTurnClosers, TOOL_NOT_STARTED_TEXT, TOOL_OUTCOME_UNKNOWN_TEXT, type EventDraft } from './repair.js';
export {
  Session,
  isChunkRun,
  type ChunkRunView,
  type SessionOptions,
  type SeedOptions,
  type SessionListener,
  type PreCommitCheck,
  type EventCandidate,
} from './session.js';
export * from './codec/rows.js';
export * from './codec/jsonl.js';
export {
  loadJsonl,
  loadJsonlFile,
  loadJsonlFd,
  loadJsonlLines,
  type LoadOptions,
  type FileLoadOptions,
  type LoadedLog,
} from './codec/load.js';
export {
  buildResumeIndex,
  fileStamp,
  loadJsonlIndexed,
  parseResumeIndex,
  restatResumeIndex,
  sameStamp,
  serializeResumeIndex,
  RESUME_INDEX_FORMAT,
  RESUME_INDEX_VERSION,
  type ResumeIndex,
  type FileStamp,
  type IndexedLoad,
  type IndexEntry,
  type KeptEntry,
  type RunEntry,
} from './codec/resume-index.js';
