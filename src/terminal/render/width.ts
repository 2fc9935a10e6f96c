/**
 * Terminal columns. Widths come from pi-tui's own measure (East Asian wide and fullwidth characters
 * take two columns, combining marks none, an emoji sequence two, Thai and Lao AM one more, a lone
 * regional indicator two): the chat screen is drawn by pi-tui, which refuses a line wider than the
 * screen by its measure, so any other measure (string-width counts 'ำ' and a lone flag letter as
 * one column) lets a line through that pi-tui finds too wide and the chat dies. Text is cut only between
 * grapheme clusters (`Intl.Segmenter`, a window at a time: model/graphemes.ts), so a flag or a family emoji is never split in half.
 *
 * Everything shown came from a model or a tool, so before it is measured it is made safe: the
 * characters of the shared unsafe table (`src/model/unsafe-chars.ts`: controls, ESC, bidi
 * overrides, zero-width characters) become visible escapes, and a tab becomes spaces (a terminal
 * would move it to its own tab stop, which no width function can know).
 */
// The utils module alone (no exports map in the package): pi-tui's screen code is not loaded by `dsh run`.
import { visibleWidth } from '@mariozechner/pi-tui/dist/utils.js';
import { graphemeList } from '../../model/graphemes.js';
import { escapeUnsafe, escapeUnsafeText } from '../../model/unsafe-chars.js';
import './pi-tui-segmenter.js';
import type { Span, SpanLine } from './style.js';

const TAB = '    ';

/**
 * A name, command, path or title safe to print on one line: no controls, every character of the
 * table escaped (newlines as spaces, tabs as spaces), so two that look alike are alike.
 */
export function safeText(s: string): string {
  return escapeUnsafe(flatTabs(s));
}

/**
 * Running text (an answer, a reasoning, a prompt, a tool's output) safe to print on one line: as
 * `safeText`, but the joiners that an emoji or a word draws are kept (`escapeUnsafeText`), so ✔️
 * and 👩‍💻 show as themselves and take their two columns.
 */
export function safeProse(s: string): string {
  return escapeUnsafeText(flatTabs(s));
}

