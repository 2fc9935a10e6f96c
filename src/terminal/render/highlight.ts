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
  const lines: SpanLine[] = [[]];
  const add = (text: string, style: readonly StyleName[] | undefined): void => {
    text.split('\n').forEach((part, i) => {
      if (i > 0) lines.push([]);
      if (part !== '') lines.at(-1)!.push(style ? ({ text: safeProse(part), style } as Span) : { text: safeProse(part) });
    });
  };
  if (!knownLanguage(lang)) {
    add(code, undefined);
    return lines;
  }
  const walk = (n: HastNode, style: readonly StyleName[] | undefined): void => {
    if (n.type === 'text') add((n as HastText).value, style);
    else if (n.type === 'element') for (const c of (n as HastElement).children) walk(c, styleOf(n as HastElement, style));
    else if ('children' in n) for (const c of n.children ?? []) walk(c, style);
  };
  walk(lowlight.highlight(lang!, code) as HastNode, undefined);
  return lines;
}
