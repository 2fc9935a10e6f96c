/** The sessions root that `checkSessionsRoot` creates must be as durable as what the store creates. */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

const synced: string[] = [];
vi.mock('../../src/store/durable.js', async (importOriginal) => {
  const orig = await importOriginal<typeof import('../../src/store/durable.js')>();
  return {
    ...orig,
    fsyncDir: (dir: string) => {
      synced.push(dir);
      orig.fsyncDir(dir);
    },
  };
});
const { checkSessionsRoot } = await import('../../src/cli/home.js');

const dir = mkdtempSync(join(tmpdir(), 'dsh-home-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('checkSessionsRoot with create', () => {
  it('fsyncs the parent of every directory it creates (as mkdirDurable did), so the root survives a power loss', () => {
    const home = join(dir, 'a', 'home');
    const root = join(home, 'sessions');
    synced.length = 0;
    checkSessionsRoot(root, { DSH_HOME: home }, { create: true });
    expect(statSync(root).isDirectory()).toBe(true);
    expect(synced).toEqual([dir, join(dir, 'a'), home]);
    synced.length = 0;
    checkSessionsRoot(root, { DSH_HOME: home }, { create: true });
    expect(synced).toEqual([]); // nothing new, nothing to sync
  });
});
