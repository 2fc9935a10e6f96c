/**
 * `str_replace_editor` (toolSet minimal): each command on real files in a temporary workspace,
 * through the real pipeline and filesystem seam. Expected texts are built from the file
 * contents the test wrote, by the rule dsh's format states (`%6d` + two spaces per line of
 * `text.split('\n')`), not copied from the tool's output.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { codingTools } from '../../src/tools/coding-tools.js';
import { permissions } from '../../src/tools/permissions/plugin.js';
import { occurrenceLines } from '../../src/tools/builtin/str-replace-editor.js';
import { agentFor, call, outsideDir, tempDir, text, writeTree } from './helpers.js';

function setup(sandbox?: 'read-only' | 'workspace-write') {
  const root = tempDir();
  const plugins = [codingTools({ toolSet: 'minimal' })];
  if (sandbox) plugins.push(permissions({ sandbox, approval: 'never' }));
  return { root, agent: agentFor(root, plugins) };
}

function numbered(path: string, content: string): string {
  const lines = content.split('\n');
  const body = lines.map((l, i) => `${String(i + 1).padStart(6, ' ')}  ${l}`).join('\n');
  return `Here's the content of ${path} with line numbers (which has a total of ${lines.length} lines):\n${body}\n`;
}

describe('str_replace_editor', () => {
  it('create, view, str_replace: the scenario dsh recorded, tab-indented line and all', async () => {
    const { root, agent } = setup();
    const path = join(root, 'note.txt');
    const created = await call(agent, 'str_replace_editor', { command: 'create', path, file_text: 'target:\n\told\n' });
    expect(created.isError).toBe(false);
    expect(text(created)).toBe(`New file created successfully at: ${path}`);
    expect(text(await call(agent, 'str_replace_editor', { command: 'view', path }))).toBe(numbered(path, 'target:\n\told\n'));
    const replaced = await call(agent, 'str_replace_editor', { command: 'str_replace', path, old_str: '\told', new_str: '\tnew' });
    expect(text(replaced)).toBe(`The file ${path} has been edited successfully.`);
    expect(readFileSync(path, 'utf8')).toBe('target:\n\tnew\n');
    expect(replaced.meta).toEqual({ diffs: [{ path: 'note.txt', oldText: 'target:\n\told\n', newText: 'target:\n\tnew\n' }] });
  });

  it('view with a range, and the range errors', async () => {
    const { root, agent } = setup();
    const path = join(root, 'f.txt');
    const content = 'a\nb\nc\nd\n';
    writeFileSync(path, content);
    const lines = content.split('\n');
    const shown = (from: number, to: number) =>
      lines
        .slice(from - 1, to)
        .map((l, i) => `${String(from + i).padStart(6, ' ')}  ${l}`)
        .join('\n');
    expect(text(await call(agent, 'str_replace_editor', { command: 'view', path, view_range: [2, 3] }))).toBe(
      `Here's the content of ${path} with line numbers (which has a total of 5 lines) with view_range=[2, 3]:\n${shown(2, 3)}\n`,
    );
    expect(text(await call(agent, 'str_replace_editor', { command: 'view', path, view_range: [3, -1] }))).toContain(shown(3, 5));
    for (const range of [[0, 2], [2, 9], [3, 2], [1]]) {
      const o = await call(agent, 'str_replace_editor', { command: 'view', path, view_range: range });
      expect(o.isError).toBe(true);
      expect(o.error?.code).toBe('EDITOR_BAD_RANGE');
    }
  });

  it('views a directory two levels deep, without hidden entries, node_modules or __pycache__', async () => {
    const { root, agent } = setup();
    writeTree(root, {
      'a.txt': '',
      'src/b.ts': '',
      'src/deep/c.ts': '',
      'src/deep/deeper/d.ts': '',
      '.git/HEAD': '',
      'node_modules/x/index.js': '',
      'pkg/__pycache__/m.pyc': '',
    });
    // Sorted by path (code points), the type letter in front.
    const want = (
      [
        ['d', root],
        ['f', `${root}/a.txt`],
        ['d', `${root}/pkg`],
        ['d', `${root}/src`],
        ['f', `${root}/src/b.ts`],
        ['d', `${root}/src/deep`],
      ] as const
    )
      .slice()
      .sort((x, y) => (x[1] < y[1] ? -1 : 1))
      .map(([t, p]) => `${t}\t${p}`)
      .join('\n');
    expect(text(await call(agent, 'str_replace_editor', { command: 'view', path: root }))).toBe(
      `Here're the files and directories up to 2 levels deep in ${root}, excluding hidden items, node_modules, and Python cache ` +
        `directories:\n${want}\n\n`,
    );
  });

  it('str_replace with no match or several matches changes nothing and says why', async () => {
    const { root, agent } = setup();
    const path = join(root, 'f.txt');
    const content = 'x = 1\ny = 2\nx = 1\n';
    writeFileSync(path, content);
    const none = await call(agent, 'str_replace_editor', { command: 'str_replace', path, old_str: 'z = 3', new_str: 'q' });
    expect(none.isError).toBe(true);
    expect(none.error?.code).toBe('FS_EDIT_NOT_FOUND');
    const many = await call(agent, 'str_replace_editor', { command: 'str_replace', path, old_str: 'x = 1', new_str: 'x = 9' });
    expect(many.isError).toBe(true);
    expect(many.error?.code).toBe('FS_EDIT_AMBIGUOUS');
    expect(text(many)).toContain('occurs 2 times, on lines [1, 3]');
    expect(readFileSync(path, 'utf8')).toBe(content);
    const empty = await call(agent, 'str_replace_editor', { command: 'str_replace', path, old_str: '' });
    expect(empty.error?.code).toBe('EDITOR_MISSING_PARAMETER');
  });

  it('occurrenceLines names the line of each non-overlapping occurrence (fast-check against a line-by-line count)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('ab', 'a', 'b', '\n', 'aba'), { maxLength: 30 }),
        fc.constantFrom('a', 'ab', 'ba', 'a\nb'),
        (parts, needle) => {
          const hay = parts.join('');
          const want: number[] = [];
          for (let i = hay.indexOf(needle); i !== -1; i = hay.indexOf(needle, i + needle.length))
            want.push(hay.slice(0, i).split('\n').length);
          expect(occurrenceLines(hay, needle)).toEqual(want);
        },
      ),
    );
  });

  it('insert puts lines after insert_line (0 = top) and refuses a line outside the file', async () => {
    const { root, agent } = setup();
    const path = join(root, 'f.txt');
    writeFileSync(path, 'a\nb\n');
    await call(agent, 'str_replace_editor', { command: 'insert', path, insert_line: 0, new_str: 'top' });
    expect(readFileSync(path, 'utf8')).toBe('top\na\nb\n');
    const o = await call(agent, 'str_replace_editor', { command: 'insert', path, insert_line: 2, new_str: 'x\ny' });
    expect(text(o)).toBe(`The file ${path} has been edited successfully.`);
    expect(readFileSync(path, 'utf8')).toBe('top\na\nx\ny\nb\n');
    const bad = await call(agent, 'str_replace_editor', { command: 'insert', path, insert_line: 7, new_str: 'z' });
    expect(bad.error?.code).toBe('EDITOR_BAD_LINE');
    expect(text(bad)).toContain('from 0 to 6');
    expect((await call(agent, 'str_replace_editor', { command: 'insert', path, new_str: 'z' })).error?.code).toBe(
      'EDITOR_MISSING_PARAMETER',
    );
  });

  it('create refuses an existing file and a relative path', async () => {
    const { root, agent } = setup();
    writeFileSync(join(root, 'keep.txt'), 'original');
    const o = await call(agent, 'str_replace_editor', { command: 'create', path: join(root, 'keep.txt'), file_text: 'new' });
    expect(o.error?.code).toBe('EDITOR_FILE_EXISTS');
    expect(readFileSync(join(root, 'keep.txt'), 'utf8')).toBe('original');
    const rel = await call(agent, 'str_replace_editor', { command: 'create', path: 'rel.txt', file_text: 'x' });
    expect(rel.error?.code).toBe('EDITOR_RELATIVE_PATH');
    expect(text(rel)).toContain(join(root, 'rel.txt'));
    expect(existsSync(join(root, 'rel.txt'))).toBe(false);
  });

  it('refuses paths outside the workspace, directly and through a symbolic link', async () => {
    const outside = outsideDir();
    writeFileSync(join(outside, 'secret.txt'), 'secret\n');
    const { root, agent } = setup();
    symlinkSync(outside, join(root, 'link'));
    for (const args of [
      { command: 'view', path: join(outside, 'secret.txt') },
      { command: 'create', path: join(outside, 'new.txt'), file_text: 'x' },
      { command: 'str_replace', path: join(outside, 'secret.txt'), old_str: 'secret', new_str: 'x' },
      { command: 'insert', path: join(root, 'link', 'secret.txt'), insert_line: 0, new_str: 'x' },
      { command: 'view', path: join(root, '..') },
    ]) {
      const o = await call(agent, 'str_replace_editor', args);
      expect(o.isError).toBe(true);
      expect(['FS_OUTSIDE_WORKSPACE', 'FS_SYMLINK_ESCAPE']).toContain(o.error?.code);
    }
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('secret\n');
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);
  });

  it('read-only sandbox: view works, every write is refused', async () => {
    const { root, agent } = setup('read-only');
    const path = join(root, 'f.txt');
    writeFileSync(path, 'a\n');
    expect((await call(agent, 'str_replace_editor', { command: 'view', path })).isError).toBe(false);
    for (const args of [
      { command: 'create', path: join(root, 'g.txt'), file_text: 'x' },
      { command: 'str_replace', path, old_str: 'a', new_str: 'b' },
      { command: 'insert', path, insert_line: 0, new_str: 'x' },
    ]) {
      const o = await call(agent, 'str_replace_editor', args);
      expect(o.error?.code).toBe('FS_SANDBOX_DENIED');
    }
    expect(readFileSync(path, 'utf8')).toBe('a\n');
  });

  it('clips a long view with a note', async () => {
    const { root, agent } = setup();
    const path = join(root, 'big.txt');
    writeFileSync(path, 'x'.repeat(100).concat('\n').repeat(400));
    const t = text(await call(agent, 'str_replace_editor', { command: 'view', path }));
    expect(t).toMatch(/<response clipped><NOTE>/);
    expect(t.length).toBeLessThan(16_500);
  });
});
