/**
 * Naming a stored session on the command line: its full id, or a unique prefix of it (ids are
 * UUIDs, and nobody types 36 characters). Lookups list the store, which reads only each log's
 * header line, so they stay fast however big the logs are.
 */
import { existsSync } from 'node:fs';
import { SessionStore, defaultRoot, type SessionInfo } from '../store/index.js';
import { CliError } from './errors.js';
import { checkSessionsRoot } from './home.js';
import { STDIN } from './read-log.js';

/** The shortest prefix accepted, so a stray short word never matches by accident. */
export const MIN_PREFIX = 4;

/** The store under `$DSH_HOME/sessions`; HOME_UNUSABLE when that path cannot be a directory. */
export function storeFor(env: NodeJS.ProcessEnv): SessionStore {
  const root = defaultRoot(env);
  checkSessionsRoot(root, env);
  return new SessionStore({ root });
}

/** The session `ref` names: an exact id first, then a unique prefix. */
export async function findSession(store: SessionStore, ref: string): Promise<SessionInfo> {
  const { sessions, problems } = await store.list();
  const exact = sessions.find((s) => s.id === ref);
  if (exact) return exact;
  const matches = ref.length >= MIN_PREFIX ? sessions.filter((s) => s.id.startsWith(ref)) : [];
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) {
    const ids = matches.slice(0, 5).map((s) => s.id).join(', ');
    throw new CliError('AMBIGUOUS_SESSION', `${matches.length} sessions start with "${ref}" (${ids}${matches.length > 5 ? ', …' : ''}); give more of the id`);
  }
  // A session stored compressed is not listed, but it is there: say so rather than "not found".
  const compressed = problems.filter((p) => p.error.code === 'COMPRESSED_LOG' && matchesRef(p.error.details.sessionId, ref));
  if (compressed.length === 1) throw compressed[0]!.error;
  const hint = ref.length < MIN_PREFIX ? ` (a prefix needs at least ${MIN_PREFIX} characters)` : '';
  throw new CliError('SESSION_NOT_FOUND', `no session "${ref}" under ${store.root}${hint}; dsh sessions list shows them`);
}

const matchesRef = (id: string | undefined, ref: string): boolean => id !== undefined && (id === ref || (ref.length >= MIN_PREFIX && id.startsWith(ref)));

/** Could `arg` be a session id rather than a path? Paths have a separator or a .jsonl name. */
function idLike(arg: string): boolean {
  return arg !== '' && !/[\\/]/.test(arg) && !arg.endsWith('.jsonl');
}

/**
 * What a `dsh log` argument names: a file when one exists at that path (a path always wins),
 * otherwise the log of the stored session with that id or prefix. Anything else is returned as
 * given, so the file error ("no such file") names it.
 */
export async function resolveLogArg(arg: string, env: NodeJS.ProcessEnv): Promise<string> {
  if (arg === STDIN || existsSync(arg) || !idLike(arg)) return arg;
  try {
    return (await findSession(storeFor(env), arg)).path;
  } catch (e) {
    if (e instanceof CliError && e.code === 'SESSION_NOT_FOUND') return arg;
    throw e;
  }
}
