/** Cancellation (issue 3 item 4). */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { deferred, harness, shape } from './helpers.js';
import { textResponse, toolCallResponse } from '../../src/llm/scripted.js';
import type { StreamChunk } from '../../src/model/stream.js';

const wait = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('cancel causes', () => {
  for (const cause of [{ kind: 'user' }, { kind: 'parent' }, { kind: 'hook', reason: 'over budget' }] as const) {
    it(`records ${cause.kind} on the aborted turn`, async () => {
      const { agent } = harness(['hang']);
      agent.prompt('x');
      await wait(5);
      agent.cancel(cause);
      await agent.whenIdle();
      const end = agent.session.events.at(-1)!;
      expect(end.type === 'turn/end' && end.data.reason).toEqual({ kind: 'aborted', reason: cause });
    });
  }

  it('records disposed when the agent is disposed mid-turn', async () => {
    const { agent } = harness(['hang']);
    agent.prompt('x');
    await wait(5);
    await agent.dispose();
    const end = agent.session.events.at(-1)!;
    expect(end.type === 'turn/end' && end.data.reason).toEqual({ kind: 'aborted', reason: { kind: 'disposed' } });
    expect(agent.status).toBe('idle');
  });

  it('the first cause wins', async () => {
    const { agent } = harness(['hang']);
    agent.prompt('x');
    await wait(5);
    agent.cancel({ kind: 'parent' });
    agent.cancel({ kind: 'user' });
    await agent.whenIdle();
    const end = agent.session.events.at(-1)!;
    expect(end.type === 'turn/end' && end.data.reason).toEqual({ kind: 'aborted', reason: { kind: 'parent' } });
  });

  it('a cancel during pre-step closes a turn with no step', async () => {
    const gate = deferred();
    const { agent } = harness([textResponse('never')]);
    agent.on('agent/pre-step', async (p, next) => {
      await gate.promise;
      return next(p);
    });
    agent.prompt('x');
    await wait(5);
    agent.cancel();
    gate.resolve();
    await agent.whenIdle();
    expect(shape(agent.session.events)).toEqual(['turn/start 1', 'turn/end 1 aborted:user']);
  });
});

describe('cancel mid-stream', () => {
  it('logs an interrupted assistant message with the visible text streamed so far, which the model then sees', async () => {
    const partial: StreamChunk[] = [
      { type: 'block-start', index: 0, blockType: 'reasoning' },
      { type: 'reasoning-delta', index: 0, text: 'Thinking about it' },
      { type: 'block-start', index: 1, blockType: 'text' },
      { type: 'text-delta', index: 1, text: 'Here is the first ' },
      { type: 'text-delta', index: 1, text: 'half' },
    ];
    const { agent, adapter } = harness([{ hangAfter: partial }, textResponse('next')]);
    agent.prompt('x');
    await wait(10);
    agent.cancel();
    await agent.whenIdle();
    const msg = agent.session.events.find((e) => e.type === 'assistant/message');
    if (msg?.type !== 'assistant/message') throw new Error('no interrupted message');
    expect(msg.data.interrupted).toBe(true);
    expect(msg.data.message.content).toEqual([
      { type: 'reasoning', text: 'Thinking about it' },
      { type: 'text', text: 'Here is the first half' },
    ]);
    const chunkSeqs = agent.session.events.filter((e) => e.type === 'assistant/chunk').map((e) => e.seq);
    expect(msg.sourceEventSeqs).toEqual(chunkSeqs);
    agent.prompt('go on');
    await agent.whenIdle();
    expect(adapter.requests[1]!.messages[1]).toEqual(msg.data.message);
  });

  it('a cancel before any visible content appends no assistant message', async () => {
    const { agent } = harness([
      {
        hangAfter: [
          { type: 'block-start', index: 0, blockType: 'text' },
          { type: 'text-delta', index: 0, text: '   ' },
        ],
      },
    ]);
    agent.prompt('x');
    await wait(10);
    agent.cancel();
    await agent.whenIdle();
    expect(agent.session.events.some((e) => e.type === 'assistant/message')).toBe(false);
    expect(shape(agent.session.events).at(-1)).toBe('turn/end 1 aborted:user');
  });

  it('tool-only content streamed before a cancel is not kept', async () => {
    const { agent } = harness([
      {
        hangAfter: [
          { type: 'block-start', index: 0, blockType: 'tool-call' },
          { type: 'tool-call-delta', index: 0, id: 'c', name: 'rm', argumentsDelta: '{"path":' },
        ],
      },
    ]);
    agent.prompt('x');
    await wait(10);
    agent.cancel();
    await agent.whenIdle();
    expect(agent.session.events.some((e) => e.type === 'assistant/message' || e.type === 'tool/call')).toBe(false);
  });
});

describe('cancel during tools', () => {
  it('unstarted calls get ABORTED_BEFORE_DISPATCH results, so no call is left without a result', async () => {
    const started = deferred();
    const release = deferred();
    const ran: string[] = [];
    const slow = {
      name: 'slow',
      description: 'a slow exclusive tool',
      parameters: z.object({ n: z.number() }),
      execute: async (a: { n: number }) => {
        ran.push(`slow${a.n}`);
        started.resolve();
        await release.promise;
        return 'done';
      },
    };
    const { agent } = harness(
      [
        toolCallResponse([
          { id: 'a', name: 'slow', args: { n: 1 } },
          { id: 'b', name: 'slow', args: { n: 2 } },
          { id: 'c', name: 'slow', args: { n: 3 } },
        ]),
      ],
      { tools: [slow] },
    );
    agent.prompt('x');
    await started.promise;
    agent.cancel();
    release.resolve();
    await agent.whenIdle();
    expect(ran).toEqual(['slow1']);
    expect(shape(agent.session.events).filter((l) => l.startsWith('tool'))).toEqual([
      'tool/call a slow',
      'tool/result a ABORTED',
      'tool/call b slow',
      'tool/call c slow',
      'tool/result b ABORTED_BEFORE_DISPATCH',
      'tool/result c ABORTED_BEFORE_DISPATCH',
    ]);
    expect(shape(agent.session.events).at(-1)).toBe('turn/end 1 aborted:user');
  });

  it('a tool that fails after the cancel keeps its failure (only a success becomes ABORTED)', async () => {
    const started = deferred();
    const release = deferred();
    const failing = {
      name: 'failing',
      description: 'fails',
      parameters: z.object({}),
      execute: async () => {
        started.resolve();
        await release.promise;
        throw new Error('disk full');
      },
    };
    const { agent } = harness([toolCallResponse([{ id: 'a', name: 'failing', args: {} }])], { tools: [failing] });
    agent.prompt('x');
    await started.promise;
    agent.cancel();
    release.resolve();
    await agent.whenIdle();
    expect(shape(agent.session.events).filter((l) => l.startsWith('tool/result'))).toEqual(['tool/result a TOOL_FAILED']);
  });
});
