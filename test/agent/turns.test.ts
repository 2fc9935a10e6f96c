/** The turn driver: one contract test per TurnEndReason and per driver rule (issue 3 item 3). */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { harness, shape } from './helpers.js';
import { maxTokensResponse, textResponse, toolCallResponse, errorResponse } from '../../src/llm/scripted.js';
import { loadJsonl, encodeJsonl, interruptedTurnClosers, Session } from '../../src/session/index.js';
import { createAgent } from '../../src/create-agent.js';
import { ScriptedAdapter } from '../../src/llm/scripted.js';

const echo = {
  name: 'echo',
  description: 'Echo the text back in upper case.',
  parameters: z.object({ text: z.string() }),
  execute: (a: { text: string }) => a.text.toUpperCase(),
};

describe('turn end reasons', () => {
  it('completed: a text reply ends the turn', async () => {
    const { agent, statuses } = harness([textResponse('Hello.')]);
    agent.prompt('hi');
    await agent.whenIdle();
    expect(shape(agent.session.events)).toEqual([
      'turn/start 1',
      'step/start 1.1',
      'user hi',
      'header initial',
      'assistant Hello.',
      'step/end 1.1',
      'turn/end 1 completed',
    ]);
    expect(statuses).toEqual(['running', 'idle']);
  });

  it('blocked: pre-step rejects the first claim; no step is written and the claim is not recorded as a message', async () => {
    const { agent, adapter } = harness([]);
    agent.on('agent/pre-step', () => ({ kind: 'reject' }));
    agent.prompt('forbidden');
    await agent.whenIdle();
    expect(shape(agent.session.events, { inbox: true })).toEqual([
      'splice next-turn +1',
      'turn/start 1',
      'splice next-turn -1',
      'turn/end 1 blocked',
    ]);
    expect(adapter.requests).toHaveLength(0);
  });

  it('completed with no step: the first claim rewritten to empty', async () => {
    const { agent, adapter } = harness([]);
    agent.on('agent/pre-step', () => ({ kind: 'enter', messages: [] }));
    agent.prompt('nothing to do');
    await agent.whenIdle();
    expect(shape(agent.session.events)).toEqual(['turn/start 1', 'turn/end 1 completed']);
    expect(adapter.requests).toHaveLength(0);
  });

  it('error: a provider failure that is not retried ends the turn with the failure verbatim, and the next turn runs', async () => {
    const { agent, errors } = harness([errorResponse({ code: 'AUTH', message: 'bad key', status: 401 }), textResponse('fine now')]);
    agent.prompt('one');
    await agent.whenIdle();
    const end = agent.session.events.find((e) => e.type === 'turn/end');
    expect(end?.type === 'turn/end' && end.data.reason).toEqual({
      kind: 'error',
      error: { code: 'AUTH', message: 'bad key', status: 401 },
    });
    expect(errors).toHaveLength(1);
    agent.prompt('two');
    await agent.whenIdle();
    expect(shape(agent.session.events).slice(-2)).toEqual(['step/end 2.1', 'turn/end 2 completed']);
  });

  it('max-tokens: truncated tool calls are dropped and the reason is sticky across a continued step', async () => {
    const { agent, adapter } = harness(
      [maxTokensResponse('partial', { calls: [{ id: 'cut', name: 'echo', args: { text: 'x' } }] }), textResponse('rest')],
      {
        tools: [echo],
      },
    );
    let steered = false;
    agent.on('agent/turn-stopping', ({ agent: a }) => {
      if (!steered) {
        steered = true;
        a.steer('continue');
      }
    });
    agent.prompt('write a lot');
    await agent.whenIdle();
    expect(shape(agent.session.events)).toEqual([
      'turn/start 1',
      'step/start 1.1',
      'user write a lot',
      'header initial',
      'assistant partial',
      'step/end 1.1',
      'step/start 1.2',
      'user continue',
      'assistant rest',
      'step/end 1.2',
      'turn/end 1 max-tokens',
    ]);
    // The cut-off call never ran and never reached the model.
    expect(agent.session.events.some((e) => e.type === 'tool/call')).toBe(false);
    expect(JSON.stringify(adapter.requests[1]!.messages)).not.toContain('tool-call');
  });

  it('aborted: a cancel records its cause', async () => {
    const { agent } = harness(['hang']);
    agent.prompt('long task');
    await new Promise((r) => setTimeout(r, 5));
    agent.cancel({ kind: 'hook', reason: 'budget' });
    await agent.whenIdle();
    const end = agent.session.events.at(-1)!;
    expect(end.type === 'turn/end' && end.data.reason).toEqual({ kind: 'aborted', reason: { kind: 'hook', reason: 'budget' } });
  });

  it('interrupted: only crash repair writes it, and a repaired log loads and continues', async () => {
    const { agent } = harness(['hang']);
    agent.prompt('will crash');
    await new Promise((r) => setTimeout(r, 5));
    // Simulate the process dying mid-turn: take the log as it is now, without the loop's closers.
    const header = agent.session.header;
    const events = agent.session.events.slice();
    agent.cancel();
    await agent.whenIdle();
    const text = encodeJsonl(header, events);
    const loaded = loadJsonl(text);
    expect(loaded.repaired.map((d) => d.type)).toEqual(['step/end', 'turn/end']);
    const end = loaded.session.events.find((e) => e.type === 'turn/end');
    expect(end?.type === 'turn/end' && end.data.reason).toEqual({ kind: 'interrupted' });
    expect(interruptedTurnClosers(loaded.session.events)).toEqual([]);
    // The loop never writes `interrupted` itself.
    expect(agent.session.events.some((e) => e.type === 'turn/end' && e.data.reason.kind === 'interrupted')).toBe(false);
    // And the resumed session continues numbering.
    const adapter = new ScriptedAdapter([textResponse('back')]);
    const resumed = createAgent({ model: 'scripted:test-model', adapters: adapter, session: loaded.session });
    resumed.prompt('again');
    await resumed.whenIdle();
    expect(shape(resumed.session.events).filter((l) => l.startsWith('turn/'))).toEqual([
      'turn/start 1',
      'turn/end 1 interrupted',
      'turn/start 2',
      'turn/end 2 completed',
    ]);
  });
});

