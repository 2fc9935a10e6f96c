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
 * Known difference: ripgrep also reads `.gitignore` files in directories *above* the workspace.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { relative, sep } from 'node:path';
import { ToolError } from '../types.js';
import type { FsSearchMatch, FsSearchRequest, FsSearchResult } from './hooks.js';
import { VCS_DIRS } from './gitignore.js';
import { walkFiles } from './walk.js';
import { pathMatcher } from '../glob-match.js';

export class SearchError extends ToolError {
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

/** Search with the JS walker. `realRoot` is the workspace's real path; `req.path` a checked real path. */
export async function searchJs(req: FsSearchRequest, realRoot: string): Promise<FsSearchResult> {
  let re: RegExp;
  try {
    re = new RegExp(req.pattern);
  } catch (e) {
    throw new SearchError('SEARCH_INVALID_PATTERN', `the pattern is not a valid regular expression: ${(e as Error).message}`);
  }
  const include = req.include ? pathMatcher(req.include) : undefined;
  const st = await stat(req.path);
  const files: string[] = [];
  if (st.isFile()) {
    if (!include || include(req.path.slice(req.path.lastIndexOf('/') + 1))) files.push(req.path);
  }
  else {
    for await (const f of walkFiles(req.path, req.signal ? { root: realRoot, gitignore: true, signal: req.signal } : { root: realRoot, gitignore: true })) {
      if (include && !include(f.path)) continue;
      if (f.size > MAX_FILE_BYTES) continue;
      files.push(`${req.path}/${f.path}`);
    }
  }
  const all: FsSearchMatch[] = [];
  for (const file of files) {
    req.signal?.throwIfAborted();
    let buf: Buffer;
    try {
      buf = await readFile(file);
    } catch {
      continue;
    }
    if (buf.includes(0)) continue;
    const lines = buf.toString('utf8').split('\n');
    if (lines.at(-1) === '') lines.pop();
    const rel = toPosix(relative(realRoot, file));
    for (let i = 0; i < lines.length; i++) {
      if (re.test(lines[i]!.replace(/\r$/, ''))) {
        all.push({ path: rel, lineNumber: i + 1, line: lines[i]! });
        if (all.length >= COLLECT_CAP) return finish(all, req, true, 'js');
      }
    }
  }
  return finish(all, req, false, 'js');
}

/** Search with ripgrep, run from the workspace's real root. */
export function searchRipgrep(req: FsSearchRequest, realRoot: string, rgPath = 'rg'): Promise<FsSearchResult> {
  const target = toPosix(relative(realRoot, req.path)) || '.';
  const args = ['--json', '--hidden', '--no-require-git', '--no-ignore-dot', '--no-ignore-global', '--no-ignore-exclude', '--no-config'];
  for (const d of VCS_DIRS) args.push('--glob', `!${d}`);
  // Not `--glob include`: ripgrep's globs override .gitignore, which would search ignored files.
  const include = req.include ? pathMatcher(req.include) : undefined;
  const prefix = target === '.' ? '' : `${target}/`;
  args.push('--regexp', req.pattern, '--', target);
  return new Promise((resolve, reject) => {
    const child = spawn(rgPath, args, { cwd: realRoot, stdio: ['ignore', 'pipe', 'pipe'], ...(req.signal ? { signal: req.signal } : {}) });
    const all: FsSearchMatch[] = [];
    let capped = false;
    let buf = '';
    let stderr = '';
    const decode = (v: { text?: string; bytes?: string } | undefined): string | undefined =>
      v?.text ?? (v?.bytes !== undefined ? Buffer.from(v.bytes, 'base64').toString('utf8') : undefined);
    const onLine = (line: string): void => {
      if (capped || !line.startsWith('{"type":"match"')) return;
      const m = JSON.parse(line) as { data: { path?: { text?: string; bytes?: string }; lines?: { text?: string; bytes?: string }; line_number?: number } };
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
    child.on('error', (e) => reject(req.signal?.aborted ? req.signal.reason : new SearchError('SEARCH_FAILED', `ripgrep could not run: ${e.message}`)));
    child.on('close', (code) => {
      if (buf) onLine(buf);
      if (req.signal?.aborted) return reject(req.signal.reason);
      if (capped || code === 0 || code === 1) return resolve(finish(all, req, capped, 'ripgrep'));
      const msg = stderr.trim();
      if (/regex parse error|error parsing glob|unclosed|unopened/i.test(msg)) {
        return reject(new SearchError('SEARCH_INVALID_PATTERN', `ripgrep rejected the pattern: ${msg}`));
      }
      reject(new SearchError('SEARCH_FAILED', `ripgrep exited with code ${code}: ${msg || '(no message)'}`));
    });
  });
}
