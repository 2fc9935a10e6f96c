/**
 * Which store the CLI uses: `DSH_STORE` when set (a `postgres://…` URL), else the user config's
 * `store` key (a project config may not set it: a repository must not choose where your sessions
 * go), else the JSONL files under `$DSH_HOME/sessions`. `DSH_STORE_SCHEMA` names the PostgreSQL
 * schema (default `dsh`).
 *
 * Apart from src/cli/store.ts, which opens the store, because the choice alone is light: `dsh
 * sessions` makes it, then prints a kept listing (or says nothing is stored) without loading the
 * store's code, most of that command's start-up.
 */
import { readConfigFile, maskUrlPassword, userConfigFile } from '../config/config.js';
import { defaultRoot } from '../store/layout.js';
import type { Store } from '../store/index.js';
import type { PgStore } from '../postgres/store.js';
import { CliError } from './errors.js';

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
    return pgChoice(fromEnv, schema, 'DSH_STORE');
  }
  // Not through configLocations: the current directory is not needed (and throws when removed).
  const user = await readConfigFile(userConfigFile(env));
  if (user?.store) return pgChoice(user.store, schema, 'config');
  return { kind: 'jsonl', root: defaultRoot(env) };
}

/**
 * The schema name is part of the choice, refused here like a bad DSH_STORE: a command that looks
 * at its own arguments (`dsh sessions --cwd`) before it opens the store still names a bad
 * DSH_STORE_SCHEMA first, as it did when the store's constructor was the first to check it.
 * Imported only here: the JSONL store never loads the PostgreSQL modules.
 */
async function pgChoice(url: string, schema: string, from: 'DSH_STORE' | 'config'): Promise<StoreChoice> {
  const { checkSchemaName } = await import('../postgres/schema.js');
  checkSchemaName(schema);
  return { kind: 'postgres', url, schema, from };
}

/** Is this the PostgreSQL store? */
export function isPg(store: Store): store is PgStore {
  return store.kind === 'postgres';
}
