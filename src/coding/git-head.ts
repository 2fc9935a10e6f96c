/**
 * The branch `git rev-parse --abbrev-ref HEAD` prints, read from the repository's files. The coding
 * agent asks for it when it is created and for every step's runtime context; spawning git costs
 * ~8–10 ms of main-thread time each time, a few stat and read calls well under one.
 *
 * An answer is given only where it is certainly git's (`undefined` where git fails); anything
 * else is `known: false`, and the caller runs git (`gitBranch`, src/coding/context.ts). What git
 * does in each case was checked against git 2.39 (test/coding/git-head.test.ts uses it as the
 * oracle):
 * - Discovery walks up from the physical cwd. At each directory, `.git` (stat: a symlink is
 *   followed) as a directory or as a file `gitdir: <path>` (relative to the file's directory). A
 *   directory that may be a git directory itself (it has a `HEAD`: bare, or inside `.git`), a
 *   `.git` git would skip or refuse, and the variables that move or bound discovery are left to git.
 *   Up to the root, or up to another file system (git stops there), without a repository: git fails.
 * - Ownership: git refuses a repository whose worktree, `.git` or git directory another user owns
 *   unless `safe.directory` (in config files this reader does not read) allows it. Rather than show
 *   a branch git would not, or hide one it would, such a repository is left to git.
 * - The repository format: git refuses an unreadable `config`, a format version over 1 and
 *   extensions it does not know; only plain configs with the extensions git has known since 2.28
 *   are read. The user's and system's config files are not read: a broken one makes every git
 *   command fail, and the reader still shows the branch.
 * - HEAD `ref: refs/heads/<name>` names the branch when the ref exists (a loose file or a
 *   `packed-refs` line in the common directory); without it (an unborn branch) git fails. A short
 *   name that another ref could also mean (`heads/main` beside a tag `main`) is left to git.
 *   HEAD an object id: detached, git prints `HEAD`.
 * - Any file system error but "not found" (EACCES, ELOOP, EISDIR…) is left to git.
 */
import { accessSync, constants, lstatSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';

export type HeadRead = { known: true; branch: string | undefined } | { known: false; why: string };
type Unknown = { known: false; why: string };

const unknown = (why: string): Unknown => ({ known: false, why });
const isUnknown = (v: unknown): v is Unknown => typeof v === 'object' && v !== null && (v as { known?: unknown }).known === false;

/** With any of these set, git finds (or stops finding) the repository somewhere the walk does not. */
export const DISCOVERY_ENV = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_COMMON_DIR',
  'GIT_CEILING_DIRECTORIES',
  'GIT_DISCOVERY_ACROSS_FILESYSTEM',
  'GIT_OBJECT_DIRECTORY',
  'GIT_NAMESPACE',
] as const;

interface Repo {
  gitdir: string;
  common: string;
  head: string;
  hexLength: number;
}

