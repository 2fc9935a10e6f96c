/**
 * Content search behind `fs/search`: ripgrep when it is installed, else a JS walk with the same
 * rules, so results do not depend on the machine:
 *
 * - hidden files are searched, VCS metadata never is, symbolic links are not followed;
 * - `.gitignore` files from the workspace root down are honoured whether or not this is a git
 *   repository (`--no-require-git`); `.ignore`, `.rgignore`, global and `info/exclude` rules are
 *   not (the JS side does not read them either);
 * - binary files (a NUL byte) are skipped; an explicitly named file is searched even if ignored;
 * - matches are ordered by path (component-wise) then line.
 *
 * A confined search never reads a file through a name that changed under it: the JS search
 * opens each file inside the verified handle of its directory; ripgrep, which walks by name, runs
 * in a bubblewrap view holding only the searched roots and the system's programs (`/usr`), so a
 * link swapped in mid-walk leads nowhere. Files with more than one hard link are not searched
 * unless policy allows them (ripgrep's matches in such files are dropped before anyone sees them).
 */
import { spawn, spawnSync } from 'node:child_process';
import { constants, lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import { basename, delimiter, dirname, isAbsolute, join, relative, sep } from 'node:path';
import { ToolError } from '../types.js';
import type { FsSearchMatch, FsSearchRequest, FsSearchResult } from './hooks.js';
import { VCS_DIRS } from './gitignore.js';
import { walkFiles } from './walk.js';
import { pathMatcher } from '../glob-match.js';
import { closeAll, openDirBeneath, openIn, partsBelow, type Dir } from './beneath.js';
import { fsErrorFrom } from './errors.js';
import { isHiddenFile } from './hidden.js';
import { capabilityArgs } from '../shell/bubblewrap.js';

export class SearchError extends ToolError<'SEARCH_INVALID_PATTERN' | 'SEARCH_FAILED'> {
  override name = 'SearchError';
}

/** Hard ceiling on matches collected before sorting; past it the search stops and says so. */
const COLLECT_CAP = 20_000;
const MAX_FILE_BYTES = 32 * 1024 * 1024;

let rgProbe: { path: string; ok: boolean } | undefined;
/** Whether `rg` runs here (probed once per path). */
export function ripgrepAvailable(rgPath = 'rg'): boolean {
  if (rgProbe?.path !== rgPath) {
    const r = spawnSync(rgPath, ['--version'], { stdio: 'ignore', timeout: 5000 });
    rgProbe = { path: rgPath, ok: r.status === 0 };
  }
  return rgProbe.ok;
}

const toPosix = (p: string): string => p.split(sep).join('/');

export function comparePaths(a: string, b: string): number {
  const pa = a.split('/');
  const pb = b.split('/');
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    if (pa[i] !== pb[i]) {
      // A directory's contents sort with the directory name, before a sibling file.
      return pa[i]! < pb[i]! ? -1 : 1;
    }
  }
  return pa.length - pb.length;
}

function preview(line: string, max: number): string {
  const l = line.replace(/\r?\n$/, '');
  return l.length > max ? `${l.slice(0, max)}… (line truncated)` : l;
}

function finish(all: FsSearchMatch[], req: FsSearchRequest, capped: boolean, backend: FsSearchResult['backend']): FsSearchResult {
  all.sort((x, y) => comparePaths(x.path, y.path) || x.lineNumber - y.lineNumber);
  const matches = all.slice(0, req.maxMatches).map((m) => ({ ...m, line: preview(m.line, req.maxLineChars) }));
  return { matches, total: all.length, truncated: capped || all.length > req.maxMatches, backend };
}

/** Whether a file with more than one hard link may be searched. */
const linksAllowed = (req: FsSearchRequest): boolean => !req.confined || req.hardLinks === 'allow';

