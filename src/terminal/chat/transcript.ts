/**
 * The chat screen's scrolling part: what happened, as entries that lay themselves out for a
 * width. Plain text entries wrap; an answer is markdown rendered as it streams; a block (a tool
 * call, a reasoning) is laid out by the renderer that drew it (`BlockSink`, the same layouts
 * `dsh run` paints), collapsed or expanded as the transcript is. Each entry caches its lines per
 * width, so a frame costs the entries that changed (the open answer, the running call), and a
 * resize or an expand lays every entry out again from what it holds (the source, never the old
 * lines).
 */
import { type Component, truncateToWidth, visibleWidth, wrapTextWithAnsi } from '@mariozechner/pi-tui';
import { MarkdownStream } from '../render/markdown.js';
import type { BlockLayout, BlockSink } from '../render/blocks.js';

/** Lays an answer out as it streams: the swappable seam to the markdown renderer. */
export interface AnswerLayout {
  push(delta: string): void;
  finish(): void;
  lines(): readonly string[];
}
export type AnswerRenderer = (width: number) => AnswerLayout;

/** Answers as streaming markdown; `color` false (NO_COLOR) keeps the layout without styles. */
export const markdownAnswer =
  (color = true): AnswerRenderer =>
  (width) => {
    const s = new MarkdownStream({ width, color });
    return { push: (d) => s.push(d), finish: () => s.finish(), lines: () => s.lines() };
  };

interface Entry {
  lines(width: number): readonly string[];
}

class TextEntry implements Entry {
  private cache: { width: number; lines: string[] } | undefined;
  constructor(readonly text: string) {}
  lines(width: number): readonly string[] {
    if (this.cache?.width !== width) this.cache = { width, lines: wrapTextWithAnsi(this.text, Math.max(1, width)) };
    return this.cache.lines;
  }
}

/** A drawn block: its layout is replaced when it is drawn again, and re-run when its source grows. */
class BlockEntry implements Entry {
  private cache: { width: number; expanded: boolean; version: number; lines: string[] } | undefined;
  private version = 0;
  /** Its own state, kept when a toggle found it above the screen (see `Transcript.setExpanded`). */
  pinned: boolean | undefined;
  constructor(
    private layout: BlockLayout,
    private readonly view: { expanded: boolean },
  ) {}
  redraw(layout?: BlockLayout): void {
    if (layout) this.layout = layout;
    this.version++;
  }
  get expanded(): boolean {
    return this.pinned ?? this.view.expanded;
  }
  lines(width: number): readonly string[] {
    const c = this.cache;
    const expanded = this.expanded;
    if (c !== undefined && c.width === width && c.expanded === expanded && c.version === this.version) return c.lines;
    const lines = this.layout(Math.max(1, width), expanded);
    this.cache = { width, expanded, version: this.version, lines };
    return lines;
  }
}

/**
 * The streaming answer. Deltas are laid out when a frame asks for the lines, not as they arrive:
 * pi-tui draws at most one frame per 16 ms, and the open block is laid out again on every push,
 * so one push per frame of everything that came since keeps an answer of thousands of small
 * chunks from laying out its open paragraph thousands of times (a long line streamed in 20-byte
 * chunks took seconds of layout per kilobyte).
 */
class AnswerEntry implements Entry {
  private source = '';
  /** Deltas not yet given to the layout. */
  private pending = '';
  private done = false;
  private layout: { width: number; r: AnswerLayout; finished: boolean } | undefined;
  constructor(private readonly render: AnswerRenderer) {}
  push(delta: string): void {
    this.source += delta;
    this.pending += delta;
  }
  finish(): void {
    this.done = true;
  }
  lines(width: number): readonly string[] {
    if (this.layout?.width !== width) {
      this.layout = { width, r: this.render(Math.max(1, width)), finished: false };
      this.pending = this.source;
    }
    const l = this.layout;
    if (this.pending !== '') {
      l.r.push(this.pending);
      this.pending = '';
    }
    if (this.done && !l.finished) {
      l.r.finish();
      l.finished = true;
    }
    return l.r.lines();
  }
}

export class Transcript implements Component, BlockSink {
  private readonly entries: Entry[] = [];
  private answer: AnswerEntry | undefined;
  /** Blocks that may still be drawn again, by key. */
  private readonly blocks = new Map<string, BlockEntry>();
  /** Blocks show their long form (whole reasoning, longer diffs and output tails). */
  private readonly view = { expanded: false };
  /** Text written without its line end yet, per channel (a LiveRenderer's streams). */
  private readonly partial = { out: '', err: '' };

  constructor(private readonly layout: AnswerRenderer = markdownAnswer()) {}

  /** One or more lines of text (ANSI styles allowed). */
  line(text: string): void {
    this.entries.push(new TextEntry(text));
  }

  /** Text from a stream: whole lines become entries; the rest waits for its line end. */
  write(channel: 'out' | 'err', text: string): void {
    const all = this.partial[channel] + text;
    const cut = all.lastIndexOf('\n');
    if (cut < 0) {
      this.partial[channel] = all;
      return;
    }
    this.partial[channel] = all.slice(cut + 1);
    for (const l of all.slice(0, cut).split('\n')) this.line(l);
  }

  draw(key: string, layout: BlockLayout): void {
    const b = this.blocks.get(key);
    if (b) return b.redraw(layout);
    // A block after an answer starts below it: the answer in progress is over.
    this.answerEnd();
    const entry = new BlockEntry(layout, this.view);
    this.blocks.set(key, entry);
    this.entries.push(entry);
  }

  update(key: string): void {
    this.blocks.get(key)?.redraw();
  }

  done(key: string): void {
    this.blocks.delete(key);
  }

  get expanded(): boolean {
    return this.view.expanded;
  }

  /**
   * Blocks collapsed or expanded (one key toggles it): every block to come, and those drawn so
   * far that start on the screen. `screen` (its rows for the transcript, and the width) leaves
   * the blocks that start above it as they are: the terminal holds those lines in its scrollback,
   * and changing one makes pi-tui redraw everything and clear the scrollback (`\e[3J`), the
   * shell's lines above the chat included. Without `screen`, every block follows.
   */
  setExpanded(on: boolean, screen?: { rows: number; width: number }): void {
    let above = -1;
    if (screen) {
      const total = this.render(screen.width).length;
      above = total - Math.max(0, screen.rows);
    }
    let at = 0;
    for (const e of this.entries) {
      if (e instanceof BlockEntry) e.pinned = at < above ? (e.pinned ?? e.expanded) : undefined;
      if (screen) at += e.lines(screen.width).length;
    }
    this.view.expanded = on;
  }

  answerDelta(delta: string): void {
    if (!this.answer) {
      this.answer = new AnswerEntry(this.layout);
      this.entries.push(this.answer);
    }
    this.answer.push(delta);
  }

  answerEnd(): void {
    this.answer?.finish();
    this.answer = undefined;
  }

  invalidate(): void {}

  render(width: number): string[] {
    const out: string[] = [];
    for (const e of this.entries) for (const l of e.lines(width)) out.push(l);
    for (const p of [this.partial.out, this.partial.err]) if (p !== '') out.push(...wrapTextWithAnsi(p, Math.max(1, width)));
    // Last guard: pi-tui stops the whole program on a line wider than the screen, so a line some
    // layout measured wrongly is cut here (and shows it was cut) rather than ending the chat.
    for (let i = 0; i < out.length; i++) if (visibleWidth(out[i]!) > width) out[i] = truncateToWidth(out[i]!, Math.max(1, width), '…');
    return out;
  }
}
