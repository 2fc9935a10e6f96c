/**
 * A fenced code block still open at the end of a streamed answer, taken a line at a time by
 * `MarkdownStream` (at the top level) and `ContainerFence` (inside a list item or a quote).
 */
import type { Token, Tokens } from 'marked';
import { CodeHighlighter } from './highlight.js';
import { codeLabel } from './markdown-layout.js';

/** A fenced code block open at the end of the stream, taken a line at a time (see `MarkdownStream`). */
export interface OpenFence {
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
export function openFence(t: Token): OpenFence | undefined {
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

/** A source line of the fence as marked takes it: up to `indent` leading spaces off (an indented ``` fence). */
export function fenceIndentOff(raw: string, indent: number): string {
  if (indent <= 0) return raw;
  const lead = /^\s+/.exec(raw)?.[0].length ?? 0;
  return raw.slice(Math.min(lead, indent));
}
