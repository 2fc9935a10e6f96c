/**
 * The approval question as a keyboard choice, drawn in place of the editor: allow once, allow for
 * this session (an allow rule, when one can name just this kind of call), or deny with a reason
 * the model reads. Keys: the number or letter of a choice, or the arrows and Enter; Escape (or
 * Ctrl-C, handled by the screen) cancels. A deny asks for its reason on a line of its own
 * (Enter with nothing sends a plain deny).
 */
import { type Component, Input, matchesKey, truncateToWidth, wrapTextWithAnsi } from '@mariozechner/pi-tui';
import { styled } from '../render/style.js';

/** What the user chose; `reason` and `rule` as the tools pipeline takes them. */
export type ApprovalChoice =
  | { outcome: 'allowed-once' }
  | { outcome: 'allowed-once'; rule: string }
  | { outcome: 'rejected'; reason?: string }
  | { outcome: 'cancelled' };

export interface ApprovalQuestion {
  /** `write {"file_path":"notes.txt",…}`: the call, already made safe to show. */
  call: string;
  reason?: string | undefined;
  /** The rule "allow for this session" would add; none when no rule can name the call. */
  rule?: string | undefined;
}

export class ApprovalPrompt implements Component {
  private selected = 0;
  private reason: Input | undefined;
  private readonly choices: { key: string; label: string; pick: () => void }[];
  focused = false;

  constructor(
    private readonly q: ApprovalQuestion,
    private readonly done: (c: ApprovalChoice) => void,
    /** Styles on (false under NO_COLOR: no escapes; the `›` marker still shows the choice). */
    private readonly color = true,
  ) {
    this.choices = [{ key: '1', label: 'allow once', pick: () => done({ outcome: 'allowed-once' }) }];
    if (q.rule !== undefined) {
      const rule = q.rule;
      this.choices.push({ key: '2', label: `allow for this session (rule ${rule})`, pick: () => done({ outcome: 'allowed-once', rule }) });
    }
    this.choices.push({ key: String(this.choices.length + 1), label: 'deny, with a reason for the model', pick: () => this.askReason() });
  }

  private askReason(): void {
    const input = new Input();
    input.onSubmit = (v) => this.done(v.trim() === '' ? { outcome: 'rejected' } : { outcome: 'rejected', reason: v.trim() });
    input.onEscape = () => (this.reason = undefined);
    input.focused = true;
    this.reason = input;
  }

  handleInput(data: string): void {
    if (this.reason) {
      this.reason.handleInput(data);
      return;
    }
    const byKey = this.choices.find((c) => c.key === data);
    if (byKey) return byKey.pick();
    if (data === 'y') return this.choices[0]!.pick();
    if (data === 'a' && this.q.rule !== undefined) return this.choices[1]!.pick();
    if (data === 'n' || data === 'd') return this.choices.at(-1)!.pick();
    if (matchesKey(data, 'escape')) return this.done({ outcome: 'cancelled' });
    if (matchesKey(data, 'up')) this.selected = (this.selected + this.choices.length - 1) % this.choices.length;
    else if (matchesKey(data, 'down') || matchesKey(data, 'tab')) this.selected = (this.selected + 1) % this.choices.length;
    else if (matchesKey(data, 'enter')) this.choices[this.selected]!.pick();
  }

  invalidate(): void {
    this.reason?.invalidate();
  }

  render(width: number): string[] {
    const w = Math.max(1, width);
    const c = this.color;
    const out = wrapTextWithAnsi(styled(`approval needed: ${this.q.call}`, c, 'yellow'), w);
    if (this.q.reason) out.push(...wrapTextWithAnsi(styled(`  because ${this.q.reason}`, c, 'yellow'), w));
    if (this.reason) {
      out.push(truncateToWidth('reason for the model (Enter sends, Escape goes back):', w));
      out.push(...this.reason.render(w));
      return out;
    }
    // The chosen row is marked by `›` (readable without styles), and reversed when styles are on.
    this.choices.forEach((choice, i) => {
      const on = i === this.selected;
      out.push(styled(truncateToWidth(`${on ? '›' : ' '} ${choice.key}  ${choice.label}`, w), c && on, 'inverse'));
    });
    out.push(styled(truncateToWidth('number or y/a/n, or ↑↓ and Enter; Esc cancels', w), c, 'dim'));
    return out;
  }
}
