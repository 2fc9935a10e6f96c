/**
 * Properties of the loop under random interleavings of input, cancellation and model behaviour
 * (issue 3 item 9): no input is lost, turn numbers increase by one, every turn is balanced, and
 * status alternates idle → running → idle.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { z } from 'zod';
import { createAgent } from '../../src/create-agent.js';
import type { LlmAdapter } from '../../src/llm/adapter.js';
import type { StreamChunk } from '../../src/model/stream.js';
import { errorResponse, textResponse, toolCallResponse, emptyResponse } from '../../src/llm/scripted.js';
import type { SessionEvent } from '../../src/session/events.js';
import type { UserMessage } from '../../src/model/message.js';
import type { AgentStatus } from '../../src/agent/hooks.js';

type Reply = 'text' | 'tool' | 'server-error' | 'auth-error' | 'empty' | 'slow';
type Op =
  | { kind: 'followup' | 'steer' | 'inject' }
  | { kind: 'cancel'; keepInbox: boolean }
  | { kind: 'wait'; ms: number }
  | { kind: 'idle' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.constantFrom<Op>({ kind: 'followup' }, { kind: 'steer' }, { kind: 'inject' }, { kind: 'idle' }),
  fc.boolean().map((keepInbox): Op => ({ kind: 'cancel', keepInbox })),
  fc.integer({ min: 0, max: 3 }).map((ms): Op => ({ kind: 'wait', ms })),
);
const replyArb = fc.constantFrom<Reply>('text', 'tool', 'server-error', 'auth-error', 'empty', 'slow');

function cyclingAdapter(replies: Reply[]): LlmAdapter {
  let i = 0;
  return {
    providers: ['prop'],
    async *stream(req): AsyncGenerator<StreamChunk> {
      // The loop has no step budget (by design), so a model that always calls tools would run
      // forever: after a few dozen calls this one only answers in text.
      const r = i >= 40 ? 'text' : replies[i % replies.length]!;
      i++;
      switch (r) {
        case 'text':
          yield* textResponse('reply');
          return;
        case 'tool':
          yield* toolCallResponse([{ id: `call-${i}`, name: 'noop', args: {} }]);
          return;
        case 'server-error':
          yield* errorResponse({ code: 'SERVER', message: 'flaky' });
          return;
        case 'auth-error':
          yield* errorResponse({ code: 'AUTH', message: 'denied' });
          return;
        case 'empty':
          yield* emptyResponse();
          return;
        case 'slow':
          await new Promise<void>((resolve) => {
            const t = setTimeout(resolve, 2);
            req.signal?.addEventListener('abort', () => {
              clearTimeout(t);
              resolve();
            });
          });
          if (req.signal?.aborted) {
            yield { type: 'finish', reason: { kind: 'aborted', failure: { code: 'ABORTED', message: 'aborted' } } };
            return;
          }
          yield* textResponse('slow reply');
          return;
      }
    },
  };
}

/** Replay the inbox splices to learn what happened to every message that entered the inbox. */
function inboxFates(events: readonly SessionEvent[]): { claimedBy: Map<string, number>; canceled: Set<string>; pending: Set<string> } {
  const lists: Record<string, UserMessage[]> = { 'next-turn': [], 'next-step': [] };
  const claimedBy = new Map<string, number>();
  const canceled = new Set<string>();
  let turn = 0;
  for (const e of events) {
    if (e.type === 'turn/start') turn = e.data.turn;
    if (e.type !== 'agent/inbox/spliced') continue;
    const removed = lists[e.data.target]!.splice(e.data.start, e.data.removedCount ?? 0, ...e.data.inserted);
    for (const m of removed) {
      if (e.data.outcome === 'canceled') canceled.add(m.id);
      else claimedBy.set(m.id, turn);
    }
  }
  const pending = new Set([...lists['next-turn']!, ...lists['next-step']!].map((m) => m.id));
  return { claimedBy, canceled, pending };
}

describe('loop properties', () => {
  it('no input lost; turns numbered 1, 2, …; every turn and step balanced; status alternates', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb, { minLength: 1, maxLength: 25 }),
        fc.array(replyArb, { minLength: 1, maxLength: 8 }),
        async (ops, replies) => {
          const agent = createAgent({
            model: 'prop:m',
            adapters: cyclingAdapter(replies),
            tools: [{ name: 'noop', description: 'does nothing', parameters: z.object({}), execute: () => 'ok' }],
            retry: { maxRetries: 2, sleep: async () => undefined },
          });
          const statuses: AgentStatus[] = [];
          agent.on('agent/status', (p) => void statuses.push(p.status));
          const sent: string[] = [];
          let n = 0;
          for (const op of ops) {
            switch (op.kind) {
              case 'followup':
              case 'steer':
              case 'inject':
                sent.push(agent[op.kind](`${op.kind} ${n++}`).id);
                break;
              case 'cancel':
                agent.cancel({ kind: 'user' }, { keepInbox: op.keepInbox });
                break;
              case 'wait':
                await new Promise((r) => setTimeout(r, op.ms));
                break;
              case 'idle':
                await agent.whenIdle();
                break;
            }
          }
          await agent.whenIdle();
          const events = agent.session.events;

          // Turns: numbered 1, 2, …, each closed before the next opens, steps balanced inside.
          const starts = events.filter((e) => e.type === 'turn/start').map((e) => (e.type === 'turn/start' ? e.data.turn : 0));
          const ends = events.filter((e) => e.type === 'turn/end').map((e) => (e.type === 'turn/end' ? e.data.turn : 0));
          expect(starts).toEqual(starts.map((_, i) => i + 1));
          expect(ends).toEqual(starts);
          expect(events.filter((e) => e.type === 'step/start').length).toBe(events.filter((e) => e.type === 'step/end').length);
          // No spurious turns: a turn that completed did some work (nothing here empties a claim).
          let openSteps = 0;
          for (const e of events) {
            if (e.type === 'turn/start') openSteps = 0;
            if (e.type === 'step/start') openSteps++;
            if (e.type === 'turn/end' && e.data.reason.kind === 'completed')
              expect(openSteps, `turn ${e.data.turn} completed with no step`).toBeGreaterThan(0);
          }
          // Every tool call answered.
          expect(events.filter((e) => e.type === 'tool/call').length).toBe(events.filter((e) => e.type === 'tool/result').length);

          // No input lost: each message entered the model's view, is still pending, was canceled,
          // or was claimed by a turn that ended without entering it (aborted/blocked/error).
          const entered = new Set(events.filter((e) => e.type === 'user/message').map((e) => (e.type === 'user/message' ? e.data.id : '')));
          const fates = inboxFates(events);
          const reasons = new Map(
            events
              .filter((e) => e.type === 'turn/end')
              .map((e) => [e.type === 'turn/end' ? e.data.turn : 0, e.type === 'turn/end' ? e.data.reason.kind : '']),
          );
          for (const id of sent) {
            if (entered.has(id) || fates.pending.has(id) || fates.canceled.has(id)) continue;
            const t = fates.claimedBy.get(id);
            expect(t, `message ${id} vanished`).toBeDefined();
            expect(['aborted', 'blocked', 'error']).toContain(reasons.get(t!));
          }
          // Anything pending after idle can only be context that never woke the agent.
          expect(agent.inbox.nextTurn).toHaveLength(0);

          // Status: running, idle, running, idle, …, ending idle.
          expect(statuses.length % 2).toBe(0);
          statuses.forEach((s, i) => expect(s).toBe(i % 2 === 0 ? 'running' : 'idle'));
          expect(agent.status).toBe('idle');
        },
      ),
      { numRuns: 250 },
    );
  });
});
