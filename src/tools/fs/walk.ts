/**
 * A directory walker that never leaves the tree it starts in: symbolic links are neither
 * followed nor listed (as ripgrep does by default), so a link to `/etc` inside the workspace
 * cannot smuggle outside files into a listing or a search. VCS metadata is always skipped;
 * `.gitignore` rules are honoured on request, including those of directories between the
 * workspace root and the starting directory.
 *
 * Confined walks (`base` given) open every directory through verified handles from `base`
 * (`beneath.ts`), and yield each file together with the open handle of its directory, valid until
 * the next entry is asked for: a reader opens the file inside that handle, so a directory swapped
 * for a link mid-walk is never entered and a file is never reached through one.
 */
import { constants } from 'node:fs';
import { lstat, open, readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { FsEntry } from './hooks.js';
import { IgnoreStack, VCS_DIRS } from './gitignore.js';
import { at, dirPath, openDirBeneath, openIn, type Dir } from './beneath.js';

export interface WalkOptions {
  /** Workspace root: `.gitignore` files are read from here down. */
  root: string;
  /**
   * The real root the walk was confined to: directories are opened beneath it through verified
   * handles. Absent: plain paths (an unconfined seam).
   */
  base?: string;
  gitignore: boolean;
  signal?: AbortSignal;
}

/** A file the walk found, with the handle of its directory (open until the next entry). */
export interface WalkEntry extends FsEntry {
  /** Its name inside `dir`. */
  name: string;
  dir: Dir;
  nlink: number;
}

const toPosix = (p: string): string => p.split(sep).join('/');

async function openDir(path: string, base: string | undefined): Promise<Dir | undefined> {
  try {
    if (base === undefined) return { fh: await open(path, constants.O_RDONLY | constants.O_DIRECTORY), path };
    const rel = relative(base, path);
    return await openDirBeneath(base, rel === '' ? [] : rel.split(sep), 'list', path);
  } catch {
    return undefined; // unreadable (or changed) directories are skipped, as ripgrep skips unreadable ones
  }
}

/** A regular `.gitignore` in `dir` (never through a link), or undefined. */
async function readIgnore(dir: Dir): Promise<string | undefined> {
  let fh;
  try {
    fh = await openIn(dir, '.gitignore', constants.O_RDONLY | constants.O_NONBLOCK, 'read', join(dir.path, '.gitignore'));
    if (!(await fh.stat()).isFile()) return undefined;
    return await fh.readFile('utf8');
  } catch {
    return undefined;
  } finally {
    await fh?.close();
  }
}

async function ignoreAt(path: string, base: string | undefined): Promise<string | undefined> {
  const dir = await openDir(path, base);
  if (!dir) return undefined;
  try {
    return await readIgnore(dir);
  } finally {
    await dir.fh.close();
  }
}

/** Yield every regular file below `start` (a real directory), paths relative to `start`. */
export async function* walkFiles(start: string, opts: WalkOptions): AsyncGenerator<WalkEntry> {
  const stack = new IgnoreStack();
  const startRel = toPosix(relative(opts.root, start));
  const underRoot = startRel === '' || !startRel.startsWith('..');
  if (opts.gitignore && underRoot && startRel !== '') {
    // Rules of the directories above the start apply to it too.
    const parts = startRel.split('/');
    for (let i = 0; i < parts.length; i++) {
      const text = await ignoreAt(join(opts.root, ...parts.slice(0, i)), opts.base);
      if (text !== undefined) stack.add(parts.slice(0, i).join('/'), text);
    }
  }
  const rootRel = (p: string): string => (underRoot ? toPosix(relative(opts.root, p)) : toPosix(relative(start, p)));
  const dirs: string[] = [start];
  while (dirs.length > 0) {
    opts.signal?.throwIfAborted();
    const path = dirs.shift()!;
    const dir = await openDir(path, opts.base);
    if (!dir) continue;
    try {
      if (opts.gitignore) {
        const text = await readIgnore(dir);
        if (text !== undefined) stack.add(rootRel(path), text);
      }
      let names: string[];
      try {
        names = (await readdir(dirPath(dir))).sort();
      } catch {
        continue;
      }
      for (const name of names) {
        let st;
        try {
          st = await lstat(at(dir, name));
        } catch {
          continue;
        }
        if (st.isSymbolicLink()) continue;
        const full = join(path, name);
        const isDir = st.isDirectory();
        if (isDir && VCS_DIRS.has(name)) continue;
        if (opts.gitignore && stack.ignored(rootRel(full), isDir)) continue;
        if (isDir) dirs.push(full);
        else if (st.isFile())
          yield { path: toPosix(relative(start, full)), type: 'file', size: st.size, mtimeMs: st.mtimeMs, name, dir, nlink: st.nlink };
      }
    } finally {
      await dir.fh.close();
    }
  }
}
