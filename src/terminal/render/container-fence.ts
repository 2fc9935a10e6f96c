/**
 * A fenced code block still open at the end of a list item or a block quote ("1. Create it:" then
 * an indented fence, what models write all the time), taken a line at a time while it streams.
 *
 * Without it the whole list or quote is the stream's open block: lexed and laid out again for
 * each chunk, so a chunk at line 1,000 of the code cost 60–70 times one at line 10 (bench/render.ts).
 * While the fence stays open nothing before it can change (every line to come is code until a
 * line ends the fence, its item or its quote), so the container's lines before the code are laid
 * out once, and each code line as it completes, with the container's marks (an item's indent, a
 * quote's bar) put on it as `blockLines` puts them.
 *
 * The container is taken over only when that is checked to be exact: each source line, its
 * container marks off, must be the line marked put in the code block, and the code lines with
 * the marks put on must be the lines `blockLines` drew for the container. Anything else
 * (a tab, a task item, a mark this module does not know) leaves the block to the ordinary path.
 * When the fence ends (its closing line, a line outside the item or the quote, the end of the
 * answer), `MarkdownStream` lexes the container's source again, so the lines it keeps are always
 * marked's.
 */
import type { Token, Tokens } from 'marked';
import {
  blockLines,
  codeLabel,
  codeLine,
  codeLines,
  DEFAULT_MARKDOWN_THEME,
  labelLines,
  type Links,
  type MarkdownOptions,
  paintLine,
} from './markdown-layout.js';
import { fenceIndentOff, type OpenFence, openFence } from './open-fence.js';
import { restyle, span, type SpanLine } from './style.js';

/** One container around the fence: how its marks come off a source line and go on a drawn one. */
interface Level {
  /**
   * The line inside the container, or undefined when the line is not part of it. `opening`: the
   * fence's opening line, which may be the item's first line, marker and all.
   */
  strip(line: string, opening?: boolean): string | undefined;
  decorate(l: SpanLine): SpanLine;
  /** Columns its marks take. */
  columns: number;
}

const ITEM_START = /^( {0,3})([*+-]|\d{1,9}[.)])( *)/;
const QUOTE_MARK = /^ {0,3}> ?/;

function itemLevel(list: Tokens.List, item: Tokens.ListItem): Level | undefined {
  const first = item.raw.split('\n', 1)[0] ?? '';
  const m = ITEM_START.exec(first);
  if (!m) return undefined;
  const spaces = m[3]!.length;
  const rest = first.slice(m[0].length);
  if (spaces === 0 && rest !== '') return undefined;
  // Where the item's text starts: after the marker and its spaces (one, when the item starts
  // blank or with an indented code block).
  const content = m[1]!.length + m[2]!.length + (rest === '' || spaces > 4 ? 1 : spaces);
  const pad = ' '.repeat(content);
  // The marks listLines draws: every item's marker padded to the widest, plus a space.
  const start = typeof list.start === 'number' ? list.start : 1;
  const mw = Math.max(...list.items.map((_, i) => (list.ordered ? `${start + i}.` : '•').length)) + 1;
  const indent = { text: ' '.repeat(mw) };
  return {
    strip: (line, opening) => {
      if (line.startsWith(pad) || (opening && line === first)) return line.slice(content);
      return line.trim() === '' ? '' : undefined;
    },
    decorate: (l) => (l.length === 0 ? [] : [indent, ...l]),
    columns: mw,
  };
}

function quoteLevel(opts: MarkdownOptions): Level {
  const bar = span('│ ', ...(opts.theme ?? DEFAULT_MARKDOWN_THEME).quote);
  return {
    strip: (line) => {
      const m = QUOTE_MARK.exec(line);
      return m ? line.slice(m[0].length) : undefined;
    },
    decorate: (l) => [bar, ...restyle(l, 'italic')],
    columns: 2,
  };
}

/** The containers from `token` down to the open fenced code that ends it, or undefined. */
function path(token: Token, opts: MarkdownOptions): { levels: Level[]; code: Tokens.Code; fence: OpenFence } | undefined {
  const levels: Level[] = [];
  let node: Token | undefined = token;
  for (;;) {
    if (node?.type === 'list') {
      const list = node as Tokens.List;
      const item = list.items.at(-1);
      const level = item && !item.task ? itemLevel(list, item) : undefined;
      if (!level) return undefined;
      levels.push(level);
      node = item!.tokens.at(-1);
    } else if (node?.type === 'blockquote') {
      levels.push(quoteLevel(opts));
      node = (node as Tokens.Blockquote).tokens.at(-1);
    } else break;
  }
  const fence = node && levels.length > 0 ? openFence(node) : undefined;
  return fence ? { levels, code: node as Tokens.Code, fence } : undefined;
}

/** A source line inside every container, outermost first; undefined when it leaves one. */
function stripAll(levels: readonly Level[], line: string, opening = false): string | undefined {
  let l: string | undefined = line;
  for (const lv of levels) l = l === undefined ? undefined : lv.strip(l, opening);
  return l;
}

