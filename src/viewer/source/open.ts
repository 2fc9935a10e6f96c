/**
 * From what `startViewer` was given to a `LogSource`: a file path, a session of a store (its
 * live in-process handle when this process has it open, otherwise its file or its rows,
 * followed), or a `Session` object.
 */
import { resolve } from 'node:path';
import { Session } from '../../session/index.js';
import { StoreError, type Store } from '../../store/index.js';
import type { PgStore } from '../../postgres/store.js';
import { ViewerError } from '../errors.js';
import { FileSource, assertFile, type FileSourceOptions } from './file.js';
import { SessionSource, type LogSource } from './source.js';
import { PgSource } from './postgres.js';

export type ViewerSource = string | { path: string } | { sessionId: string; store: Store; cwd?: string } | Session;

export async function openSource(source: ViewerSource, opts: FileSourceOptions = {}): Promise<LogSource> {
  if (source instanceof Session) return new SessionSource(source);
  if (typeof source === 'string') return openFile(source, opts);
  if (typeof source === 'object' && source !== null) {
    if ('path' in source && typeof source.path === 'string') return openFile(source.path, opts);
    if ('sessionId' in source && typeof source.sessionId === 'string' && source.store)
      return openStored(source.sessionId, source.store, source.cwd, opts);
  }
  throw new ViewerError('INVALID_SOURCE', 'source must be a log file path, {path}, {sessionId, store} or a Session');
}

function openFile(path: string, opts: FileSourceOptions): FileSource {
  const abs = resolve(path);
  assertFile(abs);
  return FileSource.open(abs, opts);
}

async function openStored(id: string, store: Store, cwd: string | undefined, opts: FileSourceOptions): Promise<LogSource> {
  // Open for writing in this process: read the live session itself (it holds what is not yet flushed).
  const handle = store.handle(id);
  if (handle) return new SessionSource(handle.session, { label: id, warnings: handle.warnings });
  if (store.kind === 'postgres') {
    if (cwd !== undefined) await store.inspect(id, { cwd, repair: false }); // SESSION_NOT_FOUND under another cwd
    return PgSource.open(store as PgStore, id, opts.knownTypes ? { knownTypes: opts.knownTypes } : {});
  }
  const listing = await store.list();
  const found = listing.sessions.filter((s) => s.id === id && (cwd === undefined || s.header.cwd === cwd));
  if (found.length === 1) return openFile(found[0]!.location, opts);
  if (found.length > 1) {
    throw new StoreError(
      'AMBIGUOUS_SESSION',
      `session ${JSON.stringify(id)} appears in ${found.length} project directories: ${found.map((s) => s.location).join(', ')}`,
      { path: found[0]!.location, sessionId: id },
    );
  }
  const problem = listing.problems.find((p) => p.error.details.sessionId === id);
  if (problem) throw problem.error;
  throw new StoreError('SESSION_NOT_FOUND', `no session ${JSON.stringify(id)} under ${store.location}`, {
    path: store.location,
    sessionId: id,
  });
}
