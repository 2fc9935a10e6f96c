import { describe, expect, it } from 'vitest';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { codingTools } from '../../src/tools/coding-tools.js';
import { agentFor, call, tempDir, text, writeTree } from './helpers.js';

function setup(files: Record<string, string> = {}) {
  const root = tempDir();
  writeTree(root, files);
  const agent = agentFor(root, [codingTools({ ripgrep: 'off' })]);
  return { root, agent };
}

describe('read', () => {
  it('numbers lines the way dsh shows them and says where the file ends', async () => {
    const { root, agent } = setup({ 'config.txt': 'mode=DEBUG\nlevel=info\n' });
    const o = await call(agent, 'read', { file_path: 'config.txt' });
    expect(o.isError).toBe(false);
    expect(text(o)).toBe(
      `<path>${root}/config.txt</path>\n<type>file</type>\n<content>\n1: mode=DEBUG\n2: level=info\n\n(End of file - total 2 ` +
        'lines)\n</content>',
    );
  });

  it('returns a window with offset/limit and tells how to continue', async () => {
    const lines = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'].map((w) => `line ${w}`);
    const { agent } = setup({ 'big.txt': `${lines.join('\n')}\n` });
    const o = await call(agent, 'read', { file_path: 'big.txt', offset: 5, limit: 4 });
    expect(text(o)).toContain(
      '\n5: line five\n6: line six\n7: line seven\n8: line eight\n\n(Showing lines 5-8 of 10. Use offset=9 to continue.)\n',
    );
    expect(o.meta).toMatchObject({ offset: 5, totalLines: 10, shownLines: 4 });
  });

  it('reports a missing file as FS_NOT_FOUND, named FsError', async () => {
    const { agent, root } = setup();
    const o = await call(agent, 'read', { file_path: 'deleted.txt' });
    expect(o.isError).toBe(true);
    expect(o.error).toEqual({ name: 'FsError', code: 'FS_NOT_FOUND' });
    expect(text(o)).toBe(`Error: cannot read "${root}/deleted.txt": not found`);
  });

  it('lists a directory instead of failing on it', async () => {
    const { agent } = setup({ 'd/a.txt': 'a', 'd/sub/b.txt': 'b' });
    const o = await call(agent, 'read', { file_path: 'd' });
    expect(text(o)).toContain('<type>directory</type>\n<entries>\na.txt\nsub/\n</entries>');
  });

  it('refuses binary files and says so', async () => {
    const { agent } = setup({ 'bin.dat': 'ab\0cd' });
    const o = await call(agent, 'read', { file_path: 'bin.dat' });
    expect(o.error?.code).toBe('FS_BINARY');
  });

  it('validates arguments: a missing file_path is INVALID_ARGS, not a crash', async () => {
    const { agent } = setup();
    const o = await call(agent, 'read', { path: 'x' });
    expect(o.error?.code).toBe('INVALID_ARGS');
    expect(text(o)).toContain('file_path');
    const bad = await call(agent, 'read', '{"file_path": ');
    expect(bad.error?.code).toBe('INVALID_ARGS');
  });
});

describe('write', () => {
  it('creates a file (with parent directories) and reports "Created file"', async () => {
    const { root, agent } = setup();
    const o = await call(agent, 'write', { file_path: 'notes/n.txt', content: 'hello world' });
    expect(text(o)).toBe(`<path>${root}/notes/n.txt</path>\n<type>file</type>\n<content>\nCreated file\n</content>`);
    expect(readFileSync(join(root, 'notes/n.txt'), 'utf8')).toBe('hello world');
    expect(o.meta).toEqual({ diffs: [] });
  });

  it('replaces an existing file, keeping the diff basis in meta', async () => {
    const { root, agent } = setup({ 'data.txt': 'original contents' });
    const o = await call(agent, 'write', { file_path: 'data.txt', content: 'replaced' });
    expect(text(o)).toContain('Updated file');
    expect(readFileSync(join(root, 'data.txt'), 'utf8')).toBe('replaced');
    expect(o.meta).toEqual({ diffs: [{ path: 'data.txt', oldText: 'original contents', newText: 'replaced' }] });
  });

  it('accepts dsh escalation fields without failing validation', async () => {
    const { root, agent } = setup();
    const o = await call(agent, 'write', {
      file_path: 'e.md',
      content: 'x',
      sandbox_permissions: 'danger-full-access',
      justification: 'asked',
    });
    expect(o.isError).toBe(false);
    expect(existsSync(join(root, 'e.md'))).toBe(true);
  });
});

