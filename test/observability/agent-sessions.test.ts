/**
 * The mapping on sessions recorded by the real agent loop with the scripted adapter: a cancelled
 * turn, a retried attempt, parallel tool calls. Expected values are read from the log by the
 * test (the time of a named event) or written by hand, never taken from the mapping.
 */
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import type { Agent } from '../../src/agent/agent.js';
import { createAgent } from '../../src/create-agent.js';
import { ScriptedAdapter, textResponse, toolCallResponse, type ScriptEntry } from '../../src/llm/scripted.js';
import { Session } from '../../src/session/session.js';
import type { SessionEvent, SessionEventType } from '../../src/session/events.js';
import type { ToolDefinition } from '../../src/tools/types.js';
import { mapSession } from '../../src/observability/index.js';

function recorder(script: ScriptEntry[], tools: ToolDefinition[] = []): Agent {
  let now = 1_000_000;
  const session = Session.create({ id: 'sess-agent', clock: () => (now += 10) });
  return createAgent({
    model: 'scripted:model-s',
    adapters: new ScriptedAdapter(script, { providers: ['scripted'] }),
    session,
    tools,
    retry: { sleep: async () => undefined, random: () => 0.5 },
  });
}

function only<K extends SessionEventType>(agent: Agent, type: K): SessionEvent<K>[] {
  return agent.session.events.filter((e) => e.type === type) as unknown as SessionEvent<K>[];
}

describe('a cancelled turn', () => {
  it('ends aborted (not an error); the interrupted attempt ends at its kept partial message', async () => {
    const agent = recorder([
      {
        hangAfter: [
          { type: 'block-start', index: 0, blockType: 'text' },
          { type: 'text-delta', index: 0, text: 'partial' },
        ],
      },
    ]);
    const streaming = new Promise<void>((resolve) => {
      const off = agent.session.subscribe((e) => {
        if (e.type === 'assistant/chunk' && e.data.chunk.type === 'text-delta') {
          off();
          resolve();
        }
      });
    });
    agent.prompt('start something long');
    await streaming;
    agent.cancel();
    await agent.whenIdle();

    const [message] = only(agent, 'assistant/message');
    expect(message!.data.interrupted).toBe(true);
    const [turnStart] = only(agent, 'turn/start');
    const [turnEnd] = only(agent, 'turn/end');
    const spans = mapSession(agent.session).spans;
    expect(spans.map((s) => [s.name, s.kind, s.status.code])).toEqual([
      ['invoke_agent dsh', 'INTERNAL', 'UNSET'],
      ['chat model-s', 'CLIENT', 'UNSET'],
    ]);
    expect(spans[0]).toMatchObject({
      startTime: turnStart!.time,
      endTime: turnEnd!.time,
      attributes: { 'dsh.turn.end_reason': 'aborted', 'dsh.turn.cancel_cause': 'user' },
    });
    expect(spans[1]!.endTime).toBe(message!.time);
    expect(spans[1]!.attributes).toMatchObject({ 'dsh.llm.interrupted': true, 'gen_ai.provider.name': 'scripted' });
    expect(spans.some((s) => 'dsh.incomplete' in s.attributes)).toBe(false);
  });
});

