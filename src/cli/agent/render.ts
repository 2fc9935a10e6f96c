/**
 * What an agent command shows while the agent works, read from the session's committed events
 * (`session.subscribe()`), never from a side channel: the answer streamed to stdout from
 * `assistant/chunk` text deltas, tool calls and their outcomes compactly on stderr, retries and
 * unfinished turns. Everything shown came from a model or a tool, so it is escaped like log
 * text (`text.ts`).
 *
 * Modes: `stream` (the default), `json` (each committed event as one JSON line on stdout, for
 * scripts), `quiet` (only the final answer, at the end).
 *
 * On a terminal (`enableRich`, which `dsh run` calls when stderr is one) the stream mode draws tool
 * calls and reasoning with the terminal renderers (`src/terminal/render`): a call is drawn when it
 * starts and redrawn in place with its outcome when nothing was printed after it (edits as
 * diffs, bash with its status and output tail, one line for reads and searches), reasoning
 * collapses to one line when it ends. Into a pipe the output stays the plain lines below. The
 * chat screen takes the same drawn blocks through `RendererOptions.blocks` (one plug point: see
 * src/terminal/render/blocks.ts), keeps them in its transcript and expands them on a key.
 */
import type { SessionEvent, TurnEndReason } from '../../session/index.js';
import { ruleFor } from '../../tools/permissions/rules.js';
import { REFUSAL_CODES } from '../../tools/refusals.js';
import type { Session } from '../../session/session.js';
import { foldSpaces } from '../../model/unsafe-chars.js';
import { addUsage, type TokenUsage } from '../../model/usage.js';
import { argsPreview, formatFailure, formatTurnEnd, formatUsage } from '../format.js';
import type { Io } from '../output.js';
import type { BlockLayout, BlockSink } from '../../terminal/render/blocks.js';
import { block, oneLine, plural, safeJson, truncate } from '../text.js';

type ToolsModule = typeof import('../../terminal/render/tools.js');
type ReasoningModule = typeof import('../../terminal/render/reasoning.js');

/** The terminal renderers, loaded only for a terminal. */
interface Rich {
  tools: ToolsModule;
  reasoning: ReasoningModule;
}

/**
 * `stream-json` is dsh's headless stream: each committed event as
 * `{"type":"session_event","sessionId","event"}`, and `dsh run` ends it with a `result` line.
 */
export type RenderMode = 'stream' | 'json' | 'quiet' | 'stream-json';

export interface RendererOptions {
  mode: RenderMode;
  /** Show user prompts as they enter the log (replay, where nobody typed them). */
  echoPrompts?: boolean;
  /** Who could have approved a refused call: `run` prints how to allow it next time. */
  approvalHints?: boolean;
  /** Where the streamed answer goes instead of stdout (the chat screen lays it out as markdown). */
  answer?: { text(delta: string): void; end(): void };
  /**
   * Where tool calls and reasoning drawn by kind go (after `enableRich`) instead of stderr: the
   * chat screen's transcript. The layouts are the same; only the place differs.
   */
  blocks?: BlockSink;
}

/** What one turn did, for summaries. */
export interface TurnStats {
  turn: number;
  steps: number;
  usage: TokenUsage | undefined;
  reason: TurnEndReason | undefined;
}

const ARGS_WIDTH = 72;

/** Single-quote for a POSIX shell, so a suggested flag can be pasted as is. */
function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export { ruleFor };

export class LiveRenderer {
  /** Usage, steps and end of every turn seen, in order. */
  readonly turns: TurnStats[] = [];
  /** The last non-empty assistant text (the answer `--quiet` prints). */
  finalText = '';
  /** Tool calls the permission layer refused (policy, sandbox, or an approval not given), in order. */
  readonly refusals: { callId: string; name: string; code: string }[] = [];
  private current: TurnStats | undefined;
  private midLine = false;
  /** A high surrogate that ended a delta, held until its pair arrives (never split on write). */
  private pendingHigh = '';
  private readonly calls = new Map<string, { name: string; args: string; askedBecause?: string; event?: SessionEvent<'tool/call'> }>();
  private rich: Rich | undefined;
  /** What the last lines on stderr show, and how many they are, while nothing has been printed after them. */
  private lastBlock: { key: string; lines: number } | undefined;
  /** The reasoning block streaming now: its layout reads this as it grows. */
  private reasoning: { key: string; text: string; start: number; end?: number; layout?: BlockLayout } | undefined;
  /** stderr: a block is painted at the terminal's width, collapsed, and replaced in place while it is the last thing shown. */
  private readonly stderrBlocks: BlockSink = {
    draw: (key, layout) => this.drawBlock(key, layout(this.io.err.columns, false)),
    done: (key) => {
      if (this.lastBlock?.key === key) this.lastBlock = undefined;
    },
  };
  private readonly hinted = new Set<string>();
  private readonly listeners: ((e: SessionEvent) => void)[] = [];

