/**
 * The approval question as a keyboard choice, drawn in place of the editor: allow once, allow for
 * this session (an allow rule, when one can name just this call), or deny with a reason the model
 * reads. Keys: the number or letter of a choice, or the arrows and Enter; Escape (or Ctrl-C,
 * handled by the screen) cancels. A deny asks for its reason on a line of its own (Enter with
 * nothing sends a plain deny). The numbers keep their meaning: `2` is always the session rule,
 * shown as not offered when there is none, and `3` always denies.
 *
 * The call is shown whole (approval-detail.ts), a write's or edit's file text included: when its
 * rows do not fit on the screen they are paged, and the choices appear only once the last row has
 * been on screen, so nothing can be approved unseen.
 *
 * Keys typed for something else must not answer: keys within APPROVAL_GRACE_MS of the question or
 * its choices appearing are dropped (Escape too), and a key that answers waits BURST_MS before it
 * acts, so a burst of keys (an unbracketed paste split into keys, one data chunk) answers nothing.
 */
import { type Component, Input, matchesKey, truncateToWidth, visibleWidth, wrapTextWithAnsi } from '@mariozechner/pi-tui';
import { styled } from '../render/style.js';
import { textWidth } from '../render/width.js';
import { hardWrap, layoutDetail, visibleLine, type DetailRow } from './approval-detail.js';

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
  /** The session rule, shown on rows of its own when the choice does not fit on one. */
  rule?: string;
  /** Undefined: shown, not offered. */
  pick: (() => void) | undefined;
}

/** Rows kept for the lines around the question (the status line, one transcript row). */
export const RESERVED_ROWS = 2;

/**
 * Keys that arrive this soon after the question or its choices first appear are dropped: they were
 * typed for something else (the Enter ending a steer, a stray Escape, a held key paging the call)
 * and must not answer a question the user has not read.
 */
export const APPROVAL_GRACE_MS = 400;
// Typing starts the grace again: any key that is neither an answer nor a way to move (a letter of a
// steer typed at a person's pace) drops every key for the next APPROVAL_GRACE_MS, so a sentence
// typed at the question never answers it; and no letter answers (`a` of "again" chose "allow for
// this session"): only the digits, and Enter on a choice picked with the arrows.

/**
 * A key that answers acts only when no other key follows within this time, and a key this close
 * after the one before it answers nothing: pasted text the terminal did not bracket arrives as a
 * burst of keys (one data chunk), and its first `y` or `1` must not answer. Typing keeps keys
 * further apart than this.
 */
export const APPROVAL_BURST_MS = 30;

/**
 * Narrower than this the call cannot be shown whole (a detail row needs its 4-column margin and
 * room for a 2-column character): the question asks for a wider terminal and takes no answer but
 * Escape.
 */
export const APPROVAL_MIN_WIDTH = 10;

/** Runs `fn` after `ms`; returns how to cancel it. Injected by tests. */
export type Defer = (fn: () => void, ms: number) => () => void;

const realDefer: Defer = (fn, ms) => {
  const h = setTimeout(fn, ms);
  return () => clearTimeout(h);
};

export interface ApprovalPromptOptions {
  /** Styles on (false under NO_COLOR: no escapes; the `›` marker still shows the choice). */
  color?: boolean;
  /** The terminal's height, for paging a call taller than the screen. */
  rows?: () => number;
  /** The clock the grace and bursts are measured on, and how an answer waits (tests inject both). */
  now?: () => number;
  defer?: Defer;
  /** The question changed outside a key press (a deferred answer opened the reason line): draw it again. */
  changed?: () => void;
}