/** Search with the JS walker. `realRoot` is the workspace's real path; `req.path` a checked real path. */
export async function searchJs(req: FsSearchRequest, realRoot: string): Promise<FsSearchResult> {
  let re: RegExp;
  try {
    re = new RegExp(req.pattern);
  } catch (e) {
    throw new SearchError('SEARCH_INVALID_PATTERN', `the pattern is not a valid regular expression: ${(e as Error).message}`);
  }
  const include = req.include ? pathMatcher(req.include) : undefined;
  const all: FsSearchMatch[] = [];
  let skippedHardLinks = 0;
  /** Search one file opened inside `dir`; false once the collect cap is reached. */
  const searchIn = async (dir: Dir, name: string, full: string): Promise<boolean> => {
    if (req.hidden?.includes(full)) return true;
    let buf: Buffer;
    try {
      const fh = await openIn(dir, name, constants.O_RDONLY | constants.O_NONBLOCK, 'search', full);
      try {
        const st = await fh.stat();
        if (!st.isFile() || st.size > MAX_FILE_BYTES) return true;
        if (isHiddenFile(req.hidden, st)) return true;
        if (st.nlink > 1 && !linksAllowed(req)) {
          skippedHardLinks++;
          return true;
        }
        buf = await fh.readFile();
      } finally {
        await fh.close();
      }
    } catch {
      return true;
    }
    if (buf.includes(0)) return true;
    const lines = buf.toString('utf8').split('\n');
    if (lines.at(-1) === '') lines.pop();
    const rel = toPosix(relative(realRoot, full));
    for (let i = 0; i < lines.length; i++) {
      if (re.test(lines[i]!.replace(/\r$/, ''))) {
        all.push({ path: rel, lineNumber: i + 1, line: lines[i]! });
        if (all.length >= COLLECT_CAP) return false;
      }
    }
    return true;
  };
  const done = (capped: boolean): FsSearchResult => {
    const r = finish(all, req, capped, 'js');
    return skippedHardLinks > 0 ? { ...r, skippedHardLinks } : r;
  };
  let st;
  try {
    st = await lstat(req.path);
  } catch (e) {
    throw fsErrorFrom(e, 'search', req.path);
  }
  if (!st.isDirectory()) {
    const name = basename(req.path);
    if (include && !include(name)) return done(false);
    let dir: Dir;
    if (req.confinedTo !== undefined)
      dir = await openDirBeneath(req.confinedTo, partsBelow(req.confinedTo, req.path, req.path).slice(0, -1), 'search', req.path);
    else dir = { fh: await open(dirname(req.path), constants.O_RDONLY | constants.O_DIRECTORY), path: dirname(req.path) };
    try {
      return done(!(await searchIn(dir, name, req.path)));
    } finally {
      await closeAll([dir]);
    }
  }
  const walk = walkFiles(req.path, {
    root: realRoot,
    gitignore: true,
    ...(req.confinedTo !== undefined ? { base: req.confinedTo } : {}),
    ...(req.signal ? { signal: req.signal } : {}),
  });
  for await (const f of walk) {
    req.signal?.throwIfAborted();
    if (include && !include(f.path)) continue;
    if (f.size > MAX_FILE_BYTES) continue;
    if (!(await searchIn(f.dir, f.name, `${req.path}/${f.path}`))) {
      await walk.return(undefined);
      return done(true);
    }
  }
  return done(false);
}

/** The command line that runs ripgrep in a bubblewrap view of `roots` (read-only), from `cwd`; append rg's arguments. */
export type RipgrepView = (roots: readonly string[], cwd: string) => { file: string; args: string[] };

const views = new Map<string, RipgrepView | undefined>();

