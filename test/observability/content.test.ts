/**
 * Content capture (off unless asked, capped when on) and the redaction hook.
 */
import { describe, expect, it } from 'vitest';
import { mapSession, OtelExportError, type DshSpan, type RedactionField } from '../../src/observability/index.js';
import { assistant, clockedSession, header, toolResult, user } from './support/build.js';
import { twoStepTurn, SESSION } from './support/reference.js';

const CONTENT_KEYS = [
  'gen_ai.input.messages',
  'gen_ai.output.messages',
  'gen_ai.system_instructions',
  'gen_ai.tool.call.arguments',
  'gen_ai.tool.call.result',
];

function reference() {
  const c = clockedSession(SESSION);
  twoStepTurn(c);
  return c.session;
}

const byName = (spans: DshSpan[], name: string): DshSpan[] => spans.filter((s) => s.name === name);

describe('content capture', () => {
  it('is off by default: no prompt, completion, system prompt, tool argument or result anywhere in the spans', () => {
    const spans = mapSession(reference()).spans;
    const text = JSON.stringify(spans);
    for (const secret of ['List the files', 'Two files.', 'Be brief.', '{\\"path\\":\\".\\"}', 'a.txt']) expect(text).not.toContain(secret);
    for (const s of spans) for (const k of CONTENT_KEYS) expect(s.attributes[k]).toBeUndefined();
  });

  it('when asked, exports messages in the GenAI shape: what each call saw and returned, tool arguments and results', () => {
    const spans = mapSession(reference(), { content: 'full' }).spans;
    const [turn] = spans;
    const [chat1, chat2] = byName(spans, 'chat deepseek-chat');
    const [tool] = byName(spans, 'execute_tool ls');
    expect(JSON.parse(turn!.attributes['gen_ai.input.messages'] as string)).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'List the files' }] },
    ]);
    expect(JSON.parse(turn!.attributes['gen_ai.output.messages'] as string)).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'Two files.' }] },
    ]);
    expect(JSON.parse(chat1!.attributes['gen_ai.system_instructions'] as string)).toEqual([{ type: 'text', content: 'Be brief.' }]);
    expect(JSON.parse(chat1!.attributes['gen_ai.input.messages'] as string)).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'List the files' }] },
    ]);
    expect(JSON.parse(chat1!.attributes['gen_ai.output.messages'] as string)).toEqual([
      {
        role: 'assistant',
        parts: [{ type: 'tool_call', id: 'call_1', name: 'ls', arguments: '{"path":"."}' }],
        finish_reason: 'tool_call',
      },
    ]);
    // The second call saw the whole history: prompt, the tool call, its result.
    expect(JSON.parse(chat2!.attributes['gen_ai.input.messages'] as string)).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'List the files' }] },
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'call_1', name: 'ls', arguments: '{"path":"."}' }] },
      { role: 'tool', parts: [{ type: 'tool_call_response', id: 'call_1', response: 'a.txt\nb.txt' }] },
    ]);
    expect(tool!.attributes['gen_ai.tool.call.arguments']).toBe('{"path":"."}');
    expect(tool!.attributes['gen_ai.tool.call.result']).toBe('a.txt\nb.txt');
    expect(spans.some((s) => 'dsh.truncated' in s.attributes)).toBe(false);
  });

  it('caps each attribute: plain text cut with a marker, message lists kept valid JSON with the newest messages', () => {
    const c = clockedSession('sess-cap');
    const big = 'x'.repeat(5000);
    c.at(1).append('turn/start', { turn: 1 });
    c.at(2).append('step/start', { turn: 1, step: 1 });
    for (let i = 0; i < 30; i++) c.at(3).append('user/message', user(`note ${i}: ${'y'.repeat(200)}`), { surfaceOp: 'append' });
    c.at(3).append('user/message', user('the newest prompt'), { surfaceOp: 'append' });
    c.at(4).append('request/header', header({ provider: 'deepseek', model: 'm' }));
    const call = { type: 'tool-call' as const, id: 'k', name: 'dump', arguments: JSON.stringify({ data: big }) };
    c.at(5).append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'finish', reason: { kind: 'tool-calls' } } });
    const seqMsg = c.session.length;
    c.at(6).append(
      'assistant/message',
      { turn: 1, step: 1, message: assistant([call], 'm') },
      { surfaceOp: 'append', sourceEventSeqs: [seqMsg - 1] },
    );
    c.at(7).append('tool/call', { turn: 1, step: 1, callId: 'k', name: 'dump', arguments: call.arguments });
    c.at(8).append(
      'tool/result',
      { turn: 1, step: 1, message: toolResult('k', big) },
      { surfaceOp: 'append', sourceEventSeqs: [seqMsg + 1] },
    );
    c.at(9).append('step/end', { turn: 1, step: 1 });
    c.at(9).append('turn/end', { turn: 1, reason: { kind: 'completed' } });

    const cap = 1000;
    const spans = mapSession(c.session, { content: 'full', maxContentLength: cap }).spans;
    const [tool] = byName(spans, 'execute_tool dump');
    const result = tool!.attributes['gen_ai.tool.call.result'] as string;
    expect(result.length).toBeLessThanOrEqual(cap);
    expect(result.startsWith('xxxx')).toBe(true);
    expect(result.endsWith('…[truncated 5000 chars]')).toBe(true);
    expect(tool!.attributes['dsh.truncated']).toEqual(['gen_ai.tool.call.arguments', 'gen_ai.tool.call.result']);

    const [chat] = byName(spans, 'chat m');
    const input = chat!.attributes['gen_ai.input.messages'] as string;
    expect(input.length).toBeLessThanOrEqual(cap);
    const parsed = JSON.parse(input) as { parts: { content: string }[] }[];
    expect(parsed.length).toBeLessThan(31);
    expect(parsed[parsed.length - 1]!.parts[0]!.content).toBe('the newest prompt');
    expect(chat!.attributes['dsh.truncated']).toEqual(['gen_ai.input.messages', 'gen_ai.output.messages']);
  });
});

