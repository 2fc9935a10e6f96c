/**
 * The model's reasoning: dimmed, and collapsible. Collapsed (the default once the answer begins)
 * it is one line: how long and how much it thought, and its last words so far, so a long think
 * still shows movement. Expanded it is the whole text, wrapped and dimmed under a header.
 */
import { paint, span, type RenderOptions, type SpanLine } from './style.js';
import { clipSpans, graphemes, safeProse, spansWidth, textWidth, wrapSpans } from './width.js';
import { elapsed } from './units.js';

export interface ReasoningInput {
  text: string;
  /** Still streaming. */
  live?: boolean;
  durationMs?: number | undefined;
}

export interface ReasoningOptions extends RenderOptions {
  collapsed: boolean;
}

/** `thinking · 1.2s · 3 lines` (no text). */
function summary(r: ReasoningInput): string {
  const parts = [r.live ? 'thinking…' : 'thought'];
  if (r.durationMs !== undefined) parts.push(elapsed(r.durationMs));
  const lines = r.text.split('\n').filter((l) => l.trim() !== '').length;
  if (lines > 0) parts.push(`${lines} ${lines === 1 ? 'line' : 'lines'}`);
  return parts.join(' · ');
}

export function renderReasoning(r: ReasoningInput, opts: ReasoningOptions): string[] {
  const width = Math.max(1, opts.width);
  if (opts.collapsed) {
    const head: SpanLine = [span('▸ ', 'dim'), span(summary(r), 'dim')];
    // The last words that fit after the summary: a long think still shows it is moving. Only the
    // end of the text is looked at, so a live render costs the same however long the think.
    const room = width - spansWidth(head) - 3; // ': ' and '…'
    const end = r.text.length > 8 * width + 8 ? r.text.slice(-(8 * width)) : r.text;
    const gs = graphemes(safeProse(end.replace(/\s+/g, ' ').trim()));
    if (end !== r.text) gs.shift(); // the cut may have split the first cluster
    let tail = '';
    let used = 0;
    let i = gs.length - 1;
    for (; i >= 0 && room > 4; i--) {
      const w = textWidth(gs[i]!);
      if (used + w > room) break;
      tail = gs[i]! + tail;
      used += w;
    }
    const cut = i >= 0 || end !== r.text;
    // A cut starts at a word where there is one.
    if (cut && tail.includes(' ')) tail = tail.slice(tail.indexOf(' ') + 1);
    if (tail !== '') head.push(span(': ', 'dim'), span(`${cut ? '…' : ''}${tail}`, 'dim', 'italic'));
    return [paint(clipSpans(head, width, true), opts.color)];
  }
  const out: SpanLine[] = [[span('▾ ', 'dim'), span(summary(r), 'dim')]];
  for (const para of r.text.replace(/\n+$/, '').split('\n')) {
    if (para.trim() === '') {
      out.push([]);
      continue;
    }
    out.push(...wrapSpans([span(safeProse(para), 'dim', 'italic')], width, { first: [span('  ')], rest: [span('  ')] }));
  }
  return out.map((l) => paint(spansWidth(l) > width ? clipSpans(l, width) : l, opts.color));
}
