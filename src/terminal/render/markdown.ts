/**
 * Markdown for the terminal: `marked`'s lexer (GFM) gives the blocks, this module lays them out in
 * styled lines of at most the width: headings, paragraphs, lists (ordered, bulleted, tasks),
 * block quotes, tables (columns shrunk and cells wrapped to fit), rules, and fenced code with
 * syntax colours (`highlight.ts`). Inline: strong, emphasis, strike-through, code, links (the
 * address after the text when it differs). Raw HTML is shown as text, never interpreted.
 *
 * `MarkdownStream` renders an answer as it streams. A block is *frozen* once a later block has
 * begun (its lines can no longer change: what follows a blank line or an interrupting block
 * cannot reach back into it); only the blocks from the last one on are lexed and laid out again
 * for each chunk. So the cost of a chunk depends on the size of the open block, not on the
 * length of the answer. The frozen lines only ever grow, so a screen can print them once.
 *
 * One limit of streaming: a reference link (`[text][label]`) is resolved against the definitions
 * seen before its block is frozen; a definition further down the answer does not reach back.
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

type Links = Record<string, { href: string; title: string }>;

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
function codeLabel(lang: string | undefined): string {
  return lang ? safeText(lang.split(/\s/)[0] ?? '') : '';
}

const CODE_INDENT: Span = { text: '  ' };

/** A code block's label line, when it has a language. */
function labelLines(label: string, theme: MarkdownTheme): SpanLine[] {
  return label ? [[CODE_INDENT, span(label, ...theme.rule)]] : [];
}

