/** Tool scheduling within a step (issue 3 item 3). */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { deferred, harness, shape } from './helpers.js';
import { textResponse, toolCallResponse } from '../../src/llm/scripted.js';

function tracked(maxSeen: { now: number; peak: number }, order: string[], gates: Map<string, Promise<void>>) {
  return async (id: string): Promise<string> => {
    maxSeen.now++;
    maxSeen.peak = Math.max(maxSeen.peak, maxSeen.now);
    order.push(`start ${id}`);
    await (gates.get(id) ?? Promise.resolve());
    maxSeen.now--;
    order.push(`end ${id}`);
    return `result ${id}`;
  };
}

describe('parallel tool calls', () => {
  it('concurrency-safe calls overlap in a bounded pool; results commit in model order', async () => {
    const stats = { now: 0, peak: 0 };
    const order: string[] = [];
    const gates = new Map<string, Promise<void>>();
    const release = new Map<string, () => void>();
    for (const id of ['a', 'b', 'c', 'd']) {
      const d = deferred();
      gates.set(id, d.promise);
      release.set(id, d.resolve);
    }
    const run = tracked(stats, order, gates);
    const reader = {
      name: 'reader',
      description: 'read-only',
      parameters: z.object({ id: z.string() }),
      isConcurrencySafe: () => true,
      execute: (a: { id: string }) => run(a.id),
    };
    const { agent } = harness(
      [toolCallResponse(['a', 'b', 'c', 'd'].map((id) => ({ id, name: 'reader', args: { id } }))), textResponse('ok')],
      {
        tools: [reader],
        maxParallelToolCalls: 2,
      },
    );
    agent.prompt('x');
    await new Promise((r) => setTimeout(r, 10));
    // Pool of 2: only a and b have started.
    expect(order).toEqual(['start a', 'start b']);
    release.get('b')!(); // b finishes first, but its result must wait for a
    await new Promise((r) => setTimeout(r, 10));
    expect(order).toEqual(['start a', 'start b', 'end b', 'start c']);
    expect(agent.session.events.filter((e) => e.type === 'tool/result')).toHaveLength(0);
    release.get('a')!();
    release.get('c')!();
    release.get('d')!();
    await agent.whenIdle();
    expect(stats.peak).toBe(2);
    expect(shape(agent.session.events).filter((l) => l.startsWith('tool/result'))).toEqual([
      'tool/result a',
      'tool/result b',
      'tool/result c',
      'tool/result d',
    ]);
    // Every result cites its own call.
    const calls = new Map(
      agent.session.events.filter((e) => e.type === 'tool/call').map((e) => [e.type === 'tool/call' ? e.data.callId : '', e.seq]),
    );
    for (const r of agent.session.events.filter((e) => e.type === 'tool/result')) {
      expect(r.sourceEventSeqs).toEqual([calls.get(r.type === 'tool/result' ? r.data.message.source.callId : '')]);
    }
  });

  it('a call that is not concurrency-safe is a barrier: it waits for earlier calls and runs alone', async () => {
    const order: string[] = [];
    const stats = { now: 0, peak: 0 };
    const run = tracked(stats, order, new Map());
    const reader = {
      name: 'reader',
      description: 'r',
      parameters: z.object({ id: z.string() }),
      isConcurrencySafe: () => true,
      execute: (a: { id: string }) => run(a.id),
    };
    const writer = {
      name: 'writer',
      description: 'w',
      parameters: z.object({ id: z.string() }),
      execute: (a: { id: string }) => run(a.id),
    };
    const { agent } = harness(
      [
        toolCallResponse([
          { id: 'r1', name: 'reader', args: { id: 'r1' } },
          { id: 'r2', name: 'reader', args: { id: 'r2' } },
          { id: 'w', name: 'writer', args: { id: 'w' } },
          { id: 'r3', name: 'reader', args: { id: 'r3' } },
        ]),
        textResponse('ok'),
      ],
      { tools: [reader, writer] },
    );
    agent.prompt('x');
    await agent.whenIdle();
    const wStart = order.indexOf('start w');
    expect(order.indexOf('end r1')).toBeLessThan(wStart);
    expect(order.indexOf('end r2')).toBeLessThan(wStart);
    expect(order.indexOf('end w')).toBeLessThan(order.indexOf('start r3'));
  });

  it('maxParallelToolCalls 1 runs everything serially', async () => {
    const stats = { now: 0, peak: 0 };
    const run = tracked(stats, [], new Map());
    const reader = {
      name: 'reader',
      description: 'r',
      parameters: z.object({ id: z.string() }),
      isConcurrencySafe: () => true,
      execute: (a: { id: string }) => run(a.id),
    };
    const { agent } = harness([toolCallResponse(['a', 'b', 'c'].map((id) => ({ id, name: 'reader', args: { id } }))), textResponse('ok')], {
      tools: [reader],
      maxParallelToolCalls: 1,
    });
    agent.prompt('x');
    await agent.whenIdle();
    expect(stats.peak).toBe(1);
  });
});

