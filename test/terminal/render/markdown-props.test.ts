/**
 * Properties of the markdown renderer: a `MarkdownStream` fed a document in any chunks ends with
 * the lines of rendering the whole document in one pass (so freezing a block early never changes
 * what is shown), and no rendered line is wider than the width, measured by `string-width`, for
 * text full of wide, emoji and CJK characters.
 */
import fc from 'fast-check';
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { MarkdownStream, renderMarkdown } from '../../../src/terminal/render/markdown.js';

/** Words, wide ones included: CJK, fullwidth, emoji (with ZWJ sequences and flags), combining marks. */
const word = fc.constantFrom(
  'alpha',
  'beta',
  'x',
  'supercalifragilisticexpialidocious',
  '漢字',
  'かな交じり文',
  '한국어',
  'ＦＵＬＬ',
  '😀',
  '👨‍👩‍👧‍👦',
  '🇫🇷',
  'é',
  'e\u0301',
  '**bold**',
  '*em*',
  '`code`',
  '~~del~~',
  '[link](http://example.com/a)',
  '<http://example.org>',
  'a&amp;b',
  '\\*',
  '_u_',
);
const words = fc.array(word, { minLength: 1, maxLength: 12 }).map((ws) => ws.join(' '));
const line = words;

const block = fc.oneof(
  line.map((l) => `${l}\n`),
  fc.array(line, { minLength: 2, maxLength: 3 }).map((ls) => `${ls.join('\n')}\n`),
  fc.tuple(fc.integer({ min: 1, max: 6 }), line).map(([n, l]) => `${'#'.repeat(n)} ${l}\n`),
  fc.array(line, { minLength: 1, maxLength: 4 }).map((ls) => ls.map((l) => `- ${l}\n`).join('')),
  fc.array(line, { minLength: 1, maxLength: 4 }).map((ls) => ls.map((l, i) => `${i + 1}. ${l}\n`).join('')),
  fc.array(line, { minLength: 1, maxLength: 3 }).map((ls) => ls.map((l) => `- [x] ${l}\n  - nested ${l}\n`).join('')),
  fc.array(line, { minLength: 1, maxLength: 3 }).map((ls) => ls.map((l) => `> ${l}\n`).join('')),
  fc
    .tuple(fc.constantFrom('ts', 'js', 'python', 'bash', '', 'nolang'), fc.array(line, { maxLength: 4 }))
    .map(([lang, ls]) => `\`\`\`${lang}\n${ls.map((l) => `  ${l}`).join('\n')}\n\`\`\`\n`),
  fc
    .tuple(fc.array(word, { minLength: 1, maxLength: 4 }), fc.array(fc.array(word, { minLength: 1, maxLength: 4 }), { maxLength: 3 }))
    .map(([head, rows]) => {
      const n = head.length;
      const row = (cells: string[]) => `| ${Array.from({ length: n }, (_, i) => cells[i] ?? '').join(' | ')} |\n`;
      return row(head) + `|${Array.from({ length: n }, (_, i) => (i % 2 ? ' ---: ' : ' --- ')).join('|')}|\n` + rows.map(row).join('');
    }),
  fc.constant('---\n'),
  fc.constant('<div>raw html</div>\n'),
);

/** A document: blocks, mostly separated by blank lines, sometimes directly (an interrupting block). */
const doc = fc
  .array(fc.tuple(block, fc.constantFrom('\n', '\n', '\n\n', '', '\r\n')), { minLength: 1, maxLength: 8 })
  .map((bs) => bs.map(([b, sep]) => b + sep).join(''));

/** A shorter document, for the character-by-character run. */
const shortDoc = fc
  .array(fc.tuple(block, fc.constantFrom('\n', '\n\n', '')), { minLength: 1, maxLength: 4 })
  .map((bs) => bs.map(([b, sep]) => b + sep).join(''));

/** `s` cut at the given fractions of its length (in UTF-16 units: chunks may split a surrogate pair). */
function split(s: string, cuts: number[]): string[] {
  const at = [...new Set(cuts.map((c) => Math.floor(c * s.length)))].sort((a, b) => a - b);
  const out: string[] = [];
  let prev = 0;
  for (const i of at) {
    out.push(s.slice(prev, i));
    prev = i;
  }
  out.push(s.slice(prev));
  return out;
}

