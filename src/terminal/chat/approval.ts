/**
 * The approval question as a keyboard choice, drawn in place of the editor: allow once, allow for
 * this session (an allow rule, when one can name just this call), or deny with a reason the model
 * reads. Keys: the number or letter of a choice, or the arrows and Enter; Escape (or Ctrl-C,
 * handled by the screen) cancels. A deny asks for its reason on a line of its own (Enter with
 * nothing sends a plain deny). The numbers keep their meaning: `2` is always the session rule,
 * shown as not offered when there is none, and `3` always denies.
 *
 * The call is shown whole (approval-detail.ts): when its rows do not fit on the screen they are
 * paged, and the choices appear only once the last row has been on screen, so nothing can be
 * approved unseen.
 */
import { type Component, Input, matchesKey, truncateToWidth, wrapTextWithAnsi } from '@mariozechner/pi-tui';
import { styled } from '../render/style.js';
import { layoutDetail, type DetailRow } from './approval-detail.js';

/** What the user chose; `reason` and `rule` as the tools pipeline takes them. */
export type ApprovalChoice =
  | { outcome: 'allowed-once' }
  | { outcome: 'allowed-once'; rule: string }
  | { outcome: 'rejected'; reason?: string }
  | { outcome: 'cancelled' };

export interface ApprovalQuestion {
  /** The tool's name, already made safe to show. */
  call: string;
  /** Every argument that decides the approval, in full (approvalDetail). */
  detail: readonly DetailRow[];
  reason?: string | undefined;
  /** The rule "allow for this session" would add; none when no rule can name just this call. */
  rule?: string | undefined;
}

interface Choice {
  key: string;
  label: string;
  /** Undefined: shown, not offered. */
  pick: (() => void) | undefined;
}

/** Rows kept for the lines around the question (the status line, one transcript row). */
const RESERVED_ROWS = 2;

/**
 * Keys that arrive this soon after the choices first appear are dropped: they were typed for
 * something else (the Enter ending a steer, a held key paging the call) and must not answer a
 * question the user has not read.
 */
export const APPROVAL_GRACE_MS = 400;

export class ApprovalPrompt implements Component {
  /** No choice is selected at first: Enter alone (a held key, the end of a steer) never answers. */
  private selected = -1;
  private reason: Input | undefined;
  private readonly choices: Choice[];
  /** First detail row on screen, when the detail is paged. */
  private top = 0;
  /** The last detail row has been on screen: the choices are open. */
  private seenEnd = false;
  /** Detail rows per page and rows in all, from the last render. */
  private page = 1;
  private total = 0;
  /** When the choices were first drawn (the grace counts from there). */
  private openedAt: number | undefined;
  focused = false;

  constructor(
    private readonly q: ApprovalQuestion,
    private readonly done: (c: ApprovalChoice) => void,
    /** Styles on (false under NO_COLOR: no escapes; the `›` marker still shows the choice). */
    private readonly color = true,
    /** The terminal's height, for paging a call taller than the screen. */
    private readonly rows: () => number = () => Number.POSITIVE_INFINITY,
    private readonly now: () => number = () => performance.now(),
  ) {
    const rule = q.rule;
    this.choices = [
      { key: '1', label: 'allow once', pick: () => done({ outcome: 'allowed-once' }) },
      rule !== undefined
        ? {
            key: '2',
            // A rule without a pattern (an MCP tool has no subject) allows every call of the tool: say so.
            label: rule.includes('(') ? `allow for this session (rule ${rule})` : `allow every call of ${rule} for this session`,
            pick: () => done({ outcome: 'allowed-once', rule }),
          }
        : { key: '2', label: 'allow for this session: not offered (no rule names just this call)', pick: undefined },
      { key: '3', label: 'deny, with a reason for the model', pick: () => this.askReason() },
    ];
  }

  private askReason(): void {
    const input = new Input();
    input.onSubmit = (v) => this.done(v.trim() === '' ? { outcome: 'rejected' } : { outcome: 'rejected', reason: v.trim() });
    input.onEscape = () => (this.reason = undefined);
    input.focused = true;
    this.reason = input;
  }

  private scroll(by: number): void {
    this.top = Math.max(0, Math.min(this.total - this.page, this.top + by));
    if (this.top + this.page >= this.total) this.seenEnd = true;
  }

