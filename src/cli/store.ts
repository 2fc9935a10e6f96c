/**
 * The store the CLI uses, opened: the one src/cli/store-choice.ts chooses. The PostgreSQL store's
 * modules (and the driver) are imported only when it is the one chosen.
 */
import { userConfigFile } from '../config/config.js';
import { SessionStore, type Store } from '../store/index.js';
import type { PgStore } from '../postgres/store.js';
import { CliError } from './errors.js';
import { checkSessionsRoot } from './home.js';
import { storeChoice, type StoreChoice } from './store-choice.js';

export { isPg, storeChoice, type StoreChoice } from './store-choice.js';

/**
 * The store the environment chooses. For the JSONL store, HOME_UNUSABLE when its root cannot be
 * a directory (and, with `create`, it is made).
 */
export async function storeFor(
  env: NodeJS.ProcessEnv,
  opts: { create?: boolean; role?: 'worker' | 'client'; leaseMs?: number; listingIndex?: boolean } = {},
  chosen?: StoreChoice,
): Promise<Store> {
  const choice = chosen ?? (await storeChoice(env));
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
        `${userConfigFile(env)}); see docs/scale.md`,
    );
  }
  return (await storeFor(env, opts)) as PgStore;
}
