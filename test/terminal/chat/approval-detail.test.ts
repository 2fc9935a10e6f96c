import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { approvalDetail, hardWrap, layoutDetail } from '../../../src/terminal/chat/approval-detail.js';
import { textWidth } from '../../../src/terminal/render/width.js';

describe('approval detail: the call shown whole', () => {
  it('bash: each line of the command on its own row, other arguments as key: value, escapes visible', () => {
    const rows = approvalDetail('bash', {
      description: 'two steps',
      command: 'echo a\tb\necho \x1b]0;PWN\x07 done',
      workdir: 'sub',
    });
    expect(rows).toEqual([
      { text: 'echo a\\x09b' },
      { text: 'echo \\e]0;PWN\\x07 done' },
      { label: 'description', text: 'two steps' },
      { label: 'workdir', text: 'sub' },
    ]);
  });

  it('a space that passes for U+0020 (NBSP, thin, ideographic) is an escape in every row', () => {
    expect(approvalDetail('bash', { command: 'rm\u00a0-rf /\necho\u3000hi', workdir: 'a\u2009b' })).toEqual([
      { text: 'rm\\xa0-rf /' },
      { text: 'echo\\u3000hi' },
      { label: 'workdir', text: 'a\\u2009b' },
    ]);
  });

  it("write/edit: the path in full, the text line by line under its size, other tools' values in full", () => {
    expect(approvalDetail('write', { file_path: 'a b/notes.txt', content: 'one\ntwo\n' })).toEqual([
      { label: 'file_path', text: 'a b/notes.txt' },
      { label: 'content', text: '2 lines, 8 bytes:' },
      { text: 'one' },
      { text: 'two' },
    ]);
    expect(approvalDetail('edit', { file_path: 'x.ts', old_string: 'é', new_string: '', replace_all: true })).toEqual([
      { label: 'file_path', text: 'x.ts' },
      { label: 'old_string', text: '1 line, 2 bytes, no newline at the end:' },
      { text: 'é' },
      { label: 'new_string', text: '0 lines, 0 bytes' },
      { label: 'replace_all', text: 'true' },
    ]);
    expect(approvalDetail('mcp__x', { query: 'l1\nl2', n: 3 })).toEqual([
      { label: 'query', text: '2 lines:' },
      { text: 'l1' },
      { text: 'l2' },
      { label: 'n', text: '3' },
    ]);
  });

  it('layout: a value line starts with │, the rows it wraps onto with ┆; nothing is lost or over the width', () => {
    expect(layoutDetail([{ text: 'abcdefghij' }, { label: 'k', text: 'v' }], 8)).toEqual(['  │ abcd', '  ┆ efgh', '  ┆ ij', '  │ k: v']);
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), fc.integer({ min: 1, max: 30 }), (s, w) => {
        const rows = hardWrap(s, w);
        expect(rows.join('')).toBe(s);
        // A row is over the width only when one grapheme alone is wider.
        for (const r of rows) if (textWidth(r) > w) expect([...new Intl.Segmenter().segment(r)]).toHaveLength(1);
      }),
    );
  });
});
