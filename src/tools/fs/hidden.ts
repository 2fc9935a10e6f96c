/**
 * Policy hides dsh's config files holding credentials by path (`hidePaths`). A file has as many
 * paths as it has hard links, so the file tools also compare a multi-name file's identity with the
 * hidden files'.
 */
import { statSync } from 'node:fs';

/**
 * Whether a file with other names is one of the hidden files under another name. Policy hides by
 * path; a hard link made beside a hidden file (by the user: the sandbox cannot link across its
 * mounts) would read it where hard links are allowed. Only files with more than one name are
 * looked at, so the stat per hidden path is paid on that rare path only.
 */
export function isHiddenFile(hidden: readonly string[] | undefined, st: { dev: number; ino: number; nlink: number }): boolean {
  if (!hidden || hidden.length === 0 || st.nlink <= 1) return false;
  return hidden.some((h) => {
    const o = statSync(h, { throwIfNoEntry: false });
    return o !== undefined && o.dev === st.dev && o.ino === st.ino;
  });
}