  private move(step: number): void {
    const n = this.choices.length;
    if (this.selected < 0) this.selected = step > 0 ? -1 : n; // from no selection: ↓ the first, ↑ the last
    do this.selected = (this.selected + step + n) % n;
    while (this.choices[this.selected]!.pick === undefined);
  }

  handleInput(data: string): void {
    if (this.reason) {
      this.reason.handleInput(data);
      return;
    }
    if (matchesKey(data, 'escape')) return this.done({ outcome: 'cancelled' });
    if (matchesKey(data, 'pageDown') || matchesKey(data, 'space')) return this.scroll(this.page);
    if (matchesKey(data, 'pageUp')) return this.scroll(-this.page);
    if (!this.seenEnd) {
      // Until the whole call has been on screen, every other key only scrolls it.
      // Enter does not page: held down, it would page to the end and then answer.
      if (matchesKey(data, 'up')) this.scroll(-1);
      else if (matchesKey(data, 'down')) this.scroll(1);
      return;
    }
    if (this.openedAt === undefined || this.now() - this.openedAt < APPROVAL_GRACE_MS) return;
    const byKey = this.choices.find((c) => c.key === data);
    if (byKey) return byKey.pick?.();
    if (data === 'y') return this.choices[0]!.pick?.();
    if (data === 'a') return this.choices[1]!.pick?.();
    if (data === 'n' || data === 'd') return this.choices[2]!.pick?.();
    if (matchesKey(data, 'up')) this.move(-1);
    else if (matchesKey(data, 'down') || matchesKey(data, 'tab')) this.move(1);
    else if (matchesKey(data, 'enter')) this.choices[this.selected]?.pick?.();
  }

  invalidate(): void {
    this.reason?.invalidate();
  }

  render(width: number): string[] {
    const w = Math.max(1, width);
    const c = this.color;
    const head = wrapTextWithAnsi(styled(`approval needed: ${this.q.call}`, c, 'yellow'), w);
    const because = this.q.reason ? wrapTextWithAnsi(styled(`  because ${this.q.reason}`, c, 'yellow'), w) : [];
    const detail = layoutDetail(this.q.detail, w).map((l) => truncateToWidth(l, w));
    // Rows left for the detail: the screen less the question's other rows (the choices and the
    // hint, or the reason's two) and the lines around it; one more for the pager's line.
    const fixed = head.length + because.length + (this.reason ? 2 : this.choices.length + 1);
    const room = Math.max(1, this.rows() - RESERVED_ROWS - fixed);
    const out = [...head];
    this.total = detail.length;
    if (detail.length <= room) {
      this.seenEnd = true;
      out.push(...detail);
    } else {
      this.page = Math.max(1, room - 1);
      this.top = Math.min(this.top, detail.length - this.page);
      if (this.top + this.page >= detail.length) this.seenEnd = true;
      out.push(...detail.slice(this.top, this.top + this.page));
      const where = `rows ${this.top + 1}–${this.top + this.page} of ${detail.length}`;
      const how = this.seenEnd ? 'PgUp/PgDn scroll' : 'PgDn for more; the choices come after the last row';
      out.push(styled(truncateToWidth(`  (${where}; ${how})`, w), c, 'yellow'));
    }
    out.push(...because);
    if (this.reason) {
      out.push(truncateToWidth('reason for the model (Enter sends, Escape goes back):', w));
      out.push(...this.reason.render(w));
      return out;
    }
    if (!this.seenEnd) {
      out.push(styled(truncateToWidth('Esc cancels', w), c, 'dim'));
      return out;
    }
    this.openedAt ??= this.now();
    // The chosen row is marked by `›` (readable without styles), and reversed when styles are on.
    this.choices.forEach((choice, i) => {
      const on = i === this.selected;
      const row = truncateToWidth(`${on ? '›' : ' '} ${choice.key}  ${choice.label}`, w);
      out.push(choice.pick === undefined ? styled(row, c, 'dim') : styled(row, c && on, 'inverse'));
    });
    out.push(styled(truncateToWidth('number or y/a/n, or ↑↓ and Enter; Esc cancels', w), c, 'dim'));
    return out;
  }
}
