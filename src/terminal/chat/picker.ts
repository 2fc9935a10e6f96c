/**
 * A list to choose one entry from, drawn in place of the editor: the sessions `/resume` and
 * `dsh chat --resume` offer, the fork points `/fork` offers. Typing filters (every word typed
 * must appear in the entry, case ignored), ↑/↓ (and PgUp/PgDn) move, Enter picks, Escape (or
 * Ctrl-C, handled by the screen) cancels. Each entry is two lines: what it is, then dim details.
 * The text comes from logs, so it is made safe to show (`safeText`) here, and only here: callers
 * pass it raw (folded to one line), else a `\e` escaped upstream would show as `\\e`. Styles follow the colour
 * flag (NO_COLOR keeps the layout and the `›` marker, without escapes).
 */
import { type Component, matchesKey } from '@mariozechner/pi-tui';
import { paint, span, type SpanLine } from '../render/style.js';
import { clipSpans, safeText, spansWidth } from '../render/width.js';

export interface PickItem {
  /** What picking it returns (a session id, a seq). Title and detail are raw text: the picker escapes them. */
  value: string;
  title: string;
  /** The dim second line. */
  detail?: string;
}

export interface PickerOptions {
  heading: string;
  items: readonly PickItem[];
  color: boolean;
  /** Entries shown at once (each takes two lines). */
  visible?: number;
}

/** The entries holding every word of `filter` (case ignored), in their order. */
export function filterItems(items: readonly PickItem[], filter: string): PickItem[] {
  const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return [...items];
  return items.filter((it) => {
    const hay = `${it.title}\n${it.detail ?? ''}\n${it.value}`.toLowerCase();
    return words.every((w) => hay.includes(w));
  });
}

export class Picker implements Component {
  private filter = '';
  private selected = 0;
  private shown: PickItem[];
  focused = false;

  constructor(
    private readonly opts: PickerOptions,
    private readonly done: (value: string | undefined) => void,
  ) {
    this.shown = [...opts.items];
  }

  private setFilter(f: string): void {
    this.filter = f;
    this.shown = filterItems(this.opts.items, f);
    this.selected = 0;
  }

  handleInput(data: string): void {
    const page = this.opts.visible ?? 8;
    if (matchesKey(data, 'escape')) return this.done(undefined);
    if (matchesKey(data, 'enter')) {
      const it = this.shown[this.selected];
      if (it) this.done(it.value);
      return;
    }
    if (matchesKey(data, 'up')) this.selected = Math.max(0, this.selected - 1);
    else if (matchesKey(data, 'down') || matchesKey(data, 'tab')) this.selected = Math.min(this.shown.length - 1, this.selected + 1);
    else if (matchesKey(data, 'pageUp')) this.selected = Math.max(0, this.selected - page);
    else if (matchesKey(data, 'pageDown')) this.selected = Math.min(this.shown.length - 1, this.selected + page);
    else if (matchesKey(data, 'backspace')) this.setFilter(Array.from(this.filter).slice(0, -1).join(''));
    // Printable text (typed or pasted on one line) extends the filter; other keys do nothing.
    else if (data !== '' && !/[\x00-\x1f\x7f]/.test(data)) this.setFilter(this.filter + data);
    this.selected = Math.max(0, this.selected);
  }

  invalidate(): void {}

  render(width: number): string[] {
    const w = Math.max(1, width);
    const color = this.opts.color;
    const line = (l: SpanLine): string => paint(spansWidth(l) > w ? clipSpans(l, w, true) : l, color);
    const out = [line([span(safeText(this.opts.heading), 'bold')])];
    out.push(line([span('filter: ', 'dim'), span(safeText(this.filter)), span(this.filter === '' ? '(type to filter)' : '▏', 'dim')]));
    const visible = this.opts.visible ?? 8;
    if (this.shown.length === 0) out.push(line([span('  nothing matches', 'dim')]));
    const first = Math.max(0, Math.min(this.selected - Math.floor(visible / 2), this.shown.length - visible));
    for (let i = first; i < Math.min(this.shown.length, first + visible); i++) {
      const it = this.shown[i]!;
      const on = i === this.selected;
      out.push(line(on ? [span('› ', 'bold'), span(safeText(it.title), 'inverse')] : [span('  '), span(safeText(it.title))]));
      if (it.detail !== undefined) out.push(line([span('    '), span(safeText(it.detail), 'dim')]));
    }
    const where = this.shown.length === 0 ? '' : `${this.selected + 1} of ${this.shown.length}`;
    const total = this.shown.length === this.opts.items.length ? '' : ` (${this.opts.items.length} in all)`;
    out.push(line([span(`${where}${total}${where || total ? ' · ' : ''}↑↓ move, Enter picks, Esc cancels`, 'dim')]));
    return out;
  }
}
