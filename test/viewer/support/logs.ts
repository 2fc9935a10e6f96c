/**
 * Logs for the viewer tests, written through the real `Session` API (so every event is valid by
 * construction) and encoded with the codec, plus facts read back from a log file independently
 * of the viewer: each line is parsed on its own, and the counted event types (turns, steps, tool
 * calls) are never packed into rows, so counting lines counts events.
 */
import { readFileSync } from 'node:fs';
import { encodeEvents, encodeJsonl, Session, type SessionEvent } from '../../../src/session/index.js';
import type { ContentBlock, UserMessage } from '../../../src/model/message.js';
import type { StreamChunk } from '../../../src/model/stream.js';

export interface LineEvent {
  type: string;
  seq: number;
  time: number;
  data: Record<string, unknown>;
}

/** The event lines of a log file (packed chunk rows skipped), parsed one by one. */
export function eventLines(path: string): LineEvent[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .slice(1)
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as LineEvent)
    .filter((o) => typeof o.seq === 'number');
}

/** Events in a log file: one per event line, one per member of a packed row. */
export function countEvents(path: string): number {
  let n = 0;
  for (const l of readFileSync(path, 'utf8').split('\n').slice(1)) {
    if (l.trim() === '') continue;
    const o = JSON.parse(l) as { seq?: number; data: { texts?: unknown[]; args?: unknown[] } };
    n += typeof o.seq === 'number' ? 1 : (o.data.texts ?? o.data.args ?? []).length;
  }
  return n;
}

export interface TurnFacts {
  turn: number;
  steps: number;
  toolCalls: { callId: string; name: string; seq: number }[];
  results: { callId: string; seq: number; time: number; error?: string; text: string }[];
}

export function turnFacts(lines: LineEvent[]): TurnFacts[] {
  const out: TurnFacts[] = [];
  let cur: TurnFacts | undefined;
  for (const e of lines) {
    if (e.type === 'turn/start') out.push((cur = { turn: e.data.turn as number, steps: 0, toolCalls: [], results: [] }));
    else if (!cur) continue;
    else if (e.type === 'step/start') cur.steps++;
    else if (e.type === 'tool/call') cur.toolCalls.push({ callId: e.data.callId as string, name: e.data.name as string, seq: e.seq });
    else if (e.type === 'tool/result') {
      const block = (e.data.message as { content: { toolCallId: string; content: { text?: string }[] }[] }).content[0]!;
      const r: TurnFacts['results'][number] = {
        callId: block.toolCallId,
        seq: e.seq,
        time: e.time,
        text: block.content.map((c) => c.text ?? '').join(''),
      };
      const err = e.data.error as { code: string } | undefined;
      if (err) r.error = err.code;
      out[out.length - 1]!.results.push(r);
    }
  }
  return out;
}

/** A session with a fixed clock and small helpers for the shapes the loop writes. */
export class LogWriter {
  readonly session: Session;
  now = Date.UTC(2026, 1, 1, 12, 0, 0);
  turn = 0;
  step = 0;
  private ids = 0;
  private written = 0;

  constructor(id: string, cwd = '/tmp/viewer-test') {
    this.session = Session.create({ id, header: { cwd, createdAt: this.now, delegationDepth: 0 }, clock: () => this.now });
  }

  private tick(ms = 5): void {
    this.now += ms;
  }

  id(kind: string): string {
    return `${kind}-${++this.ids}`;
  }

  userMessage(text: string, source: UserMessage['source'] = { kind: 'user' }): UserMessage {
    return { id: this.id('msg'), role: 'user', content: [{ type: 'text', text }], source };
  }