const sameLine = (a: SpanLine | undefined, b: SpanLine | undefined): boolean => JSON.stringify(a) === JSON.stringify(b);

export class ContainerFence {
  /** The container's source taken so far (complete lines). */
  private source: string;
  /** The line being written, as it came (container marks on). */
  private partial: string;
  /** Painted lines that no longer change while the fence is open. */
  private readonly done: string[];

  private constructor(
    private readonly opts: MarkdownOptions,
    private readonly levels: readonly Level[],
    private readonly fence: OpenFence,
    private readonly width: number,
    start: { source: string; partial: string; done: string[] },
  ) {
    this.source = start.source;
    this.partial = start.partial;
    this.done = start.done;
  }

  /**
   * Takes over `token`, the stream's last open block whose source is `source`, when it is a list
   * or a quote ending in an open fence and the checks in the header hold.
   */
  static detect(token: Token, source: string, opts: MarkdownOptions, links: Links): ContainerFence | undefined {
    if (source.includes('\t')) return undefined;
    const p = path(token, opts);
    if (!p) return undefined;
    const { levels, code, fence } = p;
    // Each of the fence's source lines, marks off, is the line marked took into the block.
    // (marked leaves the line end of the container's last line out of the block's source.)
    const codeRaw = (source.endsWith('\n') && !code.raw.endsWith('\n') ? `${code.raw}\n` : code.raw).split('\n');
    const lines = source.split('\n');
    const offset = lines.length - codeRaw.length;
    if (offset < 0 || codeRaw.length < 2) return undefined;
    // (marked drops blank lines at the end of a container, so the opening line is compared too.)
    const last = codeRaw.length - 1;
    for (let i = 0; i < codeRaw.length; i++) {
      if (i === last && lines[offset + i] === '' && codeRaw[i] === '') continue;
      if (stripAll(levels, lines[offset + i]!, i === 0) !== codeRaw[i]) return undefined;
    }
    const theme = opts.theme ?? DEFAULT_MARKDOWN_THEME;
    const outer = Math.max(1, opts.width);
    const width = levels.reduce((w, lv) => Math.max(1, w - lv.columns), outer);
    const decorate = (l: SpanLine): SpanLine => levels.reduceRight((x, lv) => lv.decorate(x), l);
    // The code's lines, marks on, are the last lines blockLines drew for the container.
    const whole = blockLines(token, outer, theme, links);
    const codeAll = codeLines(code.text, code.lang, width, theme);
    // The label line is kept as drawn (an item that starts with its fence has its marker there).
    const fixed = whole.length - codeAll.length + labelLines(codeLabel(code.lang), theme).length;
    const at = whole.length - codeAll.length;
    if (at < 0 || !codeAll.every((l, j) => at + j < fixed || sameLine(decorate(l), whole[at + j]))) return undefined;
    const done = whole.slice(0, fixed).map((l) => paintLine(l, opts));
    const c = new ContainerFence(opts, levels, fence, width, { source: `${lines.slice(0, -1).join('\n')}\n`, partial: '', done });
    for (const raw of codeRaw.slice(1, -1)) c.codeLine(raw);
    c.partial = lines.at(-1)!;
    return c;
  }

  /**
   * More of the answer. Returns undefined while the fence stays open; otherwise the text from the
   * line that ended it (or everything not taken, at the end of the answer), which goes back to
   * the ordinary path after `source`.
   */
  feed(text: string, final: boolean): string | undefined {
    const s = this.partial + text;
    let start = 0;
    for (let nl = s.indexOf('\n'); nl >= 0; nl = s.indexOf('\n', start)) {
      const line = s.slice(start, nl);
      const inner = this.strip(line);
      if (inner === undefined || this.fence.close.test(inner)) {
        this.partial = '';
        return s.slice(start);
      }
      this.source += `${line}\n`;
      start = nl + 1;
      this.codeLine(inner);
    }
    this.partial = s.slice(start);
    if (!final) return undefined;
    const rest = this.partial;
    this.partial = '';
    return rest;
  }

  /** The container's source taken so far: what the ordinary path lexes again when the fence ends. */
  get taken(): string {
    return this.source;
  }

  /** The container's lines now: those that stay, then the code the highlighter holds and the line being written. */
  lines(): string[] {
    const inner = this.partial === '' ? undefined : this.strip(this.partial);
    const out = this.done.slice();
    const held = this.fence.hl.peek(inner === undefined ? undefined : fenceIndentOff(inner, this.fence.indent));
    for (const l of held) for (const piece of codeLine(l, this.width)) out.push(this.paint(piece));
    return out;
  }

  private strip(line: string): string | undefined {
    return stripAll(this.levels, line);
  }

  private paint(l: SpanLine): string {
    return paintLine(
      this.levels.reduceRight((x, lv) => lv.decorate(x), l),
      this.opts,
    );
  }

  /** One complete source line of the code, marks off. */
  private codeLine(inner: string): void {
    this.fence.lines++;
    for (const l of this.fence.hl.push(fenceIndentOff(inner, this.fence.indent)))
      for (const piece of codeLine(l, this.width)) this.done.push(this.paint(piece));
  }
}
