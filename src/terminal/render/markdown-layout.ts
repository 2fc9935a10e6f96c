/**
 * Markdown laid out for the terminal, a block at a time: `marked`'s lexer (GFM) gives the blocks,
 * this module lays them out in styled lines of at most the width (see markdown.ts for what is
 * drawn and how an answer streams). `renderMarkdown` lays out a whole document at once.
 */
import { Lexer, type MarkedToken, type Token, type Tokens } from 'marked';
import { CodeHighlighter } from './highlight.js';
import { paint, restyle, span, type RenderOptions, type Span, type SpanLine, type StyleName } from './style.js';
import { clipSpans, pad, safeProse, safeText, spansWidth, wrapSpans } from './width.js';

export interface MarkdownTheme {
  heading: readonly (readonly StyleName[])[];
  code: readonly StyleName[];
  link: readonly StyleName[];
  url: readonly StyleName[];
  bullet: readonly StyleName[];
  quote: readonly StyleName[];
  rule: readonly StyleName[];
  tableHeader: readonly StyleName[];
  html: readonly StyleName[];
}

export const DEFAULT_MARKDOWN_THEME: MarkdownTheme = {
  heading: [['bold', 'underline', 'magenta'], ['bold', 'magenta'], ['bold']],
  code: ['cyan'],
  link: ['blue', 'underline'],
  url: ['dim'],
  bullet: ['cyan'],
  quote: ['dim'],
  rule: ['dim'],
  tableHeader: ['bold'],
  html: ['dim'],
};

export interface MarkdownOptions extends RenderOptions {
  theme?: MarkdownTheme;
}

export type Links = Record<string, { href: string; title: string }>;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** The few HTML entities a model writes, and numeric ones; the rest stay as written. */
function decodeEntities(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&(#\d{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]+);/g, (m, e: string) => {
    if (e.startsWith('#')) {
      const n = e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number.parseInt(e.slice(1), 10);
      return n > 0 && n <= 0x10ffff ? String.fromCodePoint(n) : m;
    }
    return ENTITIES[e] ?? m;
  });
}

function with_(style: readonly StyleName[] | undefined, extra: readonly StyleName[]): readonly StyleName[] {
  return style ? [...style, ...extra] : extra;
}

/** Inline tokens as spans (newlines kept: a soft break is a space, a hard one `\n`). */
function inline(tokens: readonly Token[] | undefined, theme: MarkdownTheme, style?: readonly StyleName[]): Span[] {
  const out: Span[] = [];
  const text = (t: string, s: readonly StyleName[] | undefined): void => {
    const safe = t
      .split('\n')
      .map((p) => safeProse(p))
      .join('\n');
    if (safe !== '') out.push(s && s.length > 0 ? { text: safe, style: s } : { text: safe });
  };
  for (const tok of tokens ?? []) {
    const t = tok as MarkedToken;
    switch (t.type) {
      case 'text':
        if ('tokens' in t && t.tokens && t.tokens.length > 0) out.push(...inline(t.tokens, theme, style));
        else text(decodeEntities(t.raw).replace(/\n/g, ' '), style);
        break;
      case 'escape':
        text(t.text, style);
        break;
      case 'strong':
        out.push(...inline(t.tokens, theme, with_(style, ['bold'])));
        break;
      case 'em':
        out.push(...inline(t.tokens, theme, with_(style, ['italic'])));
        break;
      case 'del':
        out.push(...inline(t.tokens, theme, with_(style, ['strike'])));
        break;
      case 'codespan':
        text(decodeEntities(t.text), with_(style, theme.code));
        break;
      case 'br':
        out.push({ text: '\n' });
        break;
      case 'link': {
        out.push(...inline(t.tokens, theme, with_(style, theme.link)));
        const label = t.tokens.map((x) => ('text' in x ? String(x.text) : '')).join('');
        if (t.href && t.href !== label && `mailto:${label}` !== t.href) text(` (${t.href})`, with_(style, theme.url));
        break;
      }
      case 'image':
        text(`[image: ${t.text}]`, with_(style, theme.link));
        if (t.href) text(` (${t.href})`, with_(style, theme.url));
        break;
      case 'html':
        text(t.text.replace(/\n/g, ' '), with_(style, theme.html));
        break;
      case 'checkbox':
        break;
      default:
        if ('raw' in t) text(String(t.raw).replace(/\n/g, ' '), style);
        break;
    }
  }
  return out;
}

