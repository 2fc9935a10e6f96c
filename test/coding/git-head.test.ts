/**
 * The git branch read from the repository's files (src/coding/git-head.ts) against the real git:
 * each case builds a repository with git in a temp dir, asks `git rev-parse --abbrev-ref HEAD`
 * (the oracle, read as `gitBranch` reads it: exit 0 and trimmed output, else undefined), and the
 * reader must give the same answer or leave the case to git. `gitBranch` must then spawn git only
 * for those.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { gitBranch } from '../../src/coding/context.js';
import { DISCOVERY_ENV, readGitBranch } from '../../src/coding/git-head.js';

// Counts the child processes `gitBranch` starts (it runs git through execFile).
const spawned = vi.hoisted(() => ({ execFile: 0 }));
vi.mock('node:child_process', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:child_process')>();
  const execFile = (...args: unknown[]) => {
    spawned.execFile++;
    return (real.execFile as (...a: unknown[]) => unknown)(...args);
  };
  return { ...real, execFile };
});

// Git and the reader see the same environment, without the variables that move discovery
// (the suite may itself run under a git hook that sets GIT_DIR).
const saved = new Map<string, string | undefined>();
beforeEach(() => {
  for (const k of DISCOVERY_ENV) {
    saved.set(k, process.env[k]);
    delete process.env[k];
  }
});
afterEach(() => {
  for (const [k, v] of saved)
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
});

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-git-head-')));
  dirs.push(d);
  return d;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'protocol.file.allow=always', ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** What `git rev-parse --abbrev-ref HEAD` answers in `cwd`, read as the old `gitBranch` read it. */
