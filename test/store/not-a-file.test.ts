/**
 * A session whose `session.jsonl` is not a regular file (a FIFO, a link to a device, a directory)
 * is refused before it is opened: opening a FIFO for reading blocks until a writer comes, and
 * /dev/zero never ends, so without the check `open`, `inspect` and a listing hung (found by a
 * hostile review of the resume index). Each case runs the store against a real FIFO and link.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionStore } from '../../src/store/index.js';
import { logPath } from '../../src/store/layout.js';
import { tempDir } from '../cli/support/agent.js';
import { codeOf } from './support/code-of.js';

const kinds: [string, (path: string) => void][] = [
  ['a FIFO', (path) => execFileSync('mkfifo', [path])],
  ['a link to /dev/zero', (path) => symlinkSync('/dev/zero', path)],
  ['a directory', (path) => mkdirSync(path)],
  // A link to itself: stat fails with ELOOP, which ended every listing (an untyped error) before.
  ['a link loop', (path) => symlinkSync(path, path)],
];

describe('a session log that is not a regular file', () => {
  for (const [what, make] of kinds) {
    it(`${what}: open and inspect refuse it with NOT_A_FILE, a listing reports it as a problem and lists the rest`, async () => {
      const root = tempDir('dsh-notfile-');
      const store = new SessionStore({ root });
      const good = await store.create({ cwd: '/w' });
      await good.close();
      const path = logPath(root, '/w', 'odd');
      mkdirSync(dirname(path), { recursive: true });
      make(path);
      expect(await codeOf(new SessionStore({ root }).open('odd'))).toBe('NOT_A_FILE');
      expect(await codeOf(new SessionStore({ root }).inspect('odd', { cwd: '/w' }))).toBe('NOT_A_FILE');
      for (const listingIndex of [false, true]) {
        const listed = await new SessionStore({ root, listingIndex }).list();
        expect(listed.sessions.map((s) => s.id)).toEqual([good.session.id]);
        expect(listed.problems.map((p) => [p.path, p.error.code])).toEqual([[path, 'NOT_A_FILE']]);
      }
      rmSync(root, { recursive: true, force: true });
    });
  }
});

describe('a session log that is a link to a regular file outside the session directory', () => {
  it('open refuses it with NOT_A_FILE and writes nothing through it (it appended its end marker there)', async () => {
    const root = tempDir('dsh-notfile-');
    const store = new SessionStore({ root });
    const s = await store.create({ cwd: '/w', id: 'linked' });
    await s.close();
    const away = join(tempDir('dsh-away-'), 'log.jsonl');
    renameSync(s.path, away);
    symlinkSync(away, s.path);
    const before = readFileSync(away);
    expect(await codeOf(new SessionStore({ root }).open('linked'))).toBe('NOT_A_FILE');
    expect(readFileSync(away)).toEqual(before);
    rmSync(root, { recursive: true, force: true });
  });
});