  constructor(
    private readonly io: Io,
    private readonly opts: RendererOptions,
  ) {}

  /**
   * Draw tool calls and reasoning with the terminal renderers (a terminal on stderr). Loaded
   * here, not at start-up: a pipe never pays for them.
   */
  async enableRich(): Promise<void> {
    if (this.opts.mode !== 'stream') return;
    const [tools, reasoning] = await Promise.all([import('../../terminal/render/tools.js'), import('../../terminal/render/reasoning.js')]);
    this.rich = { tools, reasoning };
  }

  attach(session: Session): () => void {
    const id = session.id;
    return session.subscribe((e) => this.onEvent(e, id));
  }

  /** Extra observers of the same events (chat's per-turn line). */
  onCommitted(fn: (e: SessionEvent) => void): void {
    this.listeners.push(fn);
  }

  get lastTurn(): TurnStats | undefined {
    return this.turns.at(-1);
  }

  /** Usage summed over the turns seen. */
  totalUsage(): TokenUsage | undefined {
    return this.turns.reduce<TokenUsage | undefined>((sum, t) => (t.usage ? (sum ? addUsage(sum, t.usage) : t.usage) : sum), undefined);
  }

  /**
   * A line on stderr. On a terminal the answer line in progress is ended first, or the note
   * would land in the middle of it; into a pipe the answer is left as the model wrote it.
   */
  note(text: string, style?: 'dim' | 'yellow' | 'red' | 'bold'): void {
    if (this.io.out.tty && this.io.err.tty) this.endLine();
    this.io.err.line(style ? this.io.err.style(style, text) : text);
    this.io.err.flush();
    this.lastBlock = undefined;
  }

  /**
   * Painted lines on stderr, as the block `key`. When `key` is the block the last lines show (and
   * nothing came after it), they are replaced in place: cursor up over them, clear to the end of
   * the screen, draw the new ones.
   */
  private drawBlock(key: string, lines: readonly string[]): void {
    if (this.io.out.tty && this.io.err.tty) this.endLine();
    if (this.lastBlock?.key === key && this.lastBlock.lines > 0) this.io.err.write(`\x1b[${this.lastBlock.lines}A\x1b[J`);
    for (const l of lines) this.io.err.line(l);
    this.io.err.flush();
    this.lastBlock = { key, lines: lines.length };
  }

  /** A line on stdout (the answer channel), after ending any line in progress. */
  say(text: string): void {
    this.endLine();
    this.io.out.line(text);
    this.io.out.flush();
  }

  /** End the streamed answer's line, if one is open. */
  endLine(): void {
    if (this.opts.answer) return this.opts.answer.end();
    if (this.pendingHigh) this.writeText('');
    if (!this.midLine) return;
    this.io.out.write('\n');
    this.io.out.flush();
    this.midLine = false;
  }

  private writeText(text: string): void {
    if (this.opts.answer) return this.opts.answer.text(text);
    let t = this.pendingHigh + text;
    this.pendingHigh = '';
    const last = t.charCodeAt(t.length - 1);
    if (text !== '' && last >= 0xd800 && last <= 0xdbff) {
      this.pendingHigh = t.slice(-1);
      t = t.slice(0, -1);
    }
    if (t === '') return;
    this.io.out.write(block(t));
    this.io.out.flush();
    this.midLine = !t.endsWith('\n');
    this.lastBlock = undefined;
  }

  private onEvent(e: SessionEvent, sessionId: string): void {
    if (this.opts.mode === 'json' || this.opts.mode === 'stream-json') {
      this.io.out.line(safeJson(this.opts.mode === 'json' ? e : { type: 'session_event', sessionId, event: e }));
      this.io.out.flush();
    }
    this.track(e);
    if (this.opts.mode === 'stream') this.show(e);
    if (
      e.type === 'tool/result' &&
      this.opts.approvalHints &&
      this.opts.mode !== 'json' &&
      this.opts.mode !== 'stream-json' &&
      e.data.error?.code === 'APPROVAL_UNAVAILABLE'
    )
      this.approvalHint(e);
    for (const l of this.listeners) l(e);
  }