/** Columns before a choice's label: the marker, the key, two spaces. */
const CHOICE_INDENT = 5;

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
  /** When the question, and its choices, were first drawn (the grace counts from each). */
  private shownAt: number | undefined;
  private openedAt: number | undefined;
  /** When the last key arrived, and the answer waiting to see that no key follows it. */
  private lastKeyAt = Number.NEGATIVE_INFINITY;
  /** When the last key that was typing, not an answer or a move, arrived (the grace counts from it too). */
  private typedAt: number | undefined;
  private pendingAnswer: (() => void) | undefined;
  /** The last render was too narrow, or too short, to show the call and its choices. */
  private narrow = false;
  /** The detail laid out for one width (a write's text can be long; the spinner redraws often). */
  private laidOut: { width: number; rows: string[] } | undefined;
  focused = false;

  private readonly color: boolean;
  private readonly rows: () => number;
  private readonly now: () => number;
  private readonly defer: Defer;
  private readonly changed: () => void;

  constructor(
    private readonly q: ApprovalQuestion,
    private readonly done: (c: ApprovalChoice) => void,
    opts: ApprovalPromptOptions = {},
  ) {
    this.color = opts.color ?? true;
    this.rows = opts.rows ?? (() => Number.POSITIVE_INFINITY);
    this.now = opts.now ?? (() => performance.now());
    this.defer = opts.defer ?? realDefer;
    this.changed = opts.changed ?? (() => {});
    const rule = q.rule;
    this.choices = [
      { key: '1', label: 'allow once', pick: () => done({ outcome: 'allowed-once' }) },
      rule !== undefined
        ? rule.includes('(')
          ? {
              key: '2',
              label: 'allow for this session',
              // Shown as the user reads the command above: escapes visible (the rule recorded is `rule`).
              rule: visibleLine(rule),
              pick: () => done({ outcome: 'allowed-once', rule }),
            }
          : // A rule without a pattern (an MCP tool has no subject) allows every call of the tool: say so.
            {
              key: '2',
              label: `allow every call of ${visibleLine(rule)} for this session`,
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

  /** `pick` once no other key has followed within APPROVAL_BURST_MS; nothing when this key is part of a burst. */
  private answer(pick: (() => void) | undefined, burst: boolean): void {
    if (pick === undefined || burst) return;
    const cancel = this.defer(() => {
      if (this.pendingAnswer !== cancel) return;
      this.pendingAnswer = undefined;
      pick();
      this.changed();
    }, APPROVAL_BURST_MS);
    this.pendingAnswer = cancel;
  }

  private inGrace(since: number | undefined, t: number): boolean {
    return since === undefined || t - since < APPROVAL_GRACE_MS;
  }

  handleInput(data: string): void {
    if (this.reason) {
      this.reason.handleInput(data);
      return;
    }
    const t = this.now();
    // A key this close to the one before (or while an answer waits to see whether one follows):
    // both are part of a burst, and neither answers.
    const burst = t - this.lastKeyAt < APPROVAL_BURST_MS || this.pendingAnswer !== undefined;
    this.lastKeyAt = t;
    this.pendingAnswer?.();
    this.pendingAnswer = undefined;
    if (matchesKey(data, 'escape')) {
      // A stray Escape (typed for the editor as the question appeared) is dropped like other keys.
      if (this.inGrace(this.shownAt, t) || (this.openedAt !== undefined && this.inGrace(this.openedAt, t))) return;
      return this.answer(() => this.done({ outcome: 'cancelled' }), burst);
    }
    if (matchesKey(data, 'pageDown') || matchesKey(data, 'space')) return this.scroll(this.page);
    if (matchesKey(data, 'pageUp')) return this.scroll(-this.page);
    if (!this.seenEnd) {
      // Until the whole call has been on screen, every other key only scrolls it.
      // Enter does not page: held down, it would page to the end and then answer.
      if (matchesKey(data, 'up')) this.scroll(-1);
      else if (matchesKey(data, 'down')) this.scroll(1);
      return;
    }
    const byKey = this.choices.find((c) => c.key === data);
    const moves = matchesKey(data, 'up') || matchesKey(data, 'down') || matchesKey(data, 'tab');
    if (!byKey && !moves && !matchesKey(data, 'enter')) {
      this.typedAt = t; // typing meant for something else: the grace starts again
      return;
    }
    if (this.narrow || this.inGrace(this.openedAt, t) || (this.typedAt !== undefined && this.inGrace(this.typedAt, t))) return;
    if (byKey) return this.answer(byKey.pick, burst);
    if (matchesKey(data, 'up')) this.move(-1);
    else if (moves) this.move(1);
    else this.answer(this.choices[this.selected]?.pick, burst);
  }

  invalidate(): void {
    this.reason?.invalidate();
  }

  render(width: number): string[] {
    const w = Math.max(1, width);
    this.shownAt ??= this.now();
    const out = this.lines(w);
    // The last-line guard, as in the transcript: pi-tui stops the program on a line wider than the
    // screen, and its word wrap gives a 2-column character a row of its own even on a 1-column screen.
    for (let i = 0; i < out.length; i++) if (visibleWidth(out[i]!) > w) out[i] = truncateToWidth(out[i]!, w, '…');
    return out;
  }

  /** The rows of one choice: one when it fits; else its label wrapped, then its rule on rows of its own. */
  private choiceRows(choice: Choice, on: boolean, w: number): string[] {
    const mark = `${on ? '›' : ' '} ${choice.key}  `;
    const whole = choice.rule === undefined ? choice.label : `${choice.label} (rule ${choice.rule})`;
    if (CHOICE_INDENT + textWidth(whole) <= w) return [mark + whole];
    const indent = ' '.repeat(CHOICE_INDENT);
    const label = wrapTextWithAnsi(choice.rule === undefined ? choice.label : `${choice.label}, with the rule`, w - CHOICE_INDENT);
    const out = label.map((l, i) => (i === 0 ? mark : indent) + l);
    // The rule is cut only between characters (no word wrap: its spaces are part of the command).
    if (choice.rule !== undefined)
      hardWrap(choice.rule, w - CHOICE_INDENT - 2).forEach((p, i) => out.push(`${indent}${i === 0 ? '│' : '┆'} ${p}`));
    return out;
  }

  private lines(w: number): string[] {
    const c = this.color;
    this.narrow = w < APPROVAL_MIN_WIDTH;
    if (this.narrow) return wrapTextWithAnsi(styled('approval: widen the terminal to read the call; Esc cancels', c, 'yellow'), w);
    const head = wrapTextWithAnsi(styled(`approval needed: ${this.q.call}`, c, 'yellow'), w);
    const because = this.q.reason ? wrapTextWithAnsi(styled(`  because ${this.q.reason}`, c, 'yellow'), w) : [];
    // The rows fit: hardWrap leaves a row wider only for a character wider than the room, which
    // APPROVAL_MIN_WIDTH rules out. Not measured again here (a 10,000-line write took seconds);
    // the last-line guard in render measures the rows on screen.
    if (this.laidOut?.width !== w) this.laidOut = { width: w, rows: layoutDetail(this.q.detail, w) };
    const detail = this.laidOut.rows;
    const choiceRows = this.choices.map((choice, i) => this.choiceRows(choice, i === this.selected, w));
    const hint = wrapTextWithAnsi('1, 2 or 3, or ↑↓ and Enter; Esc cancels', w);
    // Rows left for the detail: the screen less the question's other rows (the choices and the
    // hint, or the reason's two) and the lines around it; one more for the pager's line.
    const fixed = head.length + because.length + (this.reason ? 2 : choiceRows.flat().length + hint.length);
    const room = this.rows() - RESERVED_ROWS - fixed;
    // Paged, the question needs a detail row and the pager's line beside its other rows; on a
    // shorter screen the rows drawn with the choices would push the call's last row off the top in
    // the very frame that opens them, so nothing is shown but a request for a taller terminal.
    if (detail.length > room && room < 2) {
      this.narrow = true;
      const need = fixed + 2 + RESERVED_ROWS;
      return wrapTextWithAnsi(styled(`approval: make the terminal taller (${need} rows) to read the call; Esc cancels`, c, 'yellow'), w);
    }
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
      const how = this.seenEnd ? 'PgUp/PgDn scroll' : 'PgDn or Space for more; the choices come after the last row';
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
      for (const row of choiceRows[i]!) out.push(choice.pick === undefined ? styled(row, c, 'dim') : styled(row, c && on, 'inverse'));
    });
    out.push(...hint.map((h) => styled(h, c, 'dim')));
    return out;
  }
}
