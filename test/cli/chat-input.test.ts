/**
 * `dsh chat` on a terminal, what the person types and reads: Tab completion of slash commands and
 * `@path`, the attachment it makes, emoji and joined scripts drawn as themselves. The real binary
 * in a real pseudo-terminal (node-pty + headless xterm), against the gated provider on 127.0.0.1.
 */
import { describe, expect, it } from 'vitest';
import { storedLogs, tempDir } from './support/agent.js';
import { openChat, say, until, userTexts } from './support/chat-pty.js';

const onlyLog = (home: string): string => {
  const logs = storedLogs(home);
  expect(logs).toHaveLength(1);
  return logs[0]!;
};
/** The editor's text row: the row between its two rules that holds `text`. */
const editorHas = (screen: string, re: RegExp): boolean => screen.split('\n').some((l) => re.test(l));
/** The editor's rows: what lies between its two rules at the bottom of the screen. */
const editorRows = (screen: string): string[] => {
  const rows = screen.split('\n');
  const rules = rows.flatMap((l, i) => (/^─{10,}$/.test(l) ? [i] : []));
  return rows.slice(rules.at(-2)! + 1, rules.at(-1)).map((l) => l.trimEnd());
};
const UP = '\x1b[A';

describe('dsh chat on a terminal: input', { timeout: 120_000 }, () => {
  it('Tab completes a slash command, and @path from the workspace files (.gitignore honoured); the file attaches', async () => {
    const { home, c } = await openChat([say(['Read it.'])], {
      files: {
        'src/main.ts': 'export const main = 1;\n',
        'src/other.ts': 'x\n',
        'docs/my notes.md': 'spaced\n',
        '.gitignore': 'ignored/\n',
        'ignored/secret-main.ts': 'no\n',
      },
      size: { cols: 100, rows: 30 },
    });
    // A slash command: `/hel` + Tab is `/help ` in the editor, the list gone.
    c.write('/hel');
    await c.waitFor(/list the commands/);
    c.write('\t');
    await until(() => editorHas(c.screen(), /^\/help\s*$/) && !/list the commands/.test(c.screen()), '/help completed');
    c.write('\x15'); // Ctrl-U: empty the editor
    await until(() => !editorHas(c.screen(), /^\/help/), 'editor emptied');
    // @path: the prefix narrows to one file, which Tab writes out; ignored/ is not offered.
    c.write('look at @mai');
    await until(() => /src\/main\.ts/.test(c.screen()), '@mai suggestions');
    expect(c.screen()).not.toMatch(/secret-main/);
    c.write('\t');
    await until(() => editorHas(c.screen(), /^look at @src\/main\.ts\s*$/), '@src/main.ts completed');
    // A path with a space completes spelled as a mention reads it (`\ `).
    c.write('and @docs/my');
    await until(() => /docs\/my notes\.md/.test(c.screen()), '@docs/my suggestions');
    c.write('\t');
    await until(() => editorHas(c.screen(), /^look at @src\/main\.ts and @docs\/my\\ notes\.md\s*$/), 'spaced path completed');
    c.write('\r');
    await c.waitFor(/Read it\./);
    c.write('\x04');
    expect(await c.done).toBe(0);
    expect(userTexts(onlyLog(home))).toEqual([
      'look at @src/main.ts and @docs/my\\ notes.md|' +
        '<attached file="src/main.ts">\nexport const main = 1;\n</attached>|' +
        '<attached file="docs/my notes.md">\nspaced\n</attached>',
    ]);
  });

  it('a refused attach leaves the prompt in the editor, to fix the path, and says why', async () => {
    const { home, c } = await openChat([say(['Fixed.'])], { files: { 'big.txt': 'x'.repeat(300 * 1024), 'small.txt': 'ok\n' } });
    c.write('summarize @big.txt please\r');
    await c.waitFor(/ATTACH_TOO_LARGE/);
    await until(() => editorRows(c.screen()).some((r) => /^summarize @big\.txt please$/.test(r)), 'prompt back in the editor');
    c.write('\x15'); // Ctrl-U
    c.write('summarize @small.txt please\r');
    await c.waitFor(/Fixed\./);
    c.write('\x04');
    expect(await c.done).toBe(0);
    expect(userTexts(onlyLog(home))).toEqual(['summarize @small.txt please|<attached file="small.txt">\nok\n</attached>']);
  });

  it('a bracketed paste with CRLF line ends is one prompt whose lines end in \\n (no \\r, no doubled line ends)', async () => {
    const { home, c } = await openChat([say(['Pasted.'])]);
    c.write('\x1b[200~line one\r\nline two\r\n\r\nline four\r\n\x1b[201~');
    c.write('\r');
    await c.waitFor(/Pasted\./);
    c.write('\x04');
    expect(await c.done).toBe(0);
    // The blank line typed in the paste stays; the final line end is trimmed like any prompt's.
    expect(userTexts(onlyLog(home))).toEqual(['line one\nline two\n\nline four']);
  });

  it('↑ recalls earlier prompts of this workspace, newest first, across chats; another workspace has its own', {
    timeout: 240_000,
  }, async () => {
    const home = tempDir();
    const first = await openChat([say(['One.']), say(['Two.'])], { home });
    first.c.write('first prompt\r');
    await first.c.waitFor(/One\./);
    first.c.write('second\nprompt'.replace('\n', '\x1b\r')); // Alt+Enter: a two-line prompt
    first.c.write('\r');
    await first.c.waitFor(/Two\./);
    // In the same chat ↑ gives the last prompt back, both its lines.
    first.c.write(UP);
    await until(() => editorRows(first.c.screen()).join('|') === 'second|prompt', 'the last prompt recalled');
    first.c.write('\x03'); // Ctrl-C at an idle prompt clears it
    await until(() => editorRows(first.c.screen()).join('').trim() === '', 'editor emptied');
    first.c.write('\x04');
    expect(await first.c.done).toBe(0);

    // A new chat in the same workspace: ↑ the newest, ↑ again the one before; Enter sends it.
    const again = await openChat([say(['Again.'])], { home, repo: first.repo });
    again.c.write(UP);
    await until(() => editorRows(again.c.screen()).join('|') === 'second|prompt', 'newest prompt of the workspace');
    // ↑ in a recalled two-line prompt first moves to its upper line; the next ↑ goes back in history.
    again.c.write(UP);
    await new Promise((r) => setTimeout(r, 300));
    expect(editorRows(again.c.screen()).join('|')).toBe('second|prompt');
    again.c.write(UP);
    await until(() => editorRows(again.c.screen()).join('|') === 'first prompt', 'the prompt before it');
    again.c.write('\r');
    await again.c.waitFor(/Again\./);
    again.c.write('\x04');
    expect(await again.c.done).toBe(0);
    const logs = storedLogs(home);
    expect(logs.map((l) => userTexts(l)).sort()).toEqual([['first prompt'], ['first prompt', 'second\nprompt']].sort());

    // Another workspace of the same home: ↑ recalls nothing.
    const other = await openChat([], { home });
    other.c.write(UP);
    await new Promise((r) => setTimeout(r, 500));
    expect(editorRows(other.c.screen()).join('').trim()).toBe('');
    other.c.write('\x04');
    expect(await other.c.done).toBe(0);
  });

  it('emoji (VS16, ZWJ, skin tones, keycaps) and joined scripts show as themselves, in the answer and the prompt echo', async () => {
    const answer = 'Tests ✔️ warnings ⚠️ by 👩‍💻 and 👨‍👩‍👧 👍🏽 1️⃣ می‌خواهم';
    const { c } = await openChat([say(['Tests ✔️ warnings ⚠️ by 👩‍💻', ' and 👨‍👩‍👧 👍🏽 1️⃣ می‌خواهم'])], { size: { cols: 100, rows: 30 } });
    c.write('ok ✔️ 👩‍💻?\r');
    await c.waitFor(/می‌خواهم/);
    const text = c.text();
    expect(text).toContain(answer);
    expect(text).toContain('› ok ✔️ 👩‍💻?');
    expect(text).not.toMatch(/\\u(200d|200c|fe0f)/);
    c.write('\x04');
    expect(await c.done).toBe(0);
  });
});
