/**
 * Provider faults end to end (issue 4 item 5): the real SDK-based adapters talk to a fake
 * provider on 127.0.0.1 that injects each named fault in the middle of a tool-using turn. Every
 * run must yield the documented failure code, the retry policy's behaviour, a balanced log (every
 * turn closed, every tool call answered) and no lost events (what streamed before the fault stays
 * in the log, and the log round-trips through JSONL unchanged).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../../src/create-agent.js';
import { DEFAULT_RETRYABLE_CODES } from '../../src/agent/retry.js';
import { DeepSeekAdapter } from '../../src/llm/deepseek.js';
import { AnthropicAdapter } from '../../src/llm/anthropic.js';
import type { LlmAdapter } from '../../src/llm/adapter.js';
import { encodeJsonl, loadJsonl } from '../../src/session/index.js';
import { startFakeProvider, type FakeProvider, type FakeResponse } from '../support/fake-provider.js';
import { FAULT_CODES, FAULT_NAMES, fault, streamFor, type Flavor } from '../support/faults.js';

// Long enough that a loaded CI machine never mistakes slow processing for a stall.
const IDLE_MS = 1000;
let server: FakeProvider | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function adapterFor(flavor: Flavor, url: string): LlmAdapter {
  return flavor === 'openai'
    ? new DeepSeekAdapter({ apiKey: 'sk-test', baseUrl: url, streamIdleTimeoutMs: IDLE_MS })
    : new AnthropicAdapter({ apiKey: 'sk-ant-test', baseUrl: url, streamIdleTimeoutMs: IDLE_MS });
}
const modelFor = (flavor: Flavor): string => (flavor === 'openai' ? 'deepseek:deepseek-chat' : 'anthropic:claude-haiku-4-5');

const lookup = {
  name: 'lookup',
  description: 'Look a word up.',
  parameters: z.object({ word: z.string() }),
  execute: (a: { word: string }) => `${a.word}: a greeting`,
};

for (const flavor of ['openai', 'anthropic'] as const) {
  describe(`provider faults through the agent loop (${flavor} wire)`, () => {
    for (const name of FAULT_NAMES) {
      const code = FAULT_CODES[name];
      const retryable = code !== undefined && (DEFAULT_RETRYABLE_CODES as readonly string[]).includes(code);
      it(`${name}: ${code ?? 'no failure'}${code ? (retryable ? ', retried' : ', ends the turn') : ''}`, async () => {
        const toolStep: FakeResponse = {
          sse: streamFor(flavor, {
            text: ['Let me check.'],
            toolCalls: [{ id: 'call_1', name: 'lookup', args: ['{"word":', '"hello"}'] }],
          }),
        };
        const recovery: FakeResponse = { sse: streamFor(flavor, { text: ['It is ', 'a greeting.'] }) };
        server = await startFakeProvider({ script: [toolStep, fault(name, flavor), recovery] });
        const sleeps: number[] = [];
        const agent = createAgent({
          model: modelFor(flavor),
          adapters: adapterFor(flavor, server.url),
          tools: [lookup],
          retry: { sleep: async (ms) => void sleeps.push(ms), random: () => 0.5 },
        });
        agent.prompt('What does hello mean?');
        await agent.whenIdle();
        const events = agent.session.events;

        // The documented failure code, and the policy's behaviour.
        const retries = events.filter((e) => e.type === 'llm/retry');
        const end = events.filter((e) => e.type === 'turn/end').at(-1)!;
        if (end.type !== 'turn/end') throw new Error('unreachable');
        if (code === undefined) {
          expect(retries).toHaveLength(0);
          expect(end.data.reason).toEqual({ kind: 'completed' });
          expect(server.requests).toHaveLength(2);
        } else if (retryable) {
          expect(retries.map((r) => r.type === 'llm/retry' && r.data.failure.code)).toEqual([code]);
          // A 429 with Retry-After: 7 waits 7 s; everything else starts the backoff at 0.5 s.
          expect(sleeps).toEqual([name === 'rate-limit' ? 7000 : 500]);
          expect(end.data.reason).toEqual({ kind: 'completed' });
          expect(server.requests).toHaveLength(3);
        } else {
          expect(retries).toHaveLength(0);
          expect(end.data.reason.kind === 'error' && end.data.reason.error.code).toBe(code);
          expect(server.requests).toHaveLength(2);
        }

        // Balanced: every turn closed, every step closed, every tool call answered.
        const count = (t: string): number => events.filter((e) => e.type === t).length;
        expect(count('turn/start')).toBe(count('turn/end'));
        expect(count('step/start')).toBe(count('step/end'));
        expect(count('tool/call')).toBe(1);
        expect(count('tool/result')).toBe(1);

        // No lost events: whatever the faulting attempt streamed before the fault is logged, ending
        // in its finish chunk; and the whole log survives a JSONL round trip exactly.
        const step2 = events.filter((e) => e.type === 'assistant/chunk' && e.data.step === 2);
        const finishes = step2.filter((e) => e.type === 'assistant/chunk' && e.data.chunk.type === 'finish');
        expect(finishes.length).toBe(code !== undefined && retryable ? 2 : 1);
        if (name === 'reset-mid-stream' || name === 'stall-mid-stream' || name === 'malformed-json') {
          const firstFinish = step2.indexOf(finishes[0]!);
          const before = step2.slice(0, firstFinish).filter((e) => e.type === 'assistant/chunk' && e.data.chunk.type === 'text-delta');
          expect(before.length).toBeGreaterThan(0);
        }
        const reloaded = loadJsonl(encodeJsonl(agent.session.header, events)).session;
        expect(reloaded.events.slice(0, events.length)).toEqual(events);
        expect(reloaded.deriveMessages().toArray()).toEqual(agent.session.deriveMessages().toArray());
      });
    }
  });
}
