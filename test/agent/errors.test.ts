/** Errors and retries (issue 3 item 5). */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { harness, shape } from './helpers.js';
import { emptyResponse, errorResponse, textResponse, toolCallResponse } from '../../src/llm/scripted.js';
import { backoffDelay, retriesInStep } from '../../src/agent/retry.js';
import { createAgent } from '../../src/create-agent.js';
import { ScriptedAdapter } from '../../src/llm/scripted.js';
import { LlmError } from '../../src/model/failure.js';

describe('default retry policy', () => {
  it('retries a retryable failure in the same step, logging each retry, and rebuilds the request from the log', async () => {
    const sleeps: number[] = [];
    const { agent, adapter } = harness(
      [errorResponse({ code: 'SERVER', message: '503', status: 503 }), emptyResponse(), textResponse('recovered')],
      {
        retry: { sleep: async (ms) => void sleeps.push(ms), random: () => 0.5 },
      },
    );
    agent.prompt('x');
    await agent.whenIdle();
    expect(shape(agent.session.events)).toEqual([
      'turn/start 1',
      'step/start 1.1',
      'user x',
      'header initial',
      'retry 1 SERVER 500ms',
      'retry 2 EMPTY_RESPONSE 1000ms',
      'assistant recovered',
      'step/end 1.1',
      'turn/end 1 completed',
    ]);
    expect(sleeps).toEqual([500, 1000]);
    expect(adapter.requests).toHaveLength(3);
    expect(adapter.requests[2]!.messages).toEqual(adapter.requests[0]!.messages);
    // The successful message cites only its own chunks; the failed attempts' finish chunks stay logged.
    const msg = agent.session.events.find((e) => e.type === 'assistant/message')!;
    const retryStarted = agent.session.events.filter((e) => e.type === 'llm/retry-started').at(-1)!;
    expect(msg.sourceEventSeqs!.every((s) => s > retryStarted.seq)).toBe(true);
    expect(agent.session.events.filter((e) => e.type === 'assistant/chunk' && e.data.chunk.type === 'finish')).toHaveLength(3);
  });

  it('gives up after 5 retries and ends the turn with the last failure', async () => {
    const fail = errorResponse({ code: 'RATE_LIMIT', message: 'slow down', status: 429 });
    const { agent } = harness([fail, fail, fail, fail, fail, fail, textResponse('unused')]);
    agent.prompt('x');
    await agent.whenIdle();
    expect(
      shape(agent.session.events)
        .filter((l) => l.startsWith('retry'))
        .map((l) => l.split(' ')[1]),
    ).toEqual(['1', '2', '3', '4', '5']);
    expect(shape(agent.session.events).at(-1)).toBe('turn/end 1 error:RATE_LIMIT');
  });

  it('honours a provider retry-after within the cap, and ignores one beyond it', async () => {
    const sleeps: number[] = [];
    const { agent } = harness(
      [
        errorResponse({ code: 'RATE_LIMIT', message: 'wait', providerRetryAfterMs: 2500 }),
        errorResponse({ code: 'RATE_LIMIT', message: 'wait long', providerRetryAfterMs: 60_000 }),
        textResponse('ok'),
      ],
      { retry: { sleep: async (ms) => void sleeps.push(ms), random: () => 0.5 } },
    );
    agent.prompt('x');
    await agent.whenIdle();
    expect(sleeps).toEqual([2500, 1000]);
  });

  it('does not retry non-retryable codes', async () => {
    const { agent, adapter } = harness([
      errorResponse({ code: 'CONTEXT_WINDOW_EXCEEDED', message: 'too long', status: 400 }),
      textResponse('unused'),
    ]);
    agent.prompt('x');
    await agent.whenIdle();
    expect(adapter.requests).toHaveLength(1);
    expect(shape(agent.session.events).at(-1)).toBe('turn/end 1 error:CONTEXT_WINDOW_EXCEEDED');
  });

  it('cancellation wins over a pending retry wait', async () => {
    const { agent } = harness([errorResponse({ code: 'SERVER', message: 'x' }), textResponse('unused')], {
      retry: {
        sleep: (_ms, signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error))),
        random: () => 0.5,
      },
    });
    agent.prompt('x');
    await new Promise((r) => setTimeout(r, 10));
    agent.cancel();
    await agent.whenIdle();
    expect(shape(agent.session.events).slice(-2)).toEqual(['step/end 1.1', 'turn/end 1 aborted:user']);
    expect(agent.session.events.some((e) => e.type === 'llm/retry-started')).toBe(false);
  });

  it('backoff doubles from 0.5 s, caps at 10 s, with ±10% jitter', () => {
    const t = { initialDelayMs: 500, maxDelayMs: 10_000, jitterRatio: 0.1 };
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => backoffDelay(n, t, () => 0.5))).toEqual([500, 1000, 2000, 4000, 8000, 10000, 10000]);
    expect(backoffDelay(1, t, () => 0)).toBe(450);
    expect(backoffDelay(1, t, () => 0.999999)).toBe(550);
  });

  it('counts retries from the log, so a resumed step continues counting', async () => {
    const { agent } = harness([errorResponse({ code: 'SERVER', message: 'x' }), textResponse('ok')]);
    agent.prompt('x');
    await agent.whenIdle();
    expect(retriesInStep(agent.session, 1, 1)).toBe(1);
    expect(retriesInStep(agent.session, 1, 2)).toBe(0);
  });
});

