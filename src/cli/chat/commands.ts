/**
 * Chat's slash commands. Each reads or changes the chat through the small `ChatControl` surface,
 * so the command logic does not reach into the REPL's input handling.
 */
import { addUsage, type TokenUsage } from '../../model/usage.js';
import type { Session } from '../../session/session.js';
import { SessionError } from '../../session/index.js';
import { StoreError } from '../../store/index.js';
import { LlmError } from '../../model/failure.js';
import { CodedError } from '../../model/coded-error.js';
import type { PickItem } from '../../terminal/chat/picker.js';
import { formatUsage } from '../format.js';
import { forkItems, forkPointLine, forkPoints } from './fork-points.js';
import { oneLine, plural } from '../text.js';

export interface ChatControl {
  session(): Session;
  path(): string | undefined;
  running(): boolean;
  model(): string;
  /** Lines to show the user (stdout). */
  say(text: string): void;
  /** A one-line refusal or problem (stderr). */
  warn(text: string): void;
  cancel(): void;
  exit(): Promise<void>;
  fork(seq: number | undefined): Promise<void>;
  /** Throws an LlmError when the model cannot be selected (unknown provider, missing key). */
  setModel(ref: string): void;
  /** Summarise the older history now (between turns); resolves with one line for the user. */
  compact(): Promise<{ ok: boolean; text: string }>;
  /** A list to pick from, on the chat screen only (the line mode has none). */
  pick?(heading: string, items: readonly PickItem[]): Promise<string | undefined>;
  /** This workspace's other stored sessions, newest first. */
  sessions(): Promise<PickItem[]>;
  /** Leave this session for a stored one (its id or a prefix); throws a coded error when it cannot. */
  resume(ref: string): Promise<void>;
}

/**
 * `/help`'s lines, at most 80 columns each (a wrapped line would restart at the screen's left
 * edge). `/fork` without a seq differs: the screen lists the fork points, the line mode forks now.
 */
export function helpLines(onScreen: boolean): string[] {
  return [
    'Type a prompt and press Enter. A prompt typed while the agent works steers it',
    '(it enters at the next step).',
    '  /help            this help',
    '  /session         session id, log path, turns and token usage',
    '  /cancel          cancel the running turn (Ctrl-C does the same)',
    '  /resume [ID]     continue another stored session of this workspace',
    onScreen ? '                   (no ID: pick it from a list)' : '                   (by its id or a unique prefix)',
    '  /fork [SEQ]      fork at a seq between turns and continue in the fork',
    onScreen ? '                   (no SEQ: pick a turn end from a list)' : '                   (no SEQ: fork now)',
    '  /model P:M       model for the next requests (/model deepseek:deepseek-v4-pro)',
    '  /compact         summarise the older history now (Ctrl-C cancels)',
    '  /exit            leave (or Ctrl-D; or Ctrl-C twice at an idle prompt)',
    ...(onScreen
      ? [
          'Keys: Shift+Enter, Alt+Enter or a trailing \\ adds a line; ↑/↓ earlier prompts;',
          'Tab completes commands and paths; @path attaches a file; Ctrl-O expands',
          'thinking and tool output; an approval: 1 once, 2 this session, 3 deny.',
        ]
      : []),
  ];
}

function sessionUsage(session: Session): { usage: TokenUsage | undefined; turns: number } {
  let usage: TokenUsage | undefined;
  for (const e of session.events) {
    if (e.type === 'assistant/message' && e.data.usage) usage = usage ? addUsage(usage, e.data.usage) : e.data.usage;
  }
  return { usage, turns: session.trace.lastTurn };
}