function gitSays(cwd: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const r = spawnSync('git', ['rev-parse', '--abbrev-ref', 'HEAD'], { cwd, env, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() || undefined : undefined;
}

/** A repository on branch `trunk`, with one commit unless `unborn`. */
function repo(opts: { unborn?: boolean; args?: string[] } = {}): string {
  const dir = tempDir();
  git(dir, 'init', '-q', '-b', 'trunk', ...(opts.args ?? []));
  if (!opts.unborn) git(dir, 'commit', '-q', '--allow-empty', '-m', 'one');
  return dir;
}

/** git answers `expected` in `cwd`, and the reader gives the same without running git. */
function expectSame(cwd: string, expected: string | undefined): void {
  expect(gitSays(cwd)).toBe(expected);
  expect(readGitBranch(cwd)).toEqual({ known: true, branch: expected });
}

/** The reader leaves `cwd` to git (for the reason `why`), and `gitBranch` then gives git's answer by running it. */
async function expectLeftToGit(cwd: string, why: RegExp): Promise<void> {
  const read = readGitBranch(cwd);
  expect(read.known).toBe(false);
  expect(read.known ? '' : read.why).toMatch(why);
  const before = spawned.execFile;
  expect(await gitBranch(cwd)).toBe(gitSays(cwd));
  expect(spawned.execFile).toBe(before + 1);
}

describe('readGitBranch answers as git does', () => {
  it('a branch, from the top and from a subdirectory', () => {
    const dir = repo();
    expectSame(dir, 'trunk');
    mkdirSync(join(dir, 'a', 'b'), { recursive: true });
    expectSame(join(dir, 'a', 'b'), 'trunk');
  });

  it('a branch name with slashes', () => {
    const dir = repo();
    git(dir, 'checkout', '-q', '-b', 'feature/deep/name');
    expectSame(dir, 'feature/deep/name');
  });

  it('a detached HEAD: HEAD', () => {
    const dir = repo();
    git(dir, 'checkout', '-q', '--detach');
    expectSame(dir, 'HEAD');
  });

  it('an unborn branch (no commit yet): git fails, undefined', () => {
    expectSame(repo({ unborn: true }), undefined);
  });

  it('a branch only in packed-refs', () => {
    const dir = repo();
    git(dir, 'pack-refs', '--all');
    expect(existsSync(join(dir, '.git', 'refs', 'heads', 'trunk'))).toBe(false);
    expect(readFileSync(join(dir, '.git', 'packed-refs'), 'utf8')).toContain(' refs/heads/trunk\n');
    expectSame(dir, 'trunk');
  });

  it('a linked worktree (a .git file, refs in the common directory), loose and packed', () => {
    const dir = repo();
    const wt = join(tempDir(), 'wt');
    git(dir, 'worktree', 'add', '-q', '-b', 'side', wt);
    expect(readFileSync(join(wt, '.git'), 'utf8')).toMatch(/^gitdir: /);
    expectSame(wt, 'side');
    git(dir, 'pack-refs', '--all');
    expectSame(wt, 'side');
    expectSame(dir, 'trunk');
    git(wt, 'checkout', '-q', '--detach');
    expectSame(wt, 'HEAD');
  });

  it('a submodule (a .git file with a relative path)', () => {
    const src = repo();
    const parent = repo();
    git(parent, 'submodule', 'add', '-q', src, 'sm');
    const sm = join(parent, 'sm');
    expect(readFileSync(join(sm, '.git'), 'utf8')).toBe('gitdir: ../.git/modules/sm\n');
    expectSame(sm, 'trunk');
    git(sm, 'checkout', '-q', '--detach');
    expectSame(sm, 'HEAD');
  });

  it('a SHA-256 repository: branch and detached', () => {
    const dir = repo({ args: ['--object-format=sha256'] });
    expectSame(dir, 'trunk');
    git(dir, 'checkout', '-q', '--detach');
    expect(readFileSync(join(dir, '.git', 'HEAD'), 'utf8')).toMatch(/^[0-9a-f]{64}\n$/);
    expectSame(dir, 'HEAD');
  });

  it('extensions git knows: a partial clone with a per-worktree config', () => {
    const dir = repo();
    git(dir, 'config', 'core.repositoryformatversion', '1');
    git(dir, 'config', 'extensions.partialClone', 'origin');
    git(dir, 'config', 'extensions.worktreeConfig', 'true');
    git(dir, 'config', '--worktree', 'core.sparseCheckout', 'true');
    expectSame(dir, 'trunk');
  });

  it('no repository up to the root: git fails, undefined', () => {
    const dir = tempDir();
    const read = readGitBranch(dir);
    expect(read.known).toBe(true);
    expect(read).toEqual({ known: true, branch: gitSays(dir) });
  });
});

describe('readGitBranch leaves to git what the files do not settle', () => {
  it('any variable that moves discovery', async () => {
    const dir = repo();
    const elsewhere = tempDir();
    for (const k of DISCOVERY_ENV) {
      const read = readGitBranch(elsewhere, { ...process.env, [k]: join(dir, '.git') });
      expect(read).toEqual({ known: false, why: `${k} is set` });
    }
    // With GIT_DIR set, gitBranch asks git, which finds the repository from anywhere.
    process.env.GIT_DIR = join(dir, '.git');
    await expectLeftToGit(elsewhere, /GIT_DIR is set/);
    expect(await gitBranch(elsewhere)).toBe('trunk');
  });

  it('a .git file with garbage, or naming nothing: git fails', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, '.git'), 'not a gitfile\n');
    await expectLeftToGit(dir, /not "gitdir: <path>"/);
    writeFileSync(join(dir, '.git'), `gitdir: ${join(dir, 'nowhere')}\n`);
    await expectLeftToGit(dir, /ENOENT/);
    expect(gitSays(dir)).toBeUndefined();
  });

  it('a .git directory git walks past (empty), and a .git that loops (ELOOP)', async () => {
    const dir = repo();
    mkdirSync(join(dir, 'inner', '.git'), { recursive: true });
    await expectLeftToGit(join(dir, 'inner'), /HEAD is missing/);
    expect(gitSays(join(dir, 'inner'))).toBe('trunk');
    mkdirSync(join(dir, 'loop'));
    symlinkSync('.git', join(dir, 'loop', '.git'));
    await expectLeftToGit(join(dir, 'loop'), /ELOOP/);
  });

  it('a bare repository, and inside .git', async () => {
    const bare = tempDir();
    git(bare, 'init', '-q', '--bare', '-b', 'trunk');
    await expectLeftToGit(bare, /may be a git directory/);
    const dir = repo();
    await expectLeftToGit(join(dir, '.git', 'refs'), /may be a git directory/);
    expect(gitSays(join(dir, '.git', 'refs'))).toBe('trunk');
  });

  it('a short name another ref could mean: git prints heads/<name>, or nothing for HEAD', async () => {
    for (const [ref, why] of [
      ['refs/tags/trunk', /refs\/tags\/trunk exists/],
      ['refs/remotes/trunk', /refs\/remotes\/trunk exists/],
      ['refs/trunk', /refs\/trunk exists/],
    ] as const) {
      const dir = repo();
      git(dir, 'update-ref', ref, 'HEAD');
      expect(gitSays(dir)).toBe('heads/trunk');
      await expectLeftToGit(dir, why);
      git(dir, 'pack-refs', '--all');
      await expectLeftToGit(dir, why);
    }
    const dir = repo();
    git(dir, 'update-ref', 'refs/heads/HEAD', 'HEAD');
    expect(gitSays(dir)).toBeUndefined();
    await expectLeftToGit(dir, /"HEAD" is ambiguous/);
  });

  it('HEAD or its branch in a form git resolves further: symbolic loose ref, outside refs/heads, reftable stub', async () => {
    const dir = repo();
    writeFileSync(join(dir, '.git', 'refs', 'heads', 'alias'), 'ref: refs/heads/trunk\n');
    git(dir, 'symbolic-ref', 'HEAD', 'refs/heads/alias');
    expect(gitSays(dir)).toBe('trunk');
    await expectLeftToGit(dir, /refs\/heads\/alias is not an object id/);
    git(dir, 'update-ref', 'refs/remotes/origin/x', 'trunk');
    git(dir, 'symbolic-ref', 'HEAD', 'refs/remotes/origin/x');
    await expectLeftToGit(dir, /neither refs\/heads/);
    writeFileSync(join(dir, '.git', 'HEAD'), 'ref: refs/heads/.invalid\n');
    await expectLeftToGit(dir, /branch name ".invalid"/);
  });

  it('a repository format git may refuse: unknown extension, version 2, config it cannot parse', async () => {
    for (const [config, why] of [
      ['[core]\n\trepositoryformatversion = 1\n[extensions]\n\tfrobnicate = true\n', /extension frobnicate/],
      ['[core]\n\trepositoryformatversion = 2\n', /format version "2"/],
      ['[core]\n\tbare = false\n[broken\n', /config:\d+: not a line/],
      ['[core]\n\trepositoryformatversion = 0\n[extensions]\n\tobjectformat = sha1\n', /objectformat sha1 in format 0/],
    ] as const) {
      const dir = repo();
      appendFileSync(join(dir, '.git', 'config'), config);
      expect(gitSays(dir)).toBeUndefined();
      await expectLeftToGit(dir, why);
    }
  });

  it('a malformed packed-refs: git fails', async () => {
    const dir = repo();
    git(dir, 'pack-refs', '--all');
    appendFileSync(join(dir, '.git', 'packed-refs'), 'garbage\n');
    expect(gitSays(dir)).toBeUndefined();
    await expectLeftToGit(dir, /packed-refs:\d+: unexpected/);
  });

  // Only root can give a file to another user.
  it.skipIf(process.geteuid?.() !== 0)('a repository another user owns (safe.directory): git decides', async () => {
    const dir = repo();
    execFileSync('chown', ['-R', '12345:12345', dir]);
    await expectLeftToGit(dir, /not owned by uid 0/);
    chownSync(dir, 0, 0);
    await expectLeftToGit(dir, /\.git is not owned/);
  });
});

describe('gitBranch', () => {
  it('starts no child process when the files answer', async () => {
    const dir = repo();
    git(dir, 'checkout', '-q', '-b', 'feature/x');
    const before = spawned.execFile;
    expect(await gitBranch(dir)).toBe('feature/x');
    expect(await gitBranch(tempDir())).toBeUndefined();
    expect(spawned.execFile).toBe(before);
  });
});