/** A fence's language as its label shows it (the first word of the info string), or ''. */
export function codeLabel(lang: string | undefined): string {
  return lang ? safeText(lang.split(/\s/)[0] ?? '') : '';
}

export const CODE_INDENT: Span = { text: '  ' };

/** A code block's label line, when it has a language. */
export function labelLines(label: string, theme: MarkdownTheme): SpanLine[] {
  return label ? [[CODE_INDENT, span(label, ...theme.rule)]] : [];
}

/** One highlighted source line, indented and cut into pieces of the width (code is never re-flowed). */
export function codeLine(line: SpanLine, width: number): SpanLine[] {
  const room = Math.max(1, width - 2);
  const out: SpanLine[] = [];
  let rest: SpanLine = line;
  do {
    const head = clipSpans(rest, room);
    out.push([CODE_INDENT, ...head]);
    rest = dropColumns(rest, spansWidth(head));
  } while (spansWidth(rest) > 0);
  return out;
}

/** Lines of a code block: its label, then each source line highlighted (a line at a time, as a stream does). */
export function codeLines(code: string, lang: string | undefined, width: number, theme: MarkdownTheme): SpanLine[] {
  const label = codeLabel(lang);
  const out = labelLines(label, theme);
  const hl = new CodeHighlighter(label || undefined);
  for (const line of code.split('\n')) for (const l of hl.push(line)) out.push(...codeLine(l, width));
  for (const l of hl.finish()) out.push(...codeLine(l, width));
  return out;
}

/** `line` without its first `n` columns' worth of spans (as `clipSpans` cut them). */
function dropColumns(line: readonly Span[], n: number): SpanLine {
  if (n <= 0) return [];
  const head = clipSpans(line, n);
  let chars = head.reduce((k, s) => k + s.text.length, 0);
  const out: SpanLine = [];
  for (const s of line) {
    if (chars >= s.text.length) {
      chars -= s.text.length;
      continue;
    }
    const text = s.text.slice(chars);
    chars = 0;
    out.push(s.style ? { text, style: s.style } : { text });
  }
  return out;
}

/** Column widths that fit `room`: each column its natural width, the widest shrunk first. */
function fitColumns(natural: number[], room: number): number[] {
  const w = natural.map((n) => Math.max(1, n));
  let total = w.reduce((a, b) => a + b, 0);
  while (total > room) {
    const max = Math.max(...w);
    if (max <= 1) break;
    const i = w.indexOf(max);
    w[i] = max - 1;
    total--;
  }
  return w;
}

function tableLines(t: Tokens.Table, width: number, theme: MarkdownTheme): SpanLine[] {
  const n = t.header.length;
  const sep = span(' │ ', ...theme.rule);
  const cells = (row: readonly Tokens.TableCell[], style?: readonly StyleName[]): Span[][] =>
    row.map((c) => inline(c.tokens, theme, style).map((s) => ({ ...s, text: s.text.replace(/\n/g, ' ') })));
  const head = cells(t.header, theme.tableHeader);
  const rows = t.rows.map((r) => cells(r));
  const natural = Array.from({ length: n }, (_, i) => Math.max(spansWidth(head[i] ?? []), ...rows.map((r) => spansWidth(r[i] ?? []))));
  const widths = fitColumns(natural, Math.max(n, width - 3 * (n - 1)));
  const layRow = (row: Span[][]): SpanLine[] => {
    const wrapped = widths.map((w, i) => wrapSpans(row[i] ?? [], w));
    const height = Math.max(...wrapped.map((c) => c.length));
    const out: SpanLine[] = [];
    for (let k = 0; k < height; k++) {
      const line: SpanLine = [];
      widths.forEach((w, i) => {
        if (i > 0) line.push(sep);
        const cell = wrapped[i]![k] ?? [];
        const gap = w - spansWidth(cell);
        const align = t.align[i];
        const left = align === 'right' ? gap : align === 'center' ? Math.floor(gap / 2) : 0;
        line.push({ text: pad(0, left) }, ...cell, { text: pad(0, gap - left) });
      });
      // Trailing spaces of the last column are not kept (nor the separator's, before an empty cell).
      while (line.length > 0 && line.at(-1)!.style === undefined && line.at(-1)!.text.trim() === '') line.pop();
      if (line.at(-1) === sep) line[line.length - 1] = span(' │', ...theme.rule);
      out.push(line);
    }
    return out;
  };
  const rule = widths.map((w) => '─'.repeat(w)).join('─┼─');
  return [...layRow(head), [span(rule, ...theme.rule)], ...rows.flatMap(layRow)];
}

