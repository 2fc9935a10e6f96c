/**
 * The seam's terminals: the actual I/O on the local disk, done on whatever path the policy
 * listeners passed on. They check nothing about *where* (that is policy's job, upstream); they
 * only refuse a symlink as the final component (`O_NOFOLLOW`), so a link swapped in after
 * confinement checked the path is not followed.
 */
import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
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
import { ripgrepAvailable, searchJs, searchRipgrep } from './search.js';

export interface LocalFsOptions {
  /** `auto` uses ripgrep when installed; `off` forces the JS search; a string is rg's path. */
  ripgrep?: 'auto' | 'off' | string;
}

const abs = (r: FsRequest): string => (isAbsolute(r.path) ? r.path : resolve(r.root, r.path));

function typeOf(st: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): FsEntry['type'] {
  return st.isFile() ? 'file' : st.isDirectory() ? 'directory' : st.isSymbolicLink() ? 'symlink' : 'other';
}

async function readText(path: string, requested: string, maxBytes: number): Promise<{ text: string; bytes: number }> {
  let fh;
  try {
    fh = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (e) {
    throw fsErrorFrom(e, 'read', requested);
  }
  try {
    const st = await fh.stat();
    if (st.isDirectory()) throw new FsError('FS_IS_DIRECTORY', `cannot read "${requested}": it is a directory, not a file`);
    if (st.size > maxBytes) {
      throw new FsError('FS_TOO_LARGE', `cannot read "${requested}": it is ${st.size} bytes, over the ${maxBytes}-byte limit; search it with grep or read it in parts with bash (e.g. sed -n)`);
    }
    const buf = await fh.readFile();
    if (buf.subarray(0, 8192).includes(0)) throw new FsError('FS_BINARY', `cannot read "${requested}": it looks like a binary file (it contains NUL bytes)`);
    return { text: buf.toString('utf8'), bytes: buf.length };
  } catch (e) {
    throw fsErrorFrom(e, 'read', requested);
  } finally {
    await fh.close();
  }
}

async function writeText(path: string, requested: string, content: string): Promise<void> {
  let fh;
  try {
    await mkdir(dirname(path), { recursive: true });
    fh = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o644);
  } catch (e) {
    throw fsErrorFrom(e, 'write', requested);
  }
  try {
    await fh.writeFile(content, 'utf8');
  } catch (e) {
    throw fsErrorFrom(e, 'write', requested);
  } finally {
    await fh.close();
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}

export function countOccurrences(haystack: string, needle: string): number {
  let n = 0;
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) n++;
  return n;
}

export const localTerminals = (opts: LocalFsOptions = {}) => ({
  async read(r: FsReadRequest): Promise<FsReadResult> {
    const p = abs(r);
    const { text, bytes } = await readText(p, p, r.maxBytes);
    return { path: p, text, bytes };
  },

  async write(r: FsWriteRequest): Promise<FsWriteResult> {
    const p = abs(r);
    let previous: string | undefined;
    const created = !(await exists(p));
    if (!created) {
      try {
        previous = (await readText(p, p, 4 * 1024 * 1024)).text;
      } catch (e) {
        if (e instanceof FsError && e.code === 'FS_IS_DIRECTORY') throw new FsError('FS_IS_DIRECTORY', `cannot write "${p}": it is a directory`);
        // Binary or huge: overwrite anyway, without a diff basis.
      }
    }
    await writeText(p, p, r.content);
    return previous === undefined ? { path: p, created } : { path: p, created, previous };
  },

  async edit(r: FsEditRequest): Promise<FsEditResult> {
    const p = abs(r);
    const { text: before } = await readText(p, p, 16 * 1024 * 1024);
    if (r.oldString === r.newString) throw new FsError('FS_EDIT_NOOP', `old_string and new_string are identical; nothing to change in "${p}"`);
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
        `old_string occurs ${n} times in "${p}"; nothing was changed. Include more surrounding lines to make it unique, or set replace_all: true to replace every occurrence`,
      );
    }
    const after = r.replaceAll ? before.split(r.oldString).join(r.newString) : before.replace(r.oldString, () => r.newString);
    await writeText(p, p, after);
    return { path: p, before, after, replacements: r.replaceAll ? n : 1 };
  },

  async list(r: FsListRequest): Promise<FsListResult> {
    const p = abs(r);
    const entries: FsEntry[] = [];
    let truncated = false;
    try {
      if (r.recursive) {
        const root = await realpath(r.root).catch(() => r.root);
        const walk = walkFiles(p, r.signal ? { root, gitignore: r.gitignore, signal: r.signal } : { root, gitignore: r.gitignore });
        for await (const e of walk) {
          if (entries.length >= r.limit) {
            truncated = true;
            break;
          }
          entries.push(e);
        }
      } else {
        const names = (await readdir(p)).sort();
        for (const name of names) {
          if (entries.length >= r.limit) {
            truncated = true;
            break;
          }
          const st = await lstat(join(p, name)).catch(() => undefined);
          if (st) entries.push({ path: name, type: typeOf(st), size: st.size, mtimeMs: st.mtimeMs });
        }
      }
    } catch (e) {
      throw fsErrorFrom(e, 'list', p);
    }
    return { path: p, entries, truncated };
  },

  async stat(r: FsStatRequest): Promise<FsStatResult> {
    const p = abs(r);
    try {
      const st = await lstat(p);
      return { path: p, type: typeOf(st), size: st.size, mtimeMs: st.mtimeMs };
    } catch (e) {
      throw fsErrorFrom(e, 'stat', p);
    }
  },

  async search(r: FsSearchRequest): Promise<FsSearchResult> {
    const p = abs(r);
    const root = await realpath(r.root).catch(() => r.root);
    const req = { ...r, path: p };
    try {
      await lstat(p);
    } catch (e) {
      throw fsErrorFrom(e, 'search', p);
    }
    const rg = opts.ripgrep ?? 'auto';
    if (rg !== 'off' && ripgrepAvailable(rg === 'auto' ? 'rg' : rg)) return searchRipgrep(req, root, rg === 'auto' ? 'rg' : rg);
    return searchJs(req, root);
  },
});

export type LocalTerminals = ReturnType<typeof localTerminals>;