function streamed(chunks: string[], width: number, color: boolean): { frozenSeen: string[][]; lines: string[] } {
  const s = new MarkdownStream({ width, color });
  const frozenSeen: string[][] = [];
  for (const c of chunks) {
    s.push(c);
    frozenSeen.push([...s.frozen]);
  }
  s.finish();
  return { frozenSeen, lines: s.lines() };
}

/** `d` streamed in the chunks `cuts` make ends with its whole rendering; frozen lines only grow, each state a prefix of it. */
function endsAsWhole(d: string, cuts: number[], width: number, color: boolean): void {
  const whole = renderMarkdown(d, { width, color });
  const { frozenSeen, lines } = streamed(split(d, cuts), width, color);
  expect(lines).toEqual(whole);
  for (const f of frozenSeen) expect(whole.slice(0, f.length)).toEqual(f);
}

describe('MarkdownStream', () => {
  it('ends with the lines of the whole document rendered at once, for any split into chunks', () => {
    fc.assert(
      fc.property(
        doc,
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 30 }),
        fc.integer({ min: 8, max: 100 }),
        fc.boolean(),
        endsAsWhole,
      ),
      { numRuns: 150 },
    );
  });

  it('fed one character at a time, too', { timeout: 120_000 }, () => {
    fc.assert(
      fc.property(shortDoc, fc.integer({ min: 8, max: 60 }), (d, width) => {
        expect(streamed([...d], width, true).lines).toEqual(renderMarkdown(d, { width, color: true }));
      }),
      { numRuns: 25 },
    );
  });
});

describe('MarkdownStream on fenced code taken a line at a time', () => {
  // Fences of every shape marked knows (indented, tildes, longer runs, a shorter run inside, no
  // close), with lines that keep a grammar's scope open across line ends (template strings,
  // block comments), blank lines at the end, and text after.
  const codeLine = fc.constantFrom(
    'const x = 1;',
    '',
    '  indented()',
    '\tfoo(); // tab',
    '```',
    '``',
    '~~~~',
    '    ````',
    'const s = `multi',
    'line ${x}`;',
    '/* open',
    'close */',
    'def f(a):',
    '"unterminated',
    '✔️ 漢字',
  );
  const fence = fc
    .tuple(
      fc.constantFrom('', ' ', '   '),
      fc.constantFrom('```', '````', '~~~'),
      fc.constantFrom('ts', 'js', 'python', 'css', '', 'nolang', 'ts title="x"'),
      fc.array(codeLine, { maxLength: 12 }),
      fc.constantFrom('close', 'longer', 'none', 'spaces'),
      fc.constantFrom('', '\nafter\n', '\n\n- item\n', 'x'),
    )
    .map(([indent, run, lang, lines, close, after]) => {
      const end = close === 'none' ? '' : close === 'longer' ? `${run}${run[0]}\n` : close === 'spaces' ? ` ${run}  \n` : `${run}\n`;
      return `text before\n\n${indent}${run}${lang}\n${lines.map((l) => `${indent}${l}\n`).join('')}${end}${after}`;
    });

  it("ends with the whole document's lines (colours too), and frozen lines only grow", () => {
    fc.assert(
      fc.property(
        fence,
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 20 }),
        fc.integer({ min: 6, max: 40 }),
        fc.boolean(),
        endsAsWhole,
      ),
      { numRuns: 400 },
    );
  });
});