describe('a retried attempt', () => {
  const failure = { code: 'SERVER', message: 'overloaded' };
  const script: ScriptEntry[] = [
    [
      { type: 'usage', usage: { inputTokens: 7, outputTokens: 0, cacheReadTokens: 3 } },
      { type: 'finish', reason: { kind: 'error', failure } },
    ],
    textResponse('ok', { usage: { inputTokens: 20, outputTokens: 4, cacheReadTokens: 80 } }),
  ];

  it('is its own span: the failure as status, the retry decision as an llm/retry span event', async () => {
    const agent = recorder(script);
    agent.prompt('hello');
    await agent.whenIdle();
    const [retry] = only(agent, 'llm/retry');
    const [started] = only(agent, 'llm/retry-started');
    expect(retry!.data.retry).toBe(1);

    const spans = mapSession(agent.session).spans;
    expect(spans.map((s) => s.name)).toEqual(['invoke_agent dsh', 'chat model-s', 'chat model-s']);
    const [turn, failed, retried] = spans;
    expect(turn!.status).toEqual({ code: 'UNSET' });
    expect(turn!.attributes['dsh.turn.end_reason']).toBe('completed');

    expect(failed!.status).toEqual({ code: 'ERROR', message: 'SERVER: overloaded' });
    expect(failed!.endTime).toBe(retry!.time);
    expect(failed!.attributes).toMatchObject({ 'dsh.llm.attempt': 1, 'error.type': 'SERVER', 'gen_ai.response.finish_reasons': ['error'] });
    expect(failed!.attributes['dsh.llm.retry']).toBeUndefined();
    expect(failed!.events).toEqual([
      {
        name: 'llm/retry',
        time: retry!.time,
        attributes: {
          'dsh.retry.number': 1,
          'dsh.retry.delay_ms': retry!.data.delayMs,
          'dsh.retry.mode': 'normal',
          'dsh.retry.max_retries': 5,
          'error.type': 'SERVER',
          'dsh.retry.failure_message': 'overloaded',
        },
      },
    ]);

    expect(retried!.status).toEqual({ code: 'UNSET' });
    expect(retried!.startTime).toBe(started!.time);
    expect(retried!.attributes).toMatchObject({ 'dsh.llm.attempt': 2, 'dsh.llm.retry': 1, 'gen_ai.response.finish_reasons': ['stop'] });
    expect(failed!.parentSpanId).toBe(turn!.spanId);
    expect(retried!.parentSpanId).toBe(turn!.spanId);
  });

  it("counts the failed attempt's usage too, input including cache reads", async () => {
    const agent = recorder(script);
    agent.prompt('hello');
    await agent.whenIdle();
    const chats = mapSession(agent.session).spans.filter((s) => s.kind === 'CLIENT');
    // By hand: (7 + 3) + (20 + 80) input, 3 + 80 cache reads, 0 + 4 output.
    expect(chats.map((s) => s.attributes['gen_ai.usage.input_tokens'])).toEqual([10, 100]);
    expect(chats.map((s) => s.attributes['gen_ai.usage.cache_read.input_tokens'])).toEqual([3, 80]);
    expect(chats.map((s) => s.attributes['gen_ai.usage.output_tokens'])).toEqual([0, 4]);
  });
});

describe('parallel tool calls', () => {
  it('give one execute_tool span per call, overlapping in time, in model order, under the turn span', async () => {
    const waiting = new Map<string, () => void>();
    const reader: ToolDefinition<{ id: string }> = {
      name: 'reader',
      description: 'reads',
      parameters: z.object({ id: z.string() }),
      isConcurrencySafe: () => true,
      execute: (a) =>
        new Promise<string>((resolve) => {
          waiting.set(a.id, () => resolve(`read ${a.id}`));
          // Both calls are running: finish them out of order.
          if (waiting.size === 2) {
            waiting.get('b')!();
            waiting.get('a')!();
          }
        }),
    };
    const agent = recorder(
      [
        toolCallResponse([
          { id: 'c1', name: 'reader', args: { id: 'a' } },
          { id: 'c2', name: 'reader', args: { id: 'b' } },
        ]),
        textResponse('done'),
      ],
      [reader],
    );
    agent.prompt('read both');
    await agent.whenIdle();

    const calls = only(agent, 'tool/call');
    const results = only(agent, 'tool/result');
    // Both calls started before either result was committed.
    expect(Math.max(...calls.map((e) => e.seq))).toBeLessThan(Math.min(...results.map((e) => e.seq)));

    const spans = mapSession(agent.session).spans;
    expect(spans.map((s) => s.name)).toEqual([
      'invoke_agent dsh',
      'chat model-s',
      'execute_tool reader',
      'execute_tool reader',
      'chat model-s',
    ]);
    const tools = spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'execute_tool');
    expect(tools.map((s) => [s.attributes['gen_ai.tool.call.id'], s.startTime, s.endTime, s.parentSpanId])).toEqual([
      ['c1', calls[0]!.time, results[0]!.time, spans[0]!.spanId],
      ['c2', calls[1]!.time, results[1]!.time, spans[0]!.spanId],
    ]);
    expect(tools[1]!.startTime).toBeLessThan(tools[0]!.endTime);
    expect(spans[4]!.attributes['dsh.step']).toBe(2);
  });
});
