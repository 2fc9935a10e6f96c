/**
 * Tools by kind, from recorded call/result events, with the expected lines written by hand.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import stringWidth from 'string-width';
import { renderTool, toolCallView, type ToolCallView } from '../../../src/terminal/render/tools.js';
import { renderReasoning } from '../../../src/terminal/render/reasoning.js';
import type { SessionEvent } from '../../../src/session/events.js';

const T0 = 1_800_000_000_000;
function call(name: string, args: unknown, time = T0): SessionEvent<'tool/call'> {
  return {
    type: 'tool/call',
    seq: 1,
    time,
    data: { turn: 1, step: 1, callId: 'c1', name, arguments: JSON.stringify(args) },
  } as SessionEvent<'tool/call'>;
}
function result(text: string, opts: { isError?: boolean; code?: string; meta?: unknown; time?: number } = {}): SessionEvent<'tool/result'> {
  return {
    type: 'tool/result',
    seq: 2,
    time: opts.time ?? T0 + 1500,
    data: {
      turn: 1,
      step: 1,
      message: {
        role: 'user',
        content: [{ type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text }], ...(opts.isError ? { isError: true } : {}) }],
      },
      ...(opts.code ? { error: { name: 'ToolError', code: opts.code } } : {}),
      ...(opts.meta !== undefined ? { meta: opts.meta } : {}),
    },
  } as unknown as SessionEvent<'tool/result'>;
}
const plain = (v: ToolCallView, width = 60, expanded = false): string[] => renderTool(v, { width, color: false, expanded });

describe('edit and write', () => {
  it('edit: path, counts, and the unified diff of old_string → new_string', () => {
    const v = toolCallView(
      call('edit', { file_path: 'src/a.ts', old_string: 'one\ntwo\nthree', new_string: 'one\n2\nthree' }),
      result('ok'),
    );
    expect(plain(v)).toEqual(['● edit src/a.ts +1 -1', '  @@ -1,3 +1,3 @@', '   one', '  -two', '  +2', '   three']);
  });

  it('the recorded whole-file texts give the real line numbers', () => {
    const before = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n');
    const after = before.replace('line 8', 'LINE 8');
    const v = toolCallView(
      call('edit', { file_path: 'f.txt', old_string: 'line 8', new_string: 'LINE 8' }),
      result('ok', { meta: { diffs: [{ path: 'f.txt', oldText: before, newText: after }] } }),
    );
    expect(plain(v)).toEqual([
      '● edit f.txt +1 -1',
      '  @@ -5,6 +5,6 @@',
      '   line 5',
      '   line 6',
      '   line 7',
      '  -line 8',
      '  +LINE 8',
      '   line 9',
      '   line 10',
    ]);
  });

  it('coloured: added green, removed red, hunk header cyan and dim, context dim', () => {
    const v = toolCallView(call('write', { file_path: 'n.txt', content: 'hi\n' }), result('ok'));
    expect(renderTool(v, { width: 60, color: true })).toEqual([
      '\x1b[32m● \x1b[0m\x1b[1mwrite\x1b[0m \x1b[36mn.txt\x1b[0m \x1b[32m+1\x1b[0m \x1b[31m-0\x1b[0m',
      '\x1b[36;2m  @@ -1,0 +1,1 @@\x1b[0m',
      '  \x1b[32m+hi\x1b[0m',
    ]);
  });

  it('collapsed shows the first lines and says how many more; expanded shows them all', () => {
    const content = Array.from({ length: 40 }, (_, i) => `l${i}`).join('\n');
    const v = toolCallView(call('write', { file_path: 'big', content }), result('ok'));
    const collapsed = plain(v);
    expect(collapsed).toHaveLength(1 + 24 + 1);
    expect(collapsed.at(-1)).toBe('  … 17 more lines');
    expect(plain(v, 60, true)).toHaveLength(1 + 41);
  });

  it('a refused edit shows its code and message, not a diff', () => {
    const v = toolCallView(
      call('edit', { file_path: 'a', old_string: 'x', new_string: 'y' }),
      result('Error: old_string occurs 3 times\nmore detail', { isError: true, code: 'EDIT_AMBIGUOUS' }),
    );
    // Nothing changed: the header says so rather than counting the lines the call asked for.
    expect(plain(v)).toEqual(['● edit a not applied', '  ✗ EDIT_AMBIGUOUS: old_string occurs 3 times']);
  });

  it('a failed write says not applied too; while a call runs, its counts are what it asks', () => {
    const args = { file_path: 'out.txt', content: 'one\ntwo\n' };
    const failed = toolCallView(call('write', args), result('Error: outside the workspace', { isError: true, code: 'FS_SANDBOX_DENIED' }));
    expect(plain(failed)).toEqual(['● write out.txt not applied', '  ✗ FS_SANDBOX_DENIED: outside the workspace']);
    expect(plain(toolCallView(call('write', args)))[0]).toBe('● write out.txt +2 -0');
  });
});

describe('bash', () => {
  it('command, exit status and duration, the tail of the output (collapsed: 5 lines)', () => {
    const out = `${Array.from({ length: 8 }, (_, i) => `out ${i + 1}`).join('\n')}\n[exit code: 2]`;
    const v = toolCallView(call('bash', { command: 'npm test' }), result(out, { meta: { exitCode: 2, signal: null, timedOut: false } }));
    expect(plain(v)).toEqual([
      '● bash npm test',
      '  exit 2 · 1.5s',
      '  … 3 lines above',
      '  │ out 4',
      '  │ out 5',
      '  │ out 6',
      '  │ out 7',
      '  │ out 8',
    ]);
    expect(plain(v, 60, true)).toHaveLength(2 + 8);
  });

  it('running, timed out, multi-line commands, no output', () => {
    expect(plain(toolCallView(call('bash', { command: 'sleep 9\necho done' })))).toEqual(['● bash sleep 9 (+1 lines)', '  running…']);
    const timedOut = toolCallView(
      call('bash', { command: 'sleep 99' }),
      result('(no output)\n[timed out after 100 ms; the command was killed. Use …]', {
        isError: true,
        code: 'BASH_TIMEOUT',
        meta: { exitCode: null, signal: 'SIGTERM', timedOut: true },
        time: T0 + 100,
      }),
    );
    expect(plain(timedOut)).toEqual(['● bash sleep 99', '  timed out · 0.1s']);
    const quiet = toolCallView(
      call('bash', { command: 'true' }),
      result('(no output)', { meta: { exitCode: 0, signal: null, timedOut: false } }),
    );
    expect(renderTool(quiet, { width: 60, color: true })).toEqual([
      '\x1b[32m● \x1b[0m\x1b[1mbash\x1b[0m \x1b[36mtrue\x1b[0m',
      '  \x1b[32mexit 0\x1b[0m\x1b[2m · 1.5s\x1b[0m',
    ]);
  });

  it('the file the full output was saved to is shown whole, broken over lines, whatever the width or tail', () => {
    const path = '/tmp/dsh-a0abe0a4-c9b1-4e1f/stdout-call_1.txt';
    const note = `(Omitted 18917 bytes of stdout. Full output saved to: ${path}. Use read with offset/limit, or grep this path …)`;
    const out = `${Array.from({ length: 7 }, (_, i) => `l${i + 1}`).join('\n')}\n[exit code: 1]\n${note}`;
    const v = toolCallView(call('bash', { command: 'make' }), result(out, { meta: { exitCode: 1, stdoutSpill: path } }));
    expect(plain(v, 30)).toEqual([
      '● bash make',
      '  exit 1 · 1.5s',
      '  … 2 lines above',
      '  │ l3',
      '  │ l4',
      '  │ l5',
      '  │ l6',
      '  │ l7',
      '  18917 bytes of stdout not s…',
      '    /tmp/dsh-a0abe0a4-c9b1-4e1',
      '    f/stdout-call_1.txt',
    ]);
    // Wide enough: one line. Expanded: the note is still not part of the output tail.
    expect(plain(v, 80, true).slice(-3)).toEqual(['  │ l7', '  18917 bytes of stdout not shown; all of it saved to:', `    ${path}`]);
    // The persistent shell names one `output` file; a hostile path shows its escapes, still whole.
    const odd = '/tmp/x\x1b[2Jy/output.txt';
    const p = toolCallView(
      call('bash', { command: 'yes' }),
      result(`y\n(Omitted 5 bytes of output. Full output saved to: ${odd}. Use read …)`, { meta: { outputSpill: odd } }),
    );
    expect(plain(p, 14)).toEqual(['● bash yes', '  1.5s', '  │ y', '  5 bytes of …', '    /tmp/x\\e[2', '    Jy/output.', '    txt']);
  });

  it('output draws emoji; the command shows every joiner', () => {
    const v = toolCallView(call('bash', { command: 'echo ✔️' }), result('✔️ 12 passed\n', { meta: { exitCode: 0 } }));
    expect(plain(v)).toEqual(['● bash echo ✔\\ufe0f', '  exit 0 · 1.5s', '  │ ✔️ 12 passed']);
  });

  it('the command shows NBSP and the other lookalike spaces as escapes; its output keeps them', () => {
    const v = toolCallView(call('bash', { command: 'rm\u00a0-rf build\u2009x' }), result('prix\u00a0: 3\n', { meta: { exitCode: 127 } }));
    expect(plain(v)).toEqual(['● bash rm\\xa0-rf build\\u2009x', '  exit 127 · 1.5s', '  │ prix\u00a0: 3']);
  });

  it('output cannot drive the terminal', () => {
    const v = toolCallView(call('bash', { command: 'cat x' }), result('\x1b[2J\x1b]0;pwn\x07', { meta: { exitCode: 0 } }));
    expect(plain(v).at(-1)).toBe('  │ \\e[2J\\e]0;pwn\\x07');
  });
});

describe('read, grep, glob and others: one line', () => {
  it('summaries from the arguments and the recorded meta', () => {
    expect(
      plain(toolCallView(call('read', { file_path: 'src/x.ts' }), result('…', { meta: { totalLines: 120, shownLines: 120 } }))),
    ).toEqual(['● read src/x.ts · 120 lines']);
    expect(
      plain(toolCallView(call('read', { file_path: 'x', offset: 10, limit: 5 }), result('…', { meta: { totalLines: 99, shownLines: 5 } }))),
    ).toEqual(['● read x (from line 10, 5 lines) · 5 of 99 lines']);
    expect(
      plain(
        toolCallView(call('grep', { pattern: 'TODO', path: 'src', include: '*.ts' }), result('…', { meta: { total: 7, files: [{}, {}] } })),
      ),
    ).toEqual(['● grep /TODO/ in src (*.ts) · 7 matches in 2 files']);
    expect(plain(toolCallView(call('glob', { pattern: '**/*.md' }), result('No files found', { meta: { total: 0 } })))).toEqual([
      '● glob **/*.md · no files',
    ]);
    expect(plain(toolCallView(call('everything__echo', { message: 'hi' }), result('hi')))).toEqual(['● everything__echo {"message":"hi"}']);
  });

  it('an error with its code', () => {
    const v = toolCallView(
      call('read', { file_path: 'nope' }),
      result('Error: file not found: nope', { isError: true, code: 'FS_NOT_FOUND' }),
    );
    expect(plain(v)).toEqual(['● read nope', '  ✗ FS_NOT_FOUND: file not found: nope']);
    expect(renderTool(v, { width: 60, color: true })[1]).toBe(
      '\x1b[31m  ✗ \x1b[0m\x1b[31;1mFS_NOT_FOUND\x1b[0m\x1b[31m: file not found: nope\x1b[0m',
    );
  });

  it('long lines are cut with an ellipsis at the width', () => {
    expect(plain(toolCallView(call('read', { file_path: 'a/very/long/path/to/some/file.ts' })), 20)).toEqual(['● read a/very/long/…']);
  });
});

