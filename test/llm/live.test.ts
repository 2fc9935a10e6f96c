/**
 * Opt-in: talks to the real DeepSeek API when DEEPSEEK_API_KEY is set (DEEPSEEK_BASE_URL and
 * DSH_LIVE_MODEL are honoured), and is skipped with a message otherwise. It checks what recordings
 * cannot: that DeepSeek accepts the requests we build, including a thinking-mode tool-call turn
 * sent back with its reasoning_content.
 */
import { describe, expect, it } from 'vitest';
import { selectModel } from '../../src/llm/select.js';
import type { ToolResultMessage } from '../../src/model/message.js';
import type { ToolSchema } from '../../src/model/request.js';
import { assistantFrom, request, runAttempt, userMessage } from '../support/llm-run.js';

const key = process.env['DEEPSEEK_API_KEY'];
const model = process.env['DSH_LIVE_MODEL'] ?? 'deepseek:deepseek-v4-flash';

const weather: ToolSchema = {
  name: 'get_weather',
  description: 'Current weather for a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

if (!key && !process.env['DSH_QUIET_SKIPS']) console.warn('[dsh tests] skipping the live DeepSeek test: DEEPSEEK_API_KEY is not set');

describe.skipIf(!key)(`live DeepSeek (${model})${key ? '' : ' (skipped: DEEPSEEK_API_KEY is not set)'}`, () => {
  const { ref, adapter } = key ? selectModel({ model }) : { ref: { provider: 'deepseek', model: '' }, adapter: undefined };

  it('answers a short prompt with thinking off', { timeout: 120_000 }, async () => {
    const r = await runAttempt(
      adapter!,
      request(ref.provider, ref.model, {
        messages: [userMessage('Reply with exactly the word OK.')],
        reasoningEffort: 'off',
        sessionId: 'dsh-live-test',
      }),
    );
    expect(r.finish.reason).toEqual({ kind: 'stop' });
    expect(r.blocks.some((b) => b.type === 'text' && /OK/.test(b.text))).toBe(true);
    expect(r.usage?.inputTokens ?? 0).toBeGreaterThan(0);
  });

  it('accepts a thinking tool-call turn sent back with its reasoning', { timeout: 180_000 }, async () => {
    const ask = userMessage('What is the weather in Paris? Use the get_weather tool.');
    const first = await runAttempt(
      adapter!,
      request(ref.provider, ref.model, { messages: [ask], tools: [weather], reasoningEffort: 'low' }),
    );
    expect(first.finish.reason).toEqual({ kind: 'tool-calls' });
    const call = first.blocks.find((b) => b.type === 'tool-call');
    if (call?.type !== 'tool-call') throw new Error('the model did not call the tool');
    const result: ToolResultMessage = {
      id: 'live-result',
      role: 'user',
      content: [{ type: 'tool-result', toolCallId: call.id, content: [{ type: 'text', text: 'Sunny, 21°C' }] }],
      source: { kind: 'tool', callId: call.id },
    };
    const second = await runAttempt(
      adapter!,
      request(ref.provider, ref.model, {
        messages: [ask, assistantFrom(first, ref.provider, ref.model), result],
        tools: [weather],
        reasoningEffort: 'low',
      }),
    );
    expect(second.finish.reason).toEqual({ kind: 'stop' });
    expect(second.blocks.some((b) => b.type === 'text' && /21/.test(b.text))).toBe(true);
  });
});
