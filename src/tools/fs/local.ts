/**
 * The seam's terminals: the actual I/O on the local disk, done on whatever path the policy
 * listeners passed on. They check nothing about *where* (that is policy's job, upstream), but a
 * confined request (`confinedTo`) is opened from its root through verified directory handles
 * (`beneath.ts`), so what they act on is what confinement checked even if the tree changes
 * meanwhile; a link never ends a path they open (`O_NOFOLLOW`). Writes go to a temporary file in
 * the verified directory, renamed over the name: whole or not at all.
 *
 * Hard links: a confined request refuses a regular file with more than one link unless policy
 * set `hardLinks: 'allow'`, since its other names may be outside the workspace.
 */
import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, readdir, realpath, rename, unlink, type FileHandle } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { basename, dirname, isAbsolute, resolve } from 'node:path';
import { isHiddenFile } from './hidden.js';
import type {
  FsEditRequest,
  FsEditResult,
  FsEntry,
  FsListRequest,
  FsListResult,
  FsReadRequest,
  FsReadResult,
  FsRequest,
  FsSearchRequest,
  FsSearchResult,
  FsStatRequest,
  FsStatResult,
  FsWriteRequest,
  FsWriteResult,
} from './hooks.js';
import { FsError, fsErrorFrom } from './errors.js';
import { walkFiles } from './walk.js';
import { confinedRipgrep, ripgrepAvailable, searchJs, searchRipgrep } from './search.js';
import { at, closeAll, dirPath, openDirBeneath, openIn, partsBelow, verifyInside, type Dir } from './beneath.js';

export interface LocalFsOptions {
  /** `auto` uses ripgrep when installed; `off` forces the JS search; a string is rg's path. */
  ripgrep?: 'auto' | 'off' | string;
  /**
   * bwrap, to run ripgrep where it can see only the searched root and the system's programs
   * (default `bwrap` on PATH). Where it cannot run (or `false`), confined searches use the JS
   * search, which opens every file through verified handles.
   */
  bubblewrap?: string | false;
}

/** The absolute path a request names (confinement has already made it a checked real path). */
export const requestPath = (r: FsRequest): string => (isAbsolute(r.path) ? r.path : resolve(r.root, r.path));

function typeOf(st: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): FsEntry['type'] {
  return st.isFile() ? 'file' : st.isDirectory() ? 'directory' : st.isSymbolicLink() ? 'symlink' : 'other';
}

/**
 * Refuse a hidden file under another name (always), and a file with other names unless policy
 * allowed it (confined requests only).
 */
export function checkHardLinks(r: FsRequest, st: Stats, verb: string, shown: string): void {
  if (st.isFile() && isHiddenFile(r.hidden, st)) {
    throw new FsError(
      'FS_SANDBOX_DENIED',
      `cannot ${verb} "${shown}": it is another name (a hard link) of a dsh config file holding credentials, which no tool may read`,
    );
  }
  if (!r.confined || r.hardLinks === 'allow' || !st.isFile() || st.nlink <= 1) return;
  throw new FsError(
    'FS_HARD_LINK',
    `cannot ${verb} "${shown}": it is a hard link (the file has ${st.nlink} names), and another name may be outside the ` +
      `workspace, so file tools do not ${verb} it in this sandbox mode. Copy it to a new file (cp) to work on an independent copy, ` +
      'or allow it with a permission rule',
  );
}

/** Where `p` lives: its directory, opened (verified when confined), and its name there. */
export interface Located {
  dir: Dir;
  /** Undefined when `p` is the root itself. */
  name: string | undefined;
  /** What opened descriptors must stay under. */
  root: string;
}

async function locate(r: FsRequest, p: string, verb: string, create = false): Promise<Located> {
  if (r.confinedTo !== undefined) {
    const parts = partsBelow(r.confinedTo, p, p);
    const dir = await openDirBeneath(r.confinedTo, parts.slice(0, -1), verb, p, create);
    return { dir, name: parts.at(-1), root: r.confinedTo };
  }
  // Unconfined seam (`confine: false`): plain paths, links followed except the last.
  const parent = dirname(p);
  try {
    if (create) await mkdir(parent, { recursive: true });
    return { dir: { fh: await open(parent, constants.O_RDONLY | constants.O_DIRECTORY), path: parent }, name: basename(p), root: '/' };
  } catch (e) {
    throw fsErrorFrom(e, verb, p);
  }
}

/** Open the directory `p` itself (verified when confined). */
async function openTargetDir(r: FsRequest, p: string, verb: string): Promise<Dir> {
  if (r.confinedTo !== undefined) return openDirBeneath(r.confinedTo, partsBelow(r.confinedTo, p, p), verb, p);
  try {
    return { fh: await open(p, constants.O_RDONLY | constants.O_DIRECTORY), path: p };
  } catch (e) {
    throw fsErrorFrom(e, verb, p);
  }
}

/**
 * Open an existing file for reading inside its located directory: never a FIFO's endless wait
 * (`O_NONBLOCK`), never a directory or device, never another name's file unless allowed.
 */
