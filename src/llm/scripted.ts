/**
 * The scripted adapter, for tests and demos: each model call consumes the next script entry and
 * the request is recorded. Entries: a chunk array; a function of the request (returning chunks or
 * a stream); `'hang'` (wait for the abort signal); `{ hangAfter: chunks }`; `{ throw: failure }`.
 * When the script runs out, the call fails with `SCRIPT_EXHAUSTED`.
 *
 * The helpers below build well-formed streams (block-start, deltas, block-end, usage, finish).
 */
import type { GenerateRequest, SeenRequest } from '../model/request.js';
import { messageArray } from '../model/history.js';
import type { StreamChunk } from '../model/stream.js';
import type { ContentBlock } from '../model/message.js';
import type { TokenUsage } from '../model/usage.js';
import { LlmError, type LlmFailure } from '../model/failure.js';
import type { LlmAdapter, ModelInfo, ResolvedCall } from './adapter.js';
import type { LlmCallConfig } from '../model/request.js';

export type ScriptEntry =
  | readonly StreamChunk[]
  | ((request: GenerateRequest) => readonly StreamChunk[] | AsyncIterable<StreamChunk> | Promise<readonly StreamChunk[]>)
  | 'hang'
  | { hangAfter: readonly StreamChunk[] }
  | { throw: LlmFailure | Error };

export interface ScriptedAdapterOptions {
  providers?: string[];
  modelInfo?: ModelInfo;
  resolveCall?: (config: LlmCallConfig) => ResolvedCall;
}

