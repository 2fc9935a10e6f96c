/**
 * The store layer: sessions persisted as dsh JSONL logs (docs/store.md).
 */
export { SessionStore, type SessionStoreOptions, type CreateOptions, type ForkOptions, type Inspection } from './store.js';
export { StoredSession } from './stored-session.js';
export type {
  Store,
  OpenSession,
  OpenOptions,
  InspectOptions,
  Recovery,
  ErrorListener,
  StoreSessionInfo,
  StoreListing,
  StoreListProblem,
  StoreInspection,
} from './interface.js';
export { persist } from './plugin.js';
export { StoreError, type StoreErrorCode, type StoreErrorDetails, type LockHolder } from './errors.js';
export type { FlushResult, WriterIo } from './writer.js';
export type { SessionInfo, Listing, ListProblem } from './discover.js';
export { LISTING_CACHE_FILE, type ListingSummarizer } from './listing-cache.js';
export type { ListingGeneration } from './listing-index.js';
export { readLogFile, type LogLoad, type ReadLogOptions } from './load.js';
export { defaultRoot, encodeSegment, decodeSegment, projectKey, logPath, LOG_FILE, LOCK_FILE } from './layout.js';
export { lockHolder } from './lock.js';
