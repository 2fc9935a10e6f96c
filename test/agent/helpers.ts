import type { Agent } from '../../src/agent/agent.js';
import { createAgent, type CreateAgentOptions } from '../../src/create-agent.js';
import { ScriptedAdapter, type ScriptEntry } from '../../src/llm/scripted.js';
import type { SessionEvent } from '../../src/session/events.js';
import type { AgentStatus } from '../../src/agent/hooks.js';

export interface Harness {
  agent: Agent;
  adapter: ScriptedAdapter;
  statuses: AgentStatus[];
  errors: unknown[];
}

export function harness(script: ScriptEntry[], opts: Partial<CreateAgentOptions> = {}): Harness {
  const adapter = new ScriptedAdapter(script, { providers: ['scripted'] });
  const agent = createAgent({
    model: 'scripted:test-model',
    adapters: adapter,
    retry: { sleep: async () => undefined, random: () => 0.5 },
    ...opts,
  });
  const statuses: AgentStatus[] = [];
  const errors: unknown[] = [];
  agent.on('agent/status', (p) => void statuses.push(p.status));
  agent.on('agent/error', (p) => void errors.push(p.error));
  return { agent, adapter, statuses, errors };
}

/** A compact, hand-checkable rendering of the log's structure (chunks and plugin noise elided). */
export function shape(events: readonly SessionEvent[], opts: { chunks?: boolean; inbox?: boolean } = {}): string[] {
  const out: string[] = [];
  for (const e of events) {
    switch (e.type) {
      case 'turn/start':
        out.push(`turn/start ${e.data.turn}`);
        break;
      case 'turn/end':
        out.push(
          `turn/end ${e.data.turn} ${e.data.reason.kind}${e.data.reason.kind === 'error' ? `:${e.data.reason.error.code}` : ''}` +
            `${e.data.reason.kind === 'aborted' ? `:${e.data.reason.reason.kind}` : ''}`,
        );
        break;
      case 'step/start':
        out.push(`step/start ${e.data.turn}.${e.data.step}`);
        break;
      case 'step/end':
        out.push(`step/end ${e.data.turn}.${e.data.step}`);
        break;
      case 'user/message':
        out.push(`user ${e.data.content.map((b) => (b.type === 'text' ? b.text : b.type)).join('')}`);
        break;
      case 'assistant/chunk':
        if (opts.chunks) out.push(`chunk ${e.data.chunk.type}`);
        break;
      case 'assistant/message':
        out.push(
          `assistant${e.data.interrupted ? '(interrupted)' : ''} ` +
            e.data.message.content.map((b) => (b.type === 'text' ? b.text : b.type === 'tool-call' ? `call:${b.name}` : b.type)).join('|'),
        );
        break;
      case 'tool/call':
        out.push(`tool/call ${e.data.callId} ${e.data.name}`);
        break;
      case 'tool/result':
        out.push(`tool/result ${e.data.message.source.callId}${e.data.error ? ` ${e.data.error.code}` : ''}`);
        break;
      case 'request/header':
        out.push(`header ${e.data.reason}`);
        break;
      case 'agent/inbox/spliced':
        if (opts.inbox)
          out.push(
            `splice ${e.data.target} ${e.data.removedCount ? `-${e.data.removedCount}` : `+${e.data.inserted.length}`}` +
              `${e.data.outcome ? ` ${e.data.outcome}` : ''}`,
          );
        break;
      case 'llm/retry':
        out.push(`retry ${e.data.retry} ${e.data.failure.code} ${e.data.delayMs}ms`);
        break;
      default:
        break;
    }
  }
  return out;
}

export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

export const tick = (): Promise<void> => new Promise((r) => setImmediate(r));
