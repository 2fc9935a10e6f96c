/**
 * The PostgreSQL store (docs/scale.md): the `Store` interface on a database, with leases that
 * fence a writer that lost its session, forks as pointers, and live tails across machines. The
 * `pg` driver is loaded on first use only.
 */
export { PgStore, DEFAULT_LEASE_MS, type PgStoreOptions } from './store.js';
export { PgOpenSession, type LeaseLostListener } from './open-session.js';
export type { Lease } from './lease.js';
export { inputMessageId, inputIdOf, INPUT_KINDS, type InputKind, type QueuedInput, type Claimed } from './queue.js';
export type { StoredRow, TailOptions, Tail } from './follow.js';
export { redactUrl } from './connect.js';
export { SCHEMA_VERSION } from './schema.js';
