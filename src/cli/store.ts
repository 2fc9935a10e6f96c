/**
 * Which store the CLI uses: `DSH_STORE` when set (a `postgres://…` URL), else the user config's
 * `store` key (a project config may not set it: a repository must not choose where your sessions
 * go), else the JSONL files under `$DSH_HOME/sessions`. `DSH_STORE_SCHEMA` names the PostgreSQL
 * schema (default `dsh`). The PostgreSQL store's modules (and the driver) are imported only when
 * it is the one chosen.
 */
import { configLocations, readConfigFile, maskUrlPassword } from '../config/config.js';
import { SessionStore, defaultRoot, type Store } from '../store/index.js';
import type { PgStore } from '../postgres/store.js';
import { CliError } from './errors.js';
import { checkSessionsRoot } from './home.js';

export type StoreChoice = { kind: 'jsonl'; root: string } | { kind: 'postgres'; url: string; schema: string; from: 'DSH_STORE' | 'config' };

const PG_URL = /^postgres(ql)?:\/\//;

export async function storeChoice(env: NodeJS.ProcessEnv): Promise<StoreChoice> {
  const schema = env.DSH_STORE_SCHEMA?.trim() || 'dsh';
  const fromEnv = env.DSH_STORE?.trim();
  if (fromEnv) {
    if (!PG_URL.test(fromEnv)) {
      throw new CliError(
        'USAGE',
        'DSH_STORE must be a postgres:// URL (or unset, for the JSONL files under $DSH_HOME/sessions), not ' +
          `${JSON.stringify(maskUrlPassword(fromEnv))}`,
      );
    }
    return { kind: 'postgres', url: fromEnv, schema, from: 'DSH_STORE' };
  }
  const user = await readConfigFile(configLocations(process.cwd(), env).user);
  if (user?.store) return { kind: 'postgres', url: user.store, schema, from: 'config' };
  return { kind: 'jsonl', root: defaultRoot(env) };
}

/**
 * The store the environment chooses. For the JSONL store, HOME_UNUSABLE when its root cannot be
 * a directory (and, with `create`, it is made).
 */
export async function storeFor(
  env: NodeJS.ProcessEnv,
  opts: { create?: boolean; role?: 'worker' | 'client'; leaseMs?: number; listingIndex?: boolean } = {},
): Promise<Store> {
  const choice = await storeChoice(env);
  if (choice.kind === 'jsonl') {
    checkSessionsRoot(choice.root, env, opts.create ? { create: true } : {});
    // The listing index (default on) trusts what dsh's own writers announced; a command that
    // reads every log it lists anyway asks for the full scan instead (`listingIndex: false`).
    return new SessionStore({ root: choice.root, listingIndex: opts.listingIndex ?? true });
  }
  const { PgStore } = await import('../postgres/store.js');
  return new PgStore({
    url: choice.url,
    schema: choice.schema,
    ...(opts.role ? { role: opts.role } : {}),
    ...(opts.leaseMs !== undefined ? { leaseMs: opts.leaseMs } : {}),
  });
}

/** The PostgreSQL store the environment chooses; a command that needs one says so otherwise. */
export async function pgStoreFor(
  env: NodeJS.ProcessEnv,
  command: string,
  opts: { role?: 'worker' | 'client'; leaseMs?: number } = {},
): Promise<PgStore> {
  const choice = await storeChoice(env);
  if (choice.kind !== 'postgres') {
    throw new CliError(
      'NEEDS_POSTGRES',
      `${command} needs the PostgreSQL store: set DSH_STORE=postgres://user@host/db (or "store" in ` +
        `${configLocations(process.cwd(), env).user}); see docs/scale.md`,
    );
  }
  return (await storeFor(env, opts)) as PgStore;
}

export function isPg(store: Store): store is PgStore {
  return store.kind === 'postgres';
}
