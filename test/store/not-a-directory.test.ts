/**
 * A project or session directory under the root that is a symbolic link (or a file) is refused
 * with NOT_A_DIRECTORY before anything is written: listings and lookups follow only real
 * directories, so a session made through a link was written outside the root and never found
 * again (found by the hostile review of the listing index). open refuses a linked session directory
 * too: the lookup followed it, and the lock, the resume index and the appends went outside the root
 * (found by the hostile review of the resume index). Each case uses real links.
 */
import { mkdirSync, readdirSync, renameSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionStore } from '../../src/store/index.js';
import { logPath } from '../../src/store/layout.js';
import { tempDir } from '../cli/support/agent.js';
import { codeOf } from './support/code-of.js';
import { appendTurn, fixedClock } from './support/events.js';

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

  for (const which of ['project', 'session'] as const) {
    it(`open: a session whose ${which} directory was moved out and linked back is refused, nothing written outside`, async () => {
      // open found the log through the link and wrote its lock and resume index (and every append) outside the root.
      const { root, outside, st } = await withSource();
      const dirs = dirsOf(root, '/src', 'source');
      const moved = join(outside, which);
      renameSync(dirs[which], moved);
      symlinkSync(moved, dirs[which]);
      const log = which === 'session' ? join(moved, 'session.jsonl') : join(moved, 'source', 'session.jsonl');
      const before = { files: readdirSync(dirname(log)).sort(), size: statSync(log).size };
      expect(before.files).toEqual(['session.jsonl']);
      // A linked project directory is not looked into (not found); a linked session directory is, and is refused.
      expect(await codeOf(st.open('source'))).toBe(which === 'project' ? 'SESSION_NOT_FOUND' : 'NOT_A_DIRECTORY');
      expect({ files: readdirSync(dirname(log)).sort(), size: statSync(log).size }).toEqual(before);
      await st.close();
    });
  }
});