/** Child blocks of a list item or a quote, separated by a blank line only where `loose`. */
function blocks(tokens: readonly Token[], width: number, theme: MarkdownTheme, loose: boolean, links: Links): SpanLine[] {
  const out: SpanLine[] = [];
  for (const t of tokens) {
    const lines = blockLines(t, width, theme, links);
    if (lines.length === 0) continue;
    if (out.length > 0 && loose) out.push([]);
    out.push(...lines);
  }
  return out;
}

function listLines(t: Tokens.List, width: number, theme: MarkdownTheme, links: Links): SpanLine[] {
  const start = typeof t.start === 'number' ? t.start : 1;
  const markers = t.items.map((_, i) => (t.ordered ? `${start + i}.` : '•'));
  const mw = Math.max(...markers.map((m) => spansWidth([{ text: m }]))) + 1;
  const out: SpanLine[] = [];
  t.items.forEach((item, i) => {
    if (i > 0 && t.loose) out.push([]);
    const body = blocks(item.tokens, Math.max(1, width - mw), theme, item.loose, links);
    const marker = span(markers[i]!.padEnd(mw), ...theme.bullet);
    const indent = { text: ' '.repeat(mw) };
    // A task's box leads its first line.
    if (item.task) {
      const box = span(item.checked ? '[x] ' : '[ ] ', ...theme.bullet);
      if (body.length === 0) body.push([box]);
      else body[0] = [box, ...body[0]!];
    }
    if (body.length === 0) out.push([marker]);
    body.forEach((l, k) => {
      out.push(l.length === 0 ? [] : [k === 0 ? marker : indent, ...l]);
    });
  });
  return out;
}

/** One block's lines (no blank line around it), not yet cut to the width. */
export function blockLines(token: Token, width: number, theme: MarkdownTheme, links: Links): SpanLine[] {
  const t = token as MarkedToken;
  switch (t.type) {
    case 'space':
    case 'def':
    case 'checkbox':
      return [];
    case 'heading': {
      const style = theme.heading[Math.min(t.depth, theme.heading.length) - 1] ?? [];
      return wrapSpans(inline(t.tokens, theme, style), width);
    }
    case 'paragraph':
      return wrapSpans(inline(t.tokens, theme), width);
    case 'text':
      return wrapSpans(t.tokens ? inline(t.tokens, theme) : [{ text: safeProse(decodeEntities(t.text)) }], width);
    case 'code':
      return codeLines(t.text, t.lang, width, theme);
    case 'hr':
      return [[span('─'.repeat(Math.max(1, width)), ...theme.rule)]];
    case 'blockquote': {
      const bar = span('│ ', ...theme.quote);
      return blocks(t.tokens, Math.max(1, width - 2), theme, true, links).map((l) => [bar, ...restyle(l, 'italic')]);
    }
    case 'list':
      return listLines(t, width, theme, links);
    case 'table':
      return tableLines(t, width, theme);
    case 'html':
      return t.text
        .replace(/\n+$/, '')
        .split('\n')
        .flatMap((l) => wrapSpans([{ text: safeProse(l), style: theme.html }], width));
    default:
      return 'raw' in t ? wrapSpans([{ text: safeProse(String(t.raw).trim()) }], width) : [];
  }
}

/** A block's painted lines, each at most `width` columns. */
export function renderBlock(token: Token, opts: MarkdownOptions, links: Links): string[] {
  const theme = opts.theme ?? DEFAULT_MARKDOWN_THEME;
  return blockLines(token, Math.max(1, opts.width), theme, links).map((l) => paintLine(l, opts));
}

export function paintLine(l: SpanLine, opts: MarkdownOptions): string {
  const width = Math.max(1, opts.width);
  return paint(spansWidth(l) > width ? clipSpans(l, width) : l, opts.color);
}

export function lex(src: string, links: Links): Token[] {
  const lexer = new Lexer({ gfm: true });
  Object.assign(lexer.tokens.links, links);
  return lexer.lex(src);
}

/**
 * A whole document at once: lexed in one pass, every block laid out, a blank line between blocks.
 * A `MarkdownStream` fed the same document in any chunks ends with these lines (reference links
 * defined below their use aside, see the header).
 */
export function renderMarkdown(src: string, opts: MarkdownOptions): string[] {
  const links = Object.create(null) as Links;
  const out: string[] = [];
  for (const t of lex(src, links)) {
    const lines = renderBlock(t, opts, links);
    if (lines.length === 0) continue;
    if (out.length > 0) out.push('');
    out.push(...lines);
  }
  return out;
}