export async function openExisting(
  r: FsRequest,
  loc: Located,
  p: string,
  verb: string,
  linkVerb: string,
): Promise<{ fh: FileHandle; st: Stats }> {
  if (loc.name === undefined) throw new FsError('FS_IS_DIRECTORY', `cannot ${verb} "${p}": it is a directory, not a file`);
  const fh = await openIn(loc.dir, loc.name, constants.O_RDONLY | constants.O_NONBLOCK, verb, p);
  try {
    const st = await fh.stat();
    if (st.isDirectory()) throw new FsError('FS_IS_DIRECTORY', `cannot ${verb} "${p}": it is a directory, not a file`);
    if (!st.isFile()) throw new FsError('FS_NOT_A_FILE', `cannot ${verb} "${p}": it is not a regular file (a device, FIFO or socket)`);
    checkHardLinks(r, st, linkVerb, p);
    await verifyInside(fh, loc.root, p);
    return { fh, st };
  } catch (e) {
    await fh.close();
    throw fsErrorFrom(e, verb, p);
  }
}

/** A text read's size limit: the caller pages or searches a bigger file instead. */
export function checkReadSize(p: string, size: number, maxBytes: number): void {
  if (size > maxBytes) {
    throw new FsError(
      'FS_TOO_LARGE',
      `cannot read "${p}": it is ${size} bytes, over the ${maxBytes}-byte limit; search it with grep or read it in parts with ` +
        'bash (e.g. sed -n)',
    );
  }
}

/** A file whose first 8 KiB hold a NUL byte is not text. */
export function checkNotBinary(p: string, bytes: Buffer): void {
  if (bytes.subarray(0, 8192).includes(0))
    throw new FsError('FS_BINARY', `cannot read "${p}": it looks like a binary file (it contains NUL bytes)`);
}

async function readOpen(fh: FileHandle, st: Stats, p: string, maxBytes: number): Promise<{ text: string; bytes: number }> {
  checkReadSize(p, st.size, maxBytes);
  let buf: Buffer;
  try {
    buf = await fh.readFile();
  } catch (e) {
    throw fsErrorFrom(e, 'read', p);
  }
  checkNotBinary(p, buf);
  return { text: buf.toString('utf8'), bytes: buf.length };
}

/**
 * Replace `name` in `dir` with `content`: a temporary file created in the same verified directory
 * (never through a link), given the old file's mode (and owner, when we may), then renamed over
 * the name. A rename replaces a link rather than following it, so nothing outside is written.
 */
async function replaceIn(loc: Located, name: string, content: string, previous: Stats | undefined, p: string): Promise<void> {
  const tmp = `.dsh-write-${randomBytes(6).toString('hex')}.tmp`;
  let fh: FileHandle | undefined;
  let placed = false;
  try {
    fh = await openIn(
      loc.dir,
      tmp,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL,
      'write',
      p,
      previous ? previous.mode & 0o7777 : 0o644,
    );
    await fh.writeFile(content, 'utf8');
    if (previous) {
      await fh.chmod(previous.mode & 0o7777);
      if (process.getuid?.() === 0) await fh.chown(previous.uid, previous.gid).catch(() => undefined);
    }
    await fh.close();
    fh = undefined;
    await verifyInside(loc.dir.fh, loc.root, p);
    await rename(at(loc.dir, tmp), at(loc.dir, name));
    placed = true;
  } catch (e) {
    throw fsErrorFrom(e, 'write', p);
  } finally {
    await fh?.close().catch(() => undefined);
    if (!placed) await unlink(at(loc.dir, tmp)).catch(() => undefined);
  }
}

export function countOccurrences(haystack: string, needle: string): number {
  let n = 0;
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) n++;
  return n;
}

/** An edit's new text: refused when nothing changes, or old_string is absent, or ambiguous without replaceAll. */
export function applyEdit(
  before: string,
  r: Pick<FsEditRequest, 'oldString' | 'newString' | 'replaceAll'>,
  p: string,
): { after: string; replacements: number } {
  if (r.oldString === r.newString)
    throw new FsError('FS_EDIT_NOOP', `old_string and new_string are identical; nothing to change in "${p}"`);
  const n = countOccurrences(before, r.oldString);
  if (n === 0) {
    throw new FsError(
      'FS_EDIT_NOT_FOUND',
      `old_string was not found in "${p}". Read the file and copy the exact text to replace, including whitespace and indentation`,
    );
  }
  if (n > 1 && !r.replaceAll) {
    throw new FsError(
      'FS_EDIT_AMBIGUOUS',
      `old_string occurs ${n} times in "${p}"; nothing was changed. Include more surrounding lines to make it unique, or set ` +
        'replace_all: true to replace every occurrence',
    );
  }
  const after = r.replaceAll ? before.split(r.oldString).join(r.newString) : before.replace(r.oldString, () => r.newString);
  return { after, replacements: r.replaceAll ? n : 1 };
}

