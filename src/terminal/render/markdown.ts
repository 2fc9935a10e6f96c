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
import type { Token, Tokens } from 'marked';
import { ContainerFence } from './container-fence.js';
import {
  codeLabel,
  codeLine,
  DEFAULT_MARKDOWN_THEME,
  labelLines,
  type Links,
  lex,
  type MarkdownOptions,
  type MarkdownTheme,
  paintLine,
  renderBlock,
} from './markdown-layout.js';
import { fenceIndentOff, type OpenFence, openFence } from './open-fence.js';
import type { SpanLine } from './style.js';

export { DEFAULT_MARKDOWN_THEME, type MarkdownOptions, type MarkdownTheme, renderMarkdown } from './markdown-layout.js';

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
  /** A list or quote ending in an open fence, taken a line at a time (container-fence.ts). */
  private container: ContainerFence | undefined;
  /** A blank line goes before the container's lines (a block came before it). */
  private containerGap = false;

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
    if (this.container) {
      const after = this.container.feed(rest, final);
      if (after === undefined) {
        this.openLines = this.containerLines();
        return;
      }
      // The fence ended: the container goes back to the ordinary path, lexed whole once more.
      this.tail = this.container.taken;
      this.container = undefined;
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
    const container =
      !final && keep === tokens.length - 1 ? ContainerFence.detect(tokens[keep]!, this.tail, this.opts, this.links) : undefined;
    if (container) {
      this.container = container;
      this.containerGap = this.frozenBlocks > 0;
      this.tail = '';
      this.openLines = this.containerLines();
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

  private containerLines(): string[] {
    const lines = this.container!.lines();
    if (this.containerGap) lines.unshift('');
    return lines;
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
    f.lines++;
    this.freezeCode(f.hl.push(fenceIndentOff(raw, f.indent)));
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
