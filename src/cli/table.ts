/**
 * Aligned tables for people. Cells are text the caller has already made safe to print (through
 * `text.ts`); widths count code points, so a cell is never cut inside a surrogate pair. Styling
 * is applied after padding, so colour escapes never count toward a width.
 */
import type { Output, Style } from './output.js';

export type Align = 'left' | 'right';

export interface Column {
  title: string;
  align?: Align;
}

export interface Cell {
  text: string;
  style?: Style;
}

const width = (s: string): number => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

function pad(s: string, w: number, align: Align): string {
  const gap = ' '.repeat(Math.max(0, w - width(s)));
  return align === 'right' ? gap + s : s + gap;
}

/** The table's lines: a header row, then one row per entry; columns two spaces apart. */
export function table(columns: readonly Column[], rows: readonly (readonly (string | Cell)[])[], out: Output, indent = ''): string[] {
  const cells = rows.map((r) => r.map((c) => (typeof c === 'string' ? { text: c } : c)));
  const widths = columns.map((c, i) => Math.max(width(c.title), ...cells.map((r) => width(r[i]?.text ?? ''))));
  const line = (parts: readonly Cell[], isHeader: boolean): string =>
    (
      indent +
      parts
        .map((c, i) => {
          const last = i === parts.length - 1;
          const align = columns[i]?.align ?? 'left';
          // The last column is not padded on the right: no trailing spaces.
          const text = last && align === 'left' ? c.text : pad(c.text, widths[i]!, align);
          const style = isHeader ? 'dim' : c.style;
          return style ? out.style(style, text) : text;
        })
        .join('  ')
    ).trimEnd();
  return [
    line(
      columns.map((c) => ({ text: c.title })),
      true,
    ),
    ...cells.map((r) => line(r, false)),
  ];
}

/** `label  value` lines with the labels padded to one width. */
export function fields(rows: readonly (readonly [string, string])[], out: Output, indent = ''): string[] {
  const w = Math.max(0, ...rows.map(([k]) => width(k)));
  return rows.map(([k, v]) => `${indent}${out.style('dim', pad(k, w, 'left'))}  ${v}`);
}
