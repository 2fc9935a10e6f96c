/**
 * A directory walker that never leaves the tree it starts in: symbolic links are neither
 * followed nor listed (as ripgrep does by default), so a link to `/etc` inside the workspace
 * cannot smuggle outside files into a listing or a search. VCS metadata is always skipped;
 * `.gitignore` rules are honoured on request, including those of directories between the
 * workspace root and the starting directory.
 */
import { lstat, readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { FsEntry } from './hooks.js';
import { IgnoreStack, VCS_DIRS } from './gitignore.js';

export interface WalkOptions {
  /** Workspace root: `.gitignore` files are read from here down. */
  root: string;
  gitignore: boolean;
  signal?: AbortSignal;
}

async function readIgnore(dir: string): Promise<string | undefined> {
  try {
    return await readFile(join(dir, '.gitignore'), 'utf8');
  } catch {
    return undefined;
  }
}

const toPosix = (p: string): string => p.split(sep).join('/');

/** Yield every regular file below `start` (a real directory), paths relative to `start`. */
export async function* walkFiles(start: string, opts: WalkOptions): AsyncGenerator<FsEntry> {
  const stack = new IgnoreStack();
  const startRel = toPosix(relative(opts.root, start));
  const underRoot = startRel === '' || !startRel.startsWith('..');
  if (opts.gitignore && underRoot && startRel !== '') {
    // Rules of the directories above the start apply to it too.
    const parts = startRel.split('/');
    for (let i = 0; i < parts.length; i++) {
      const rel = parts.slice(0, i).join('/');
      const text = await readIgnore(join(opts.root, ...parts.slice(0, i)));
      if (text !== undefined) stack.add(rel, text);
    }
  }
  const rootRel = (p: string): string => (underRoot ? toPosix(relative(opts.root, p)) : toPosix(relative(start, p)));
  const dirs: string[] = [start];
  while (dirs.length > 0) {
    opts.signal?.throwIfAborted();
    const dir = dirs.shift()!;
    if (opts.gitignore) {
      const text = await readIgnore(dir);
      if (text !== undefined) stack.add(rootRel(dir), text);
    }
    let names: string[];
    try {
      names = (await readdir(dir)).sort();
    } catch {
      continue; // unreadable directories are skipped, as ripgrep does
    }
    for (const name of names) {
      const full = join(dir, name);
      let st;
      try {
        st = await lstat(full);
      } catch {
        continue;
      }
      if (st.isSymbolicLink()) continue;
      const isDir = st.isDirectory();
      if (isDir && VCS_DIRS.has(name)) continue;
      if (opts.gitignore && stack.ignored(rootRel(full), isDir)) continue;
      if (isDir) dirs.push(full);
      else if (st.isFile()) yield { path: toPosix(relative(start, full)), type: 'file', size: st.size, mtimeMs: st.mtimeMs };
    }
  }
}
