/**
 * Hand-built recordings for the replay tests, written through the real Session API (so they obey
 * every log invariant), with the chunks kept aside as the independent expectation.
 */
import { randomUUID } from 'node:crypto';
import { Session } from '../../src/session/session.js';
import type { EpochHeader, SessionEvent, TurnEndReason } from '../../src/session/events.js';
import type { AssistantMessage, ContentBlock, UserMessage } from '../../src/model/message.js';
import type { StreamChunk } from '../../src/model/stream.js';
import type { TokenUsage } from '../../src/model/usage.js';
import type { GenerateRequest } from '../../src/model/request.js';
import { deriveMessagesFrom } from '../../src/session/derive.js';

export const ROUTE = { provider: 'deepseek-official', model: 'deepseek-v4-flash' } as const;

export function user(text: string, id: string = randomUUID()): UserMessage {
  return { id, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } };
}

export function textChunks(text: string, finish: StreamChunk = { type: 'finish', reason: { kind: 'stop' } }): StreamChunk[] {
  return [
    { type: 'block-start', index: 0, blockType: 'text' },
    { type: 'text-delta', index: 0, text },
    { type: 'block-end', index: 0, block: { type: 'text', text } },
    { type: 'usage', usage: { inputTokens: 7, outputTokens: 3 } }, // what `reply` puts on its message
    finish,
  ];
}

export function callChunks(id: string, name: string, args: string): StreamChunk[] {
  return [
    { type: 'block-start', index: 0, blockType: 'tool-call' },
    { type: 'tool-call-delta', index: 0, id, name, argumentsDelta: args },
    { type: 'block-end', index: 0, block: { type: 'tool-call', id, name, arguments: args } },
    { type: 'finish', reason: { kind: 'tool-calls' } },
  ];
}

/** Writes a recording turn by turn; each method appends exactly what the loop would have. */
export class LogBuilder {
  readonly session = Session.create({ header: { cwd: '/work' } });
  private turn = 0;
  private step = 0;
  private headerWritten = false;

  constructor(private readonly header: EpochHeader = { config: { ...ROUTE } }) {}

  get events(): readonly SessionEvent[] {
    return this.session.events;
  }

  startTurn(prompt: UserMessage): this {
    const s = this.session;
    s.append('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [prompt] });
    this.turn += 1;
    this.step = 0;
    s.append('turn/start', { turn: this.turn });
    s.append('agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: 1, inserted: [] });
    return this;
  }

  /** `step/start`, the entered messages, and the header on the first request. */
  startStep(...entered: UserMessage[]): this {
    const s = this.session;
    this.step += 1;
    s.append('step/start', { turn: this.turn, step: this.step });
    for (const m of entered) s.append('user/message', m, { surfaceOp: 'append' });
    if (!this.headerWritten) {
      s.append('request/header', { header: this.header, reason: 'initial' });
      s.append('request/context', { ...ROUTE });
      this.headerWritten = true;
    }
    return this;
  }

  /** One attempt's chunks; returns their seqs. */
  chunks(chunks: readonly StreamChunk[]): number[] {
    return chunks.map((chunk) => this.session.append('assistant/chunk', { turn: this.turn, step: this.step, chunk }).seq);
  }

  message(content: ContentBlock[], seqs: number[], extra: { interrupted?: true; usage?: TokenUsage } = {}): this {
    const message: AssistantMessage = { id: randomUUID(), role: 'assistant', content, source: { kind: 'model', ...ROUTE } };
    this.session.append(
      'assistant/message',
      { turn: this.turn, step: this.step, message, ...extra },
      { surfaceOp: 'append', sourceEventSeqs: seqs },
    );
    return this;
  }

  reply(text: string): this {
    return this.message([{ type: 'text', text }], this.chunks(textChunks(text)), { usage: { inputTokens: 7, outputTokens: 3 } });
  }

  call(id: string, name: string, args: string, result: string): this {
    const seqs = this.chunks(callChunks(id, name, args));
    this.message([{ type: 'tool-call', id, name, arguments: args }], seqs);
    const callSeq = this.session.append('tool/call', { turn: this.turn, step: this.step, callId: id, name, arguments: args }).seq;
    this.session.append(
      'tool/result',
      {
        turn: this.turn,
        step: this.step,
        message: {
          id: randomUUID(),
          role: 'user',
          content: [{ type: 'tool-result', toolCallId: id, content: [{ type: 'text', text: result }], isError: false }],
          source: { kind: 'tool', callId: id },
        },
      },
      { surfaceOp: 'append', sourceEventSeqs: [callSeq] },
    );
    return this;
  }

  retry(code: string, retry: number): this {
    const failure = { code, message: `${code} failure` };
    this.session.append('llm/retry', {
      retryId: randomUUID(),
      turn: this.turn,
      step: this.step,
      provider: ROUTE.provider,
      mode: 'normal',
      policyKey: 'default',
      retry,
      maxRetries: 5,
      delayMs: 0,
      failure,
    });
    this.session.append('llm/retry-started', { retryId: randomUUID(), turn: this.turn, step: this.step, retry });
    return this;
  }

  endStep(): this {
    this.session.append('step/end', { turn: this.turn, step: this.step });
    return this;
  }

  endTurn(reason: TurnEndReason = { kind: 'completed' }): this {
    this.session.append('turn/end', { turn: this.turn, reason });
    return this;
  }
}

/** The request the loop would have sent before the chunk at `seq`: what the log held just before it. */
export function requestBefore(events: readonly SessionEvent[], seq: number, signal?: AbortSignal): GenerateRequest {
  const req: GenerateRequest = { ...ROUTE, messages: deriveMessagesFrom(events, seq - 1) };
  if (signal) req.signal = signal;
  return req;
}

/** Drains an async iterable. */
export async function drain<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}