function flatTabs(s: string): string {
  const t = s.includes('\t') ? s.replace(/\t/g, TAB) : s;
  return t.includes('\n') ? t.replace(/\n/g, ' ') : t;
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * Columns `s` takes (its SGR sequences take none). Printable ASCII, most of what is drawn, is
 * one column a character; only other text goes through the grapheme measure (the hot spot otherwise).
 */
export function textWidth(s: string): number {
  if (PRINTABLE_ASCII.test(s)) return s.length;
  // A streamed block is laid out again at each chunk, so the same words are measured again and
  // again: their widths are kept (a bounded map, emptied when full).
  let w = widthCache.get(s);
  if (w === undefined) {
    w = visibleWidth(s);
    if (widthCache.size >= WIDTH_CACHE_MAX) widthCache.clear();
    widthCache.set(s, w);
  }
  return w;
}

const WIDTH_CACHE_MAX = 20_000;
const widthCache = new Map<string, number>();

export function spansWidth(line: readonly Span[]): number {
  let w = 0;
  for (const s of line) w += textWidth(s.text);
  return w;
}

/** The grapheme clusters of `s` (windowed: linear in its length, see model/graphemes.ts). */
export function graphemes(s: string): string[] {
  return graphemeList(s);
}

/**
 * The first at most `width` columns of a line, cut between graphemes; `…` marks a cut when
 * `ellipsis` (and takes the last column).
 */
export function clipSpans(line: readonly Span[], width: number, ellipsis = false): SpanLine {
  if (spansWidth(line) <= width) return [...line];
  const room = ellipsis ? width - 1 : width;
  const out: SpanLine = [];
  let used = 0;
  let lastStyle: Span['style'];
  outer: for (const s of line) {
    lastStyle = s.style;
    let taken = '';
    for (const g of graphemes(s.text)) {
      const w = textWidth(g);
      if (used + w > room) {
        if (taken) out.push(s.style ? { text: taken, style: s.style } : { text: taken });
        break outer;
      }
      taken += g;
      used += w;
    }
    if (taken) out.push(s.style ? { text: taken, style: s.style } : { text: taken });
  }
  if (ellipsis && width >= 1) out.push(lastStyle ? { text: '…', style: lastStyle } : { text: '…' });
  return out;
}

/** Plain text cut to `width` columns with `…` marking the cut. */
export function clipText(s: string, width: number): string {
  return clipSpans([{ text: s }], width, true)
    .map((x) => x.text)
    .join('');
}

/** Spaces that fill a line of `used` columns out to `width`. */
export function pad(used: number, width: number): string {
  return width > used ? ' '.repeat(width - used) : '';
}

interface Piece {
  text: string;
  style: Span['style'];
  width: number;
}

/** A word: the pieces between two spaces (a word can change style midway, as in `**bold**,`). */
type Word = Piece[];

function wordsOf(spans: readonly Span[]): { words: Word[]; spaceBefore: boolean[] } {
  const words: Word[] = [];
  const spaceBefore: boolean[] = [];
  let cur: Word = [];
  let gap = false;
  for (const s of spans) {
    for (const part of s.text.split(/( +)/)) {
      if (part === '') continue;
      if (part.startsWith(' ')) {
        if (cur.length > 0) {
          words.push(cur);
          cur = [];
        }
        gap = true;
        continue;
      }
      if (cur.length === 0) spaceBefore.push(gap);
      gap = false;
      cur.push({ text: part, style: s.style, width: textWidth(part) });
    }
  }
  if (cur.length > 0) words.push(cur);
  return { words, spaceBefore };
}

function pieceSpan(p: { text: string; style: Span['style'] }): Span {
  return p.style ? { text: p.text, style: p.style } : { text: p.text };
}

/** Adjacent spans of one style joined (fewer escapes when painted). */
export function mergeSpans(line: readonly Span[]): SpanLine {
  const out: SpanLine = [];
  for (const s of line) {
    if (s.text === '') continue;
    const last = out.at(-1);
    if (last && sameStyle(last.style, s.style)) last.text += s.text;
    else out.push(s.style ? { text: s.text, style: s.style } : { text: s.text });
  }
  return out;
}

function sameStyle(a: Span['style'], b: Span['style']): boolean {
  const x = a ?? [];
  const y = b ?? [];
  return x.length === y.length && x.every((s, i) => s === y[i]);
}

export interface WrapOptions {
  /** Put before the first line (a bullet); its width is taken from every line's room. */
  first?: readonly Span[];
  /** Put before the other lines (the bullet's indent); defaults to spaces as wide as `first`. */
  rest?: readonly Span[];
}

/**
 * Spans filled into lines of at most `width` columns: broken at spaces, a word longer than a
 * line broken between graphemes; the spaces at a break are dropped. `\n` in a span's text is a
 * hard break. Always at least one line.
 */
export function wrapSpans(spans: readonly Span[], width: number, opts: WrapOptions = {}): SpanLine[] {
  const first = opts.first ?? [];
  const rest = opts.rest ?? (first.length > 0 ? [{ text: ' '.repeat(spansWidth(first)) }] : []);
  // Hard breaks first: each segment between them is filled on its own.
  const segments: Span[][] = [[]];
  for (const s of spans) {
    const parts = s.text.split('\n');
    parts.forEach((p, i) => {
      if (i > 0) segments.push([]);
      if (p !== '') segments.at(-1)!.push(s.style ? { text: p, style: s.style } : { text: p });
    });
  }
  const lines: SpanLine[] = [];
  const prefix = (): readonly Span[] => (lines.length === 0 ? first : rest);
  for (const seg of segments) {
    let line: SpanLine = [...prefix()];
    let used = spansWidth(line);
    let room = Math.max(1, width - used);
    let empty = true;
    const newLine = (): void => {
      lines.push(mergeSpans(line));
      line = [...prefix()];
      used = spansWidth(line);
      room = Math.max(1, width - used);
      empty = true;
    };
    const { words, spaceBefore } = wordsOf(seg);
    words.forEach((word, i) => {
      const w = word.reduce((n, p) => n + p.width, 0);
      const gap = !empty && spaceBefore[i] ? 1 : 0;
      if (used + gap + w <= width) {
        // The space between two words of one style takes that style (an underline runs on).
        if (gap) line.push(sameStyle(line.at(-1)?.style, word[0]!.style) ? pieceSpan({ text: ' ', style: word[0]!.style }) : { text: ' ' });
        for (const p of word) line.push(pieceSpan(p));
        used += gap + w;
        empty = false;
        return;
      }
      if (w <= room) {
        newLine();
        for (const p of word) line.push(pieceSpan(p));
        used += w;
        empty = false;
        return;
      }
      // Longer than a line: fill what is left of this one, then break between graphemes.
      if (gap && used + 1 < width) {
        line.push({ text: ' ' });
        used += 1;
      } else if (!empty) newLine();
      for (const p of word) {
        if (PRINTABLE_ASCII.test(p.text)) {
          // One column a character: whole rows by slicing (a long blob is most of such words).
          for (let at = 0; at < p.text.length; ) {
            if (used >= width && !empty) newLine();
            const take = Math.max(1, width - used);
            line.push(pieceSpan({ text: p.text.slice(at, at + take), style: p.style }));
            used += Math.min(take, p.text.length - at);
            at += take;
            empty = false;
          }
          continue;
        }
        for (const g of graphemes(p.text)) {
          const gw = textWidth(g);
          if (used + gw > width && !empty) newLine();
          line.push(pieceSpan({ text: g, style: p.style }));
          used += gw;
          empty = false;
        }
      }
    });
    lines.push(mergeSpans(line));
  }
  // A prefix wider than the line, or a grapheme wider than one: the line is cut, never wider.
  return lines.map((l) => (spansWidth(l) > width ? clipSpans(l, width) : l));
}