  beginTurn(prompt: string): void {
    const m = this.userMessage(prompt);
    this.tick();
    this.session.append('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [m] });
    this.turn++;
    this.step = 0;
    this.tick();
    this.session.append('turn/start', { turn: this.turn });
    this.beginStep();
    this.session.append('user/message', m, { surfaceOp: 'append' });
  }

  beginStep(): void {
    this.tick();
    this.step++;
    this.session.append('step/start', { turn: this.turn, step: this.step });
  }

  user(text: string, source?: UserMessage['source']): void {
    this.tick();
    this.session.append('user/message', this.userMessage(text, source), { surfaceOp: 'append' });
  }

  header(model: string, extra: { system?: string; tools?: string[] } = {}): void {
    this.tick();
    this.session.append('request/header', {
      header: {
        config: { provider: 'test', model },
        ...(extra.system !== undefined ? { system: extra.system } : {}),
        ...(extra.tools ? { tools: extra.tools.map((name) => ({ name, description: 'a tool', parameters: { type: 'object' } })) } : {}),
      },
      reason: this.session.requestHeader() ? 'change' : 'initial',
    });
  }

  /** One provider call streamed in small deltas, then its message. */
  respond(text: string, calls: { id: string; name: string; args: string }[] = []): void {
    const seqs: number[] = [];
    const chunk = (c: StreamChunk): void => {
      this.tick(2);
      seqs.push(this.session.append('assistant/chunk', { turn: this.turn, step: this.step, chunk: c }).seq);
    };
    const content: ContentBlock[] = [];
    let index = 0;
    if (text) {
      chunk({ type: 'block-start', index, blockType: 'text' });
      for (const piece of text.match(/[\s\S]{1,16}/g) ?? []) chunk({ type: 'text-delta', index, text: piece });
      content.push({ type: 'text', text });
      chunk({ type: 'block-end', index, block: content[index]! });
      index++;
    }
    for (const c of calls) {
      chunk({ type: 'block-start', index, blockType: 'tool-call' });
      chunk({ type: 'tool-call-delta', index, id: c.id, name: c.name, argumentsDelta: c.args });
      content.push({ type: 'tool-call', id: c.id, name: c.name, arguments: c.args });
      chunk({ type: 'block-end', index, block: content[index]! });
      index++;
    }
    const usage = { inputTokens: 100, outputTokens: 10, cacheReadTokens: 50 };
    chunk({ type: 'usage', usage });
    chunk({ type: 'finish', reason: { kind: calls.length ? 'tool-calls' : 'stop' } });
    this.tick();
    this.session.append(
      'assistant/message',
      {
        turn: this.turn,
        step: this.step,
        message: { id: this.id('msg'), role: 'assistant', content, source: { kind: 'model', provider: 'test', model: 'test-1' } },
        usage,
      },
      { surfaceOp: 'append', sourceEventSeqs: seqs },
    );
  }

  call(callId: string, name: string, args: string): number {
    this.tick();
    return this.session.append('tool/call', { turn: this.turn, step: this.step, callId, name, arguments: args }).seq;
  }

  result(callSeq: number, callId: string, text: string, error?: string): void {
    this.tick(30);
    this.session.append(
      'tool/result',
      {
        turn: this.turn,
        step: this.step,
        message: {
          id: this.id('msg'),
          role: 'user',
          content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text }], ...(error ? { isError: true } : {}) }],
          source: { kind: 'tool', callId },
        },
        ...(error ? { error: { name: 'ToolError', code: error } } : {}),
      },
      { surfaceOp: 'append', sourceEventSeqs: [callSeq] },
    );
  }

  tool(callId: string, name: string, args: string, text: string, error?: string): void {
    this.result(this.call(callId, name, args), callId, text, error);
  }

  endStep(): void {
    this.tick();
    this.session.append('step/end', { turn: this.turn, step: this.step });
  }

  endTurn(reason: Record<string, unknown> = { kind: 'completed' }): void {
    this.tick();
    this.session.append('turn/end', { turn: this.turn, reason } as never);
  }

  event(type: string, data: unknown): void {
    this.tick();
    (this.session.append as (t: string, d: unknown) => SessionEvent).call(this.session, type, data);
  }

  /** The whole log as JSONL. */
  text(): string {
    this.written = this.session.length;
    return encodeJsonl(this.session.header, this.session.events.slice(0, this.session.length));
  }

  /** The lines for events appended since the last `text()` / `more()`. */
  more(): string {
    const events: SessionEvent[] = [...this.session.since(this.written)];
    this.written = this.session.length;
    return encodeEvents(events);
  }
}
