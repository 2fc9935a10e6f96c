/**
 * The chat screen's scrolling part: what happened, as entries that lay themselves out for a
 * width. Plain text entries wrap; an answer is markdown rendered as it streams. Each entry caches
 * its lines per width, so a frame costs the entries that changed (the open answer), and a resize
 * lays every entry out again from what it holds (the source, never the old lines).
 */
import { type Component, wrapTextWithAnsi } from '@mariozechner/pi-tui';
import { MarkdownStream } from '../render/markdown.js';

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

class AnswerEntry implements Entry {
  private source = '';
  private done = false;
  private layout: { width: number; r: AnswerLayout } | undefined;
  constructor(private readonly render: AnswerRenderer) {}
  push(delta: string): void {
    this.source += delta;
    this.layout?.r.push(delta);
  }
  finish(): void {
    this.done = true;
    this.layout?.r.finish();
  }
  lines(width: number): readonly string[] {
    if (this.layout?.width !== width) {
      const r = this.render(Math.max(1, width));
      r.push(this.source);
      if (this.done) r.finish();
      this.layout = { width, r };
    }
    return this.layout.r.lines();
  }
}

export class Transcript implements Component {
  private readonly entries: Entry[] = [];
  private answer: AnswerEntry | undefined;
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
    return out;
  }
}