  private track(e: SessionEvent): void {
    switch (e.type) {
      case 'turn/start':
        this.current = { turn: e.data.turn, steps: 0, usage: undefined, reason: undefined };
        this.turns.push(this.current);
        break;
      case 'step/start':
        if (this.current) this.current.steps++;
        break;
      case 'assistant/message': {
        if (this.current && e.data.usage)
          this.current.usage = this.current.usage ? addUsage(this.current.usage, e.data.usage) : e.data.usage;
        const text = e.data.message.content
          .filter((b) => b.type === 'text')
          .map((b) => (b as { text: string }).text)
          .join('');
        if (text.trim() !== '') this.finalText = text;
        break;
      }
      case 'tool/call':
        this.calls.set(e.data.callId, { name: e.data.name, args: e.data.arguments, event: e });
        break;
      case 'tool/result': {
        const code = e.data.error?.code;
        const callId = e.data.message.source?.callId;
        if (code !== undefined && REFUSAL_CODES.has(code) && callId !== undefined)
          this.refusals.push({ callId, name: this.calls.get(callId)?.name ?? '?', code });
        break;
      }
      case 'approval/asked': {
        const c = e.data.callId === undefined ? undefined : this.calls.get(e.data.callId);
        if (c && e.data.reason !== undefined) c.askedBecause = e.data.reason;
        break;
      }
      case 'turn/end':
        if (this.current && this.current.turn === e.data.turn) this.current.reason = e.data.reason;
        break;
      default:
        break;
    }
  }

  private show(e: SessionEvent): void {
    if (this.rich && this.showRich(e, this.rich)) return;
    const err = this.io.err;
    switch (e.type) {
      case 'assistant/chunk': {
        const c = e.data.chunk;
        if (c.type === 'text-delta') this.writeText(c.text);
        // Reasoning is not printed, but on a terminal a long silence needs a word.
        else if (c.type === 'block-start' && c.blockType === 'reasoning' && this.io.err.tty) this.note('thinking…', 'dim');
        break;
      }
      case 'user/message':
        if (this.opts.echoPrompts && e.data.source.kind === 'user') {
          const text = e.data.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join(' ');
          this.say(this.io.out.style('bold', `› ${oneLine(text)}`));
        }
        break;
      case 'tool/call':
        this.note(`${err.style('cyan', `→ ${oneLine(e.data.name)}`)} ${err.style('dim', argsPreview(e.data.arguments, ARGS_WIDTH))}`);
        break;
      case 'tool/result': {
        const call = this.calls.get(e.data.message.content[0].toolCallId);
        const name = oneLine(call?.name ?? 'tool');
        const block0 = e.data.message.content[0];
        if (!block0.isError) {
          this.note(`${err.style('cyan', `← ${name}`)} ${err.style('green', 'ok')}`);
          break;
        }
        const text = block0.content
          .map((b) => (b.type === 'text' ? b.text : `[${b.type}]`))
          .join(' ')
          .replace(/^Error:\s*/, '');
        const code = e.data.error?.code ?? 'error';
        this.note(
          `${err.style('cyan', `← ${name}`)} ${err.style('red', `error ${oneLine(code)}`)}: ` +
            `${oneLine(truncate(foldSpaces(text, true), 160))}`,
        );
        break;
      }
      case 'llm/retry': {
        const d = e.data;
        const of = d.maxRetries !== undefined ? `/${d.maxRetries}` : '';
        this.note(`retry ${d.retry}${of} after ${formatFailure(d.failure)}; waiting ${(d.delayMs / 1000).toFixed(1)} s`, 'yellow');
        break;
      }
      case 'assistant/message':
      case 'turn/end':
        // Each answer ends its line, so the next step's text starts on a fresh one.
        this.endLine();
        break;
      default:
        break;
    }
  }