/** Runs one slash command line; unknown commands are refused with a pointer to /help. */
export async function runCommand(line: string, c: ChatControl): Promise<void> {
  const [name = '', ...args] = line.trim().split(/\s+/);
  switch (name) {
    case '/help':
    case '/?':
      for (const l of helpLines(c.pick !== undefined)) c.say(l);
      return;
    case '/exit':
    case '/quit':
      await c.exit();
      return;
    case '/cancel':
      if (c.running()) c.cancel();
      else c.warn('nothing to cancel: the agent is idle');
      return;
    case '/session': {
      const s = c.session();
      const { usage, turns } = sessionUsage(s);
      c.say(`session ${oneLine(s.id)}${s.header.parentSession ? ` (fork of ${oneLine(s.header.parentSession)})` : ''}`);
      c.say(`log     ${c.path() ? oneLine(c.path()!) : 'not persisted (--no-persist)'}`);
      c.say(`turns   ${turns} · ${plural(s.length, 'event')} · ${c.running() ? 'running' : 'idle'}`);
      c.say(`usage   ${formatUsage(usage)}`);
      c.say(`model   ${oneLine(c.model())}`);
      return;
    }
    case '/fork': {
      if (args.length > 1) {
        c.warn('usage: /fork [SEQ] (a seq between turns; dsh log show lists them)');
        return;
      }
      // Not a number is a wrong seq like any other: say so, then list the fork points (below).
      const notSeq = args[0] !== undefined && !/^\d+$/.test(args[0]);
      if (notSeq) c.warn(`not a seq: ${JSON.stringify(oneLine(args[0]!))} (a seq is a number; dsh log show lists them)`);
      if (c.running()) {
        c.warn('cannot fork while a turn runs: wait for it to end, or /cancel');
        return;
      }
      const points = forkPoints(c.session().events);
      // On the screen, no seq (or a wrong one) lists the fork points to pick from.
      const choose = async (): Promise<number | undefined> => {
        if (!c.pick) return undefined;
        if (points.length === 0) {
          c.warn('no turn has ended yet: there is no point to fork at');
          return undefined;
        }
        const v = await c.pick('Fork after which turn?', forkItems(points));
        return v === undefined ? undefined : Number(v);
      };
      if (notSeq) {
        if (c.pick) {
          const picked = await choose();
          if (picked !== undefined) await c.fork(picked);
          return;
        }
        c.warn(points.length === 0 ? 'no turn has ended yet' : 'valid fork points:');
        for (const p of points) c.warn(`  ${forkPointLine(p)}`);
        return;
      }
      let seq = args[0] === undefined ? undefined : Number(args[0]);
      if (seq === undefined && c.pick) {
        seq = await choose();
        if (seq === undefined) return;
      }
      try {
        await c.fork(seq);
      } catch (e) {
        if (!(e instanceof SessionError || e instanceof StoreError)) throw e;
        c.warn(`cannot fork: ${oneLine(e.message)} [${e.code}]`);
        if (!(e instanceof SessionError)) return;
        if (!c.pick) {
          c.warn(points.length === 0 ? 'no turn has ended yet' : 'valid fork points:');
          for (const p of points) c.warn(`  ${forkPointLine(p)}`);
          return;
        }
        const again = await choose();
        if (again !== undefined) await c.fork(again);
      }
      return;
    }
    case '/resume': {
      if (args.length > 1) {
        c.warn('usage: /resume [ID] (dsh sessions lists them)');
        return;
      }
      if (c.running()) {
        c.warn('cannot resume another session while a turn runs: wait for it to end, or /cancel');
        return;
      }
      let ref = args[0];
      if (ref === undefined) {
        if (!c.pick) {
          c.warn('usage: /resume ID (dsh sessions lists them; the list to pick from is on the chat screen)');
          return;
        }
        const items = await c.sessions();
        if (items.length === 0) {
          c.warn('no other stored session of this workspace to resume');
          return;
        }
        ref = await c.pick('Resume a session of this workspace', items);
        if (ref === undefined) return;
      }
      try {
        await c.resume(ref);
      } catch (e) {
        if (e instanceof CodedError) c.warn(`cannot resume: ${oneLine(e.message)} [${e.code}]`);
        else throw e;
      }
      return;
    }
    case '/model': {
      if (args.length !== 1) {
        c.warn(`usage: /model provider:model (now ${oneLine(c.model())})`);
        return;
      }
      try {
        c.setModel(args[0]!);
      } catch (e) {
        if (e instanceof LlmError) c.warn(`${oneLine(e.message)} [${e.code}]`);
        else throw e;
      }
      return;
    }
    case '/compact': {
      if (args.length > 0) {
        c.warn('usage: /compact (no arguments)');
        return;
      }
      if (c.running()) {
        c.warn('cannot compact while a turn runs: wait for it to end, or /cancel');
        return;
      }
      const r = await c.compact();
      if (r.ok) c.say(oneLine(r.text));
      else c.warn(oneLine(r.text));
      return;
    }
    default:
      c.warn(`unknown command ${oneLine(name)}: /help lists the commands`);
  }
}