describe('tool call details', () => {
  it('tool/call keeps the raw argument text; bad arguments become an INVALID_ARGS result', async () => {
    const t = {
      name: 'add',
      description: 'add',
      parameters: z.object({ a: z.number(), b: z.number() }),
      execute: (x: { a: number; b: number }) => String(x.a + x.b),
    };
    const { agent, adapter } = harness(
      [
        toolCallResponse([
          { id: 'ok', name: 'add', raw: '{"a": 1, "b": 2}' },
          { id: 'bad', name: 'add', raw: '{"a": "one"}' },
          { id: 'junk', name: 'add', raw: '{not json' },
          { id: 'none', name: 'missing_tool', args: {} },
        ]),
        textResponse('ok'),
      ],
      { tools: [t] },
    );
    agent.prompt('x');
    await agent.whenIdle();
    const calls = agent.session.events.filter((e) => e.type === 'tool/call').map((e) => (e.type === 'tool/call' ? e.data.arguments : ''));
    expect(calls).toEqual(['{"a": 1, "b": 2}', '{"a": "one"}', '{not json', '{}']);
    expect(shape(agent.session.events).filter((l) => l.startsWith('tool/result'))).toEqual([
      'tool/result ok',
      'tool/result bad INVALID_ARGS',
      'tool/result junk INVALID_ARGS',
      'tool/result none UNKNOWN_TOOL',
    ]);
    const results = adapter.requests[1]!.messages.slice(2).map((m) => JSON.stringify(m.content));
    expect(results[0]).toContain('"text":"3"');
    expect(results[1]).toMatch(/a: .*expected number/i);
    expect(results[3]).toContain('available: add');
  });

  it('deferred context lands in the next step after all the results; concludeTurn ends the turn unless input is owed', async () => {
    const t = {
      name: 'finish',
      description: 'finish',
      parameters: z.object({ note: z.boolean() }),
      execute: (a: { note: boolean }, ctx: { deferContext: (s: string) => void; concludeTurn: () => void }) => {
        if (a.note) ctx.deferContext('remember: tests must pass');
        ctx.concludeTurn();
        return 'finished';
      },
    };
    const { agent, adapter } = harness(
      [
        toolCallResponse([{ id: 'x', name: 'finish', args: { note: true } }]),
        textResponse('noted'),
        toolCallResponse([{ id: 'y', name: 'finish', args: { note: false } }]),
      ],
      { tools: [t] },
    );
    agent.prompt('first');
    await agent.whenIdle();
    expect(shape(agent.session.events)).toEqual([
      'turn/start 1',
      'step/start 1.1',
      'user first',
      'header initial',
      'assistant call:finish',
      'tool/call x finish',
      'tool/result x',
      'step/end 1.1',
      'step/start 1.2',
      'user remember: tests must pass',
      'assistant noted',
      'step/end 1.2',
      'turn/end 1 completed',
    ]);
    agent.prompt('second');
    await agent.whenIdle();
    // concludeTurn with nothing owed: no further request after the tool result.
    expect(adapter.requests).toHaveLength(3);
    expect(shape(agent.session.events).slice(-3)).toEqual(['tool/result y', 'step/end 2.1', 'turn/end 2 completed']);
  });
});

describe('a step whose tool calls cannot all be recorded', () => {
  // The call already running records its result first, nothing is appended after turn/end, and
  // nothing is left unhandled.
  it('a repeated call id (an adapter that does not make ids unique) fails the turn cleanly', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown): void => void unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      const gate = deferred();
      const reader = {
        name: 'reader',
        description: 'read-only',
        parameters: z.object({ id: z.string() }),
        isConcurrencySafe: () => true,
        execute: async (a: { id: string }) => {
          await gate.promise;
          return `result ${a.id}`;
        },
      };
      const { agent } = harness(
        [
          toolCallResponse([
            { id: 'dup', name: 'reader', args: { id: '1' } },
            { id: 'dup', name: 'reader', args: { id: '2' } },
          ]),
        ],
        { tools: [reader] },
      );
      agent.prompt('x');
      await new Promise((r) => setTimeout(r, 10));
      gate.resolve();
      await agent.whenIdle();
      await new Promise((r) => setTimeout(r, 20));
      const lines = shape(agent.session.events);
      const end = agent.session.events.findLast((e) => e.type === 'turn/end')!;
      expect(end.type === 'turn/end' && end.data.reason.kind).toBe('error');
      // The first call ran and its result is in the turn; the second was never recorded.
      expect(lines.filter((l) => l.startsWith('tool/'))).toEqual(['tool/call dup reader', 'tool/result dup']);
      expect(agent.session.events.at(-1)!.type).toBe('turn/end');
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