/** What `git rev-parse --abbrev-ref HEAD` run in `cwd` with `env` prints, when the files tell for certain. */
export function readGitBranch(cwd: string, env: NodeJS.ProcessEnv = process.env): HeadRead {
  // Ownership is by uid here; Windows' is by SID, and its paths are not walked this way.
  if (process.platform === 'win32' || typeof process.geteuid !== 'function') return unknown(`platform ${process.platform}`);
  const set = DISCOVERY_ENV.find((k) => env[k] !== undefined);
  if (set) return unknown(`${set} is set`);
  try {
    const repo = discover(realpathSync.native(cwd), process.geteuid());
    if (repo === undefined) return { known: true, branch: undefined };
    return isUnknown(repo) ? repo : branchOf(repo);
  } catch (e) {
    return unknown(`file system: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
}

/** The repository git finds from `start` (a real path); undefined where git finds none. */
function discover(start: string, uid: number): Repo | Unknown | undefined {
  const device = statSync(start).dev;
  for (let dir = start; ; ) {
    const dotGit = join(dir, '.git');
    const st = statSync(dotGit, { throwIfNoEntry: false });
    if (st?.isFile()) {
      const target = gitfileTarget(dotGit);
      return isUnknown(target) ? target : repoAt(target, [dir, dotGit, target], uid);
    }
    if (st?.isDirectory()) return repoAt(dotGit, [dir, dotGit], uid);
    if (st) return unknown(`${dotGit} is neither a file nor a directory`);
    if (lstatSync(join(dir, 'HEAD'), { throwIfNoEntry: false })) return unknown(`${dir} may be a git directory (bare, or inside .git)`);
    const parent = dirname(dir);
    if (parent === dir || statSync(parent).dev !== device) return undefined;
    dir = parent;
  }
}

/** The git directory a `.git` file names, as git reads it: `gitdir: ` then the path, line ends dropped. */
function gitfileTarget(dotGit: string): string | Unknown {
  const text = readFileSync(dotGit, 'utf8');
  if (!text.startsWith('gitdir: ')) return unknown(`${dotGit}: not "gitdir: <path>" (git fails)`);
  const path = text.slice(8).replace(/[\r\n]+$/, '');
  if (path === '' || /[\0\r\n\uFFFD]/.test(path)) return unknown(`${dotGit}: no usable path`);
  // Resolved by the file system, as git does (real_path), not lexically: `..` after a symlink is the link target's parent.
  return realpathSync.native(isAbsolute(path) ? path : `${dirname(dotGit)}/${path}`);
}

/** The repository at `gitdir`, when git would take it for one and use it. */
function repoAt(gitdir: string, owned: string[], uid: number): Repo | Unknown {
  const headStat = lstatSync(join(gitdir, 'HEAD'), { throwIfNoEntry: false });
  if (!headStat?.isFile()) return unknown(`${gitdir}/HEAD is missing or not a plain file`);
  const common = commonDir(gitdir);
  if (isUnknown(common)) return common;
  try {
    // git's own test of a git directory (is_git_directory), which a .git directory can fail.
    accessSync(join(common, 'objects'), constants.X_OK);
    accessSync(join(common, 'refs'), constants.X_OK);
  } catch {
    return unknown(`${common} has no usable objects/ or refs/`);
  }
  // Then, as git does, whose it is: lstat, so a .git symlink counts as itself; stat for what it points at.
  for (const path of owned)
    if (lstatSync(path).uid !== uid || statSync(path).uid !== uid) return unknown(`${path} is not owned by uid ${uid} (safe.directory)`);
  const hexLength = repositoryFormat(common, gitdir);
  if (isUnknown(hexLength)) return hexLength;
  return { gitdir, common, head: readFileSync(join(gitdir, 'HEAD'), 'utf8'), hexLength };
}

/** Where the shared refs live: a linked worktree's git directory names it in `commondir`. */
function commonDir(gitdir: string): string | Unknown {
  const text = readIf(join(gitdir, 'commondir'), 'utf8');
  if (text === undefined) return gitdir;
  const path = text.replace(/[\r\n]+$/, '');
  if (path === '' || /[\0\uFFFD]/.test(path)) return unknown(`${gitdir}/commondir: no usable path`);
  return realpathSync.native(isAbsolute(path) ? path : `${gitdir}/${path}`);
}

/** Extensions git has known since 2.28 (objectformat: v1 only). Any other may fail one git and not another. */
const KNOWN_EXTENSIONS = new Set(['noop', 'preciousobjects', 'partialclone', 'worktreeconfig', 'objectformat']);
const TRUE = /^(true|yes|on|1)$/i;
const FALSE = /^(false|no|off|0|)$/i;

/** The object id length the repository's config declares, or unknown where git might refuse it. */
function repositoryFormat(common: string, gitdir: string): number | Unknown {
  const vars = parseConfig(readIf(join(common, 'config'), 'utf8') ?? '', join(common, 'config'));
  if (isUnknown(vars)) return vars;
  let version = '0';
  const extensions = new Map<string, string | undefined>();
  for (const [key, value] of vars) {
    if (key === 'core.repositoryformatversion') version = value ?? '';
    else if (key.startsWith('extensions.')) extensions.set(key.slice('extensions.'.length), value);
  }
  if (version !== '0' && version !== '1') return unknown(`repository format version ${JSON.stringify(version)}`);
  let hexLength = 40;
  for (const [name, value] of extensions) {
    if (!KNOWN_EXTENSIONS.has(name)) return unknown(`extension ${name}`);
    if (name === 'objectformat') {
      if (version !== '1' || (value !== 'sha1' && value !== 'sha256')) return unknown(`objectformat ${value} in format ${version}`);
      hexLength = value === 'sha256' ? 64 : 40;
    }
    if (name === 'partialclone' && value === undefined) return unknown('partialclone without a value');
    if ((name === 'preciousobjects' || name === 'worktreeconfig') && value !== undefined && !TRUE.test(value) && !FALSE.test(value))
      return unknown(`${name} = ${value}`);
  }
  const perWorktree = extensions.has('worktreeconfig') && !FALSE.test(extensions.get('worktreeconfig') ?? 'true');
  if (perWorktree) {
    // git reads this one too, and fails on it as on the main config.
    const worktreeVars = parseConfig(readIf(join(gitdir, 'config.worktree'), 'utf8') ?? '', join(gitdir, 'config.worktree'));
    if (isUnknown(worktreeVars)) return worktreeVars;
  }
  return hexLength;
}

const BLANK = /^[ \t]*(?:[#;].*)?$/;
const SECTION = /^[ \t]*\[([A-Za-z0-9.-]+)(?:[ \t]+"([^"]*)")?\][ \t]*(?:[#;].*)?$/;
const VARIABLE = /^[ \t]*([A-Za-z][A-Za-z0-9-]*)[ \t]*(?:=(.*))?$/;

/**
 * A config file's variables as `section[.subsection].name` (lowercased but the subsection) and
 * value (undefined for a bare `name`), for files in the plain form git writes. Escapes, carriage
 * returns, includes (another file, which could fail) and anything not plainly valid: unknown.
 */
function parseConfig(text: string, file: string): [string, string | undefined][] | Unknown {
  if (/[\r\\\uFEFF\uFFFD\0]/.test(text)) return unknown(`${file}: escapes, carriage returns or undecodable bytes`);
  const vars: [string, string | undefined][] = [];
  let section: string | undefined;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (BLANK.test(line)) continue;
    const s = SECTION.exec(line);
    if (s) {
      const name = s[1]!.toLowerCase();
      if (name === 'include' || name === 'includeif') return unknown(`${file}:${i + 1}: includes another file`);
      section = s[2] === undefined ? name : `${name}.${s[2]}`;
      continue;
    }
    const v = VARIABLE.exec(line);
    const value = v?.[2] === undefined ? undefined : plainValue(v[2]);
    if (!v || section === undefined || value === null) return unknown(`${file}:${i + 1}: not a line this reader knows`);
    vars.push([`${section}.${v[1]!.toLowerCase()}`, value]);
  }
  return vars;
}

/** A value with its comment dropped; null where a quote is left open. Quoted values keep their quotes (never read as a format). */
function plainValue(raw: string): string | null {
  let quoted = false;
  let end = raw.length;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === '#' || c === ';')) {
      end = i;
      break;
    }
  }
  return quoted ? null : raw.slice(0, end).trim();
}

/** The short names git tries for `s`, in its order (ref_rev_parse_rules). */
const rules = (s: string) => [s, `refs/${s}`, `refs/tags/${s}`, `refs/heads/${s}`, `refs/remotes/${s}`, `refs/remotes/${s}/HEAD`];
// git's isspace() is space, tab, LF and CR only.
const ISSPACE_END = /[ \t\n\r]+$/;

/** HEAD's answer, once the repository is git's. */
function branchOf(repo: Repo): HeadRead {
  const packed = packedRefs(repo.common, repo.hexLength);
  if (isUnknown(packed)) return packed;
  // Loose refs are per worktree (HEAD, refs/bisect/…) or shared; which is which varies with git's version.
  const dirs = repo.gitdir === repo.common ? [repo.common] : [repo.gitdir, repo.common];
  const present = (ref: string) =>
    packed.has(bytes(ref)) || dirs.some((d) => lstatSync(join(d, ref), { throwIfNoEntry: false }) !== undefined);
  // `HEAD` is a short name too: a ref any other rule makes of it leaves git choosing or refusing.
  const other = rules('HEAD').slice(1).find(present);
  if (other) return unknown(`${other} exists: "HEAD" is ambiguous`);
  const oid = new RegExp(`^[0-9a-f]{${repo.hexLength}}$`);
  const head = repo.head.replace(ISSPACE_END, '');
  if (oid.test(head)) return { known: true, branch: 'HEAD' };
  const target = /^ref:[ \t\n\r]*(refs\/heads\/.*)$/s.exec(head)?.[1];
  if (target === undefined) return unknown('HEAD is neither refs/heads/… nor an object id');
  const name = target.slice('refs/heads/'.length);
  if (!plainBranchName(name)) return unknown(`branch name ${JSON.stringify(name)}`);
  const loose = lstatSync(join(repo.common, target), { throwIfNoEntry: false });
  if (loose) {
    if (!loose.isFile()) return unknown(`${target} is not a plain file`);
    if (!oid.test(readFileSync(join(repo.common, target), 'utf8').replace(ISSPACE_END, '')))
      return unknown(`${target} is not an object id`);
  } else if (!packed.has(bytes(target))) {
    return { known: true, branch: undefined }; // unborn: git fails ("ambiguous argument 'HEAD'")
  }
  // git shortens to `heads/<name>` when another rule's ref exists (a tag of the same name).
  const clash = rules(name)
    .filter((r) => r !== target)
    .find(present);
  return clash ? unknown(`${clash} exists: "${name}" is ambiguous`) : { known: true, branch: name };
}

/**
 * A branch name git accepts (check_refname_format) and prints as is: no control characters,
 * spaces, `~^:?*[\`, `..`, `@{`, component starting with `.` or ending with `.lock`; and nothing
 * `trim()` would change, nor names with a meaning of their own (`main-worktree/`, the reftable stub).
 */
function plainBranchName(name: string): boolean {
  if (name === '@' || name.endsWith('.') || name.includes('..') || name.includes('@{') || name !== name.trim()) return false;
  if (/[\0-\x20\x7f~^:?*[\\\uFFFD]/.test(name) || name.startsWith('main-worktree/')) return false;
  return name.split('/').every((c) => c !== '' && !c.startsWith('.') && !c.endsWith('.lock'));
}

/** A name as the bytes of a latin1 string, the form `packedRefs` keeps (so its order is git's byte order). */
const bytes = (ref: string) => Buffer.from(ref, 'utf8').toString('latin1');

/**
 * The refs in `packed-refs`, when it is in the form git writes: optional header, `<oid> <ref>`
 * lines in strictly ascending byte order, each optionally followed by its `^<oid>`. git fails on
 * an unexpected line and binary-searches a file it takes for sorted, so anything else is unknown.
 */
function packedRefs(common: string, hexLength: number): Set<string> | Unknown {
  const text = readIf(join(common, 'packed-refs'), 'latin1');
  const names = new Set<string>();
  if (!text) return names;
  if (!text.endsWith('\n')) return unknown('packed-refs: last line unterminated');
  const lines = text.slice(0, -1).split('\n');
  const ref = new RegExp(`^[0-9a-f]{${hexLength}} ([!-~\\x80-\\xff]+)$`);
  const peeled = new RegExp(`^\\^[0-9a-f]{${hexLength}}$`);
  let last = '';
  let afterRef = false;
  for (let i = lines[0]!.startsWith('# pack-refs with:') ? 1 : 0; i < lines.length; i++) {
    const m = ref.exec(lines[i]!);
    if (m && m[1]! > last) {
      names.add((last = m[1]!));
      afterRef = true;
    } else if (afterRef && peeled.test(lines[i]!)) afterRef = false;
    else return unknown(`packed-refs:${i + 1}: unexpected or out of order`);
  }
  return names;
}

/** A file's text, or undefined when it is not there (any other error is thrown). */
function readIf(path: string, encoding: 'utf8' | 'latin1'): string | undefined {
  try {
    return readFileSync(path, encoding);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}
