/**
 * The approval question as a keyboard choice, drawn in place of the editor: allow once, allow for
 * this session (an allow rule, when one can name just this kind of call), or deny with a reason
 * the model reads. Keys: the number or letter of a choice, or the arrows and Enter; Escape (or
 * Ctrl-C, handled by the screen) cancels. A deny asks for its reason on a line of its own
 * (Enter with nothing sends a plain deny).
 */
import { type Component, Input, matchesKey, truncateToWidth, wrapTextWithAnsi } from '@mariozechner/pi-tui';

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

const dim = (s: string): string => `\x1b[2m${s}\x1b[22m`;
const yellow = (s: string): string => `\x1b[33m${s}\x1b[39m`;
const inverse = (s: string): string => `\x1b[7m${s}\x1b[27m`;

export class ApprovalPrompt implements Component {
  private selected = 0;
  private reason: Input | undefined;
  private readonly choices: { key: string; label: string; pick: () => void }[];
  focused = false;

  constructor(
    private readonly q: ApprovalQuestion,
    private readonly done: (c: ApprovalChoice) => void,
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
    const out = wrapTextWithAnsi(yellow(`approval needed: ${this.q.call}`), w);
    if (this.q.reason) out.push(...wrapTextWithAnsi(yellow(`  because ${this.q.reason}`), w));
    if (this.reason) {
      out.push(truncateToWidth('reason for the model (Enter sends, Escape goes back):', w));
      out.push(...this.reason.render(w));
      return out;
    }
    this.choices.forEach((c, i) => {
      const text = truncateToWidth(` ${c.key}  ${c.label}`, w);
      out.push(i === this.selected ? inverse(text) : text);
    });
    out.push(dim(truncateToWidth('number or y/a/n, or ↑↓ and Enter; Esc cancels', w)));
    return out;
  }
}