describe('the redaction hook', () => {
  it('rewrites or drops any attribute, span-event attribute and status message before export', () => {
    const c = clockedSession('sess-redact');
    c.at(1).append('turn/start', { turn: 1 });
    c.at(2).append('step/start', { turn: 1, step: 1 });
    c.at(2).append('user/message', user('my key is sk-123'), { surfaceOp: 'append' });
    const failure = { code: 'SERVER', message: 'upstream echoed sk-123' };
    c.at(3).append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'finish', reason: { kind: 'error', failure } } });
    c.at(4).append('llm/retry', {
      retryId: 'r',
      turn: 1,
      step: 1,
      provider: 'deepseek',
      mode: 'normal',
      policyKey: 'p',
      retry: 1,
      delayMs: 5,
      failure,
    });
    c.at(5).append('step/end', { turn: 1, step: 1 });
    c.at(6).append('turn/end', { turn: 1, reason: { kind: 'error', error: failure } });

    const seen: RedactionField[] = [];
    const spans = mapSession(c.session, {
      content: 'full',
      redact: (f) => {
        seen.push(f);
        if (f.key === 'session.id') return undefined;
        return typeof f.value === 'string' ? f.value.replaceAll('sk-123', '[key]') : f.value;
      },
    }).spans;
    const text = JSON.stringify(spans);
    expect(text).not.toContain('sk-123');
    expect(text).toContain('[key]');
    for (const s of spans) expect(s.attributes['session.id']).toBeUndefined();
    expect(spans[0]!.status).toEqual({ code: 'ERROR', message: 'SERVER: upstream echoed [key]' });
    expect(spans[1]!.events[0]!.attributes['dsh.retry.failure_message']).toBe('upstream echoed [key]');
    // The hook is told where each field sits.
    expect(seen.some((f) => f.key === 'dsh.retry.failure_message' && f.event === 'llm/retry' && f.span.name === 'chat unknown')).toBe(true);
    expect(seen.some((f) => f.key === 'status.message' && f.span.name === 'invoke_agent dsh')).toBe(true);
  });

  it('fails closed when it throws: a typed error, and nothing mapped', () => {
    const session = reference();
    let err: unknown;
    try {
      mapSession(session, {
        redact: () => {
          throw new Error('policy unavailable');
        },
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(OtelExportError);
    expect((err as OtelExportError).code).toBe('REDACTION_FAILED');
    expect((err as OtelExportError).message).toContain('policy unavailable');
  });
});
