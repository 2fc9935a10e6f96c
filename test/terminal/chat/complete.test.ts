/**
 * `@path` completion: the workspace's files as the tools see them (.gitignore, no VCS folder, no
 * symbolic link), ranked by hand-written expectations, written back the way attach.ts reads them.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ChatCompletion, rankFiles } from '../../../src/terminal/chat/complete.js';
import { withAttachments } from '../../../src/terminal/chat/attach.js';

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

function workspace(files: Record<string, string>): string {
  const ws = mkdtempSync(join(tmpdir(), 'dsh-complete-'));
  made.push(ws);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(ws, name)), { recursive: true });
    writeFileSync(join(ws, name), text);
  }
  return ws;
}
const ask = (p: ChatCompletion, line: string, force = true) =>
  p.getSuggestions([line], 0, line.length, { signal: new AbortController().signal, force });

describe('@path completion', () => {
  it('ranks: the path starts with the query, then the file name, then anywhere; shorter first', () => {
    const files = ['src/main.ts', 'main.ts', 'test/main.test.ts', 'docs/domain.md', 'src/cli/main-menu.ts', 'README.md'];
    expect(rankFiles(files, 'mai')).toEqual(['main.ts', 'src/main.ts', 'test/main.test.ts', 'src/cli/main-menu.ts', 'docs/domain.md']);
    expect(rankFiles(files, 'SRC/M')).toEqual(['src/main.ts']);
    expect(rankFiles(files, 'zzz')).toEqual([]);
  });

  it('offers workspace files only: not .gitignore-d ones, not .git, not through a link', async () => {
    const ws = workspace({
      'a/keep.txt': 'k',
      '.gitignore': 'build/\n*.log\n',
      'build/keep-out.txt': 'x',
      'keep.log': 'x',
      '.git/keep': 'x',
    });
    symlinkSync(join(ws, 'a'), join(ws, 'link'));
    const s = await ask(new ChatCompletion([], ws), 'see @keep');
    expect(s).toEqual({ prefix: '@keep', items: [{ value: '@a/keep.txt', label: 'a/keep.txt' }] });
  });

  it('writes the mention as attach.ts reads it: a space as `\\ `; a name it cannot spell is not offered', async () => {
    const ws = workspace({ 'my notes.md': 'n\n', 'odd\\name.md': 'x', 'ends.': 'x' });
    const p = new ChatCompletion([], ws);
    const s = await ask(p, 'read @my\\ no');
    expect(s?.items).toEqual([{ value: '@my\\ notes.md', label: 'my notes.md' }]);
    const done = p.applyCompletion(['read @my\\ no please'], 0, 'read @my\\ no'.length, s!.items[0]!, s!.prefix);
    expect(done).toEqual({ lines: ['read @my\\ notes.md please'], cursorLine: 0, cursorCol: 'read @my\\ notes.md '.length });
    expect(withAttachments(done.lines[0]!, ws).files).toEqual(['my notes.md']);
    expect((await ask(p, '@odd'))?.items ?? []).toEqual([]);
    expect((await ask(p, '@ends'))?.items ?? []).toEqual([]);
  });

  it('leaves slash commands to pi-tui', async () => {
    const s = await ask(new ChatCompletion([{ name: 'help', description: 'list' }], workspace({})), '/he', false);
    expect(s?.items.map((i) => i.value)).toEqual(['help']);
  });
});
