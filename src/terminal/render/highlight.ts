/**
 * Code highlighting for fenced blocks: `lowlight` (highlight.js's grammars, as a syntax tree
 * rather than HTML) with its common languages, the tree's classes mapped to terminal styles. A
 * language lowlight does not know, or none, is shown plain: guessing the language of every block
 * would cost a full run of every grammar.
 */
import { common, createLowlight } from 'lowlight';
import type { Span, SpanLine, StyleName } from './style.js';
import { safeProse } from './width.js';

const lowlight = createLowlight(common);

/** highlight.js scope (the class without `hljs-`) → style; the innermost scope that has one wins. */
const SCOPES: Record<string, StyleName[]> = {
  keyword: ['magenta'],
  'selector-tag': ['magenta'],
  literal: ['magenta'],
  doctag: ['magenta'],
  string: ['green'],
  regexp: ['green'],
  addition: ['green'],
  char: ['green'],
  number: ['yellow'],
  symbol: ['yellow'],
  bullet: ['yellow'],
  comment: ['gray'],
  quote: ['gray'],
  meta: ['gray'],
  title: ['blue'],
  section: ['blue', 'bold'],
  type: ['cyan'],
  class: ['cyan'],
  built_in: ['cyan'],
  attr: ['yellow'],
  attribute: ['yellow'],
  property: ['cyan'],
  variable: ['red'],
  'template-variable': ['red'],
  deletion: ['red'],
  emphasis: ['italic'],
  strong: ['bold'],
};

interface HastText {
  type: 'text';
  value: string;
}
interface HastElement {
  type: 'element';
  properties?: { className?: unknown };
  children: HastNode[];
}
type HastNode = HastText | HastElement | { type: string; children?: HastNode[] };

function styleOf(node: HastElement, inherited: readonly StyleName[] | undefined): readonly StyleName[] | undefined {
  const classes = Array.isArray(node.properties?.className) ? (node.properties.className as string[]) : [];
  for (const c of classes) {
    const s = SCOPES[c.replace(/^hljs-/, '')];
    if (s) return s;
  }
  return inherited;
}

/** Does lowlight know `lang` (a name or an alias)? */
export function knownLanguage(lang: string | undefined): boolean {
  return lang !== undefined && lang !== '' && lowlight.registered(lang);
}

/**
 * `code` as lines of styled spans (one per source line; tabs as spaces, controls escaped), in
 * `lang`'s colours when it is known.
 */
export function highlightCode(code: string, lang: string | undefined): SpanLine[] {
  return highlightWithBreaks(code, lang).lines;
}

/**
 * As `highlightCode`, and for each line end of `code`, in order, whether highlight.js was at the
 * top of the grammar there (no string, comment or other scope open across it): text after such a
 * line end is coloured the same whether or not the lines before it are highlighted with it.
 */
function highlightWithBreaks(code: string, lang: string | undefined): { lines: SpanLine[]; topBreaks: boolean[] } {
  const lines: SpanLine[] = [[]];
  const topBreaks: boolean[] = [];
  const add = (text: string, style: readonly StyleName[] | undefined, depth: number): void => {
    text.split('\n').forEach((part, i) => {
      if (i > 0) {
        lines.push([]);
        topBreaks.push(depth === 0);
      }
      if (part !== '') lines.at(-1)!.push(style ? ({ text: safeProse(part), style } as Span) : { text: safeProse(part) });
    });
  };
  if (!knownLanguage(lang)) {
    add(code, undefined, 0);
    return { lines, topBreaks };
  }
  const walk = (n: HastNode, style: readonly StyleName[] | undefined, depth: number): void => {
    if (n.type === 'text') add((n as HastText).value, style, depth);
    else if (n.type === 'element') for (const c of (n as HastElement).children) walk(c, styleOf(n as HastElement, style), depth + 1);
    else if ('children' in n) for (const c of n.children ?? []) walk(c, style, depth);
  };
  walk(lowlight.highlight(lang!, code) as HastNode, undefined, 0);
  return { lines, topBreaks };
}

/**
 * Lines of code not yet final are held at most this many: a string or comment open across more
 * lines is cut there, and what follows is coloured from the top of the grammar again.
 */
export const HELD_LINES_MAX = 100;

/**
 * A code block highlighted a line at a time, for a block that streams: each line is highlighted
 * with the lines held since the last line end where the grammar was at its top (usually just
 * itself), so the cost of a line does not grow with the block. A line is final, and returned by
 * `push`, once a line end at the top follows it; `finish` returns the rest. The whole-document
 * renderer highlights every block this way too, so a streamed block ends with the same colours.
 */
export class CodeHighlighter {
  private held: string[] = [];
  private readonly known: boolean;

  constructor(private readonly lang: string | undefined) {
    this.known = knownLanguage(lang);
  }

  /** Adds one source line (no line end); returns the lines now final. */
  push(line: string): SpanLine[] {
    if (!this.known) return highlightCode(line, undefined);
    this.held.push(line);
    const { lines, topBreaks } = highlightWithBreaks(`${this.held.join('\n')}\n`, this.lang);
    let cut = topBreaks.lastIndexOf(true);
    if (cut < 0 && this.held.length >= HELD_LINES_MAX) cut = this.held.length - 1;
    if (cut < 0) return [];
    this.held = this.held.slice(cut + 1);
    return lines.slice(0, cut + 1);
  }

  /** The held lines, and `partial` (a line still being written) after them, as they would show now. */
  peek(partial?: string): SpanLine[] {
    const all = partial === undefined ? this.held : [...this.held, partial];
    return all.length === 0 ? [] : highlightCode(all.join('\n'), this.lang);
  }

  /** The block ended: the held lines, final. */
  finish(): SpanLine[] {
    const out = this.held.length === 0 ? [] : highlightCode(this.held.join('\n'), this.lang);
    this.held = [];
    return out;
  }
}
