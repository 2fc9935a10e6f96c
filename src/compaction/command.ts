/**
 * The `/compact` command as dsh records it: `command/run`, the compaction (its bracket carries the
 * command's id as `sourceCommandId`), then `command/done` with the outcome in words. For UIs
 * (`dsh chat`); a program can call `compactNow` directly.
 */
import { randomUUID } from 'node:crypto';
import type { AgentContext } from '../agent/context.js';
import { compactNow } from './engine.js';
import { CompactionError } from './errors.js';
import type { CompactionResult } from './transaction.js';

export interface CompactCommandOutcome {
  commandId: string;
  result: CompactionResult | null;
  error?: CompactionError;
  /** One line for the user (also the `command/done` text). */
  text: string;
}

export function describeResult(r: CompactionResult): string {
  return `compacted ${r.shadowedSeqs.length} message(s) (~${r.shadowedTokenCount} tokens) into a summary (~${r.checkpointTokens} tokens)`;
}

export async function runCompactCommand(agent: AgentContext, opts: { signal?: AbortSignal } = {}): Promise<CompactCommandOutcome> {
  const session = agent.session;
  const commandId = randomUUID();
  // A refusal before anything starts (a turn running, the lock held) leaves no trace in the log.
  if (agent.status === 'running') {
    const error = new CompactionError('NOT_IDLE', 'a turn is running; compact when the agent is idle');
    return { commandId, result: null, error, text: `cannot compact: ${error.message} [${error.code}]` };
  }
  session.append('command/run', { commandId, name: 'compact', source: { kind: 'user' } });
  try {
    const result = await compactNow(agent, { sourceCommandId: commandId, ...(opts.signal ? { signal: opts.signal } : {}) });
    const text = result ? describeResult(result) : 'nothing to compact: the history is too short, or one unit that cannot be split';
    session.append('command/done', { commandId, kind: 'success', text });
    return { commandId, result, text };
  } catch (e) {
    const error =
      e instanceof CompactionError
        ? e
        : new CompactionError('SUMMARY_FAILED', e instanceof Error ? e.message : String(e), undefined, { cause: e });
    // The summariser's failure may quote a configured secret (a gateway echoing a header).
    const text = agent.redact(`compaction failed: ${error.message} [${error.code}]`);
    session.append('command/done', { commandId, kind: 'error', text });
    return { commandId, result: null, error, text };
  }
}
