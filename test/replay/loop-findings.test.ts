/**
 * What replaying real dsh logs showed about the loop below the harness: each test states the
 * recorded behaviour the loop must reproduce.
 */
import { describe, expect, it } from 'vitest';
import { createAgent } from '../../src/create-agent.js';
import { ScriptedAdapter } from '../../src/llm/scripted.js';
import type { StreamChunk } from '../../src/model/stream.js';

/**
 * The stream dsh recorded in acp-agent__max-tokens-continue.jsonl (turn 1): the output cap cut a
 * tool call mid-arguments, so its block was never closed, and the finish says `max-tokens`.
 */
const truncatedAtMaxTokens: StreamChunk[] = [
  { type: 'block-start', index: 0, blockType: 'text' },
  { type: 'text-delta', index: 0, text: 'Starting the write now.' },
  { type: 'block-end', index: 0, block: { type: 'text', text: 'Starting the write now.' } },
  { type: 'block-start', index: 1, blockType: 'tool-call' },
  { type: 'tool-call-delta', index: 1, id: 'call-cut', name: 'bash', argumentsDelta: '{"command":"echo demo > ' },
  { type: 'usage', usage: { inputTokens: 2864, outputTokens: 12 } },
  { type: 'finish', reason: { kind: 'max-tokens' } },
];

describe('loop findings from the real-log replay', () => {
  // The loop's stream check accepts open blocks at a max-tokens finish (the cap cut a tool call),
  // as dsh does: the turn ends max-tokens, the cut call is dropped, and the logged chunks are
  // exactly what the provider sent. (Found by replaying acp-agent__max-tokens-continue.jsonl.)
  it('a max-tokens finish with a truncated, still-open tool call ends the turn max-tokens and drops the call', async () => {
    const agent = createAgent({ model: 'scripted:m', adapters: new ScriptedAdapter([truncatedAtMaxTokens]), retry: false });
    agent.prompt('write it');
    await agent.whenIdle();
    const events = agent.session.events;
    const chunks = events.flatMap((e) => (e.type === 'assistant/chunk' ? [e.data.chunk] : []));
    expect(chunks).toEqual(truncatedAtMaxTokens);
    const message = events.find((e) => e.type === 'assistant/message');
    expect(message?.type === 'assistant/message' && message.data.message.content).toEqual([
      { type: 'text', text: 'Starting the write now.' },
    ]);
    expect(events.some((e) => e.type === 'tool/call')).toBe(false);
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: { kind: 'max-tokens' } } });
  });
});