  /** The terminal renderers' form of an event; false when it has none (the plain form is shown). */
  private showRich(e: SessionEvent, rich: Rich): boolean {
    const color = this.io.err.color;
    const blocks = this.opts.blocks ?? this.stderrBlocks;
    switch (e.type) {
      case 'assistant/chunk': {
        const c = e.data.chunk;
        if (c.type === 'block-start' && c.blockType === 'reasoning') {
          const r: NonNullable<typeof this.reasoning> = { key: `reasoning:${e.seq}`, text: '', start: e.time };
          r.layout = (width, expanded) =>
            rich.reasoning.renderReasoning(
              { text: r.text, live: r.end === undefined, durationMs: r.end === undefined ? undefined : r.end - r.start },
              { width, color, collapsed: !expanded },
            );
          this.reasoning = r;
          blocks.draw(r.key, r.layout);
          return true;
        }
        if (c.type === 'reasoning-delta') {
          if (this.reasoning) {
            this.reasoning.text += c.text;
            blocks.update?.(this.reasoning.key);
          }
          return true;
        }
        if (c.type === 'block-end' && c.block.type === 'reasoning') {
          const r = this.reasoning;
          if (!r?.layout) return true;
          r.end = e.time;
          blocks.draw(r.key, r.layout);
          blocks.done?.(r.key);
          this.reasoning = undefined;
          return true;
        }
        return false;
      }
      case 'tool/call': {
        const view = rich.tools.toolCallView(e);
        blocks.draw(`call:${e.data.callId}`, (width, expanded) => rich.tools.renderTool(view, { width, color, expanded }));
        return true;
      }
      case 'tool/result': {
        const id = e.data.message.content[0].toolCallId;
        const call = this.calls.get(id)?.event;
        if (!call) return false;
        const view = rich.tools.toolCallView(call, e);
        blocks.draw(`call:${id}`, (width, expanded) => rich.tools.renderTool(view, { width, color, expanded }));
        blocks.done?.(`call:${id}`);
        return true;
      }
      default:
        return false;
    }
  }

  private approvalHint(e: SessionEvent<'tool/result'>): void {
    const call = this.calls.get(e.data.message.content[0].toolCallId);
    const name = oneLine(call?.name ?? 'a tool');
    const rule = ruleFor(call?.name ?? 'tool', call?.args ?? '');
    const allow =
      rule === undefined ? 'an --allow rule that matches it (docs/tools.md, "Rule syntax")' : `--allow ${oneLine(shellQuote(rule))}`;
    const why = call?.askedBecause ?? '';
    // What would let it run depends on why it asked: an ask rule outranks allow rules and
    // --full-auto (which turns it into a denial), so only a person can approve that call.
    let hint: string;
    if (why.startsWith('it matches the ask rule'))
      hint = `${name} ${oneLine(why.slice(3))}, so only a person can approve it: use dsh chat, or remove that rule`;
    else if (why.startsWith('escalate sandbox'))
      hint = `${name} asked to leave the sandbox; an allow rule approves that: run again with ${allow}`;
    else hint = `${name} needed approval, and dsh run cannot ask; to allow it, run again with ${allow} (or --full-auto), or use dsh chat`;
    if (this.hinted.has(hint)) return;
    this.hinted.add(hint);
    this.note(`hint: ${hint}`, 'yellow');
  }
}

/** `turn 3 · 4 steps · in 1 850 · out 120 (reasoning 16) · cache read 0 · completed` */
export function turnLine(t: TurnStats): string {
  return [`turn ${t.turn}`, plural(t.steps, 'step'), formatUsage(t.usage), t.reason ? formatTurnEnd(t.reason) : 'not ended'].join(' · ');
}

/**
 * The closing line of an agent command: `session <id> · log <path> · turn 3 · 4 steps · usage ·
 * end reason` (steps and usage summed over the turns this command ran; the turn and end reason
 * are the last one's).
 */
export function closingLine(id: string, path: string | undefined, r: LiveRenderer): string {
  const parts = [`session ${oneLine(id)}`, path ? `log ${oneLine(path)}` : 'log not persisted (--no-persist)'];
  const last = r.lastTurn;
  if (!last) parts.push('no turn ran');
  else {
    const steps = r.turns.reduce((n, t) => n + t.steps, 0);
    const turns = r.turns.length > 1 ? `turns ${r.turns[0]!.turn}–${last.turn}` : `turn ${last.turn}`;
    parts.push(turns, plural(steps, 'step'), formatUsage(r.totalUsage()), last.reason ? formatTurnEnd(last.reason) : 'not ended');
  }
  return parts.join(' · ');
}

/** Text of the answer, as `--quiet` prints it. */
export function answerText(text: string): string {
  return block(text.replace(/\s+$/, ''));
}
