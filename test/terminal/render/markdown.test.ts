/**
 * The markdown renderer's layout, with the expected lines written by hand: plain (colour off) for
 * the layout, styled for a few cases to check the escapes themselves.
 */
import { describe, expect, it } from 'vitest';
import { MarkdownStream, renderMarkdown } from '../../../src/terminal/render/markdown.js';

const plain = (md: string, width = 40): string[] => renderMarkdown(md, { width, color: false });
const styled = (md: string, width = 40): string[] => renderMarkdown(md, { width, color: true });

describe('markdown blocks', () => {
  it('headings and paragraphs, wrapped at spaces, a blank line between blocks', () => {
    expect(plain('# Title\n\nThe quick brown fox jumps over the lazy dog again.\nSoft break.\n\n### Small', 20)).toEqual([
      'Title',
      '',
      'The quick brown fox',
      'jumps over the lazy',
      'dog again. Soft',
      'break.',
      '',
      'Small',
    ]);
  });

  it('inline styles as SGR: bold, italic, strike, code, link with its address', () => {
    expect(styled('**b** *i* ~~s~~ `c` [t](http://u)')).toEqual([
      '\x1b[1mb\x1b[0m \x1b[3mi\x1b[0m \x1b[9ms\x1b[0m \x1b[36mc\x1b[0m \x1b[34;4mt\x1b[0m \x1b[2m(http://u)\x1b[0m',
    ]);
    expect(styled('# A heading')).toEqual(['\x1b[1;4;35mA heading\x1b[0m']);
    // An autolink is its own address: shown once.
    expect(plain('see <http://x.y> and https://z.w')).toEqual(['see http://x.y and https://z.w']);
  });

  it('lists: bullets, numbers from the start given, tasks, nesting indented under the text', () => {
    expect(plain('- one\n- two words that wrap here\n  - inner\n- [x] done\n- [ ] open', 16)).toEqual([
      '• one',
      '• two words that',
      '  wrap here',
      '  • inner',
      '• [x] done',
      '• [ ] open',
    ]);
    expect(plain('7. seven\n8. eight\n9. nine\n10. ten')).toEqual(['7.  seven', '8.  eight', '9.  nine', '10. ten']);
    expect(plain('- a\n\n- b')).toEqual(['• a', '', '• b']);
  });

  it('quotes get a bar; rules span the width', () => {
    expect(plain('> quoted words here\n\n---', 12)).toEqual(['│ quoted', '│ words here', '', '────────────']);
  });

  it('tables: aligned columns, a header rule, shrunk and wrapped when too wide', () => {
    const md = '| name | n |\n|:--|--:|\n| alpha | 1 |\n| b | 200 |';
    expect(plain(md)).toEqual(['name  │   n', '──────┼────', 'alpha │   1', 'b     │ 200']);
    expect(plain('| a long header | x |\n|---|---|\n| some long cell text | y |', 16)).toEqual([
      'a long       │ x',
      'header       │',
      '─────────────┼──',
      'some long    │ y',
      'cell text    │',
    ]);
  });

  it('fenced code: indented, language label, lines never re-flowed but cut at the width', () => {
    expect(plain('```\nconst x = 1;\n  indented\n```')).toEqual(['  const x = 1;', '    indented']);
    expect(plain('```js\nabcdefghij\n```', 8)).toEqual(['  js', '  abcdef', '  ghij']);
    expect(styled('```ts\nconst a = "s"; // c\n```')).toEqual([
      '  \x1b[2mts\x1b[0m',
      '  \x1b[35mconst\x1b[0m a = \x1b[32m"s"\x1b[0m; \x1b[90m// c\x1b[0m',
    ]);
  });

  it('wide text wraps by columns: CJK two columns a character, broken between characters', () => {
    expect(plain('漢字かな交じり文です', 8)).toEqual(['漢字かな', '交じり文', 'です']);
    // A word wider than the line fills the rest of the line first.
    expect(plain('ab 😀😀😀', 5)).toEqual(['ab 😀', '😀😀']);
  });

  it('text from the model cannot drive the terminal: controls and bidi overrides are escaped', () => {
    expect(plain('a\x1b[2Jb \u202eevil `c\x07`')).toEqual(['a\\e[2Jb \\u202eevil c\\x07']);
    expect(plain('```\n\x1b]0;title\x07\n```')).toEqual(['  \\e]0;title\\x07']);
  });

  it('emoji and joined scripts are drawn, two columns an emoji, in prose, tables and code (review finding 4)', () => {
    // ✔️ ⚠️ (VS16), 👩‍💻 (ZWJ), 👍🏽 (skin tone), 1️⃣ (keycap): each one grapheme of two columns.
    expect(plain('Done ✔️ and 👩‍💻 coded it ⚠️ 👍🏽 1️⃣', 12)).toEqual(['Done ✔️ and', '👩‍💻 coded it', '⚠️ 👍🏽 1️⃣']);
    // Persian with its ZWNJ (می‌خواهم), Hindi with its ZWJ (क्‍ष).
    expect(plain('می‌خواهم क्‍ष')).toEqual(['می‌خواهم क्‍ष']);
    expect(plain('| a | b |\n|---|---|\n| ✔️ | x |')).toEqual(['a  │ b', '───┼──', '✔️ │ x']);
    expect(plain('```\nlog("✅ done ✔️")\n```')).toEqual(['  log("✅ done ✔️")']);
    // Where they join nothing they are still shown.
    expect(plain('a\u200db x\ufe0f')).toEqual(['a\\u200db x\\ufe0f']);
  });

  it('HTML is shown as text, dimmed, never interpreted; entities decoded', () => {
    expect(plain('<div>x</div>\n\na &amp; b &#x263A;')).toEqual(['<div>x</div>', '', 'a & b ☺']);
    expect(styled('<b>x</b>')).toEqual(['\x1b[2m<b>\x1b[0mx\x1b[2m</b>\x1b[0m']);
  });
});

