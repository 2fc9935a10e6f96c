/**
 * The sessions root (`$DSH_HOME/sessions`, `~/.dsh/sessions` by default) checked before the store
 * touches it, so a `DSH_HOME` that names a file, lies under a file, or cannot be created is one
 * line naming the variable, not a raw `ENOTDIR … mkdir` from deep inside the store. Creating it
 * here one directory at a time also avoids Node's recursive mkdir, which spins forever under a
 * pseudo-filesystem such as /proc.
 */
import { nodeCrypto } from '../model/node-crypto.js';
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fsyncDir } from '../store/durable.js';
import { defaultRoot } from '../store/layout.js';
import { CliError } from './errors.js';

function homeName(root: string, env: NodeJS.ProcessEnv): string {
  const home = dirname(root);
  return env.DSH_HOME?.trim() ? `DSH_HOME (${home})` : `the dsh home ${home} (set DSH_HOME to use another)`;
}

function reason(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EROFS':
      return 'read-only file system';
    case 'ENOTDIR':
      return 'a parent is not a directory';
    default:
      return code ?? (e as Error).message;
  }
}

/** The nearest existing path at or above `path`, and the missing ones below it (outermost first). */
function existing(path: string): { at: string; isDir: boolean; missing: string[] } {
  const missing: string[] = [];
  for (let p = path; ; p = dirname(p)) {
    try {
      return { at: p, isDir: statSync(p).isDirectory(), missing };
    } catch (e) {
      // ENOTDIR: something above is a file; keep climbing to name it.
      const code = (e as NodeJS.ErrnoException).code;
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || dirname(p) === p) throw e;
      missing.unshift(p);
    }
  }
}

/**
 * Refuse a sessions root that cannot hold sessions: something on its path is not a directory,
 * or (with `create`) it is missing and cannot be made. `create` makes it (mode 0700).
 */
export function checkSessionsRoot(root: string, env: NodeJS.ProcessEnv, opts: { create?: boolean } = {}): void {
  const name = homeName(root, env);
  let found: ReturnType<typeof existing>;
  try {
    found = existing(root);
  } catch (e) {
    throw new CliError('HOME_UNUSABLE', `${name} cannot be used: ${reason(e)}`, { cause: e });
  }
  if (!found.isDir) {
    throw new CliError('HOME_UNUSABLE', `${name} cannot be used: ${found.at} is not a directory; point DSH_HOME at a directory`);
  }
  if (!opts.create) return;
  for (const dir of found.missing) {
    try {
      mkdirSync(dir, { mode: 0o700 });
      // As the store's mkdirDurable does: the new entry must survive a power loss, or every
      // session written (and fsynced) under it could vanish with it.
      fsyncDir(dirname(dir));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw new CliError('HOME_UNUSABLE', `${name} cannot be used: cannot create ${dir}: ${reason(e)}`, { cause: e });
    }
  }
  try {
    accessSync(root, constants.W_OK);
  } catch (e) {
    throw new CliError('HOME_UNUSABLE', `${name} cannot be used: cannot write to ${root}: ${reason(e)}`, { cause: e });
  }
}

/** Where the search index lives: beside the sessions, under `$DSH_HOME/search`. */
export function indexPath(env: NodeJS.ProcessEnv): string {
  return join(dirname(defaultRoot(env)), 'search', 'index.sqlite');
}

/**
 * Where `dsh chat` keeps a workspace's prompt history: under `$DSH_HOME/chat-history`, one file
 * per workspace (named by a digest of its path), never inside the workspace itself.
 */
export function chatHistoryPath(env: NodeJS.ProcessEnv, workspace: string): string {
  const id = nodeCrypto().createHash('sha256').update(workspace).digest('hex').slice(0, 32);
  return join(dirname(defaultRoot(env)), 'chat-history', `${id}.jsonl`);
}
