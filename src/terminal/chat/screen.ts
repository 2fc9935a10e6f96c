/**
 * `dsh chat` on a terminal: one pi-tui screen with differential rendering (only changed lines are
 * written; a resize lays everything out again for the new width). Top to bottom: the transcript
 * (what the session log recorded, and the chat's own notes), steers typed during a turn and not
 * yet in the log ("queued"), the status line, then the editor, or in its place a question: the
 * approval choice while a call waits for one, or a list to pick from (sessions, fork points).
 *
 * The screen knows nothing of agents: the chat command feeds it events and text and answers its
 * callbacks, so every model-visible input still goes through the agent's public API.
 */
import {
  type Component,
  Editor,
  matchesKey,
  ProcessTerminal,
  type SlashCommand,
  type Terminal,
  TUI,
  truncateToWidth,
} from '@mariozechner/pi-tui';
import { ChatCompletion } from './complete.js';
import { ApprovalPrompt, type ApprovalChoice, type ApprovalQuestion } from './approval.js';
import { Picker, type PickItem } from './picker.js';
import { Transcript, type AnswerRenderer } from './transcript.js';
import type { BlockSink } from '../render/blocks.js';
import { styled } from '../render/style.js';
import { keepPastedText } from './paste.js';

export interface ChatScreenOptions {
  /** The workspace, for path completion. */
  cwd: string;
  commands: SlashCommand[];
  /** Earlier prompts of this workspace, oldest first (↑ walks back through them). */
  history: readonly string[];
  onSubmit(text: string): void;
  /** Ctrl-C: the command decides (cancel the turn, or leave). */
  onInterrupt(): void;
  /** Ctrl-D on an empty editor. */
  onEof(): void;
  /** The status line for a width (and a spinner frame). */
  status(width: number, frame: number): string[];
  terminal?: Terminal;
  answer?: AnswerRenderer;
  /** Styles on (false under NO_COLOR: the same layout, no escapes). */
  color?: boolean;
}

/** Lines between the transcript and the editor: queued steers and the status line. */
class Footer implements Component {
  readonly queued = new Map<string, string>();
  frame = 0;
  constructor(
    private readonly status: (width: number, frame: number) => string[],
    private readonly color: boolean,
  ) {}
  invalidate(): void {}
  render(width: number): string[] {
    const out: string[] = [];
    for (const text of this.queued.values()) {
      out.push(
        styled(truncateToWidth(`queued: ${text.replace(/\s+/g, ' ')} (enters at the next step)`, Math.max(1, width)), this.color, 'dim'),
      );
    }
    out.push(...this.status(width, this.frame));
    return out;
  }
}

export class ChatScreen {
  readonly tui: TUI;
  readonly transcript: Transcript;
  private readonly editor: Editor;
  private readonly footer: Footer;
  /** The question shown in place of the editor, and how to cancel it. */
  private modal: { component: Component; cancel(): void } | undefined;
  private spinner: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly color: boolean;

  constructor(opts: ChatScreenOptions) {
    this.tui = new TUI(opts.terminal ?? new ProcessTerminal());
    // pi-tui's full redraw clears the terminal's scrollback too (`\e[3J`), erasing the shell's
    // lines above the chat. It does one on a resize and on a change above the top of the screen
    // (a call's result landing on a block scrolled away; Ctrl-O leaves those blocks as they are). It also does
    // one whenever the screen gets shorter (the completion list closing, a multi-line prompt sent)
    // if PI_CLEAR_ON_SHRINK=1 is set for pi: that one is a setting, off here whatever the env says.
    this.tui.setClearOnShrink(false);
    this.color = opts.color ?? true;
    this.transcript = new Transcript(opts.answer);
    this.footer = new Footer(opts.status, this.color);
    const identity = (s: string): string => s;
    const dim = (s: string): string => styled(s, this.color, 'dim');
    // pi-tui draws the editor's cursor itself in reverse video, whatever the flag: without it the
    // cursor would not show (NO_COLOR is about colour; reverse is not one). The completion list
    // marks its chosen row with `→`, so reverse there is only added with colour.
    this.editor = new Editor(this.tui, {
      borderColor: dim,
      selectList: {
        selectedPrefix: identity,
        selectedText: (s) => styled(s, this.color, 'inverse'),
        description: dim,
        scrollInfo: dim,
        noMatch: dim,
      },
    });
    keepPastedText(this.editor);
    this.editor.setAutocompleteProvider(new ChatCompletion(opts.commands, opts.cwd));
    for (const h of opts.history) this.editor.addToHistory(h);
    this.editor.onSubmit = (text) => {
      if (text.trim() === '') return;
      this.editor.addToHistory(text);
      opts.onSubmit(text);
    };
    this.tui.addChild(this.transcript);
    this.tui.addChild(this.footer);
    this.tui.addChild(this.editor);
    this.tui.setFocus(this.editor);
    this.tui.addInputListener((data) => {
      if (matchesKey(data, 'ctrl+c')) {
        // A question on screen is cancelled first (the turn, if one runs, goes on).
        if (this.modal) this.modal.cancel();
        else opts.onInterrupt();
        return { consume: true };
      }
      if (matchesKey(data, 'ctrl+o')) {
        // Only what starts on the screen changes: the rows left to the transcript under the
        // status line and the editor.
        const { rows, columns: width } = this.tui.terminal;
        const below = this.footer.render(width).length + this.editor.render(width).length;
        this.transcript.setExpanded(!this.transcript.expanded, { rows: rows - below, width });
        this.render();
        return { consume: true };
      }
      if (matchesKey(data, 'ctrl+d') && !this.modal && this.editor.getText() === '') {
        opts.onEof();
        return { consume: true };
      }
      return undefined;
    });
  }

