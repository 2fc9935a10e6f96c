/**
 * Naming a stored session on the command line: its full id, or a unique prefix of it (ids are
 * UUIDs, and nobody types 36 characters). Lookups list the store, which reads only each log's
 * header line, so they stay fast however big the logs are.
 */
import { existsSync } from 'node:fs';
import type { SessionInfo, Store, StoreListing, StoreSessionInfo } from '../store/index.js';
import { CliError } from './errors.js';
import { registerLoaded, STDIN } from './loaded-logs.js';

/**
 * The store, loaded on first use: `dsh log show FILE` (a path) never needs it, and the store and
 * config layers are a good part of a command's start-up.
 */
async function openStore(env: NodeJS.ProcessEnv): Promise<Store> {
  const { storeFor } = await import('./store.js');
  return storeFor(env);
}

/** The shortest prefix accepted, so a stray short word never matches by accident. */
export const MIN_PREFIX = 4;

/** The session `ref` names: an exact id first, then a unique prefix. */
export async function findSession(store: Store, ref: string): Promise<StoreSessionInfo> {
  return pickSession(await store.list(), ref, store.location);
}

/**
 * `findSession` over a listing already read, for commands that list the store anyway (lineage):
 * one listing, not two, so the target and the tree come from the same moment of the store.
 */
export function pickSession(listing: Pick<StoreListing, 'sessions' | 'problems'>, ref: string, location: string): StoreSessionInfo {
  const { sessions, problems } = listing;
  const exact = sessions.find((s) => s.id === ref);
  if (exact) return exact;
  const matches = ref.length >= MIN_PREFIX ? sessions.filter((s) => s.id.startsWith(ref)) : [];
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) {
    const ids = matches
      .slice(0, 5)
      .map((s) => s.id)
      .join(', ');
    throw new CliError(
      'AMBIGUOUS_SESSION',
      `${matches.length} sessions start with "${ref}" (${ids}${matches.length > 5 ? ', …' : ''}); give more of the id`,
    );
  }
  // A session stored compressed is not listed, but it is there: say so rather than "not found".
  const compressed = problems.filter((p) => p.error.code === 'COMPRESSED_LOG' && matchesRef(p.error.details.sessionId, ref));
  if (compressed.length === 1) throw compressed[0]!.error;
  const hint = ref.length < MIN_PREFIX ? ` (a prefix needs at least ${MIN_PREFIX} characters)` : '';
  throw new CliError('SESSION_NOT_FOUND', `no session "${ref}" under ${location}${hint}; dsh sessions list shows them`);
}

const matchesRef = (id: string | undefined, ref: string): boolean =>
  id !== undefined && (id === ref || (ref.length >= MIN_PREFIX && id.startsWith(ref)));

/** Could `arg` be a session id rather than a path? Paths have a separator or a .jsonl name. */
function idLike(arg: string): boolean {
  return arg !== '' && !/[\\/]/.test(arg) && !arg.endsWith('.jsonl');
}

/**
 * What an argument names when the command reads a database session itself (the viewer follows
 * it): a file path as `resolveLogArg` gives it, or the database store and the session's id. The
 * caller closes the store.
 */
export async function resolveSessionArg(arg: string, env: NodeJS.ProcessEnv): Promise<{ path: string } | { store: Store; id: string }> {
  if (arg === STDIN || existsSync(arg) || !idLike(arg)) return { path: arg };
  const store = await openStore(env);
  if (store.kind === 'jsonl') return { path: await resolveLogArg(arg, env) };
  try {
    return { store, id: (await findSession(store, arg)).id };
  } catch (e) {
    await store.close();
    if (e instanceof CliError && e.code === 'SESSION_NOT_FOUND') return { path: arg };
    throw e;
  }
}

/**
 * What a `dsh log` argument names: a file when one exists at that path (a path always wins),
 * otherwise the log of the stored session with that id or prefix. Anything else is returned as
 * given, so the file error ("no such file") names it. A session in a database is loaded here
 * (the log commands read synchronously) and handed to `readLog` under its location.
 */
export async function resolveLogArg(arg: string, env: NodeJS.ProcessEnv): Promise<string> {
  if (arg === STDIN || existsSync(arg) || !idLike(arg)) return arg;
  const store = await openStore(env);
  try {
    const info = await findSession(store, arg);
    if (store.kind === 'jsonl') return (info as SessionInfo).path;
    const log = await store.inspect(info.id);
    registerLoaded(log.location, log);
    return log.location;
  } catch (e) {
    if (e instanceof CliError && e.code === 'SESSION_NOT_FOUND') return arg;
    throw e;
  } finally {
    if (store.kind !== 'jsonl') await store.close();
  }
}
