/**
 * A project or session directory under the root that is a symbolic link (or a file) is refused
 * with NOT_A_DIRECTORY before anything is written: listings and lookups follow only real
 * directories, so a session made through a link was written outside the root and never found
 * again (found by the hostile review of the listing index). Each case uses real links.
 */
import { readdirSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionStore, StoreError } from '../../src/store/index.js';
import { logPath } from '../../src/store/layout.js';
import { tempDir } from '../cli/support/agent.js';
import { appendTurn, fixedClock } from './support/events.js';

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (e) {
    return e instanceof StoreError ? e.code : String(e);
  }
}

/** The directories of a session `id` of workspace `cwd` under `root`: its project's and its own. */
const dirsOf = (root: string, cwd: string, id: string) => {
  const session = dirname(logPath(root, cwd, id));
  return { project: dirname(session), session };
};

/** A store under a new root with one session to fork (`source`), and a directory outside the root. */
async function withSource(): Promise<{ root: string; outside: string; st: SessionStore }> {
  const root = tempDir();
  const st = new SessionStore({ root, clock: fixedClock() });
  const src = await st.create({ cwd: '/src', id: 'source' });
  appendTurn(src.session);
  await src.close();
  return { root, outside: tempDir(), st };
}

describe('a project or session directory that is not a plain directory', () => {
  const ways: [string, (store: SessionStore, cwd: string, id: string) => Promise<unknown>][] = [
    ['create', (st, cwd, id) => st.create({ cwd, id })],
    ['importLog', (st, cwd, id) => st.importLog({ header: { version: 0, id, createdAt: 1, cwd }, events: [] })],
    ['fork', (st, cwd, id) => st.fork('source', undefined, { id, header: { cwd } })],
  ];
  for (const [way, make] of ways) {
    it(`${way}: a project directory linked out of the root is refused, nothing written outside`, async () => {
      const { root, outside, st } = await withSource();
      const { project } = dirsOf(root, '/w', 'x');
      symlinkSync(outside, project);
      expect(await codeOf(make(st, '/w', 'x'))).toBe('NOT_A_DIRECTORY');
      expect(readdirSync(outside)).toEqual([]);
      await st.close();
    });

    it(`${way}: a session directory linked out of the root, or a file there, is refused`, async () => {
      const { root, outside, st } = await withSource();
      const { project, session } = dirsOf(root, '/w', 'x');
      mkdirSync(project, { recursive: true });
      symlinkSync(outside, session);
      expect(await codeOf(make(st, '/w', 'x'))).toBe('NOT_A_DIRECTORY');
      expect(readdirSync(outside)).toEqual([]);
      const other = dirsOf(root, '/w', 'y');
      writeFileSync(other.session, 'not a directory');
      expect(await codeOf(make(st, '/w', 'y'))).toBe('NOT_A_DIRECTORY');
      // A plain directory is fine.
      expect(await codeOf(make(st, '/w', 'z').then((s) => (s as { close?: () => Promise<unknown> }).close?.()))).toBeUndefined();
      await st.close();
    });
  }
});