function waitForAbort(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (!signal) return; // hangs forever: only sensible with a signal
    if (signal.aborted) return resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

const abortedFinish: StreamChunk = {
  type: 'finish',
  reason: { kind: 'aborted', failure: { code: 'ABORTED', message: 'the request was aborted' } },
};

export class ScriptedAdapter implements LlmAdapter {
  readonly providers: readonly string[];
  /** Every request, in order (the history as an array). */
  readonly requests: SeenRequest[] = [];
  private readonly script: ScriptEntry[];
  private readonly opts: ScriptedAdapterOptions;

  constructor(script: ScriptEntry[], opts: ScriptedAdapterOptions = {}) {
    this.script = [...script];
    this.providers = opts.providers ?? ['scripted'];
    this.opts = opts;
  }

  /** Add entries to the end of the script. */
  push(...entries: ScriptEntry[]): void {
    this.script.push(...entries);
  }
  get remaining(): number {
    return this.script.length;
  }

  modelInfo(): ModelInfo | undefined {
    return this.opts.modelInfo;
  }

  resolveCall(config: LlmCallConfig): ResolvedCall {
    return this.opts.resolveCall ? this.opts.resolveCall(config) : { config };
  }

  async *stream(request: GenerateRequest): AsyncGenerator<StreamChunk> {
    this.requests.push({ ...request, messages: messageArray(request.messages) });
    const entry = this.script.shift();
    if (entry === undefined)
      throw new LlmError({ code: 'SCRIPT_EXHAUSTED', message: `scripted adapter: no entry left for call ${this.requests.length}` });
    if (entry === 'hang') {
      await waitForAbort(request.signal);
      yield abortedFinish;
      return;
    }
    if (typeof entry === 'function') {
      const out = await entry(request);
      yield* out as AsyncIterable<StreamChunk>;
      return;
    }
    if (Array.isArray(entry)) {
      yield* entry as readonly StreamChunk[];
      return;
    }
    if ('hangAfter' in entry) {
      yield* entry.hangAfter;
      await waitForAbort(request.signal);
      yield abortedFinish;
      return;
    }
    const t = (entry as { throw: LlmFailure | Error }).throw;
    throw t instanceof Error ? t : new LlmError(t);
  }
}

// ---------------------------------------------------------------------------------------------
// Stream builders

const DEFAULT_USAGE: TokenUsage = { inputTokens: 10, outputTokens: 5 };

/** Split text into delta pieces: by word boundary (keeps a realistic chunk count). */
export function pieces(text: string, mode: 'chars' | 'words' = 'words'): string[] {
  if (text === '') return [];
  if (mode === 'chars') return [...text];
  return text.match(/\s*\S+\s*|\s+/g) ?? [text];
}

export interface ResponseOptions {
  usage?: TokenUsage | null;
  split?: 'chars' | 'words';
  reasoning?: string;
}

function textBlocks(start: number, text: string, kind: 'text' | 'reasoning', split: 'chars' | 'words'): StreamChunk[] {
  const out: StreamChunk[] = [{ type: 'block-start', index: start, blockType: kind }];
  for (const p of pieces(text, split))
    out.push(kind === 'text' ? { type: 'text-delta', index: start, text: p } : { type: 'reasoning-delta', index: start, text: p });
  const block: ContentBlock = kind === 'text' ? { type: 'text', text } : { type: 'reasoning', text };
  out.push({ type: 'block-end', index: start, block });
  return out;
}

function tail(usage: TokenUsage | null | undefined, finish: StreamChunk): StreamChunk[] {
  const u = usage === undefined ? DEFAULT_USAGE : usage;
  return u ? [{ type: 'usage', usage: u }, finish] : [finish];
}

export function textResponse(text: string, opts: ResponseOptions = {}): StreamChunk[] {
  const out: StreamChunk[] = [];
  let i = 0;
  if (opts.reasoning) out.push(...textBlocks(i++, opts.reasoning, 'reasoning', opts.split ?? 'words'));
  out.push(...textBlocks(i, text, 'text', opts.split ?? 'words'));
  return [...out, ...tail(opts.usage, { type: 'finish', reason: { kind: 'stop' } })];
}

export interface ScriptedCall {
  id?: string;
  name: string;
  args?: unknown;
  /** Raw argument text, used verbatim instead of `args` (for malformed-argument tests). */
  raw?: string;
}

let callCounter = 0;

export function toolCallResponse(calls: ScriptedCall[], opts: ResponseOptions & { text?: string } = {}): StreamChunk[] {
  const out: StreamChunk[] = [];
  let i = 0;
  if (opts.reasoning) out.push(...textBlocks(i++, opts.reasoning, 'reasoning', 'words'));
  if (opts.text) out.push(...textBlocks(i++, opts.text, 'text', 'words'));
  for (const c of calls) {
    const id = c.id ?? `call_${++callCounter}`;
    const args = c.raw ?? JSON.stringify(c.args ?? {});
    out.push({ type: 'block-start', index: i, blockType: 'tool-call' });
    const parts = args.length <= 8 ? [args] : [args.slice(0, Math.ceil(args.length / 2)), args.slice(Math.ceil(args.length / 2))];
    parts.forEach((p, k) =>
      out.push(
        k === 0
          ? { type: 'tool-call-delta', index: i, id, name: c.name, argumentsDelta: p }
          : { type: 'tool-call-delta', index: i, id, argumentsDelta: p },
      ),
    );
    out.push({ type: 'block-end', index: i, block: { type: 'tool-call', id, name: c.name, arguments: args } });
    i++;
  }
  return [...out, ...tail(opts.usage, { type: 'finish', reason: { kind: 'tool-calls' } })];
}

/** A reply cut off by the output cap. */
export function maxTokensResponse(text: string, opts: ResponseOptions & { calls?: ScriptedCall[] } = {}): StreamChunk[] {
  const body = opts.calls ? toolCallResponse(opts.calls, { ...opts, text, usage: null }) : textResponse(text, { ...opts, usage: null });
  body.pop(); // drop the finish
  return [...body, ...tail(opts.usage, { type: 'finish', reason: { kind: 'max-tokens' } })];
}

export function errorResponse(failure: LlmFailure): StreamChunk[] {
  return [{ type: 'finish', reason: { kind: 'error', failure } }];
}

/** What a real adapter yields for a completion with no content. */
export function emptyResponse(): StreamChunk[] {
  return errorResponse({ code: 'EMPTY_RESPONSE', message: 'the model returned a completed response with no content' });
}