/** Where `file` is on PATH, as a real path (undefined when it is not there). */
function which(file: string): string | undefined {
  if (isAbsolute(file) || file.includes('/')) return realpathSafe(resolveFrom(file));
  for (const d of (process.env.PATH ?? '').split(delimiter)) {
    if (!d) continue;
    const p = realpathSafe(join(d, file));
    if (p) return p;
  }
  return undefined;
}
const resolveFrom = (f: string): string => (isAbsolute(f) ? f : join(process.cwd(), f));
function realpathSafe(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

/**
 * The view ripgrep runs in for confined searches, when bubblewrap can make it here and ripgrep
 * runs inside it (probed once): an empty root with `/usr` and the library directories read-only,
 * the rg binary, and the searched roots read-only; no other process in sight.
 */
export function confinedRipgrep(rgPath: string, bwrap: string | false): RipgrepView | undefined {
  if (bwrap === false) return undefined;
  const key = `${bwrap}\0${rgPath}`;
  if (views.has(key)) return views.get(key);
  const rg = which(rgPath);
  let view: RipgrepView | undefined;
  if (rg) {
    const system: string[] = ['--ro-bind', '/usr', '/usr'];
    for (const d of ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32']) {
      try {
        const st = lstatSync(d);
        if (st.isSymbolicLink()) system.push('--symlink', readlinkSync(d), d);
        else if (st.isDirectory()) system.push('--ro-bind', d, d);
      } catch {
        // not on this system
      }
    }
    if (!rg.startsWith('/usr/')) system.push('--ro-bind', rg, rg);
    const make: RipgrepView = (roots, cwd) => {
      const args = [
        '--unshare-pid',
        '--unshare-ipc',
        '--unshare-uts',
        '--unshare-cgroup-try',
        '--die-with-parent',
        '--new-session',
        ...capabilityArgs(),
        ...system,
        '--dev',
        '/dev',
      ];
      for (const r of new Set(roots)) args.push('--ro-bind', r, r);
      return { file: bwrap, args: [...args, '--chdir', cwd, '--', rg] };
    };
    const probeCall = make([], '/');
    const probe = spawnSync(probeCall.file, [...probeCall.args, '--version'], { stdio: 'ignore', timeout: 10_000 });
    if (probe.status === 0) view = make;
  }
  views.set(key, view);
  return view;
}

/**
 * Search with ripgrep, run from the workspace's real root; `view` is the bubblewrap command line
 * (ending with rg's path) it runs in for a confined search.
 */
export async function searchRipgrep(
  req: FsSearchRequest,
  realRoot: string,
  rgPath = 'rg',
  view?: { file: string; args: string[] },
): Promise<FsSearchResult> {
  const found = await runRipgrep(req, realRoot, rgPath, view);
  // ripgrep reads what it finds: matches in files no tool may read are dropped before anyone sees them.
  const hidden = req.hidden ?? [];
  const visible = hidden.length === 0 ? found.matches : found.matches.filter((m) => !hidden.includes(join(realRoot, m.path)));
  const r =
    visible.length === found.matches.length
      ? found
      : { ...found, matches: visible, total: found.total - (found.matches.length - visible.length) };
  if (linksAllowed(req) && hidden.length === 0) return r;
  // ripgrep cannot be told to skip files with other names: drop their matches before anyone sees them
  // (all of them where links are refused; a hidden file's other names always).
  const stats = new Map<string, { dev: number; ino: number; nlink: number } | undefined>();
  for (const m of r.matches) if (!stats.has(m.path)) stats.set(m.path, await lstat(join(realRoot, m.path)).catch(() => undefined));
  const gone = (st: { dev: number; ino: number; nlink: number } | undefined): boolean =>
    st === undefined ? !linksAllowed(req) || hidden.length > 0 : (st.nlink > 1 && !linksAllowed(req)) || isHiddenFile(hidden, st);
  const dropped = [...stats].filter(([, st]) => gone(st)).map(([p]) => p);
  if (dropped.length === 0) return r;
  const keep = r.matches.filter((m) => !dropped.includes(m.path));
  const linked = linksAllowed(req) ? 0 : dropped.filter((p) => (stats.get(p)?.nlink ?? 2) > 1).length;
  return { ...r, matches: keep, total: r.total - (r.matches.length - keep.length), ...(linked > 0 ? { skippedHardLinks: linked } : {}) };
}

function runRipgrep(
  req: FsSearchRequest,
  realRoot: string,
  rgPath: string,
  view: { file: string; args: string[] } | undefined,
): Promise<FsSearchResult> {
  const target = toPosix(relative(realRoot, req.path)) || '.';
  const args = ['--json', '--hidden', '--no-require-git', '--no-ignore-dot', '--no-ignore-global', '--no-ignore-exclude', '--no-config'];
  for (const d of VCS_DIRS) args.push('--glob', `!${d}`);
  // Not `--glob include`: ripgrep's globs override .gitignore, which would search ignored files.
  const include = req.include ? pathMatcher(req.include) : undefined;
  const prefix = target === '.' ? '' : `${target}/`;
  args.push('--regexp', req.pattern, '--', target);
  return new Promise((resolve, reject) => {
    const [file, argv] = view ? [view.file, [...view.args, ...args]] : [rgPath, args];
    const child = spawn(file, argv, { cwd: realRoot, stdio: ['ignore', 'pipe', 'pipe'], ...(req.signal ? { signal: req.signal } : {}) });
    const all: FsSearchMatch[] = [];
    let capped = false;
    let buf = '';
    let stderr = '';
    const decode = (v: { text?: string; bytes?: string } | undefined): string | undefined =>
      v?.text ?? (v?.bytes !== undefined ? Buffer.from(v.bytes, 'base64').toString('utf8') : undefined);
    const onLine = (line: string): void => {
      if (capped || !line.startsWith('{"type":"match"')) return;
      const m = JSON.parse(line) as {
        data: { path?: { text?: string; bytes?: string }; lines?: { text?: string; bytes?: string }; line_number?: number };
      };
      const p = decode(m.data.path);
      const text = decode(m.data.lines);
      if (p === undefined || text === undefined || m.data.line_number === undefined) return;
      const rel = p.replace(/^\.\//, '');
      if (include && !include(rel.startsWith(prefix) ? rel.slice(prefix.length) : rel.slice(rel.lastIndexOf('/') + 1))) return;
      all.push({ path: rel, lineNumber: m.data.line_number, line: text });
      if (all.length >= COLLECT_CAP) {
        capped = true;
        child.kill();
      }
    };
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      buf += d;
      let nl: number;
      while ((nl = buf.indexOf('\n')) !== -1) {
        onLine(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
      }
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => {
      if (stderr.length < 4000) stderr += d;
    });
    child.on('error', (e) =>
      reject(req.signal?.aborted ? req.signal.reason : new SearchError('SEARCH_FAILED', `ripgrep could not run: ${e.message}`)),
    );
    child.on('close', (code) => {
      if (buf) onLine(buf);
      if (req.signal?.aborted) return reject(req.signal.reason);
      // bwrap's own failure (exit 1, like "no matches") must not pass for an empty result.
      if (view && /^bwrap: /m.test(stderr))
        return reject(new SearchError('SEARCH_FAILED', `ripgrep could not run in its sandbox: ${stderr.trim()}`));
      if (capped || code === 0 || code === 1) return resolve(finish(all, req, capped, 'ripgrep'));
      const msg = stderr.trim();
      if (/regex parse error|error parsing glob|unclosed|unopened/i.test(msg)) {
        return reject(new SearchError('SEARCH_INVALID_PATTERN', `ripgrep rejected the pattern: ${msg}`));
      }
      reject(new SearchError('SEARCH_FAILED', `ripgrep exited with code ${code}: ${msg || '(no message)'}`));
    });
  });
}
