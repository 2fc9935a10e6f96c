/**
 * Styled text for the terminal renderers. A renderer builds lines of `Span`s (text plus style
 * names) and paints them once at the end, so a width is always measured on the text alone and the
 * escapes are added last. Painting writes plain SGR sequences itself (not `util.styleText`, whose
 * behaviour depends on the Node version and the environment): the output is a pure function of
 * the spans and the colour flag, which is what the tests compare.
 *
 * Each styled span is closed with a full reset, so no style runs past its span, or off the end
 * of a line, whichever library draws the line.
 */

export type StyleName =
  | 'bold'
  | 'dim'
  | 'italic'
  | 'underline'
  | 'strike'
  | 'inverse'
  | 'red'
  | 'green'
  | 'yellow'
  | 'blue'
  | 'magenta'
  | 'cyan'
  | 'gray';

/** SGR parameter that turns each style on. */
const SGR: Record<StyleName, number> = {
  bold: 1,
  dim: 2,
  italic: 3,
  underline: 4,
  inverse: 7,
  strike: 9,
  red: 31,
  green: 32,
  yellow: 33,
  blue: 34,
  magenta: 35,
  cyan: 36,
  gray: 90,
};

export const RESET = '\x1b[0m';

/** A run of text with one style (the styles of every enclosing element, merged). */
export interface Span {
  text: string;
  style?: readonly StyleName[];
}

/** One rendered line before painting. */
export type SpanLine = Span[];

/** What every renderer takes beside its input. */
export interface RenderOptions {
  /** Terminal columns; no painted line is wider. */
  width: number;
  /** Add ANSI styles (false: plain text, same layout). */
  color: boolean;
}

export function span(text: string, ...style: StyleName[]): Span {
  return style.length > 0 ? { text, style } : { text };
}

/** `style` added to every span (a dimmed block, a quoted one). */
export function restyle(line: readonly Span[], ...style: StyleName[]): SpanLine {
  return line.map((s) => ({ text: s.text, style: [...(s.style ?? []), ...style] }));
}

/** The SGR sequence that turns `styles` on (empty for none). */
export function sgrOpen(styles: readonly StyleName[]): string {
  if (styles.length === 0) return '';
  const codes = [...new Set(styles.map((s) => SGR[s]))];
  return `\x1b[${codes.join(';')}m`;
}

/** One line as text: styled spans wrapped in their SGR sequences when `color`, plain otherwise. */
export function paint(line: readonly Span[], color: boolean): string {
  let out = '';
  for (const s of line) {
    if (s.text === '') continue;
    out += color && s.style && s.style.length > 0 ? `${sgrOpen(s.style)}${s.text}${RESET}` : s.text;
  }
  return out;
}

/**
 * One piece of text in `style` when `color`, plain otherwise: the chat screen's own lines (prompt
 * echo, warnings, the approval question, borders) are styled only through this, so NO_COLOR
 * (the `color` flag the CLI decides once) reaches every one of them.
 */
export function styled(text: string, color: boolean, ...style: StyleName[]): string {
  return paint([span(text, ...style)], color);
}

/** Every line painted. */
export function paintLines(lines: readonly (readonly Span[])[], color: boolean): string[] {
  return lines.map((l) => paint(l, color));
}

/** The text of a painted line without its SGR sequences (what a reader sees). */
export function stripStyles(s: string): string {
  return s.replace(/\x1b\[[0-9;]*m/g, '');
}