const plainText = (l: string): string => l.replace(/\x1b\[[0-9;]*m/g, '');
const trimBlank = (lines: string[]): string[] => {
  let n = lines.length;
  while (n > 0 && /^[ │]*$/.test(plainText(lines[n - 1]!))) n--;
  return lines.slice(0, n);
};

describe('MarkdownStream on fenced code open inside a list item or a quote (container-fence.ts)', () => {
  const codeLine = fc.constantFrom('const x = 1;', '', '  indented()', '```', '~~~', '> quoted', '- dash', '1. one', 'x\ty', '✔️ 漢字');
  // A container's marks for its lines: an item's indent (the first line's marker given apart), a quote's `> `.
  const container = fc.constantFrom(
    { first: '1. ', rest: '   ' },
    { first: '- ', rest: '  ' },
    { first: '10. ', rest: '    ' },
    { first: '> ', rest: '> ' },
    { first: '> - ', rest: '>   ' },
    { first: '- > ', rest: '  > ' },
    { first: '1. ', rest: '  ' }, // under-indented: the item ends at the fence
    { first: '- [ ] ', rest: '  ' },
  );
  const doc = fc
    .tuple(
      container,
      fc.constantFrom('Create it:', ''),
      fc.constantFrom('\n', ''),
      fc.constantFrom('```', '~~~', '````'),
      fc.constantFrom('ts', 'python', ''),
      fc.array(codeLine, { maxLength: 10 }),
      fc.constantFrom('close', 'none', 'dedent'),
      fc.constantFrom('', '2. Next\n', '\nafter\n', '- other\n'),
    )
    .map(([c, head, gap, run, lang, lines, close, after]) => {
      const open =
        head === ''
          ? `${c.first}${run}${lang}\n`
          : `${c.first}${head}\n${gap === '' ? '' : `${c.rest.trimEnd()}\n`}${c.rest}${run}${lang}\n`;
      const body = lines.map((l) => (l === '' ? `${c.rest.trimEnd()}\n` : `${c.rest}${l}\n`)).join('');
      const end = close === 'close' ? `${c.rest}${run}\n` : close === 'dedent' ? 'dedented\n' : '';
      return `Steps:\n\n${open}${body}${end}${after}`;
    });

  it("ends with the whole document's lines (colours too), and frozen lines only grow", () => {
    fc.assert(
      fc.property(
        doc,
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 20 }),
        fc.integer({ min: 6, max: 40 }),
        fc.boolean(),
        endsAsWhole,
      ),
      { numRuns: 600 },
    );
  });

  it('at each line end, the lines shown are those of the text so far rendered whole, but for blank lines at the end', () => {
    fc.assert(
      fc.property(doc, fc.integer({ min: 6, max: 40 }), (d, width) => {
        const s = new MarkdownStream({ width, color: true });
        let sofar = '';
        for (const line of d.split(/(?<=\n)/)) {
          s.push(line);
          sofar += line;
          // Blank lines at the end aside: a fence just opened shows no code line yet where the whole
          // rendering draws an empty one, and a blank line typed in the code shows at once where
          // marked leaves the item's trailing blank lines out until more code follows.
          expect(trimBlank(s.lines())).toEqual(trimBlank(renderMarkdown(sofar, { width, color: true })));
        }
      }),
      { numRuns: 400 },
    );
  });
});

describe('MarkdownStream on arbitrary markup', () => {
  // Every character that starts or ends a markdown construct, in any order: lists that may
  // continue, setext underlines, fences, tables, indented code, emphasis runs. (No `:`: a link
  // reference definition below its use is the one documented case a stream cannot match.)
  const ch = fc.constantFrom(
    ...['#', '-', '*', '`', '>', '|', ' ', ' ', '\n', '\n', 'a', 'b', '1', '.', '_', '~', '=', '+', '\t', '字', ')', '<', '!', '\\'],
    ...['[', ']', '(', '0', '9', '    ', 'ｗ'],
  );
  it("ends with the whole document's lines for any split", () => {
    fc.assert(
      fc.property(
        fc.array(ch, { maxLength: 150 }).map((a) => a.join('')),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 }),
        (d, cuts) => {
          expect(streamed(split(d, cuts), 20, false).lines).toEqual(renderMarkdown(d, { width: 20, color: false }));
        },
      ),
      { numRuns: 800 },
    );
  });
});

describe('width', () => {
  it('no rendered line is wider than the width (string-width), colour on or off', () => {
    fc.assert(
      fc.property(doc, fc.integer({ min: 1, max: 80 }), fc.boolean(), (d, width, color) => {
        for (const l of renderMarkdown(d, { width, color })) expect(stringWidth(l)).toBeLessThanOrEqual(width);
      }),
      { numRuns: 150 },
    );
  });
});
