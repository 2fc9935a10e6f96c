/**
 * Workspace confinement: turn a path a model asked for into a real path inside an allowed root,
 * or refuse with the reason.
 *
 * Lexical checks alone are not enough (a symlink inside the workspace can point anywhere), and
 * `realpath` alone is not enough (it fails on paths that do not exist yet, which `write` must
 * create, and on dangling links). So the walk goes component by component from the real root,
 * following each symbolic link by hand and re-checking where it lands, up to a hop limit.
 *
 * Limit: this is a check, then an open. A process that swaps a directory for a symlink between
 * the two can still win the race; the final open refuses a symlink (`O_NOFOLLOW`) to narrow it.
 */
import { lstat, readlink, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { FsError, fsErrorFrom } from './errors.js';

/** Linux PATH_MAX and NAME_MAX: longer requests cannot name a real file, so refuse them up front. */
export const MAX_PATH_BYTES = 4096;
export const MAX_NAME_BYTES = 255;
const MAX_LINK_HOPS = 40;

export interface AllowedRoot {
  /** The root as configured (used for display). */
  path: string;
  /** Which operations may reach under it. */
  access: 'read' | 'write';
}

/** Reject what can never be a valid path before touching the disk. */
export function checkPathShape(requested: string): void {
  if (requested.length === 0) throw new FsError('FS_INVALID_PATH', 'the path is empty; give a file path relative to the workspace');
  if (requested.includes('\0')) throw new FsError('FS_INVALID_PATH', `the path ${JSON.stringify(requested.slice(0, 200))} contains a NUL byte; no file can have that name`);
  if (Buffer.byteLength(requested) > MAX_PATH_BYTES) {
    throw new FsError('FS_PATH_TOO_LONG', `the path is ${Buffer.byteLength(requested)} bytes long; the limit is ${MAX_PATH_BYTES}`);
  }
  for (const part of requested.split(/[\\/]/)) {
    if (Buffer.byteLength(part) > MAX_NAME_BYTES) {
      throw new FsError('FS_PATH_TOO_LONG', `a path component is ${Buffer.byteLength(part)} bytes long; the limit is ${MAX_NAME_BYTES}`);
    }
  }
}

function inside(base: string, p: string): boolean {
  const rel = relative(base, p);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

const realRoots = new Map<string, string>();
async function realRoot(root: string): Promise<string> {
  let r = realRoots.get(root);
  if (r === undefined) {
    r = await realpath(root);
    realRoots.set(root, r);
  }
  return r;
}

/**
 * Walk `parts` below `base` (a real directory), following symlinks, and return the real path.
 * Every link target must stay inside `base`; parts that do not exist yet are appended as-is
 * (they can only be created inside the last real directory reached).
 */
async function walk(base: string, parts: string[], requested: string, display: (p: string) => string): Promise<string> {
  let cur = base;
  let hops = 0;
  const todo = [...parts];
  while (todo.length > 0) {
    const part = todo.shift()!;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      // Only reachable after a link expanded into `..` segments: re-check against the base.
      const up = resolve(cur, '..');
      if (!inside(base, up)) throw escape(requested, up, display);
      cur = up;
      continue;
    }
    const next = join(cur, part);
    let st;
    try {
      st = await lstat(next);
    } catch (e) {
      if ((e as { code?: string }).code === 'ENOENT') return join(next, ...todo);
      throw fsErrorFrom(e, 'resolve', requested);
    }
    if (!st.isSymbolicLink()) {
      cur = next;
      continue;
    }
    if (++hops > MAX_LINK_HOPS) throw new FsError('FS_SYMLINK_LOOP', `cannot resolve "${requested}": more than ${MAX_LINK_HOPS} symbolic links (a loop?)`);
    const target = resolve(cur, await readlink(next));
    if (!inside(base, target)) throw escape(requested, target, display);
    // Re-walk the target from the base: its own directories may be links too (chains).
    todo.unshift(...relative(base, target).split(sep));
    cur = base;
  }
  return cur;
}

function escape(requested: string, target: string, display: (p: string) => string): FsError {
  return new FsError(
    'FS_SYMLINK_ESCAPE',
    `"${requested}" resolves through a symbolic link to "${display(target)}", which is outside the workspace; file tools cannot follow links out of it`,
  );
}

/**
 * Resolve `requested` (relative to `workspace`, or absolute) to a real path inside the workspace
 * (or, for reads, inside one of `extraRoots`). Throws FsError otherwise.
 */
export async function resolveConfined(
  workspace: string,
  requested: string,
  access: 'read' | 'write',
  extraRoots: readonly AllowedRoot[] = [],
): Promise<string> {
  checkPathShape(requested);
  const roots: AllowedRoot[] = [{ path: workspace, access: 'write' }, ...extraRoots.filter((r) => access === 'read' || r.access === 'write')];
  const abs = resolve(workspace, requested);
  for (const root of roots) {
    let real: string;
    try {
      real = await realRoot(root.path);
    } catch (e) {
      if (root.path === workspace) throw fsErrorFrom(e, 'open the workspace at', workspace);
      continue;
    }
    // An absolute request may spell the root either way (e.g. /tmp vs its real /private/tmp).
    const base = inside(root.path, abs) ? root.path : inside(real, abs) ? real : undefined;
    if (base === undefined) continue;
    const display = (p: string): string => (inside(real, p) ? join(root.path, relative(real, p)) : p);
    return walk(real, relative(base, abs).split(sep), requested, display);
  }
  throw new FsError(
    'FS_OUTSIDE_WORKSPACE',
    `"${requested}" is outside the workspace (${workspace}); file tools can only reach files inside it. Use a path relative to the workspace root`,
  );
}

/** Show a real path the way the user spells the workspace. */
export async function displayPath(workspace: string, real: string): Promise<string> {
  let r: string;
  try {
    r = await realRoot(workspace);
  } catch {
    return real;
  }
  return inside(r, real) ? join(workspace, relative(r, real)) : real;
}

/** The path relative to the workspace, `/`-separated (what rules and listings show). */
export function workspaceRelative(workspace: string, p: string): string {
  const rel = relative(workspace, resolve(workspace, p));
  return rel.split(sep).join('/');
}
