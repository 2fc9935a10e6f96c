/**
 * Overflow recovery end to end: the real DeepSeek adapter against the fake provider on
 * 127.0.0.1. The provider refuses a request with its 400 context-length error; compaction
 * summarises (one more request, marked as a compaction call), and the step is retried once, on
 * the smaller history. The same shape as the real dsh log headless-agent__compaction-recovery.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../../src/create-agent.js';
import { DeepSeekAdapter } from '../../src/llm/deepseek.js';
import { encodeJsonl, loadJsonl } from '../../src/session/index.js';
import { compaction } from '../../src/compaction/index.js';
import { startFakeProvider, type FakeProvider, type FakeResponse } from '../support/fake-provider.js';
import { chatStream, fault } from '../support/faults.js';
import { ofType } from './helpers.js';

let server: FakeProvider | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const PREMISE =
  `Establish the premise before continuing: ${'every fact in this paragraph matters to the task and must be kept. '.repeat(12)}` +
  'Then look the word up and answer in one line.';
const SUMMARY = 'The user set a long premise and asked to look a word up.';

const lookup = {
  name: 'lookup',
  description: 'Look a word up.',
  parameters: z.object({ word: z.string() }),
  execute: (a: { word: string }) => `${a.word}: a greeting`,
};

interface Body {
  messages: { role: string; content: unknown; tool_calls?: unknown }[];
  max_tokens?: number;
}
const body = (n: number): Body => server!.requests[n]!.body as Body;
const texts = (b: Body): string => JSON.stringify(b.messages);

async function runWith(script: FakeResponse[]) {
  server = await startFakeProvider({ script });
  const agent = createAgent({
    model: 'deepseek:deepseek-chat',
    adapters: new DeepSeekAdapter({ apiKey: 'sk-test', baseUrl: server.url }),
    tools: [lookup],
    system: 'You are terse.',
    retry: { sleep: async () => undefined, random: () => 0.5 },
    plugins: [compaction()],
  });
  agent.prompt(PREMISE);
  await agent.whenIdle();
  return agent;
}

const toolStep: FakeResponse = { sse: chatStream({ toolCalls: [{ id: 'call_1', name: 'lookup', args: ['{"word":', '"hello"}'] }] }) };
const summaryReply: FakeResponse = { sse: chatStream({ text: [SUMMARY] }) };
const answer: FakeResponse = { sse: chatStream({ text: ['RECOVERED'] }) };

describe('context overflow', () => {
  it('a 400 context-length error, a compaction, then exactly one retry that succeeds', async () => {
    const agent = await runWith([toolStep, fault('context-overflow'), summaryReply, answer]);
    const events = agent.session.events;
    expect(ofType(events, 'turn/end').map((e) => e.data.reason)).toEqual([{ kind: 'completed' }]);
    expect(server!.requests).toHaveLength(4);
    expect(ofType(events, 'llm/retry')).toEqual([]);

    // Step 2 holds the failed attempt (finish CONTEXT_WINDOW_EXCEEDED), the bracket, then the retry.
    const step2 = events.filter((e) => e.seq > ofType(events, 'step/start')[1]!.seq);
    expect(
      step2
        .map((e) =>
          e.type === 'assistant/chunk' ? (e.data.chunk.type === 'finish' ? `finish:${e.data.chunk.reason.kind}` : 'chunk') : e.type,
        )
        .filter((t, i, a) => t !== 'chunk' || a[i - 1] !== 'chunk'),
    ).toEqual([
      'finish:error',
      'compaction/start',
      'compaction/summary',
      'user/message',
      'compaction/end',
      'chunk',
      'finish:stop',
      'assistant/message',
      'step/end',
      'turn/end',
    ]);
    const finishes = step2.filter((e) => e.type === 'assistant/chunk' && e.data.chunk.type === 'finish');
    const first = finishes[0]!;
    expect(
      first.type === 'assistant/chunk' &&
        first.data.chunk.type === 'finish' &&
        first.data.chunk.reason.kind === 'error' &&
        first.data.chunk.reason.failure.code,
    ).toBe('CONTEXT_WINDOW_EXCEEDED');
    const start = ofType(events, 'compaction/start')[0]!;
    expect(start.data.turn).toBe(1);

    // The span is the premise alone: the call and its result are the newest unit and stay.
    const prompt = ofType(events, 'user/message')[0]!;
    const summary = ofType(events, 'compaction/summary')[0]!;
    expect(summary.data.shadowedSeqs).toEqual([prompt.seq]);
    expect(summary.data).toMatchObject({
      provider: 'deepseek',
      model: 'deepseek-chat',
      maxTokens: 8192,
      summary: [{ type: 'text', text: SUMMARY }],
      llmStreamCall: true,
      usage: { inputTokens: 10, outputTokens: 5 },
    });

    // Request 3 is the summariser's: marked, capped, the premise then the instruction.
    const summarising = server!.requests[2]!;
    expect(summarising.headers['x-deepseek-harness-compact']).toBe('1');
    expect(server!.requests[1]!.headers['x-deepseek-harness-compact']).toBeUndefined();
    expect(body(2).max_tokens).toBe(8192);
    expect(body(2).messages.map((m) => m.role)).toEqual(['system', 'user', 'user']);
    expect(texts(body(2))).toContain('Establish the premise');

    // Request 4, the retry: the checkpoint instead of the premise, the call and result verbatim.
    const retried = body(3);
    expect(retried.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    // The chat-completions wire joins a message's text blocks with blank lines.
    expect(texts(retried)).toContain(JSON.stringify(`<compacted-summary>\n\n${SUMMARY}\n\n</compacted-summary>`).slice(1, -1));
    expect(texts(retried)).not.toContain('Establish the premise');
    expect(JSON.stringify(retried.messages[2])).toContain('call_1');
    expect(JSON.stringify(body(1).messages.slice(1))).toContain('Establish the premise');
    expect(JSON.stringify(retried).length).toBeLessThan(JSON.stringify(body(1)).length);

    const reloaded = loadJsonl(encodeJsonl(agent.session.header, events)).session;
    expect(reloaded.deriveMessages().toArray()).toEqual(agent.session.deriveMessages().toArray());
  });

  it('overflowing again after the compaction ends the turn with the provider failure: one retry only', async () => {
    const agent = await runWith([toolStep, fault('context-overflow'), summaryReply, fault('context-overflow'), answer]);
    const end = ofType(agent.session.events, 'turn/end')[0]!;
    expect(end.data.reason.kind === 'error' && end.data.reason.error.code).toBe('CONTEXT_WINDOW_EXCEEDED');
    expect(server!.requests).toHaveLength(4);
    expect(ofType(agent.session.events, 'compaction/end')).toHaveLength(1);
  });

  it('a failing summariser leaves the history alone and the original failure ends the turn', async () => {
    const agent = await runWith([toolStep, fault('context-overflow'), fault('server-500'), answer]);
    const events = agent.session.events;
    const end = ofType(events, 'turn/end')[0]!;
    expect(end.data.reason.kind === 'error' && end.data.reason.error.code).toBe('CONTEXT_WINDOW_EXCEEDED');
    expect(server!.requests).toHaveLength(3);
    expect(ofType(events, 'compaction/end')[0]!.data.error).toMatch(/^SUMMARY_FAILED: .* \[SERVER\]$/);
    expect(ofType(events, 'compaction/summary')).toEqual([]);
    expect(agent.session.surface.replaceGeneration).toBe(0);
  });
});
