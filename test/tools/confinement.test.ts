/**
 * Every way out of the workspace a model might try, through the real tools: each must be refused
 * with a clear result, and nothing outside may be read or changed.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { codingTools } from '../../src/tools/coding-tools.js';
import { agentFor, call, tempDir, text, writeTree } from './helpers.js';

function setup() {
  const outside = tempDir('dsh-outside-');
  writeFileSync(join(outside, 'secret.txt'), 'TOP SECRET\n');
  mkdirSync(join(outside, 'dir'));
  writeFileSync(join(outside, 'dir', 'inner.txt'), 'INNER SECRET\n');
  const root = tempDir('dsh-ws-');
  writeTree(root, { 'ok.txt': 'fine\n', 'src/a.ts': 'const a = 1;\n' });
  const agent = agentFor(root, [codingTools({ ripgrep: 'off' })]);
  return { root, outside, agent };
}

describe('workspace confinement', () => {
  it('refuses .. that climbs out, for reads and writes', async () => {
    const { agent, outside, root } = setup();
    const rel = join('..', outside.split('/').pop()!, 'secret.txt');
    const r = await call(agent, 'read', { file_path: rel });
    expect(r.error).toEqual({ name: 'FsError', code: 'FS_OUTSIDE_WORKSPACE' });
    expect(text(r)).toContain('outside the workspace');
    expect(text(r)).not.toContain('TOP SECRET');
    const w = await call(agent, 'write', { file_path: `src/../../${outside.split('/').pop()}/new.txt`, content: 'x' });
    expect(w.error?.code).toBe('FS_OUTSIDE_WORKSPACE');
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);
    // `..` that stays inside is fine.
    expect(text(await call(agent, 'read', { file_path: 'src/../ok.txt' }))).toContain('1: fine');
    expect(root).toBeTruthy();
  });

  it('refuses absolute paths outside, and accepts absolute paths inside', async () => {
    const { agent, outside, root } = setup();
    expect((await call(agent, 'read', { file_path: join(outside, 'secret.txt') })).error?.code).toBe('FS_OUTSIDE_WORKSPACE');
    expect((await call(agent, 'read', { file_path: '/etc/passwd' })).error?.code).toBe('FS_OUTSIDE_WORKSPACE');
    expect((await call(agent, 'edit', { file_path: join(outside, 'secret.txt'), old_string: 'TOP', new_string: 'NO' })).error?.code).toBe(
      'FS_OUTSIDE_WORKSPACE',
    );
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('TOP SECRET\n');
    expect(text(await call(agent, 'read', { file_path: join(root, 'ok.txt') }))).toContain('1: fine');
  });

  it('refuses a symlink to a file outside, for read, write and edit', async () => {
    const { agent, outside, root } = setup();
    symlinkSync(join(outside, 'secret.txt'), join(root, 'link.txt'));
    for (const [name, args] of [
      ['read', { file_path: 'link.txt' }],
      ['write', { file_path: 'link.txt', content: 'pwned' }],
      ['edit', { file_path: 'link.txt', old_string: 'TOP', new_string: 'NO' }],
    ] as const) {
      const o = await call(agent, name, args);
      expect(o.error, name).toEqual({ name: 'FsError', code: 'FS_SYMLINK_ESCAPE' });
      expect(text(o)).toContain(`resolves through a symbolic link to "${join(outside, 'secret.txt')}"`);
    }
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('TOP SECRET\n');
  });

  it('refuses a dangling symlink that would create a file outside', async () => {
    const { agent, outside, root } = setup();
    symlinkSync(join(outside, 'created-by-link.txt'), join(root, 'dangling'));
    const o = await call(agent, 'write', { file_path: 'dangling', content: 'x' });
    expect(o.error?.code).toBe('FS_SYMLINK_ESCAPE');
    expect(existsSync(join(outside, 'created-by-link.txt'))).toBe(false);
  });

  it('refuses a path through a symlinked directory that leads out (read, write, glob, grep, bash workdir)', async () => {
    const { agent, outside, root } = setup();
    symlinkSync(join(outside, 'dir'), join(root, 'linkdir'));
    expect((await call(agent, 'read', { file_path: 'linkdir/inner.txt' })).error?.code).toBe('FS_SYMLINK_ESCAPE');
    expect((await call(agent, 'write', { file_path: 'linkdir/new.txt', content: 'x' })).error?.code).toBe('FS_SYMLINK_ESCAPE');
    expect((await call(agent, 'glob', { pattern: '*', path: 'linkdir' })).error?.code).toBe('FS_SYMLINK_ESCAPE');
    expect((await call(agent, 'grep', { pattern: 'SECRET', path: 'linkdir' })).error?.code).toBe('FS_SYMLINK_ESCAPE');
    expect((await call(agent, 'bash', { command: 'pwd', workdir: 'linkdir' })).error?.code).toBe('FS_SYMLINK_ESCAPE');
    expect(existsSync(join(outside, 'dir', 'new.txt'))).toBe(false);
  });

  it('never lists or searches through a link found while walking the tree', async () => {
    const { agent, outside, root } = setup();
    symlinkSync(join(outside, 'dir'), join(root, 'src', 'linkdir'));
    symlinkSync(join(outside, 'secret.txt'), join(root, 'src', 'linkfile.txt'));
    expect(text(await call(agent, 'grep', { pattern: 'SECRET' }))).toBe('No matches found');
    expect(text(await call(agent, 'glob', { pattern: '*.txt' }))).toBe('ok.txt');
  });

  it('follows a symlink chain that stays inside, and refuses one whose last hop leaves', async () => {
    const { agent, outside, root } = setup();
    symlinkSync(join(root, 'ok.txt'), join(root, 'hop2'));
    symlinkSync('hop2', join(root, 'hop1'));
    expect(text(await call(agent, 'read', { file_path: 'hop1' }))).toContain('1: fine');
    symlinkSync(join(outside, 'secret.txt'), join(root, 'out2'));
    symlinkSync('out2', join(root, 'out1'));
    symlinkSync('out1', join(root, 'out0'));
    const o = await call(agent, 'read', { file_path: 'out0' });
    expect(o.error?.code).toBe('FS_SYMLINK_ESCAPE');
    expect(text(o)).not.toContain('TOP SECRET');
  });

  it('follows a symlinked directory that stays inside (reads and writes land in the real place)', async () => {
    const { agent, root } = setup();
    symlinkSync(join(root, 'src'), join(root, 'alias'));
    expect(text(await call(agent, 'read', { file_path: 'alias/a.ts' }))).toContain('1: const a = 1;');
    await call(agent, 'write', { file_path: 'alias/b.ts', content: 'b' });
    expect(readFileSync(join(root, 'src', 'b.ts'), 'utf8')).toBe('b');
  });

  it('refuses a link inside a chain of directories that points out via ..', async () => {
    const { agent, root } = setup();
    mkdirSync(join(root, 'a', 'b'), { recursive: true });
    symlinkSync('../../..', join(root, 'a', 'b', 'up'));
    const o = await call(agent, 'read', { file_path: 'a/b/up/etc/passwd' });
    expect(o.error?.code).toBe('FS_SYMLINK_ESCAPE');
  });

  it('reports a symlink loop instead of hanging', async () => {
    const { agent, root } = setup();
    symlinkSync('loop2', join(root, 'loop1'));
    symlinkSync('loop1', join(root, 'loop2'));
    expect((await call(agent, 'read', { file_path: 'loop1' })).error?.code).toBe('FS_SYMLINK_LOOP');
  });

  it('refuses NUL bytes in a path', async () => {
    const { agent } = setup();
    const o = await call(agent, 'read', { file_path: 'ok.txt\u0000../../etc/passwd' });
    expect(o.error).toEqual({ name: 'FsError', code: 'FS_INVALID_PATH' });
    expect(text(o)).toContain('NUL byte');
    expect((await call(agent, 'write', { file_path: 'a\u0000b', content: 'x' })).error?.code).toBe('FS_INVALID_PATH');
  });

  it('refuses very long paths and over-long names', async () => {
    const { agent } = setup();
    const long = Array.from({ length: 500 }, () => 'abcdefghij').join('/');
    expect((await call(agent, 'write', { file_path: long, content: 'x' })).error?.code).toBe('FS_PATH_TOO_LONG');
    expect((await call(agent, 'read', { file_path: 'x'.repeat(300) })).error?.code).toBe('FS_PATH_TOO_LONG');
    expect((await call(agent, 'read', { file_path: '' })).error?.code).toBe('FS_INVALID_PATH');
  });

  it('confinement sits on the fs seam, not in the tools: a custom tool using the seam is confined too', async () => {
    const { root, outside } = setup();
    const { WorkspaceFs } = await import('../../src/tools/fs/seam.js');
    const { z } = await import('zod');
    const agent = agentFor(root, [
      codingTools({ only: [] }),
      (host) =>
        host.tool({
          name: 'peek',
          description: 'read via the seam',
          parameters: z.object({ p: z.string() }),
          async execute(args, ctx) {
            return (await WorkspaceFs.forCall(ctx).read(args.p, { maxBytes: 1000 })).text;
          },
        }),
    ]);
    const o = await call(agent, 'peek', { p: join(outside, 'secret.txt') });
    expect(o.error).toEqual({ name: 'FsError', code: 'FS_OUTSIDE_WORKSPACE' });
  });
});