  private started = false;

  start(): void {
    if (this.started) return;
    this.started = true;
    this.tui.start();
  }

  /** Restores the terminal; the transcript stays on screen above the shell's next prompt. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.busy(false);
    this.tui.stop();
  }

  render(): void {
    if (!this.stopped) this.tui.requestRender();
  }

  /**
   * Resolves once the screen's last change is drawn: pi-tui draws on a timer (at most one frame
   * per 16 ms), and `stop` drops a frame still waiting, so the notes written just before leaving
   * (the turn's line, steers left unsent) would never reach the terminal.
   */
  async finalFrame(): Promise<void> {
    if (this.stopped) return;
    this.render();
    await new Promise((r) => setTimeout(r, 50));
  }

  /** A line of the chat's own (notes, command output), ANSI styles allowed. */
  line(text: string): void {
    this.transcript.line(text);
    this.render();
  }

  write(channel: 'out' | 'err', text: string): void {
    this.transcript.write(channel, text);
    this.render();
  }

  /** Tool calls and reasoning drawn by kind land in the transcript (collapsed; Ctrl-O expands them all). */
  readonly blocks: BlockSink = {
    draw: (key, layout) => {
      this.transcript.draw(key, layout);
      this.render();
    },
    update: (key) => {
      this.transcript.update(key);
      this.render();
    },
    done: (key) => this.transcript.done(key),
  };

  answerDelta(text: string): void {
    this.transcript.answerDelta(text);
    this.render();
  }

  answerEnd(): void {
    this.transcript.answerEnd();
    this.render();
  }

  queue(id: string, text: string): void {
    this.footer.queued.set(id, text);
    this.render();
  }

  /** The steer entered the log (or was dropped by a cancel): no longer queued. */
  unqueue(id: string): boolean {
    const had = this.footer.queued.delete(id);
    if (had) this.render();
    return had;
  }

  /**
   * The steers still queued, oldest first, and the queue emptied: a cancel drops them from the
   * agent's inbox, and what the user typed must not vanish with them (restoreToEditor).
   */
  takeQueue(): string[] {
    const texts = [...this.footer.queued.values()];
    this.footer.queued.clear();
    this.render();
    return texts;
  }

  /** Puts `text` back into the editor, before whatever is being typed there now. */
  restoreToEditor(text: string): void {
    const now = this.editor.getText();
    this.editor.setText(now === '' ? text : `${text}\n${now}`);
    this.render();
  }

  editorText(): string {
    return this.editor.getText();
  }

  clearEditor(): void {
    this.editor.setText('');
    this.render();
  }

  /** The spinner turns while a turn runs. */
  busy(on: boolean): void {
    if (on && !this.spinner) {
      this.spinner = setInterval(() => {
        this.footer.frame++;
        this.render();
      }, 120);
      this.spinner.unref();
    } else if (!on && this.spinner) {
      clearInterval(this.spinner);
      this.spinner = undefined;
    }
    this.render();
  }

  /**
   * Shows a question in place of the editor until `settle` is called with its answer (or the
   * `cancelled` answer, on Ctrl-C or when `signal` aborts). One question at a time: a second one
   * asked meanwhile is answered `cancelled` at once.
   */
  private question<T>(make: (settle: (v: T) => void) => Component, cancelled: T, signal?: AbortSignal): Promise<T> {
    if (this.modal || this.stopped) return Promise.resolve(cancelled);
    return new Promise((resolve) => {
      let settled = false;
      const settle = (v: T): void => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        if (this.modal?.component === component) {
          this.tui.removeChild(component);
          this.tui.addChild(this.editor);
          this.tui.setFocus(this.editor);
          this.modal = undefined;
        }
        this.render();
        resolve(v);
      };
      const onAbort = (): void => settle(cancelled);
      const component = make(settle);
      this.modal = { component, cancel: onAbort };
      this.tui.removeChild(this.editor);
      this.tui.addChild(component);
      this.tui.setFocus(component);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.render();
    });
  }

  /** The approval choice, until it is made, or `signal` aborts (cancelled). */
  ask(q: ApprovalQuestion, signal: AbortSignal): Promise<ApprovalChoice> {
    return this.question<ApprovalChoice>(
      (settle) => new ApprovalPrompt(q, settle, { color: this.color, rows: () => this.tui.terminal.rows, changed: () => this.render() }),
      { outcome: 'cancelled' },
      signal,
    );
  }

  /** One entry of a list, by its value; undefined when cancelled. */
  pick(heading: string, items: readonly PickItem[]): Promise<string | undefined> {
    const visible = Math.max(2, Math.min(8, Math.floor((this.tui.terminal.rows - 8) / 2)));
    return this.question<string | undefined>((settle) => new Picker({ heading, items, color: this.color, visible }, settle), undefined);
  }

  /** Cancel the question on screen, if any. */
  cancelQuestion(): boolean {
    if (!this.modal) return false;
    this.modal.cancel();
    return true;
  }
}
