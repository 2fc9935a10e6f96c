/**
 * Workers (docs/scale.md): run sessions of the PostgreSQL store for whoever queues input, any
 * number of them on any number of hosts, taking over from each other.
 */
export { Worker, TAKEOVER_NOTICE, type WorkerAgent, type WorkerOptions } from './worker.js';
