/**
 * `.gitignore` semantics for the JS walker (the fallback when ripgrep is absent), so a search
 * skips the same files either way: comments, `!` negation, trailing `/` for directories only,
 * patterns with an inner `/` anchored at their file's directory, others matching a name at any
 * depth; deeper files override shallower ones; nothing under an ignored directory comes back.
 */
import { globToRegExp } from '../glob-match.js';

interface Rule {
  re: RegExp;
  negate: boolean;
  dirOnly: boolean;
  /** Match against the basename instead of the path relative to the file's directory. */
  basename: boolean;
}

export function parseGitignore(text: string): Rule[] {
  const rules: Rule[] = [];
  for (let line of text.split(/\r?\n/)) {
    if (line === '' || line.startsWith('#')) continue;
    line = line.replace(/(?<!\\)\s+$/, '');
    if (line === '') continue;
    let negate = false;
    if (line.startsWith('!')) {
      negate = true;
      line = line.slice(1);
    } else if (line.startsWith('\\!') || line.startsWith('\\#')) {
      line = line.slice(1);
    }
    let dirOnly = false;
    if (line.endsWith('/')) {
      dirOnly = true;
      line = line.slice(0, -1);
    }
    const basename = !line.includes('/');
    if (line.startsWith('/')) line = line.slice(1);
    if (line === '') continue;
    try {
      rules.push({ re: globToRegExp(line, 'path'), negate, dirOnly, basename });
    } catch {
      // git ignores a line it cannot parse; so do we
    }
  }
  return rules;
}

export class IgnoreStack {
  private readonly files: { dir: string; rules: Rule[] }[] = [];

  /** Add the rules of the `.gitignore` in `dir` (`/`-separated, relative to the walk root; '' = root). */
  add(dir: string, text: string): void {
    const rules = parseGitignore(text);
    if (rules.length > 0) this.files.push({ dir, rules });
    this.files.sort((a, b) => a.dir.length - b.dir.length);
  }

  /** Whether `rel` (relative to the walk root) is ignored; its parent directories are assumed not to be. */
  ignored(rel: string, isDir: boolean): boolean {
    for (let f = this.files.length - 1; f >= 0; f--) {
      const file = this.files[f]!;
      let sub: string;
      if (file.dir === '') sub = rel;
      else if (rel.startsWith(`${file.dir}/`)) sub = rel.slice(file.dir.length + 1);
      else continue;
      const base = sub.slice(sub.lastIndexOf('/') + 1);
      for (let i = file.rules.length - 1; i >= 0; i--) {
        const r = file.rules[i]!;
        if (r.dirOnly && !isDir) continue;
        if (r.re.test(r.basename ? base : sub)) return !r.negate;
      }
    }
    return false;
  }
}

/** Version-control metadata directories: never listed, never searched. */
export const VCS_DIRS: ReadonlySet<string> = new Set(['.git', '.svn', '.hg', '.bzr', '.jj', '.sl']);