describe('request-error waterfall', () => {
  it('a listener can retry any failure, and sees the normalised failure', async () => {
    const seen: string[] = [];
    const { agent } = harness([errorResponse({ code: 'INVALID_REQUEST', message: 'bad' }), textResponse('ok')], { retry: false });
    agent.on('agent/request-error', (p) => {
      seen.push(p.failure.code);
      return seen.length === 1 ? { kind: 'retry' } : undefined;
    });
    agent.prompt('x');
    await agent.whenIdle();
    expect(seen).toEqual(['INVALID_REQUEST']);
    expect(shape(agent.session.events).at(-1)).toBe('turn/end 1 completed');
  });

  it('an adapter that throws (instead of an error finish) takes the same path', async () => {
    const { agent } = harness([{ throw: { code: 'TRANSPORT', message: 'ECONNREFUSED' } }, textResponse('ok')]);
    agent.prompt('x');
    await agent.whenIdle();
    expect(shape(agent.session.events).filter((l) => l.startsWith('retry'))).toEqual(['retry 1 TRANSPORT 500ms']);
    expect(shape(agent.session.events).at(-1)).toBe('turn/end 1 completed');
  });

  it('a non-LlmError throw becomes code UNKNOWN with the message chain', async () => {
    const { agent } = harness([{ throw: new Error('kaboom', { cause: new Error('root cause') }) }]);
    agent.prompt('x');
    await agent.whenIdle();
    const end = agent.session.events.at(-1)!;
    expect(end.type === 'turn/end' && end.data.reason.kind === 'error' && end.data.reason.error.code).toBe('UNKNOWN');
    expect(end.type === 'turn/end' && end.data.reason.kind === 'error' && end.data.reason.error.message).toContain('root cause');
  });
});

describe('failures never kill the agent', () => {
  it('a throwing tool becomes an error result and the step continues', async () => {
    const bad = {
      name: 'bad',
      description: 'throws',
      parameters: z.object({}),
      execute: () => {
        throw new Error('tool bug');
      },
    };
    const { agent, adapter } = harness([toolCallResponse([{ id: 't', name: 'bad', args: {} }]), textResponse('handled')], { tools: [bad] });
    agent.prompt('x');
    await agent.whenIdle();
    expect(shape(agent.session.events)).toContain('tool/result t TOOL_FAILED');
    const block = adapter.requests[1]!.messages[2]!.content[0]!;
    expect(block.type === 'tool-result' && block.isError).toBe(true);
    expect(JSON.stringify(block)).toContain('tool bug');
    expect(shape(agent.session.events).at(-1)).toBe('turn/end 1 completed');
  });

  it('a throwing agent/request listener ends that turn with an error; the next turn runs', async () => {
    const { agent, errors } = harness([textResponse('second')]);
    let first = true;
    agent.on('agent/request', (p, next) => {
      if (first) {
        first = false;
        throw new LlmError({ code: 'QUOTA', message: 'budget exhausted' });
      }
      return next(p);
    });
    agent.prompt('a');
    agent.followup('b');
    await agent.whenIdle();
    expect(shape(agent.session.events).filter((l) => l.startsWith('turn/end'))).toEqual(['turn/end 1 error:QUOTA', 'turn/end 2 completed']);
    expect(errors).toHaveLength(1);
  });

  it('a throwing session subscriber does not stop the loop', async () => {
    const adapter = new ScriptedAdapter([textResponse('fine')]);
    const agent = createAgent({ model: 'scripted:m', adapters: adapter });
    const errs: unknown[] = [];
    const session = agent.session;
    (session as unknown as { onListenerError: (e: unknown) => void }).onListenerError = (e) => void errs.push(e);
    session.subscribe(() => {
      throw new Error('observer bug');
    });
    agent.prompt('x');
    await agent.whenIdle();
    expect(shape(session.events).at(-1)).toBe('turn/end 1 completed');
    expect(errs.length).toBeGreaterThan(5);
  });
});