export const localTerminals = (opts: LocalFsOptions = {}) => ({
  async read(r: FsReadRequest): Promise<FsReadResult> {
    const p = requestPath(r);
    const loc = await locate(r, p, 'read');
    try {
      const { fh, st } = await openExisting(r, loc, p, 'read', 'read');
      try {
        const { text, bytes } = await readOpen(fh, st, p, r.maxBytes);
        return { path: p, text, bytes };
      } finally {
        await fh.close();
      }
    } finally {
      await closeAll([loc.dir]);
    }
  },

  async write(r: FsWriteRequest): Promise<FsWriteResult> {
    const p = requestPath(r);
    const loc = await locate(r, p, 'write', true);
    try {
      if (loc.name === undefined) throw new FsError('FS_IS_DIRECTORY', `cannot write "${p}": it is a directory`);
      let previous: string | undefined;
      let st: Stats | undefined;
      try {
        const found = await openExisting(r, loc, p, 'write', 'write');
        st = found.st;
        try {
          previous = (await readOpen(found.fh, found.st, p, 4 * 1024 * 1024)).text;
        } catch {
          // Binary or huge: overwrite anyway, without a diff basis.
        } finally {
          await found.fh.close();
        }
      } catch (e) {
        if (!(e instanceof FsError && e.code === 'FS_NOT_FOUND')) {
          if (e instanceof FsError && e.code === 'FS_IS_DIRECTORY')
            throw new FsError('FS_IS_DIRECTORY', `cannot write "${p}": it is a directory`);
          throw e;
        }
      }
      await replaceIn(loc, loc.name, r.content, st, p);
      const created = st === undefined;
      return previous === undefined ? { path: p, created } : { path: p, created, previous };
    } finally {
      await closeAll([loc.dir]);
    }
  },

  async edit(r: FsEditRequest): Promise<FsEditResult> {
    const p = requestPath(r);
    const loc = await locate(r, p, 'edit');
    try {
      const { fh, st } = await openExisting(r, loc, p, 'read', 'edit');
      let before: string;
      try {
        before = (await readOpen(fh, st, p, 16 * 1024 * 1024)).text;
      } finally {
        await fh.close();
      }
      const { after, replacements } = applyEdit(before, r, p);
      await replaceIn(loc, loc.name!, after, st, p);
      return { path: p, before, after, replacements };
    } finally {
      await closeAll([loc.dir]);
    }
  },

  async list(r: FsListRequest): Promise<FsListResult> {
    const p = requestPath(r);
    const entries: FsEntry[] = [];
    let truncated = false;
    try {
      if (r.recursive) {
        const root = await realpath(r.root).catch(() => r.root);
        const walk = walkFiles(p, {
          root,
          gitignore: r.gitignore,
          ...(r.confinedTo !== undefined ? { base: r.confinedTo } : {}),
          ...(r.signal ? { signal: r.signal } : {}),
        });
        for await (const e of walk) {
          if (entries.length >= r.limit) {
            truncated = true;
            break;
          }
          entries.push({ path: e.path, type: e.type, size: e.size, mtimeMs: e.mtimeMs });
        }
      } else {
        const dir = await openTargetDir(r, p, 'list');
        try {
          const names = (await readdir(dirPath(dir))).sort();
          for (const name of names) {
            if (entries.length >= r.limit) {
              truncated = true;
              break;
            }
            const st = await lstat(at(dir, name)).catch(() => undefined);
            if (st) entries.push({ path: name, type: typeOf(st), size: st.size, mtimeMs: st.mtimeMs });
          }
        } finally {
          await closeAll([dir]);
        }
      }
    } catch (e) {
      throw fsErrorFrom(e, 'list', p);
    }
    return { path: p, entries, truncated };
  },

  async stat(r: FsStatRequest): Promise<FsStatResult> {
    const p = requestPath(r);
    try {
      const st = await lstat(p);
      return { path: p, type: typeOf(st), size: st.size, mtimeMs: st.mtimeMs };
    } catch (e) {
      throw fsErrorFrom(e, 'stat', p);
    }
  },

  async search(r: FsSearchRequest): Promise<FsSearchResult> {
    const p = requestPath(r);
    const root = await realpath(r.root).catch(() => r.root);
    const req = { ...r, path: p };
    try {
      await lstat(p);
    } catch (e) {
      throw fsErrorFrom(e, 'search', p);
    }
    const rg = opts.ripgrep ?? 'auto';
    const rgPath = rg === 'auto' ? 'rg' : rg;
    if (rg !== 'off' && ripgrepAvailable(rgPath)) {
      if (r.confinedTo === undefined) return searchRipgrep(req, root, rgPath);
      // Confined: ripgrep walks by name, so it runs where it can see only the roots it searches.
      const view = confinedRipgrep(rgPath, opts.bubblewrap ?? 'bwrap');
      if (view) return searchRipgrep(req, root, rgPath, view([root, r.confinedTo], root));
    }
    return searchJs(req, root);
  },
});

export type LocalTerminals = ReturnType<typeof localTerminals>;