describe('MarkdownStream', () => {
  it('freezes a block once the next one has begun, and only the open block changes', () => {
    const s = new MarkdownStream({ width: 40, color: false });
    s.push('# Head\n\nFirst para');
    // The paragraph's first line is not complete: what it is is not known yet, so the block
    // before it stays open with it.
    expect(s.frozen).toEqual([]);
    expect(s.open).toEqual(['Head', '', 'First para']);
    s.push('graph.\n');
    expect(s.frozen).toEqual(['Head']);
    expect(s.open).toEqual(['', 'First paragraph.']);
    s.push('\n- item');
    expect(s.frozen).toEqual(['Head']);
    s.push('\n');
    expect(s.frozen).toEqual(['Head', '', 'First paragraph.']);
    expect(s.open).toEqual(['', '• item']);
    s.finish();
    expect(s.lines()).toEqual(['Head', '', 'First paragraph.', '', '• item']);
    expect(s.open).toEqual([]);
  });

  it('"1" then ". x" continues the list above instead of freezing it early', () => {
    const s = new MarkdownStream({ width: 40, color: false });
    for (const c of ['1. a\n\n', '1', '. b\n']) s.push(c);
    s.finish();
    expect(s.lines()).toEqual(['1. a', '', '2. b']);
  });

  it('a CRLF split across chunks is one line end', () => {
    const s = new MarkdownStream({ width: 40, color: false });
    for (const c of ['a\r', '\n\r', '\nb\r']) s.push(c);
    s.finish();
    expect(s.lines()).toEqual(['a', '', 'b']);
  });

  it('a code block still open is shown as it grows', () => {
    const s = new MarkdownStream({ width: 40, color: false });
    s.push('text\n\n```\nline 1\n');
    expect(s.lines()).toEqual(['text', '', '  line 1']);
    s.push('line 2\n```\n\nafter\n');
    s.finish();
    expect(s.lines()).toEqual(['text', '', '  line 1', '  line 2', '', 'after']);
  });

  it('an open code block freezes each line once the grammar is back at its top; a comment open across lines is held', () => {
    const s = new MarkdownStream({ width: 40, color: false });
    s.push('Here:\n\n```ts\nconst a = 1;\nconst b');
    // The paragraph, the blank line, the label and the first line are final; the line being written is open.
    expect(s.frozen).toEqual(['Here:', '', '  ts', '  const a = 1;']);
    expect(s.open).toEqual(['  const b']);
    s.push(' = 2;\n/* a comment\nstill in it\n');
    // Inside the comment the grammar is not at its top: those lines wait for its end.
    expect(s.frozen).toEqual(['Here:', '', '  ts', '  const a = 1;', '  const b = 2;']);
    expect(s.open).toEqual(['  /* a comment', '  still in it']);
    s.push('end */\n```\nDone.\n');
    expect(s.frozen).toEqual(['Here:', '', '  ts', '  const a = 1;', '  const b = 2;', '  /* a comment', '  still in it', '  end */']);
    s.finish();
    expect(s.lines()).toEqual([...s.frozen]);
    expect(s.lines().slice(-2)).toEqual(['', 'Done.']);
  });

  it('colours a line held across a comment as the whole block does', () => {
    const md = '```ts\nlet a = 1; /* x\ny */ let b = "s";\n```\n';
    const s = new MarkdownStream({ width: 40, color: true });
    for (const ch of md) s.push(ch);
    s.finish();
    expect(s.lines()).toEqual(styled(md));
    // The comment spans both lines (gray), the keyword after it is magenta again.
    expect(s.lines()[2]).toBe('  \x1b[90my */\x1b[0m \x1b[35mlet\x1b[0m b = \x1b[32m"s"\x1b[0m;');
  });
});
