/**
 * The workspace a command names (`--cwd`, default the current directory), as its real path. Its
 * own module so commands that only need this (search) do not load the agent.
 */
import { realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { CliError } from './errors.js';

/** process.cwd(), which throws a bare `ENOENT … uv_cwd` when the directory was removed. */
function currentDir(): string {
  try {
    return process.cwd();
  } catch (e) {
    throw new CliError('NOT_A_DIRECTORY', 'the current directory no longer exists (removed?); cd to one, or give --cwd', { cause: e });
  }
}

/** The workspace as an absolute, symlink-free path (what the session header and store key use). */
export function workspaceDir(dir: string | undefined): string {
  const path = resolve(dir ?? currentDir());
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    throw new CliError('NOT_A_DIRECTORY', 'no such directory', { file: path });
  }
  if (!statSync(real).isDirectory()) throw new CliError('NOT_A_DIRECTORY', 'not a directory', { file: path });
  return real;
}