describe('pre-step', () => {
  it('rewritten messages are what is logged and what the model sees', async () => {
    const { agent, adapter } = harness([textResponse('ok')]);
    agent.on('agent/pre-step', (p, next) =>
      next({
        ...p,
        messages: p.messages.map((m) => ({ ...m, content: [{ type: 'text', text: `[redacted] ${m.content.length} block(s)` }] })),
      }),
    );
    agent.prompt('my password is hunter2');
    await agent.whenIdle();
    const logged = agent.session.events.filter((e) => e.type === 'user/message');
    expect(logged).toHaveLength(1);
    expect(JSON.stringify(agent.session.events.filter((e) => e.type !== 'agent/inbox/spliced'))).not.toContain('hunter2');
    expect(adapter.requests[0]!.messages).toEqual([logged[0]!.data]);
  });

  it('turn/start is written before the inbox claim', async () => {
    const { agent } = harness([textResponse('ok')]);
    agent.prompt('x');
    await agent.whenIdle();
    const types = agent.session.events.map((e) => e.type);
    expect(types.slice(0, 4)).toEqual(['agent/inbox/spliced', 'turn/start', 'agent/inbox/spliced', 'step/start']);
  });
});

describe('requests', () => {
  it('are built from the log: messages, system prompt sections and tool schemas', async () => {
    const { agent, adapter } = harness([toolCallResponse([{ id: 'a', name: 'echo', args: { text: 'x' } }]), textResponse('done')], {
      system: 'Base prompt.',
      tools: [echo],
    });
    agent.systemPrompt.add({ name: 'extra', order: 5, render: () => 'Extra section.' });
    agent.prompt('go');
    await agent.whenIdle();
    const r0 = adapter.requests[0]!;
    expect(r0.system).toBe('Base prompt.\n\nExtra section.');
    expect(r0.tools!.map((t) => t.name)).toEqual(['echo']);
    expect(r0.tools![0]!.parameters).toMatchObject({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
    const r1 = adapter.requests[1]!;
    expect(r1.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(r1.messages[2]!.content[0]).toMatchObject({
      type: 'tool-result',
      toolCallId: 'a',
      content: [{ type: 'text', text: 'X' }],
      isError: false,
    });
    // The header was logged once (nothing changed between the two requests).
    expect(agent.session.events.filter((e) => e.type === 'request/header')).toHaveLength(1);
    expect(agent.session.events.filter((e) => e.type === 'request/context')).toHaveLength(1);
  });

  it('log a change header when agent/request switches the model, and resume on a new agent instance', async () => {
    const { agent, adapter } = harness([textResponse('a'), textResponse('b')]);
    agent.prompt('one');
    await agent.whenIdle();
    const off = agent.on('agent/request', async (p, next) => ({ ...(await next(p)), model: 'bigger-model', temperature: 0.2 }));
    agent.prompt('two');
    await agent.whenIdle();
    off();
    expect(adapter.requests[1]!.model).toBe('bigger-model');
    expect(adapter.requests[1]!.temperature).toBe(0.2);
    const headers = agent.session.events.filter((e) => e.type === 'request/header');
    expect(headers.map((h) => h.type === 'request/header' && [h.data.reason, h.data.header.config.model])).toEqual([
      ['initial', 'test-model'],
      ['change', 'bigger-model'],
    ]);
    const contexts = agent.session.events.filter((e) => e.type === 'request/context');
    expect(contexts).toHaveLength(2);
    const second = createAgent({
      model: 'scripted:test-model',
      adapters: new ScriptedAdapter([textResponse('c')]),
      session: agent.session,
    });
    second.prompt('three');
    await second.whenIdle();
    const last = agent.session.events.filter((e) => e.type === 'request/header').at(-1)!;
    expect(last.type === 'request/header' && last.data.reason).toBe('resume');
  });

  it('record adapter defaults with markers', async () => {
    const adapter = new ScriptedAdapter([textResponse('a')], {
      resolveCall: (config) => ({
        config: { ...config, maxTokens: config.maxTokens ?? 4096 },
        ...(config.maxTokens === undefined ? { adapterDefaults: { maxTokens: true as const } } : {}),
      }),
      modelInfo: { contextWindow: 128000 },
    });
    const agent = createAgent({ model: 'scripted:m', adapters: adapter, retry: false });
    agent.prompt('x');
    await agent.whenIdle();
    const h = agent.session.requestHeader()!;
    expect(h.config.maxTokens).toBe(4096);
    expect(h.adapterDefaults).toEqual({ maxTokens: true });
    expect(agent.session.requestContext()).toEqual({ provider: 'scripted', model: 'm', contextWindow: 128000 });
    expect(adapter.requests[0]!.maxTokens).toBe(4096);
  });

  it('fail the turn with NO_ADAPTER when nothing serves the provider', async () => {
    const agent = createAgent({ model: 'nowhere:m', retry: false });
    agent.prompt('x');
    await agent.whenIdle();
    const end = agent.session.events.at(-1)!;
    expect(end.type === 'turn/end' && end.data.reason.kind === 'error' && end.data.reason.error.code).toBe('NO_ADAPTER');
  });

  it('an llm/stream middleware can serve a route with no adapter', async () => {
    const agent = createAgent({ model: 'middleware:m', retry: false });
    agent.on('llm/stream', () =>
      (async function* () {
        yield* textResponse('from middleware');
      })(),
    );
    agent.prompt('x');
    await agent.whenIdle();
    expect(shape(agent.session.events)).toContain('assistant from middleware');
  });
});

describe('assistant messages', () => {
  it('cite exactly their chunks, and an empty reply is logged with usage but never derived', async () => {
    const empty = [
      { type: 'usage' as const, usage: { inputTokens: 7, outputTokens: 0 } },
      { type: 'finish' as const, reason: { kind: 'stop' as const } },
    ];
    const { agent, adapter } = harness([empty, textResponse('second')]);
    let steered = false;
    agent.on('agent/turn-stopping', ({ agent: a }) => {
      if (!steered) {
        steered = true;
        a.steer('go on');
      }
    });
    agent.prompt('x');
    await agent.whenIdle();
    const msgs = agent.session.events.filter((e) => e.type === 'assistant/message');
    expect(msgs).toHaveLength(2);
    const first = msgs[0]!;
    if (first.type !== 'assistant/message') throw new Error('unreachable');
    expect(first.data.message.content).toEqual([]);
    expect(first.data.usage).toEqual({ inputTokens: 7, outputTokens: 0 });
    const chunkSeqs = agent.session.events.filter((e) => e.type === 'assistant/chunk' && e.data.step === 1).map((e) => e.seq);
    expect(first.sourceEventSeqs).toEqual(chunkSeqs);
    // The model never sees the empty message.
    expect(adapter.requests[1]!.messages.filter((m) => m.role === 'assistant')).toEqual([]);
    expect(
      agent.session
        .deriveMessages()
        .toArray()
        .filter((m) => m.role === 'assistant'),
    ).toHaveLength(1);
  });
});

describe('turn-stopping', () => {
  it('a listener may steer to force another step; without it the turn ends', async () => {
    const { agent } = harness([textResponse('one'), textResponse('two')]);
    let n = 0;
    agent.on('agent/turn-stopping', ({ agent: a }) => {
      if (n++ === 0) a.steer('loop once more');
    });
    agent.prompt('start');
    await agent.whenIdle();
    expect(shape(agent.session.events)).toEqual([
      'turn/start 1',
      'step/start 1.1',
      'user start',
      'header initial',
      'assistant one',
      'step/end 1.1',
      'step/start 1.2',
      'user loop once more',
      'assistant two',
      'step/end 1.2',
      'turn/end 1 completed',
    ]);
    expect(n).toBe(2);
  });

  it('a throwing turn-stopping listener ends the turn with an error, and the agent keeps serving', async () => {
    const { agent } = harness([textResponse('one'), textResponse('two')]);
    const off = agent.on('agent/turn-stopping', () => {
      throw new Error('listener bug');
    });
    agent.prompt('a');
    await agent.whenIdle();
    off();
    agent.prompt('b');
    await agent.whenIdle();
    const ends = agent.session.events.filter((e) => e.type === 'turn/end').map((e) => e.type === 'turn/end' && e.data.reason);
    expect(ends).toEqual([{ kind: 'error', error: { code: 'UNKNOWN', message: 'listener bug' } }, { kind: 'completed' }]);
  });
});

describe('every turn is balanced', () => {
  it('even when a pre-step listener throws', async () => {
    const { agent } = harness([]);
    agent.on('agent/pre-step', () => {
      throw new Error('pre-step bug');
    });
    agent.prompt('x');
    await agent.whenIdle();
    expect(shape(agent.session.events)).toEqual(['turn/start 1', 'turn/end 1 error:UNKNOWN']);
  });

  it('even when the adapter throws mid-stream (after chunks)', async () => {
    const { agent } = harness([
      async function* () {
        yield { type: 'block-start' as const, index: 0, blockType: 'text' as const };
        yield { type: 'text-delta' as const, index: 0, text: 'par' };
        throw new Error('socket closed');
      },
    ]);
    agent.prompt('x');
    await agent.whenIdle();
    expect(shape(agent.session.events)).toEqual([
      'turn/start 1',
      'step/start 1.1',
      'user x',
      'header initial',
      'step/end 1.1',
      'turn/end 1 error:UNKNOWN',
    ]);
    // The partial chunks stay in the log.
    expect(agent.session.events.filter((e) => e.type === 'assistant/chunk').length).toBe(3);
  });
});

describe('session seam', () => {
  it('an agent on an existing session continues its turn numbers', async () => {
    const s = Session.create();
    const a1 = createAgent({ model: 'scripted:m', adapters: new ScriptedAdapter([textResponse('1')]), session: s });
    a1.prompt('x');
    await a1.whenIdle();
    const child = s.fork();
    const a2 = createAgent({ model: 'scripted:m', adapters: new ScriptedAdapter([textResponse('2')]), session: child });
    a2.prompt('y');
    await a2.whenIdle();
    expect(shape(child.events).filter((l) => l.startsWith('turn/start'))).toEqual(['turn/start 1', 'turn/start 2']);
  });
});
