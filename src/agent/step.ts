/**
 * One step: one model request plus the tools it calls. The request is built from the log
 * (`buildRequest`), streamed through `streamModelRequest` (the "model-visible means recorded"
 * check, `llm/stream`, the adapter, one normalised finish), every chunk appended as it arrives;
 * then the assistant message, then the tool calls (`runToolCalls`). An error finish goes to the
 * `agent/request-error` waterfall, which may ask for a retry: the request is then rebuilt from
 * the log and the failed attempt's chunks stay in it.
 */
import { randomUUID } from 'node:crypto';
import type { AssistantMessage, ContentBlock, ToolCallBlock } from '../model/message.js';
import { LlmError } from '../model/failure.js';
import { withoutSecrets } from '../llm/failures.js';
import type { GenerateRequest } from '../model/request.js';
import { BlockAssembler } from './assembler.js';
import type { AgentContext } from './context.js';
import { assertModelVisibleRecorded } from './invariant.js';
import { streamModelRequest } from './model-stream.js';
import { buildRequest } from './request.js';
import { runToolCalls } from './tool-calls.js';
import './hooks.js';

export type StepOutcome = 'completed' | 'max-tokens' | 'continue';

/** What the turn and step functions keep of the driver that runs them, besides the agent. */
export interface LoopDriver {
  readonly agent: AgentContext;
  /**
   * No request built yet by this agent instance: the next one writes a `request/header`
   * (`initial` or `resume`) whatever the log holds. Cleared once a request is built.
   */
  firstRequest: boolean;
  /** A claim took all of next-step input, so a pending wake is served. */
  claimed(): void;
}

/** Iterate a stream, but stop waiting the moment `signal` aborts (a hung provider cannot pin a cancel). */
async function* untilAborted<T>(source: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<'aborted'>((resolve) => {
    onAbort = () => resolve('aborted');
    if (signal.aborted) resolve('aborted');
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    for (;;) {
      const r = await Promise.race([it.next(), aborted]);
      if (r === 'aborted') return;
      if (r.done) return;
      yield r.value;
    }
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
    // Not awaited: a generator blocked in a pending next() would hold its return() forever.
    void Promise.resolve(it.return?.()).catch(() => undefined);
  }
}

function assistantMessage(request: GenerateRequest, content: ContentBlock[]): AssistantMessage {
  return { id: randomUUID(), role: 'assistant', content, source: { kind: 'model', provider: request.provider, model: request.model } };
}

export async function runStep(driver: LoopDriver, turn: number, step: number, signal: AbortSignal): Promise<StepOutcome> {
  const agent = driver.agent;
  const s = agent.session;
  for (;;) {
    const { request, adapter } = await buildRequest(agent, turn, step, signal, driver.firstRequest);
    driver.firstRequest = false;
    signal.throwIfAborted();
    const asm = new BlockAssembler();
    const chunkSeqs: number[] = [];
    const check = agent.options.invariants ? (req: GenerateRequest) => assertModelVisibleRecorded(req, s) : undefined;
    for await (const raw of untilAborted(streamModelRequest(agent.bus, request, adapter, check), signal)) {
      // Every configured secret, not only the adapter's own: the failure goes on to the log
      // (assistant/chunk), to retry listeners (llm/retry) and to the turn's end.
      const chunk = withoutSecrets(raw, agent.options.secrets);
      chunkSeqs.push(s.append('assistant/chunk', { turn, step, chunk }).seq);
      asm.push(chunk);
    }
    const finish = asm.finish;
    if (signal.aborted || finish === undefined || finish.kind === 'aborted') {
      // "The model sees what the user saw": visible text streamed before a cancel is kept.
      const visible = asm.interruptedBlocks();
      if (visible.length > 0) {
        s.append(
          'assistant/message',
          { turn, step, message: assistantMessage(request, visible), interrupted: true, ...(asm.usage ? { usage: asm.usage } : {}) },
          { surfaceOp: 'append', sourceEventSeqs: chunkSeqs },
        );
      }
      signal.throwIfAborted();
      throw new LlmError(
        finish?.kind === 'aborted' ? finish.failure : { code: 'STREAM_CLOSED', message: 'the stream ended without a finish' },
      );
    }
    if (finish.kind === 'error') {
      const decision = await agent.bus.waterfall(
        'agent/request-error',
        { agent, turn, step, provider: request.provider, failure: finish.failure, signal },
        () => undefined,
      );
      signal.throwIfAborted();
      if (decision?.kind === 'retry') continue; // the failed attempt's chunks stay in the log
      throw new LlmError(finish.failure);
    }
    const { content, replayState } = asm.blocks();
    const message = assistantMessage(request, content);
    if (replayState) message.source.replayState = replayState;
    s.append(
      'assistant/message',
      { turn, step, message, ...(asm.usage ? { usage: asm.usage } : {}) },
      { surfaceOp: 'append', sourceEventSeqs: chunkSeqs },
    );
    if (finish.kind === 'max-tokens') return 'max-tokens';
    const calls = content.filter((b): b is ToolCallBlock => b.type === 'tool-call');
    if (calls.length === 0) return 'completed';
    const result = await runToolCalls(calls, {
      session: s,
      turn,
      step,
      signal,
      maxParallel: agent.options.maxParallelToolCalls,
      deps: { registry: agent.tools, bus: agent.bus, session: s, cwd: agent.options.cwd, approve: (r, sig) => agent.approve(r, sig) },
      redact: (v) => agent.redactRecord(v),
    });
    for (const m of result.deferred) agent.inbox.append('next-step', m);
    signal.throwIfAborted();
    return result.concludesTurn ? 'completed' : 'continue';
  }
}