/** One highlighted source line, indented and cut into pieces of the width (code is never re-flowed). */
function codeLine(line: SpanLine, width: number): SpanLine[] {
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
function codeLines(code: string, lang: string | undefined, width: number, theme: MarkdownTheme): SpanLine[] {
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
function blockLines(token: Token, width: number, theme: MarkdownTheme, links: Links): SpanLine[] {
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
function renderBlock(token: Token, opts: MarkdownOptions, links: Links): string[] {
  const theme = opts.theme ?? DEFAULT_MARKDOWN_THEME;
  return blockLines(token, Math.max(1, opts.width), theme, links).map((l) => paintLine(l, opts));
}

function paintLine(l: SpanLine, opts: MarkdownOptions): string {
  const width = Math.max(1, opts.width);
  return paint(spansWidth(l) > width ? clipSpans(l, width) : l, opts.color);
}

function lex(src: string, links: Links): Token[] {
  const lexer = new Lexer({ gfm: true });
  Object.assign(lexer.tokens.links, links);
  return lexer.lex(src);
}

/** A fenced code block open at the end of the stream, taken a line at a time (see `MarkdownStream`). */
interface OpenFence {
  /** The block's source so far, its opening line on: lexed once, when it ends. */
  raw: string;
  /** The line still being written (no line end yet). */
  partial: string;
  /** A line that closes it: the opening run of backticks or tildes (or a longer one), up to 3 spaces before, spaces after. */
  close: RegExp;
  /** Leading whitespace taken off each line, at most (marked's rule for an indented ``` fence). */
  indent: number;
  /** Source lines given to the highlighter. */
  lines: number;
  hl: CodeHighlighter;
}

const FENCE_OPEN = /^( {0,3})(`{3,}|~{3,})/;

/** The fence a `code` token opens, when it is a fenced block not closed yet and its first line is complete. */
function openFence(t: Token): OpenFence | undefined {
  if (t.type !== 'code' || (t as Tokens.Code).codeBlockStyle === 'indented') return undefined;
  const nl = t.raw.indexOf('\n');
  const m = nl < 0 ? null : FENCE_OPEN.exec(t.raw);
  if (!m) return undefined;
  const run = m[2]!;
  const close = new RegExp(`^ {0,3}${run}${run[0]}* *$`);
  const body = t.raw.endsWith('\n') ? t.raw.slice(nl + 1, -1) : t.raw.slice(nl + 1);
  // Marked ends the block at its first closing line, so a closed block ends with it.
  if (body !== '' && close.test(body.slice(body.lastIndexOf('\n') + 1))) return undefined;
  const indent = run[0] === '`' ? (/^(\s+)```/.exec(t.raw)?.[1]?.length ?? 0) : 0;
  const label = codeLabel((t as Tokens.Code).lang);
  return { raw: '', partial: '', close, indent, lines: 0, hl: new CodeHighlighter(label || undefined) };
}

/**
 * An answer rendered as it streams: `push` each chunk; `frozen` lines never change (print them
 * once), `open` lines are the last block's current form (redraw them). `finish` freezes all.
 *
 * A fenced code block open at the end (the common "here is the file" answer) is not lexed again
 * per chunk: from its first line on, its lines are taken one at a time as they complete, each
 * highlighted with only the few lines before it that the grammar still needs (`CodeHighlighter`)
 * and frozen, until its closing fence; the block's source is lexed once, at its end, for marked's
 * last word on its text. So a chunk costs the same at line 10 and at line 10,000 of a block.
 */
export class MarkdownStream {
  private readonly opts: MarkdownOptions;
  /** Source of the open part (from the first block not yet frozen). */
  private tail = '';
  /** A CR that ended a chunk: it and a LF starting the next are one line end. */
  private pendingCr = false;
  private readonly frozenLines: string[] = [];
  private openLines: string[] = [];
  private frozenBlocks = 0;
  private readonly links: Links = Object.create(null) as Links;
  private finished = false;
  private fence: OpenFence | undefined;

  constructor(opts: MarkdownOptions) {
    this.opts = opts;
  }

  /** Lines that will not change again (append-only). */
  get frozen(): readonly string[] {
    return this.frozenLines;
  }

  /** Lines of the block still streaming (replaced at each push). */
  get open(): readonly string[] {
    return this.openLines;
  }

  /** Everything rendered so far. */
  lines(): string[] {
    return [...this.frozenLines, ...this.openLines];
  }

  push(chunk: string): void {
    if (this.finished) throw new Error('MarkdownStream: push after finish');
    if (chunk === '') return;
    let c = chunk;
    if (this.pendingCr) {
      c = `\r${c}`;
      this.pendingCr = false;
    }
    if (c.endsWith('\r')) {
      this.pendingCr = true;
      c = c.slice(0, -1);
    }
    this.feed(c.replace(/\r\n?/g, '\n'), false);
  }

  finish(): void {
    if (this.finished) return;
    const rest = this.pendingCr ? '\n' : '';
    this.pendingCr = false;
    this.feed(rest, true);
    this.finished = true;
  }

  private feed(text: string, final: boolean): void {
    let rest = text;
    if (this.fence) {
      const after = this.fenceFeed(rest, final);
      if (after === undefined) {
        this.openLines = this.fenceOpen();
        return;
      }
      rest = after;
    }
    this.tail += rest;
    this.update(final);
  }

  private update(final: boolean): void {
    const tokens = lex(this.tail, this.links);
    // The last block that is not blank stays open: text to come may still extend it. While its
    // first line is incomplete, its kind is not known yet ("1" may become "1." and continue the
    // list above), so the block before it stays open too.
    const lastBlock = (before: number): number => {
      let i = before - 1;
      while (i >= 0 && tokens[i]!.type === 'space') i--;
      return i;
    };
    let last = lastBlock(tokens.length);
    if (last >= 0 && !tokens[last]!.raw.includes('\n')) last = lastBlock(last);
    const keep = final ? tokens.length : Math.max(0, last);
    let consumed = 0;
    for (let i = 0; i < keep; i++) {
      const t = tokens[i]!;
      consumed += t.raw.length;
      if (t.type === 'def') {
        const d = t as Tokens.Def;
        const label = d.tag;
        if (!(label in this.links)) this.links[label] = { href: d.href, title: d.title };
      }
      if (this.emit(t, this.frozenLines, this.frozenBlocks)) this.frozenBlocks++;
    }
    this.tail = this.tail.slice(consumed);
    const fence = !final && keep === tokens.length - 1 ? openFence(tokens[keep]!) : undefined;
    if (fence) {
      // From here on the block is taken a line at a time (its label and the blank line before it are final now).
      if (this.frozenBlocks > 0) this.frozenLines.push('');
      this.frozenBlocks++;
      const t = tokens[keep] as Tokens.Code;
      for (const l of labelLines(codeLabel(t.lang), this.theme)) this.frozenLines.push(paintLine(l, this.opts));
      const nl = this.tail.indexOf('\n');
      fence.raw = this.tail.slice(0, nl + 1);
      const body = this.tail.slice(nl + 1);
      this.tail = '';
      this.fence = fence;
      this.fenceFeed(body, false);
      this.openLines = this.fenceOpen();
      return;
    }
    const open: string[] = [];
    if (!final) {
      let blocksSeen = this.frozenBlocks;
      for (let i = keep; i < tokens.length; i++) {
        if (this.emit(tokens[i]!, open, blocksSeen)) blocksSeen++;
      }
    }
    this.openLines = open;
  }

  private get theme(): MarkdownTheme {
    return this.opts.theme ?? DEFAULT_MARKDOWN_THEME;
  }

  /**
   * Text for the open fence: each complete line is code (frozen as the highlighter finalises it)
   * until a closing line, which ends the block. Returns the text after that line, or undefined
   * while the block is still open. `final`: the stream ends, and the block with it.
   */
  private fenceFeed(text: string, final: boolean): string | undefined {
    const f = this.fence!;
    const s = f.partial + text;
    let start = 0;
    for (let nl = s.indexOf('\n'); nl >= 0; nl = s.indexOf('\n', start)) {
      const line = s.slice(start, nl);
      f.raw += `${line}\n`;
      start = nl + 1;
      if (f.close.test(line)) {
        this.closeFence();
        return s.slice(start);
      }
      this.fenceLine(line);
    }
    f.partial = s.slice(start);
    if (!final) return undefined;
    const line = f.partial;
    f.partial = '';
    f.raw += line;
    if (line !== '' && !f.close.test(line)) this.fenceLine(line);
    this.closeFence();
    return '';
  }

  /** One source line of the open fence, as marked takes it (the fence's indent off). */
  private fenceLine(raw: string): void {
    const f = this.fence!;
    let line = raw;
    if (f.indent > 0) {
      const lead = /^\s+/.exec(line)?.[0].length ?? 0;
      line = line.slice(Math.min(lead, f.indent));
    }
    f.lines++;
    this.freezeCode(f.hl.push(line));
  }

  /** The fence ended: marked's text of the whole block (lexed once) has the last word on its lines. */
  private closeFence(): void {
    const f = this.fence!;
    this.fence = undefined;
    const t = lex(f.raw, Object.create(null) as Links)[0];
    const text = t?.type === 'code' ? (t as Tokens.Code).text.split('\n') : [];
    // An empty block is one empty line, and marked adds one after a trailing blank line.
    for (const line of text.slice(f.lines)) this.freezeCode(f.hl.push(line));
    this.freezeCode(f.hl.finish());
  }

  private freezeCode(lines: readonly SpanLine[]): void {
    const width = Math.max(1, this.opts.width);
    for (const l of lines) for (const piece of codeLine(l, width)) this.frozenLines.push(paintLine(piece, this.opts));
  }

  /** The open fence's lines not final yet: those the highlighter holds, and the line being written. */
  private fenceOpen(): string[] {
    const f = this.fence!;
    const width = Math.max(1, this.opts.width);
    const out: string[] = [];
    for (const l of f.hl.peek(f.partial === '' ? undefined : f.partial))
      for (const piece of codeLine(l, width)) out.push(paintLine(piece, this.opts));
    return out;
  }

  /** Append a block's lines to `into`, after a blank line when a block came before; true if it drew any. */
  private emit(t: Token, into: string[], blocksBefore: number): boolean {
    const lines = renderBlock(t, this.opts, this.links);
    if (lines.length === 0) return false;
    if (blocksBefore > 0) into.push('');
    into.push(...lines);
    return true;
  }
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
