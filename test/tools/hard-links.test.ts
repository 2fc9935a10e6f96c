/**
 * A regular file with more than one hard link may have a name outside the workspace: the file
 * tools refuse to write or edit it, and to read or search it under read-only and workspace-write,
 * unless the mode is danger-full-access or an allow rule names the call. Every tool, every mode.
 * And what `bash` can and cannot do with hard links inside bubblewrap, as docs/tools.md states it.
 */
import { describe, expect, it } from 'vitest';
import { linkSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { codingTools } from '../../src/tools/coding-tools.js';
import { permissions, type PermissionsOptions } from '../../src/tools/permissions/plugin.js';
import { probeBubblewrap } from '../../src/tools/shell/bubblewrap.js';
import type { Plugin } from '../../src/agent/agent.js';
import { agentFor, call, outsideDir, text } from './helpers.js';

const OUTSIDE_TEXT = 'OUTSIDE LINKED CONTENT\n';

/** A workspace and an outside directory on one filesystem, `linked.txt` a hard link to the outside file. */
function setup(base?: string) {
  const parent = outsideDir();
  const root = join(base ?? parent, 'ws');
  const out = join(base ?? parent, 'out');
  mkdirSync(root);
  mkdirSync(out);
  writeFileSync(join(out, 'shared.txt'), OUTSIDE_TEXT);
  linkSync(join(out, 'shared.txt'), join(root, 'linked.txt'));
  writeFileSync(join(root, 'plain.txt'), 'plain LINKED CONTENT\n');
  return { root, out, outsideFile: join(out, 'shared.txt') };
}

type Mode = 'none' | NonNullable<PermissionsOptions['sandbox']>;
function plugins(mode: Mode, extra: PermissionsOptions = {}, ripgrep: 'auto' | 'off' = 'off'): Plugin[] {
  const p: Plugin[] = [codingTools({ ripgrep })];
  if (mode !== 'none') p.push(permissions({ sandbox: mode, approval: 'never', ...extra }));
  return p;
}

describe('hard links: file tools', () => {
  for (const mode of ['none', 'read-only', 'workspace-write'] as const) {
    // grep skips it and says so; glob lists its name.
    it(`${mode === 'none' ? 'no permissions plugin' : mode}: read, write and edit refuse it, FS_HARD_LINK naming the path`, async () => {
      const { root, outsideFile } = setup();
      const agent = agentFor(root, plugins(mode));
      const r = await call(agent, 'read', { file_path: 'linked.txt' });
      expect(r.error).toEqual({ name: 'FsError', code: 'FS_HARD_LINK' });
      expect(text(r)).toContain(`cannot read "${join(root, 'linked.txt')}": it is a hard link (the file has 2 names)`);
      expect(text(r)).not.toContain('OUTSIDE');
      const w = await call(agent, 'write', { file_path: 'linked.txt', content: 'changed\n' });
      const e = await call(agent, 'edit', { file_path: 'linked.txt', old_string: 'OUTSIDE', new_string: 'CHANGED' });
      const writeCode = mode === 'read-only' ? 'FS_SANDBOX_DENIED' : 'FS_HARD_LINK';
      expect(w.error?.code).toBe(writeCode);
      expect(e.error?.code).toBe(writeCode);
      if (mode !== 'read-only') expect(text(w)).toContain(`cannot write "${join(root, 'linked.txt')}": it is a hard link`);
      for (const ripgrep of ['off', 'auto'] as const) {
        const g = await call(agentFor(root, plugins(mode, {}, ripgrep)), 'grep', { pattern: 'LINKED CONTENT' });
        expect(text(g), ripgrep).toContain('Found 1 match in 1 file');
        expect(text(g), ripgrep).toContain('plain.txt');
        expect(text(g), ripgrep).not.toContain('OUTSIDE');
        expect(text(g), ripgrep).toContain('(1 file was not searched: more than one hard link');
        const named = await call(agentFor(root, plugins(mode, {}, ripgrep)), 'grep', { pattern: 'LINKED', path: 'linked.txt' });
        expect(text(named), ripgrep).toMatch(/^No matches found\n\(1 file was not searched/);
      }
      expect(text(await call(agent, 'glob', { pattern: '*.txt' }))).toContain('linked.txt');
      expect(readFileSync(outsideFile, 'utf8')).toBe(OUTSIDE_TEXT);
      expect(statSync(outsideFile).nlink).toBe(2);
    });
  }

  it('danger-full-access: read and grep see it; write and edit replace the workspace name (the outside name keeps its data)', async () => {
    const { root, outsideFile } = setup();
    const agent = agentFor(root, plugins('danger-full-access'));
    expect(text(await call(agent, 'read', { file_path: 'linked.txt' }))).toContain('1: OUTSIDE LINKED CONTENT');
    expect(text(await call(agent, 'grep', { pattern: 'OUTSIDE' }))).toContain('linked.txt');
    const e = await call(agent, 'edit', { file_path: 'linked.txt', old_string: 'OUTSIDE', new_string: 'EDITED' });
    expect(e.isError).toBe(false);
    expect(readFileSync(join(root, 'linked.txt'), 'utf8')).toBe('EDITED LINKED CONTENT\n');
    expect(readFileSync(outsideFile, 'utf8')).toBe(OUTSIDE_TEXT);
    expect(statSync(outsideFile).nlink).toBe(1);
  });

  it('an allow rule lets exactly the call it names at the file', async () => {
    const { root } = setup();
    const agent = agentFor(root, plugins('workspace-write', { allow: ['read(linked.txt)'] }));
    expect(text(await call(agent, 'read', { file_path: 'linked.txt' }))).toContain('1: OUTSIDE LINKED CONTENT');
    expect((await call(agent, 'edit', { file_path: 'linked.txt', old_string: 'OUTSIDE', new_string: 'X' })).error?.code).toBe(
      'FS_HARD_LINK',
    );
    const writer = agentFor(root, plugins('workspace-write', { allow: ['write(linked.txt)'] }));
    expect((await call(writer, 'write', { file_path: 'linked.txt', content: 'new\n' })).isError).toBe(false);
    expect(readFileSync(join(root, 'linked.txt'), 'utf8')).toBe('new\n');
  });
});

const bwrap = await probeBubblewrap('bwrap');
describe.skipIf(!bwrap.ok)('hard links: bash inside bubblewrap (what docs/tools.md says)', () => {
  for (const mode of ['read-only', 'workspace-write'] as const) {
    it(`${mode}: a new hard link to an outside file cannot be made (EXDEV across the bind mount)`, async () => {
      const { root, outsideFile } = setup();
      const agent = agentFor(root, plugins(mode));
      const o = text(await call(agent, 'bash', { command: `ln ${outsideFile} ${join(root, 'new-link')}` }));
      expect(o).toMatch(mode === 'read-only' ? /Read-only file system|Invalid cross-device link/ : /Invalid cross-device link/);
      expect(statSync(outsideFile).nlink).toBe(2);
    });
  }

  it('workspace-write: a hard link that already exists is read and written through by bash (the sandbox cannot tell)', async () => {
    const { root, outsideFile } = setup();
    const agent = agentFor(root, plugins('workspace-write'));
    expect(text(await call(agent, 'bash', { command: 'cat linked.txt; echo appended >> linked.txt' }))).toContain('OUTSIDE LINKED CONTENT');
    expect(readFileSync(outsideFile, 'utf8')).toBe(`${OUTSIDE_TEXT}appended\n`);
  });
});
