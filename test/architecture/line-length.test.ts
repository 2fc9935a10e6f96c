/**
 * No line of code is longer than 140 columns, long literals and comments included (the
 * formatter wraps the rest). A string is wrapped by splitting it with `+` or joining an array of
 * lines; a regex by building it from parts with `new RegExp`; a CSS rule one declaration group per line.
 * No code file is exempt; JSON and Markdown are not code here (why: line-length.ts, CODE_FILE).
 */
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/shared.js';
import { tempTrees } from './temp-tree.js';
import { codeFiles, LINE_LIMIT, longLines, longLinesIn, TAB_WIDTH } from './line-length.js';

const tree = tempTrees('dsh-lines-');

describe('line length', () => {
  it(`no line of code anywhere in the tree is longer than ${LINE_LIMIT} columns`, () => {
    expect(codeFiles(repoRoot).filter((f) => f.startsWith('src/')).length).toBeGreaterThan(100);
    expect(longLinesIn(repoRoot)).toEqual([]);
  });

  it('rejects a long string, template, regex or comment anywhere in the code, naming file:line and the width', () => {
    const x = (n: number): string => 'x'.repeat(n);
    const lines = {
      string: `export const s = '${x(LINE_LIMIT)}';`,
      comment: `// ${x(LINE_LIMIT - 2)}`,
      regex: `const r = /${x(LINE_LIMIT)}/;`,
      template: `const t = \`\${1}${x(LINE_LIMIT)}\`;`,
      root: `const u = '${x(LINE_LIMIT)}';`,
    };
    const dir = tree({
      'src/a.ts': `${lines.string}\nexport const ok = 1;\n`,
      // exactly at the limit passes, one over fails; width is in characters, not UTF-8 bytes
      'test/b.test.ts': `// ${x(LINE_LIMIT - 3)}\n// ${'·'.repeat(LINE_LIMIT - 3)}\n${lines.comment}\n`,
      'bench/c.js': `${lines.regex}\n`,
      'scripts/d.mjs': `\n${lines.template}\n`,
      'top.ts': `${lines.root}\n`,
      'node_modules/e.js': `${lines.string}\n`,
      'dist/f.js': `${lines.string}\n`,
      'docs/g.md': `${lines.string}\n`,
      'src/h.tsx': `${lines.string}\n`,
      'src/i.jsx': `${lines.string}\n`,
      'src/j.mts': `${lines.string}\n`,
      'src/k.cts': `${lines.string}\n`,
      'scripts/l.cjs': `${lines.string}\n`,
      'scripts/m.sh': `${lines.root}\n`,
      '.ci/run': `#!/bin/sh\n${lines.root}\n`,
      '.ci/notes': `${lines.root}\n`,
      'src/viewer/n.css': `${lines.root}\n`,
      'src/viewer/o.html': `${lines.root}\n`,
      'package.json': `{ "scripts": { "x": "${x(LINE_LIMIT)}" } }\n`,
      'README.md': `${lines.string}\n`,
      // A folder nobody listed, and one written in a module flavour of its own.
      'tools/p.ts': `${lines.string}\n`,
      'coverage/q.js': `${lines.string}\n`,
    });
    // JSON and Markdown stay out (see line-length.ts); an extensionless file is a script only with a `#!` line
    expect(longLinesIn(dir)).toEqual([
      `.ci/run:2: ${lines.root.length} columns`,
      `bench/c.js:1: ${lines.regex.length} columns`,
      `scripts/d.mjs:2: ${lines.template.length} columns`,
      `scripts/l.cjs:1: ${lines.string.length} columns`,
      `scripts/m.sh:1: ${lines.root.length} columns`,
      `src/a.ts:1: ${lines.string.length} columns`,
      `src/h.tsx:1: ${lines.string.length} columns`,
      `src/i.jsx:1: ${lines.string.length} columns`,
      `src/j.mts:1: ${lines.string.length} columns`,
      `src/k.cts:1: ${lines.string.length} columns`,
      `src/viewer/n.css:1: ${lines.root.length} columns`,
      `src/viewer/o.html:1: ${lines.root.length} columns`,
      `test/b.test.ts:3: ${lines.comment.length} columns`,
      `tools/p.ts:1: ${lines.string.length} columns`,
      `top.ts:1: ${lines.root.length} columns`,
    ]);
    expect(lines.comment.length).toBe(LINE_LIMIT + 1);
  });

  it('counts a tab to the next tab stop, as an editor shows it (review 3)', () => {
    // 80 tabs after a short comment: 120 code points, 650 columns at tab width 8.
    const padded = `// a comment${'\t'.repeat(80)} that is wide in any editor`;
    expect([...padded].length).toBeLessThan(LINE_LIMIT);
    expect(longLines('f.ts', padded)).toEqual([`f.ts:1: ${12 + 4 + 79 * TAB_WIDTH + 27} columns`]);
    // A tab moves to the next stop, not by 8: 'abc' + tab ends at column 8.
    expect(longLines('g.ts', `abc\t${'x'.repeat(LINE_LIMIT - TAB_WIDTH)}`)).toEqual([]);
    expect(longLines('g.ts', `abc\t${'x'.repeat(LINE_LIMIT - TAB_WIDTH + 1)}`)).toEqual([`g.ts:1: ${LINE_LIMIT + 1} columns`]);
  });

  it('counts a character outside the BMP as one column and ends lines at CRLF too', () => {
    expect(longLines('f.ts', `${'😀'.repeat(LINE_LIMIT)}\r\n${'a'.repeat(LINE_LIMIT + 1)}\r\n`)).toEqual([
      `f.ts:2: ${LINE_LIMIT + 1} columns`,
    ]);
  });
});
