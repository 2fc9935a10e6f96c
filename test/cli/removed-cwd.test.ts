/**
 * dsh started in a directory that was removed (a shell left in a deleted worktree or temp dir):
 * Node's process.cwd() then throws (ENOENT, uv_cwd). A command that does not need the current
 * directory still works; one that does says which directory is missing, not `uv_cwd`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionStore } from '../../src/store/index.js';
import { builtBin, dsh, type Run } from './support/run.js';
import { tempDir } from './support/agent.js';

/**
 * Runs dsh started in a removed directory, as from a shell whose directory was deleted: a wrapper
 * removes its own working directory (by the name it is given) and starts dsh there. Removed any
 * later, Node would already hold the name (it reads the directory once as it starts).
 */
function dshInRemovedDir(args: readonly string[], env: Record<string, string>): Promise<Run> {
  const gone = tempDir();
  const wrapper = join(tempDir(), 'in-removed-dir.mjs');
  writeFileSync(
    wrapper,
    [
      "import { rmdirSync } from 'node:fs';",
      "import { spawnSync } from 'node:child_process';",
      'rmdirSync(process.env.REMOVE_DIR);',
      `const r = spawnSync(process.execPath, [${JSON.stringify(builtBin())}, ...process.argv.slice(2)], { stdio: 'inherit' });`,
      'process.exit(r.status ?? 1);',
      '',
    ].join('\n'),
  );
  return dsh(args, { cwd: gone, bin: wrapper, env: { ...env, REMOVE_DIR: gone } });
}

describe('dsh in a removed current directory', () => {
  it('sessions --all, path and lineage work (they need no current directory); sessions alone names the missing directory', async () => {
    const home = tempDir();
    const ws = tempDir();
    const id = 'c0de0000-0000-4000-8000-000000000001';
    const store = new SessionStore({ root: join(home, 'sessions'), clock: () => Date.UTC(2026, 0, 2, 3, 4) });
    const stored = await store.create({ cwd: ws, id });
    const log = stored.path;
    await store.close();
    const env = { DSH_HOME: home };

    const all = await dshInRemovedDir(['sessions', '--all'], env);
    expect(all.stderr).toBe('');
    expect(all.code).toBe(0);
    expect(all.stdout).toBe(`${id}  2026-01-02 03:04Z · 0 turns · ${ws}\n  ${log}\n`);

    const path = await dshInRemovedDir(['sessions', 'path', id.slice(0, 8)], env);
    expect(path.stderr).toBe('');
    expect(path.stdout).toBe(`${log}\n`);

    const lineage = await dshInRemovedDir(['sessions', 'lineage', id.slice(0, 8)], env);
    expect(lineage.stderr).toBe('');
    expect(lineage.stdout).toContain(id);

    const here = await dshInRemovedDir(['sessions'], env);
    expect(here.code).toBe(1);
    expect(here.stdout).toBe('');
    expect(here.stderr).toMatch(
      /^dsh: the current directory no longer exists \(removed\?\); cd to one, or give --cwd \[NOT_A_DIRECTORY\]\n$/,
    );
  });

  it('a command that needs the PostgreSQL store says so (NEEDS_POSTGRES), naming the user config', async () => {
    const home = tempDir();
    const serve = await dshInRemovedDir(['serve'], { DSH_HOME: home });
    expect(serve.code).toBe(1);
    expect(serve.stderr).toContain(`(or "store" in ${join(home, 'config.json')}); see docs/scale.md [NEEDS_POSTGRES]`);
  });
});