describe('reasoning', () => {
  const text = 'First I look at the parser.\nThen the lexer, which splits the input.\n\nDone.';
  it('collapsed: one dim line with a summary and the last words that fit', () => {
    expect(renderReasoning({ text, durationMs: 4200 }, { width: 50, color: false, collapsed: true })).toEqual([
      '▸ thought · 4.2s · 3 lines: …the input. Done.',
    ]);
    expect(renderReasoning({ text: 'abc', live: true }, { width: 50, color: true, collapsed: true })).toEqual([
      '\x1b[2m▸ \x1b[0m\x1b[2mthinking… · 1 line\x1b[0m\x1b[2m: \x1b[0m\x1b[2;3mabc\x1b[0m',
    ]);
  });

  it('expanded: a header, then the text wrapped, indented, dim and italic', () => {
    expect(renderReasoning({ text }, { width: 24, color: false, collapsed: false })).toEqual([
      '▾ thought · 3 lines',
      '  First I look at the',
      '  parser.',
      '  Then the lexer, which',
      '  splits the input.',
      '',
      '  Done.',
    ]);
  });
});

describe('width', () => {
  const wide = fc.constantFrom('漢字', '😀', '👨‍👩‍👧‍👦', 'ＦＵＬＬ', 'abc', ' ', '\n', 'e\u0301', '\t', '한');
  const text = fc.array(wide, { maxLength: 40 }).map((a) => a.join(''));
  it('no tool or reasoning line is wider than the width', () => {
    fc.assert(
      fc.property(text, text, fc.integer({ min: 1, max: 50 }), fc.boolean(), (a, b, width, expanded) => {
        const views = [
          toolCallView(call('edit', { file_path: a, old_string: a, new_string: b }), result('ok')),
          toolCallView(call('bash', { command: a }), result(b, { meta: { exitCode: 1 } })),
          toolCallView(call('grep', { pattern: a, path: b }), result(b, { isError: true, code: 'X' })),
        ];
        for (const v of views)
          for (const l of renderTool(v, { width, color: true, expanded })) expect(stringWidth(l)).toBeLessThanOrEqual(width);
        for (const collapsed of [true, false])
          for (const l of renderReasoning({ text: a + b, live: true }, { width, color: true, collapsed }))
            expect(stringWidth(l)).toBeLessThanOrEqual(width);
      }),
      { numRuns: 200 },
    );
  });
});
