/**
 * Running one step's tool calls.
 *
 * Calls are taken in model order. A call whose tool says `isConcurrencySafe(args) === true` may
 * run beside others in a rolling pool (default 10); any other call is a barrier that waits for
 * everything before it and runs alone. `tool/call` is appended when a call starts; results are
 * committed as `tool/result` strictly in model order, whatever order they finish in, each citing
 * its call (`sourceEventSeqs: [callSeq]`).
 *
 * On cancel no new call starts, started ones drain and commit, and every call that never started
 * still gets its `tool/call` plus a synthetic `ABORTED_BEFORE_DISPATCH` result: no call is left
 * without a result.
 */
import type { ToolCallBlock, UserMessage } from '../model/message.js';
import type { Session } from '../session/session.js';
import type { PipelineDeps } from '../tools/pipeline.js';
import { parseArguments, runToolCall } from '../tools/pipeline.js';
import type { ToolCallOutcome } from '../tools/types.js';
import type { ToolCallInfo } from '../tools/hooks.js';
import { errorChain } from '../model/failure.js';
import { randomUUID } from 'node:crypto';

export interface ToolStepResult {
  concludesTurn: boolean;
  deferred: UserMessage[];
}

function abortedOutcome(): ToolCallOutcome {
  return {
    content: [{ type: 'text', text: 'Error: tool call aborted before dispatch' }],
    isError: true,
    error: { name: 'AbortError', code: 'ABORTED_BEFORE_DISPATCH' },
    deferred: [],
    concludesTurn: false,
  };
}

/** What of an error outcome reaches the log and the model (its text, its error and its meta), redacted. */
function redactOutcome(o: ToolCallOutcome, redact: <T>(value: T) => T): ToolCallOutcome {
  const out: ToolCallOutcome = { ...o, content: redact(o.content) };
  if (o.error) out.error = redact(o.error);
  if (o.meta !== undefined) out.meta = redact(o.meta);
  return out;
}

export async function runToolCalls(
  calls: readonly ToolCallBlock[],
  env: {
    session: Session;
    turn: number;
    step: number;
    signal: AbortSignal;
    deps: PipelineDeps;
    maxParallel: number;
    redact?: <T>(value: T) => T;
  },
): Promise<ToolStepResult> {
  const { session, turn, step, signal, deps } = env;
  const redact = env.redact;
  const n = calls.length;
  const results: (ToolCallOutcome | undefined)[] = new Array(n);
  const callSeqs: number[] = new Array(n);
  let committed = 0;

  const commitReady = (): void => {
    while (committed < n && results[committed] !== undefined) {
      const i = committed++;
      // An error result may quote a secret (an MCP server echoing its auth header, a provider
      // failure inside a tool): the model and the log get it redacted.
      const o = results[i]!.isError && redact ? redactOutcome(results[i]!, redact) : results[i]!;
      const call = calls[i]!;
      const data = {
        turn,
        step,
        message: {
          id: randomUUID(),
          role: 'user' as const,
          content: [{ type: 'tool-result' as const, toolCallId: call.id, content: o.content, isError: o.isError }] as [
            { type: 'tool-result'; toolCallId: string; content: typeof o.content; isError: boolean },
          ],
          source: { kind: 'tool' as const, callId: call.id },
        },
        ...(o.error ? { error: o.error } : {}),
        ...(o.meta !== undefined ? { meta: o.meta } : {}),
      };
      session.append('tool/result', data, { surfaceOp: 'append', sourceEventSeqs: [callSeqs[i]!] });
    }
  };

  const isSafe = (call: ToolCallBlock): boolean => {
    const def = deps.registry.get(call.name);
    if (!def?.isConcurrencySafe) return false;
    try {
      return def.isConcurrencySafe(parseArguments(call.arguments) as never) === true;
    } catch {
      return false;
    }
  };

  const running = new Set<Promise<void>>();
  const start = (i: number): Promise<void> => {
    const call = calls[i]!;
    callSeqs[i] = session.append('tool/call', { turn, step, callId: call.id, name: call.name, arguments: call.arguments }).seq;
    const info: ToolCallInfo = { callId: call.id, name: call.name, rawArguments: call.arguments, turn, step };
    const p = runToolCall(info, signal, deps)
      .catch(
        (e: unknown): ToolCallOutcome => ({
          // A throwing policy or observer listener is a failed call, never a failed turn.
          content: [{ type: 'text', text: `Error: ${call.name} could not run: ${errorChain(e)}` }],
          isError: true,
          error: { name: e instanceof Error ? e.name : 'Error', code: 'TOOL_PIPELINE_ERROR' },
          deferred: [],
          concludesTurn: false,
        }),
      )
      .then((o) => {
        results[i] = o;
        commitReady();
      });
    const tracked = p.finally(() => running.delete(tracked));
    running.add(tracked);
    return tracked;
  };

  let started = 0;
  try {
    for (let i = 0; i < n; i++) {
      if (signal.aborted) break;
      const safe = isSafe(calls[i]!);
      if (!safe) {
        while (running.size > 0) await Promise.race(running);
      } else {
        while (running.size >= Math.max(1, env.maxParallel)) await Promise.race(running);
      }
      if (signal.aborted) break;
      const p = start(i);
      started++;
      if (!safe) await p;
    }
    while (running.size > 0) await Promise.race(running);
  } finally {
    // Invariant: no call outlives its step. When something above throws (the log refusing a
    // tool/call, say), the calls already started still finish and record their results inside
    // the open turn before the error ends it; otherwise a result would be appended after the
    // turn/end, which the log refuses, as an unhandled rejection.
    while (running.size > 0) await Promise.race(running).catch(() => undefined);
  }

  for (let i = started; i < n; i++) {
    const call = calls[i]!;
    callSeqs[i] = session.append('tool/call', { turn, step, callId: call.id, name: call.name, arguments: call.arguments }).seq;
    results[i] = abortedOutcome();
  }
  commitReady();

  const deferred: UserMessage[] = [];
  let concludesTurn = false;
  for (const o of results) {
    if (!o) continue;
    deferred.push(...o.deferred);
    if (o.concludesTurn) concludesTurn = true;
  }
  return { concludesTurn, deferred };
}
