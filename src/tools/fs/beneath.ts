/**
 * Acting on what confinement checked. Confinement resolves a requested path to a real path inside
 * an allowed root, but a path is only a name: between that check and the open, a concurrent
 * process (the agent's own background `bash`, say) can swap a directory for a symbolic link, or
 * exchange two entries with `renameat2(RENAME_EXCHANGE)`, and the open would follow the new entry
 * out of the workspace.
 *
 * So the terminals never open a confined path by name. They walk it from the root one component
 * at a time, each step opened *relative to the directory handle of the step before* with
 * `O_NOFOLLOW`: on Linux, opening `/proc/self/fd/<dirfd>/<name>` resolves `<name>` inside the
 * very directory the descriptor holds (the magic link is that directory, not a path to re-resolve),
 * which is `openat(dirfd, name, O_NOFOLLOW)` from Node. A component that became a link fails the
 * step (`FS_PATH_CHANGED`); a directory renamed elsewhere meanwhile is caught by reading back the
 * real path of every opened descriptor (`/proc/self/fd/N`) before any byte is read or written.
 * New files are created inside the verified parent handle and renamed into place within it.
 *
 * Without `/proc` (not Linux) the walk degrades to plain paths with `O_NOFOLLOW` on the last
 * component, the narrower protection documented in docs/tools.md.
 */
import { constants, existsSync } from 'node:fs';
import { lstat, mkdir, open, readlink, type FileHandle } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import { FsError, fsErrorFrom } from './errors.js';

let procFd: boolean | undefined;
/** Whether `/proc/self/fd` gives openat semantics here (Linux with /proc mounted). */
export function hasProcFd(): boolean {
  procFd ??= process.platform === 'linux' && existsSync('/proc/self/fd');
  return procFd;
}

/** An open directory: its descriptor, and the path it had when opened (for messages and fallbacks). */
export interface Dir {
  fh: FileHandle;
  path: string;
}

/** The path that names `name` inside the directory `dir` holds, whatever has happened to its path since. */
export function at(dir: Dir, name: string): string {
  return hasProcFd() ? `/proc/self/fd/${dir.fh.fd}/${name}` : join(dir.path, name);
}

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

function changed(path: string, why: string): FsError {
  return new FsError(
    'FS_PATH_CHANGED',
    `"${path}" changed while it was being opened (${why}); nothing was read or written. Try again once nothing else is renaming ` +
      'files there',
  );
}

function insideRoot(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/**
 * Refuse a descriptor whose real path is no longer under `root` (a directory on the way was moved
 * out after it was opened). Without /proc this check is not available and passes.
 */
export async function verifyInside(fh: FileHandle, root: string, shown: string): Promise<void> {
  if (!hasProcFd()) return;
  let real: string;
  try {
    real = await readlink(`/proc/self/fd/${fh.fd}`);
  } catch (e) {
    throw fsErrorFrom(e, 'verify', shown);
  }
  if (real.endsWith(' (deleted)') || !insideRoot(root, real)) throw changed(shown, `it is now at "${real}", outside the workspace`);
}

/** Why opening `name` in `dir` failed with ELOOP/ENOTDIR: a link that appeared, or an ordinary error. */
async function explain(e: unknown, dir: Dir, name: string, verb: string, shown: string): Promise<FsError> {
  const code = (e as { code?: string }).code;
  if (code === 'ELOOP' || code === 'ENOTDIR') {
    const st = await lstat(at(dir, name)).catch(() => undefined);
    if (st?.isSymbolicLink()) return changed(shown, `"${name}" is now a symbolic link`);
  }
  return fsErrorFrom(e, verb, shown);
}

export async function openRoot(root: string, shown: string): Promise<Dir> {
  try {
    return { fh: await open(root, DIR_FLAGS), path: root };
  } catch (e) {
    throw fsErrorFrom(e, 'open the workspace at', shown);
  }
}

/** Open the directory `name` inside `dir` without following a link; `create` makes it first when missing. */
export async function openSubdir(dir: Dir, name: string, verb: string, shown: string, create = false): Promise<Dir> {
  const path = join(dir.path, name);
  try {
    return { fh: await open(at(dir, name), DIR_FLAGS), path };
  } catch (e) {
    if (!create || (e as { code?: string }).code !== 'ENOENT') throw await explain(e, dir, name, verb, shown);
  }
  try {
    await mkdir(at(dir, name), 0o755).catch((e: { code?: string }) => {
      if (e.code !== 'EEXIST') throw e;
    });
    return { fh: await open(at(dir, name), DIR_FLAGS), path };
  } catch (e) {
    throw await explain(e, dir, name, verb, shown);
  }
}

/** What to pass to readdir for the directory `dir` holds. */
export function dirPath(dir: Dir): string {
  return hasProcFd() ? `/proc/self/fd/${dir.fh.fd}` : dir.path;
}

/** Open `name` inside `dir` with `flags` (plus `O_NOFOLLOW`); a link there is a change, not a target. */
export async function openIn(dir: Dir, name: string, flags: number, verb: string, shown: string, mode?: number): Promise<FileHandle> {
  try {
    return await open(at(dir, name), flags | constants.O_NOFOLLOW, mode);
  } catch (e) {
    throw await explain(e, dir, name, verb, shown);
  }
}

export async function closeAll(dirs: readonly (Dir | undefined)[]): Promise<void> {
  await Promise.all(dirs.map((d) => d?.fh.close().catch(() => undefined)));
}

/**
 * Open the directory `parts` below `root` (a real directory) one verified step at a time. Each
 * intermediate handle is closed as soon as the next is open; the caller closes the result.
 * `create` makes missing directories on the way (for `write`).
 */
export async function openDirBeneath(root: string, parts: readonly string[], verb: string, shown: string, create = false): Promise<Dir> {
  let cur = await openRoot(root, shown);
  try {
    for (const part of parts) {
      const next = await openSubdir(cur, part, verb, shown, create);
      await cur.fh.close();
      cur = next;
    }
    await verifyInside(cur.fh, root, shown);
    return cur;
  } catch (e) {
    await cur.fh.close().catch(() => undefined);
    throw e;
  }
}

/** Split a checked real path into its components below `root`; refuses one that is not below it. */
export function partsBelow(root: string, path: string, shown: string): string[] {
  const rel = relative(root, path);
  if (rel === '') return [];
  if (!insideRoot(root, path)) throw new FsError('FS_OUTSIDE_WORKSPACE', `"${shown}" is outside the workspace (${root})`);
  return rel.split(sep);
}
