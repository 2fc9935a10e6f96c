/**
 * `replaySession` on recordings made by the real loop with a scripted model: the recording is the
 * expectation, the replay runs with no model and (by default) no tools.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Agent } from '../../src/agent/agent.js';
import { createAgent, type CreateAgentOptions } from '../../src/create-agent.js';
import {
  ScriptedAdapter,
  emptyResponse,
  maxTokensResponse,
  textResponse,
  toolCallResponse,
  type ScriptEntry,
} from '../../src/llm/scripted.js';
import type { ToolDefinition } from '../../src/tools/types.js';
import type { SessionEvent } from '../../src/session/events.js';
import { replaySession } from '../../src/replay/harness.js';
import { assessReplay } from '../../src/replay/plan.js';
import { indexRecording } from '../../src/session/recording.js';
import { LogBuilder, user } from './helpers.js';

function addTool(
  onRun: () => void = () => undefined,
  answer: (a: number, b: number) => number = (a, b) => a + b,
): ToolDefinition<{ a: number; b: number }> {
  return {
    name: 'add',
    description: 'Add two numbers.',
    parameters: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => {
      onRun();
      return String(answer(a, b));
    },
  };
}

function recorder(script: ScriptEntry[], opts: Partial<CreateAgentOptions> = {}): Agent {
  return createAgent({
    model: 'scripted:m1',
    adapters: new ScriptedAdapter(script),
    retry: { sleep: async () => undefined },
    ...opts,
  });
}

async function record(
  script: ScriptEntry[],
  prompts: string[],
  opts: Partial<CreateAgentOptions> = {},
  setup: (a: Agent) => void = () => undefined,
): Promise<readonly SessionEvent[]> {
  const agent = recorder(script, opts);
  setup(agent);
  for (const p of prompts) {
    agent.prompt(p);
    await agent.whenIdle();
  }
  return agent.session.events;
}

const endReasons = (events: readonly SessionEvent[]): unknown[] => events.flatMap((e) => (e.type === 'turn/end' ? [e.data.reason] : []));
const toolTexts = (events: readonly SessionEvent[]): unknown[] =>
  events.flatMap((e) => (e.type === 'tool/result' ? [e.data.message.content[0].content] : []));

describe('replaySession', () => {
  it('re-runs a tool-call session with neither the model nor the tools', async () => {
    let runs = 0;
    const recorded = await record(
      [toolCallResponse([{ id: 'c1', name: 'add', args: { a: 1, b: 2 } }]), textResponse('It is 3.')],
      ['add 1 and 2'],
      { tools: [addTool(() => runs++)] },
    );
    expect(runs).toBe(1);
    const r = await replaySession(recorded, { mode: 'strict' });
    expect(runs).toBe(1); // the recorded result answered the call
    expect(r.comparison.differences).toEqual([]);
    expect(r.comparison.matches).toBe(true);
    expect(r.comparison.toolResults).toEqual([]);
    expect(r.divergences).toEqual([]);
    expect(toolTexts(r.session.events)).toEqual(toolTexts(recorded));
    expect(r.comparison.checked.chunks).toBe(2);
  });

  it('runs live tools on request and reports the results that differ, and the requests they changed', async () => {
    const recorded = await record(
      [toolCallResponse([{ id: 'c1', name: 'add', args: { a: 1, b: 2 } }]), textResponse('It is 3.')],
      ['add 1 and 2'],
      { tools: [addTool()] },
    );
    const r = await replaySession(recorded, { tools: [addTool(undefined, (a, b) => a * b)] });
    expect(r.comparison.matches).toBe(true);
    expect(r.comparison.toolResults).toEqual([
      expect.objectContaining({
        where: 'turn 1 step 1 call c1',
        path: 'result.message.content[0].content[0].text',
        recorded: '3',
        replayed: '2',
      }),
    ]);
    expect(r.divergences).toEqual([
      expect.objectContaining({
        turn: 1,
        step: 2,
        attempt: 1,
        field: 'messages',
        path: 'messages[2].content[0].content[0].text',
        recorded: '3',
        live: '2',
      }),
    ]);
  });

  it('in strict mode a diverging request fails its turn with REPLAY_DIVERGED, and the comparison shows it', async () => {
    const recorded = await record(
      [toolCallResponse([{ id: 'c1', name: 'add', args: { a: 1, b: 2 } }]), textResponse('It is 3.')],
      ['add 1 and 2'],
      { tools: [addTool()] },
    );
    const r = await replaySession(recorded, { tools: [addTool(undefined, () => 0)], mode: 'strict' });
    expect(endReasons(r.session.events)).toEqual([{ kind: 'error', error: expect.objectContaining({ code: 'REPLAY_DIVERGED' }) }]);
    expect(r.comparison.matches).toBe(false);
    expect(r.comparison.differences.map((d) => d.category)).toEqual(expect.arrayContaining(['endReasons', 'chunks']));
  });

  it('replays several turns, each woken by its recorded prompt', async () => {
    const recorded = await record([textResponse('one'), textResponse('two')], ['first', 'second']);
    const r = await replaySession(recorded, { mode: 'strict' });
    expect(r.comparison.differences).toEqual([]);
    expect(r.comparison.counts.replayed).toMatchObject({ turns: 2, steps: 2 });
  });

  it('reproduces a max-tokens turn (truncated tool calls dropped) and the follow-up turn', async () => {
    const recorded = await record(
      [maxTokensResponse('Starting', { calls: [{ id: 'cut', name: 'add', args: { a: 1, b: 2 } }] }), textResponse('Summary.')],
      ['go', 'continue'],
      { tools: [addTool()] },
    );
    expect(endReasons(recorded)).toEqual([{ kind: 'max-tokens' }, { kind: 'completed' }]);
    const r = await replaySession(recorded, { mode: 'strict' });
    expect(r.comparison.differences).toEqual([]);
    expect(endReasons(r.session.events)).toEqual(endReasons(recorded));
  });

  it('reproduces a retried empty response with the recorded retry count', async () => {
    const recorded = await record([emptyResponse(), textResponse('ok')], ['hello']);
    expect(recorded.filter((e) => e.type === 'llm/retry')).toHaveLength(1);
    const r = await replaySession(recorded, { mode: 'strict' });
    expect(r.comparison.differences).toEqual([]);
    expect(r.comparison.checked.retries).toBe(1);
    expect(r.session.events.filter((e) => e.type === 'llm/retry')).toHaveLength(1);
  });

  it('cancels mid-stream where the recording did, with the recorded cause', async () => {
    const partial = [
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'Working on' },
    ] as const;
    const recorded = await record([{ hangAfter: [...partial] }], ['long task'], {}, (agent) => {
      agent.session.subscribe((e) => {
        if (e.type === 'assistant/chunk' && e.data.chunk.type === 'text-delta')
          queueMicrotask(() => agent.cancel({ kind: 'hook', reason: 'budget' }));
      });
    });
    expect(endReasons(recorded)).toEqual([{ kind: 'aborted', reason: { kind: 'hook', reason: 'budget' } }]);
    const r = await replaySession(recorded, { mode: 'strict' });
    expect(r.comparison.differences).toEqual([]);
    expect(endReasons(r.session.events)).toEqual(endReasons(recorded));
  });

  it('cancels while a tool runs where the recording did; unstarted calls are aborted before dispatch', async () => {
    let agentRef: Agent | undefined;
    const waits: ToolDefinition<{ n: number }> = {
      name: 'wait',
      description: 'Wait for a cancel.',
      parameters: z.object({ n: z.number() }),
      execute: (_a, ctx) =>
        new Promise((_, reject) => {
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
          queueMicrotask(() => agentRef!.cancel());
        }),
    };
    const recorded = await record(
      [
        toolCallResponse([
          { id: 'w1', name: 'wait', args: { n: 1 } },
          { id: 'w2', name: 'wait', args: { n: 2 } },
        ]),
      ],
      ['wait twice'],
      { tools: [waits] },
      (a) => (agentRef = a),
    );
    expect(recorded.flatMap((e) => (e.type === 'tool/result' ? [e.data.error?.code] : []))).toEqual(['ABORTED', 'ABORTED_BEFORE_DISPATCH']);
    const r = await replaySession(recorded, { mode: 'strict' });
    expect(r.comparison.differences).toEqual([]);
    expect(r.comparison.toolResults).toEqual([]);
  });

  it('takes the extra step a turn-stopping listener forced in the recording', async () => {
    const recorded = await record([textResponse('one'), textResponse('two')], ['start'], {}, (agent) => {
      let n = 0;
      agent.on('agent/turn-stopping', ({ agent: a }) => {
        if (n++ === 0) a.steer('once more');
      });
    });
    const r = await replaySession(recorded, { mode: 'strict' });
    expect(r.comparison.differences).toEqual([]);
    expect(r.comparison.counts.replayed).toMatchObject({ turns: 1, steps: 2 });
  });

  it('re-enacts a turn the recording shows blocked by agent/pre-step', async () => {
    const recorded = await record([textResponse('never')], ['forbidden'], {}, (agent) => {
      agent.on('agent/pre-step', () => ({ kind: 'reject' }));
    });
    expect(endReasons(recorded)).toEqual([{ kind: 'blocked' }]);
    const r = await replaySession(recorded, { mode: 'strict' });
    expect(r.comparison.differences).toEqual([]);
    expect(endReasons(r.session.events)).toEqual([{ kind: 'blocked' }]);
  });

  it('keeps a recorded system prompt and tool schemas, so the replayed header equals the recorded one', async () => {
    const recorded = await record([toolCallResponse([{ id: 'c1', name: 'add', args: { a: 2, b: 2 } }]), textResponse('4')], ['add'], {
      tools: [addTool()],
      system: 'You add numbers.',
    });
    const r = await replaySession(recorded, { mode: 'strict' });
    expect(r.comparison.differences).toEqual([]);
    expect(r.comparison.headers).toEqual([]);
    expect(r.comparison.placeholders).toEqual([]);
    expect(r.placeholders).toEqual([]);
  });

  it('says what it cannot reproduce: a user message written mid-step', async () => {
    const log = new LogBuilder();
    const p = user('go');
    log.startTurn(p).startStep(p).reply('ok');
    log.session.append('user/message', user('written by a plugin after the reply'), { surfaceOp: 'append' });
    log.endStep().endTurn();
    expect(assessReplay(indexRecording(log.events))).toEqual([expect.stringContaining('turn 1 step 1: user messages written mid-step')]);
    const r = await replaySession(log.events);
    expect(r.unsupported).toHaveLength(1);
    expect(r.comparison.differences).toEqual([expect.objectContaining({ category: 'inputs', turn: 1, step: 1, path: 'inputs.late[0]' })]);
  });
});
