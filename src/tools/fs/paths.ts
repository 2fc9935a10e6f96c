/**
 * Workspace confinement: turn a path a model asked for into a real path inside an allowed root,
 * or refuse with the reason.
 *
 * Lexical checks alone are not enough (a symlink inside the workspace can point anywhere), and
 * `realpath` alone is not enough (it fails on paths that do not exist yet, which `write` must
 * create, and on dangling links). So the walk goes component by component from the real root,
 * following each symbolic link by hand and re-checking where it lands, up to a hop limit.
 *
 * This is a check on names. The terminals then open the checked real path through verified
 * directory handles from the root it was checked against (`beneath.ts`), so a rename between the
 * check and the open cannot redirect the operation.
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
  if (requested.includes('\0'))
    throw new FsError(
      'FS_INVALID_PATH',
      `the path ${JSON.stringify(requested.slice(0, 200))} contains a NUL byte; no file can have that name`,
    );
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
      if (!inside(base, up)) throw escapeError(requested, up, display);
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
    if (++hops > MAX_LINK_HOPS)
      throw new FsError('FS_SYMLINK_LOOP', `cannot resolve "${requested}": more than ${MAX_LINK_HOPS} symbolic links (a loop?)`);
    let link: string;
    try {
      link = await readlink(next);
    } catch (e) {
      // lstat saw a link and it is gone: something is renaming entries under us.
      if ((e as { code?: string }).code === 'EINVAL' || (e as { code?: string }).code === 'ENOENT') {
        throw new FsError(
          'FS_PATH_CHANGED',
          `"${requested}" changed while it was being checked ("${part}" stopped being a symbolic link); nothing was read or ` +
            'written. Try again once nothing else is renaming files there',
        );
      }
      throw fsErrorFrom(e, 'resolve', requested);
    }
    const target = resolve(cur, link);
    if (!inside(base, target)) throw escapeError(requested, target, display);
    // Re-walk the target from the base: its own directories may be links too (chains).
    todo.unshift(...relative(base, target).split(sep));
    cur = base;
  }
  return cur;
}

function escapeError(requested: string, target: string, display: (p: string) => string): FsError {
  return new FsError(
    'FS_SYMLINK_ESCAPE',
    `"${requested}" resolves through a symbolic link to "${display(target)}", which is outside the workspace; file tools cannot ` +
      'follow links out of it',
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
  return (await resolveConfinedIn(workspace, requested, access, extraRoots)).path;
}

/** `resolveConfined`, also saying which real root the path was checked against. */
export async function resolveConfinedIn(
  workspace: string,
  requested: string,
  access: 'read' | 'write',
  extraRoots: readonly AllowedRoot[] = [],
): Promise<{ path: string; root: string }> {
  checkPathShape(requested);
  const roots: AllowedRoot[] = [
    { path: workspace, access: 'write' },
    ...extraRoots.filter((r) => access === 'read' || r.access === 'write'),
  ];
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
    return { path: await walk(real, relative(base, abs).split(sep), requested, display), root: real };
  }
  throw new FsError(
    'FS_OUTSIDE_WORKSPACE',
    `"${requested}" is outside the workspace (${workspace}); file tools can only reach files inside it. Use a path relative to ` +
      'the workspace root',
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