describe('edit', () => {
  it('replaces a unique match', async () => {
    const { root, agent } = setup({ 'config.txt': 'mode=DEBUG\nlevel=info\n' });
    const o = await call(agent, 'edit', { file_path: 'config.txt', old_string: 'DEBUG', new_string: 'RELEASE' });
    expect(text(o)).toBe(`The file ${root}/config.txt has been updated successfully.`);
    expect(readFileSync(join(root, 'config.txt'), 'utf8')).toBe('mode=RELEASE\nlevel=info\n');
  });

  it('refuses an ambiguous match and changes nothing', async () => {
    const { root, agent } = setup({ 'a.txt': 'x x x' });
    const o = await call(agent, 'edit', { file_path: 'a.txt', old_string: 'x', new_string: 'y' });
    expect(o.error).toEqual({ name: 'FsError', code: 'FS_EDIT_AMBIGUOUS' });
    expect(text(o)).toContain('occurs 3 times');
    expect(text(o)).toContain('replace_all');
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('x x x');
  });

  it('replaces every occurrence with replace_all', async () => {
    const { root, agent } = setup({ 'a.txt': 'x x x' });
    const o = await call(agent, 'edit', { file_path: 'a.txt', old_string: 'x', new_string: 'y', replace_all: true });
    expect(text(o)).toContain('(3 replacements)');
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('y y y');
  });

  it('treats replacement text literally ($& is not a pattern)', async () => {
    const { root, agent } = setup({ 'a.txt': 'price' });
    await call(agent, 'edit', { file_path: 'a.txt', old_string: 'price', new_string: '$& costs $1' });
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('$& costs $1');
  });

  it('says when old_string is absent, or identical to new_string', async () => {
    const { agent } = setup({ 'a.txt': 'abc' });
    expect((await call(agent, 'edit', { file_path: 'a.txt', old_string: 'zzz', new_string: 'y' })).error?.code).toBe('FS_EDIT_NOT_FOUND');
    expect((await call(agent, 'edit', { file_path: 'a.txt', old_string: 'abc', new_string: 'abc' })).error?.code).toBe('FS_EDIT_NOOP');
    expect((await call(agent, 'edit', { file_path: 'a.txt', old_string: '', new_string: 'y' })).error?.code).toBe('INVALID_ARGS');
  });
});

describe('glob', () => {
  it('matches basenames at any depth, includes hidden and ignored files, skips .git', async () => {
    const { agent } = setup({
      '.gitignore': 'build/\n',
      'src/a.ts': '',
      'src/deep/b.ts': '',
      '.hidden/c.ts': '',
      'build/d.ts': '',
      '.git/e.ts': '',
      'readme.md': '',
    });
    const o = await call(agent, 'glob', { pattern: '*.ts' });
    expect(text(o).split('\n').sort()).toEqual(['.hidden/c.ts', 'build/d.ts', 'src/a.ts', 'src/deep/b.ts']);
  });

  it('anchors patterns with a slash and prefixes results with the searched path', async () => {
    const { agent } = setup({ 'tree/src/index.ts': '', 'tree/docs/guide.md': '', 'tree/src/x/y.ts': '' });
    expect(text(await call(agent, 'glob', { pattern: 'src/*.ts', path: 'tree' }))).toBe('tree/src/index.ts');
    expect(text(await call(agent, 'glob', { pattern: '**/*.md', path: 'tree' }))).toBe('tree/docs/guide.md');
  });

  it('says "No files found" when nothing matches', async () => {
    const { agent } = setup({ 'a.txt': '' });
    expect(text(await call(agent, 'glob', { pattern: '*.rs' }))).toBe('No files found');
  });

  it('caps the listing at 100 paths and saves the complete list', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 130; i++) files[`f/${String(i).padStart(3, '0')}.txt`] = '';
    const { agent } = setup(files);
    const o = await call(agent, 'glob', { pattern: '*.txt' });
    const t = text(o);
    const saved = /Full output saved to: (\S+)\. /.exec(t)?.[1];
    expect(t).toContain('Showing 100 of 130 paths');
    expect(saved).toBeDefined();
    expect(readFileSync(saved!, 'utf8').split('\n')).toHaveLength(130);
    // The saved list is readable with the read tool (the spill directory is a read root).
    const r = await call(agent, 'read', { file_path: saved!, limit: 1 });
    expect(r.isError).toBe(false);
  });
});

describe('todo_write', () => {
  it('logs the whole list as todo/write and summarises it', async () => {
    const { ScriptedAdapter, textResponse, toolCallResponse } = await import('../../src/llm/scripted.js');
    const todos = [
      { content: 'read the code', status: 'in_progress' },
      { content: 'write the fix', status: 'pending' },
      { content: 'plan', status: 'completed', activeForm: 'Planning' },
    ];
    const adapter = new ScriptedAdapter([
      toolCallResponse([
        { id: 'c1', name: 'todo_write', args: { todos } },
        { id: 'c2', name: 'todo_write', args: { todos: [{ content: 'x', status: 'done' }] } },
      ]),
      textResponse('ok'),
    ]);
    const root = tempDir();
    const agent = agentFor(root, [codingTools()], { adapter });
    agent.prompt('plan it');
    await agent.whenIdle();
    const logged = agent.session.events.filter((e) => e.type === 'todo/write').map((e) => e.data);
    expect(logged).toEqual([{ todos: todos.map(({ content, status }) => ({ content, status })) }]);
    const results = agent.session.events
      .filter((e) => e.type === 'tool/result')
      .map((e) => e.data as { message: { content: { content: { text: string }[] }[] }; error?: { code: string } });
    expect(results[0]!.message.content[0]!.content[0]!.text).toBe('Updated todo list: 1 pending, 1 in progress, 1 completed.');
    expect(results[1]!.error?.code).toBe('INVALID_ARGS');
  });
});

describe('special files', () => {
  it('a FIFO is refused at once (FS_NOT_A_FILE), never waited on', async () => {
    const { execFileSync } = await import('node:child_process');
    const { root, agent } = setup();
    execFileSync('mkfifo', [join(root, 'pipe')]);
    const o = await call(agent, 'read', { file_path: 'pipe' });
    expect(o.error).toEqual({ name: 'FsError', code: 'FS_NOT_A_FILE' });
    expect((await call(agent, 'edit', { file_path: 'pipe', old_string: 'a', new_string: 'b' })).error?.code).toBe('FS_NOT_A_FILE');
  });
});
