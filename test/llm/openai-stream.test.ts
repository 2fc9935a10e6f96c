/**
 * Chat-completions quirks that no recorded fixture shows, fed straight to the translator (the
 * recorded ones run through the SDK in the fixture tests).
 */
import { describe, expect, it } from 'vitest';
import { checkStream } from '../../src/llm/grammar.js';
import { ChatCompletionTranslator } from '../../src/llm/openai-stream.js';
import type { StreamChunk } from '../../src/model/stream.js';

const choice = (delta: Record<string, unknown>, finish: string | null = null, index = 0) => ({
  choices: [{ index, delta, finish_reason: finish }],
});

function run(payloads: unknown[]): StreamChunk[] {
  let n = 0;
  const t = new ChatCompletionTranslator('test', () => `synthetic_${n++}`);
  const out = [...payloads.flatMap((p) => t.push(p)), ...t.end()];
  checkStream(out);
  return out;
}
const blocks = (chunks: StreamChunk[]) => chunks.flatMap((c) => (c.type === 'block-end' ? [c.block] : []));

describe('ChatCompletionTranslator', () => {
  it("keeps the response's id and model (the first non-empty ones) in the finish chunk, and none on an error finish", () => {
    const ok = run([
      { id: '', model: '', ...choice({ content: 'hi' }) },
      { id: 'resp-1', model: 'deepseek-v4-flash', ...choice({}, 'stop') },
      { id: 'resp-2', model: 'other', choices: [] },
    ]);
    expect(ok.at(-1)).toEqual({
      type: 'finish',
      reason: { kind: 'stop' },
      replayState: { response: { api: 'chat-completions', provider: 'test', id: 'resp-1', model: 'deepseek-v4-flash' } },
    });
    const anonymous = run([choice({ content: 'hi' }, 'stop')]);
    expect(anonymous.at(-1)).toEqual({ type: 'finish', reason: { kind: 'stop' } });
    const cut = run([{ id: 'resp-3', model: 'm', ...choice({ content: 'hi' }) }]);
    expect(cut.at(-1)).toMatchObject({ type: 'finish', reason: { kind: 'error' } });
    expect(cut.at(-1)).not.toHaveProperty('replayState');
  });

  it('starts a new call when a known index arrives with a different id (gateways that reuse index 0)', () => {
    const out = run([
      choice({ tool_calls: [{ index: 0, id: 'a', function: { name: 'ls', arguments: '{}' } }] }),
      choice({ tool_calls: [{ index: 0, id: 'b', function: { name: 'pwd', arguments: '{}' } }] }),
      choice({}, 'tool_calls'),
    ]);
    expect(blocks(out)).toEqual([
      { type: 'tool-call', id: 'a', name: 'ls', arguments: '{}' },
      { type: 'tool-call', id: 'b', name: 'pwd', arguments: '{}' },
    ]);
  });

  it('holds argument fragments until the name is known, then sends them with the first delta', () => {
    const out = run([
      choice({ tool_calls: [{ index: 0, id: 'a', function: { arguments: '{"x"' } }] }),
      choice({ tool_calls: [{ index: 0, function: { name: 'grep', arguments: ':1}' } }] }),
      choice({}, 'tool_calls'),
    ]);
    const deltas = out.filter((c) => c.type === 'tool-call-delta');
    expect(deltas).toEqual([{ type: 'tool-call-delta', index: 0, id: 'a', name: 'grep', argumentsDelta: '{"x":1}' }]);
  });

  it('gives a fresh id to a call whose id an earlier call of the response has; its repeated id in later deltas continues it', () => {
    const out = run([
      choice({ tool_calls: [{ index: 0, id: 'dup', function: { name: 'read', arguments: '{"p":' } }] }),
      choice({ tool_calls: [{ index: 0, id: 'dup', function: { arguments: '1}' } }] }),
      choice({ tool_calls: [{ index: 1, id: 'dup', function: { name: 'glob', arguments: '{"q"' } }] }),
      choice({ tool_calls: [{ index: 1, id: 'dup', function: { arguments: ':2}' } }] }),
      choice({}, 'tool_calls'),
    ]);
    expect(blocks(out)).toEqual([
      { type: 'tool-call', id: 'dup', name: 'read', arguments: '{"p":1}' },
      { type: 'tool-call', id: 'synthetic_0', name: 'glob', arguments: '{"q":2}' },
    ]);
    // The deltas carry the id that is recorded, so the log's chunks and message agree.
    expect(out.filter((c) => c.type === 'tool-call-delta').map((c) => (c as { id: string }).id)).toEqual([
      'dup',
      'dup',
      'synthetic_0',
      'synthetic_0',
    ]);
  });

  it('invents an id for a call that never gets one', () => {
    const out = run([choice({ tool_calls: [{ index: 0, function: { name: 'ls', arguments: '' } }] }), choice({}, 'tool_calls')]);
    expect(blocks(out)).toEqual([{ type: 'tool-call', id: 'synthetic_0', name: 'ls', arguments: '' }]);
  });

  it('reads reasoning from `reasoning` as well as `reasoning_content`, and opens a new block when kinds alternate', () => {
    const out = run([
      choice({ reasoning: 'think ' }),
      choice({ content: 'say ' }),
      choice({ reasoning_content: 'more' }),
      choice({ content: 'done' }, 'stop'),
    ]);
    expect(blocks(out)).toEqual([
      { type: 'reasoning', text: 'think ' },
      { type: 'text', text: 'say ' },
      { type: 'reasoning', text: 'more' },
      { type: 'text', text: 'done' },
    ]);
  });

  it('ignores choices other than the first', () => {
    const out = run([choice({ content: 'one' }), choice({ content: 'two' }, null, 1), choice({}, 'stop')]);
    expect(blocks(out)).toEqual([{ type: 'text', text: 'one' }]);
  });

  it('ignores non-object payloads and explicit nulls', () => {
    const out = run([
      null,
      'x',
      { choices: null, usage: null },
      choice({ content: null, reasoning_content: null, tool_calls: null }),
      choice({ content: 'ok' }, 'stop'),
    ]);
    expect(blocks(out)).toEqual([{ type: 'text', text: 'ok' }]);
  });

  it('reports EMPTY_RESPONSE for a stop with nothing in it', () => {
    const out = run([choice({ role: 'assistant', content: '' }), choice({ content: '' }, 'stop')]);
    expect(out).toEqual([
      {
        type: 'finish',
        reason: { kind: 'error', failure: { code: 'EMPTY_RESPONSE', message: 'model returned a completed response with no content' } },
      },
    ]);
  });
});
