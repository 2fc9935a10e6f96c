/**
 * The terminal side of `dsh chat` when standard input and output are a terminal: the pi-tui
 * screen (src/terminal/chat) fed from the session's committed events, and the glue between the
 * screen and the chat's input handling. Only a real process gets it; a pipe keeps the line mode.
 */
import type { SlashCommand } from '@mariozechner/pi-tui';
import type { Session } from '../../session/session.js';
import type { SessionEvent } from '../../session/index.js';
import { ChatScreen } from '../../terminal/chat/screen.js';
import { markdownAnswer } from '../../terminal/chat/transcript.js';
import { PromptHistory } from '../../terminal/chat/history.js';
import { renderStatus, StatusTracker } from '../../terminal/render/status.js';
import { styled } from '../../terminal/render/style.js';
import { safeProse } from '../../terminal/render/width.js';
import type { ApprovalAnswer, ApprovalRequest } from '../../tools/pipeline.js';
import { Output, type Io } from '../output.js';
import { chatHistoryPath } from '../home.js';
import { approvalDetail } from '../../terminal/chat/approval-detail.js';
import { oneLine } from '../text.js';
import { ruleFor } from '../agent/render.js';

export const SLASH_COMMANDS: SlashCommand[] = [
  { name: 'help', description: 'list the commands' },
  { name: 'session', description: 'session id, log path, turns and usage' },
  { name: 'cancel', description: 'cancel the running turn' },
  { name: 'resume', description: 'continue another session of this workspace', argumentHint: '[ID]' },
  { name: 'fork', description: 'fork at a seq between turns', argumentHint: '[SEQ]' },
  { name: 'model', description: 'model for the next requests', argumentHint: 'provider:model' },
  { name: 'compact', description: 'summarise the older history now' },
  { name: 'exit', description: 'leave' },
];

export interface ScreenHooks {
  onSubmit(text: string): void;
  onInterrupt(): void;
  onEof(): void;
}

/** The screen, a history, and an `Io` whose streams write into the transcript. */
export class ChatTerminal {
  readonly screen: ChatScreen;
  readonly io: Io;
  private readonly history: PromptHistory;
  private historyWarned = false;
  private readonly status = new StatusTracker();
  private sandbox: string | undefined;
  private approval: string | undefined;

  /** Styles on: decided once for the real terminal (off under NO_COLOR), used by every line drawn. */
  private readonly color: boolean;

  constructor(
    io: Io,
    private readonly cwd: string,
    hooks: ScreenHooks,
  ) {
    this.color = io.out.color;
    this.history = new PromptHistory(chatHistoryPath(io.env, cwd));
    this.screen = new ChatScreen({
      cwd,
      commands: SLASH_COMMANDS,
      history: this.history.load(),
      onSubmit: (text) => {
        this.remember(text);
        hooks.onSubmit(text);
      },
      onInterrupt: hooks.onInterrupt,
      onEof: hooks.onEof,
      status: (width, frame) => {
        const extra: { frame: number; sandbox?: string; approval?: string } = { frame };
        if (this.sandbox) extra.sandbox = this.sandbox;
        if (this.approval) extra.approval = this.approval;
        return renderStatus(this.status.input(Date.now(), extra), { width, color: io.out.color });
      },
      answer: markdownAnswer(io.out.color),
      color: io.out.color,
    });
    const sink = (channel: 'out' | 'err') => ({ write: (s: string) => this.screen.write(channel, s), isTTY: false });
    this.io = { ...io, out: new Output(sink('out'), this.color), err: new Output(sink('err'), this.color) };
  }

  private remember(text: string): void {
    try {
      this.history.add(text);
    } catch (e) {
      if (this.historyWarned) return;
      this.historyWarned = true;
      const why = oneLine(e instanceof Error ? e.message : String(e));
      this.screen.line(styled(`warning: the prompt history cannot be saved (${why})`, this.color, 'yellow'));
    }
  }

  /** Follows one session's committed events: prompts as they enter, queued steers, the status. */
  attach(session: Session): () => void {
    for (const e of session.eventsOfType(['sandbox/mode', 'approval/policy', 'request/context', 'assistant/message', 'turn/end']))
      this.onEvent(e);
    return session.subscribe((e) => this.onEvent(e));
  }

  private onEvent(e: SessionEvent): void {
    this.status.push(e);
    switch (e.type) {
      case 'sandbox/mode':
        this.sandbox = e.data.mode;
        break;
      case 'approval/policy':
        this.approval = e.data.policy;
        break;
      case 'turn/start':
        this.screen.busy(true);
        break;
      case 'turn/end':
        this.screen.busy(false);
        break;
      case 'user/message':
        if (e.data.source.kind === 'user') {
          this.screen.unqueue(e.data.id);
          const text = e.data.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`));
          const [first = '', ...rest] = text;
          const attached = rest.length > 0 ? ` ${styled(`(+${rest.length} attached)`, this.color, 'dim')}` : '';
          // The user's own words as they typed them (emoji and joined scripts drawn), controls escaped.
          this.screen.line(`${styled(`› ${first.split('\n').map(safeProse).join('\n  ')}`, this.color, 'bold')}${attached}`);
        }
        break;
      default:
        break;
    }
    this.screen.render();
  }

  /** The approval question, answered on the keyboard. */
  async approve(req: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    let args = '';
    try {
      args = JSON.stringify(req.args) ?? '';
    } catch {
      args = String(req.args);
    }
    const c = await this.screen.ask(
      {
        call: oneLine(req.toolName),
        detail: approvalDetail(req.toolName, req.args),
        reason: req.reason === undefined ? undefined : oneLine(req.reason),
        rule: ruleFor(req.toolName, args, this.cwd),
      },
      signal,
    );
    if (c.outcome === 'rejected') return c.reason === undefined ? 'rejected' : { outcome: 'rejected', reason: c.reason };
    if (c.outcome === 'allowed-once' && 'rule' in c) {
      this.screen.line(styled(`(allowed for this session: ${oneLine(c.rule)})`, this.color, 'dim'));
      return c;
    }
    return c.outcome;
  }
}
