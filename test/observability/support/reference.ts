/**
 * The reference session (one turn: a tool step, then an answer step), built through the Session
 * API with hand-set times, and its expected spans written out by hand.
 */
import type { DshSpan } from '../../../src/observability/index.js';
import { assistant, header, toolResult, user, type Clocked } from './build.js';

/** Turn 1 of the reference session: a tool step, then an answer step. */
export function twoStepTurn(c: Clocked): void {
  c.at(1000).append('turn/start', { turn: 1 });
  c.at(1010).append('step/start', { turn: 1, step: 1 });
  c.at(1010).append('user/message', user('List the files'), { surfaceOp: 'append' });
  c.at(1011).append(
    'request/header',
    header({ provider: 'deepseek', model: 'deepseek-chat', maxTokens: 4096, temperature: 0.5 }, 'Be brief.'),
  );
  const call = { type: 'tool-call' as const, id: 'call_1', name: 'ls', arguments: '{"path":"."}' };
  c.at(1100).append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'block-start', index: 0, blockType: 'tool-call' } });
  c.at(1110).append('assistant/chunk', {
    turn: 1,
    step: 1,
    chunk: { type: 'tool-call-delta', index: 0, id: 'call_1', name: 'ls', argumentsDelta: '{"path":"."}' },
  });
  c.at(1120).append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'block-end', index: 0, block: call } });
  const usage1 = { inputTokens: 100, outputTokens: 20, cacheReadTokens: 300, cacheWriteTokens: 50, reasoningTokens: 5 };
  c.at(1130).append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'usage', usage: usage1 } });
  c.at(1140).append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'finish', reason: { kind: 'tool-calls' } } });
  c.at(1150).append(
    'assistant/message',
    { turn: 1, step: 1, message: assistant([call]), usage: usage1 },
    { surfaceOp: 'append', sourceEventSeqs: [4, 5, 6, 7, 8] },
  );
  c.at(1200).append('tool/call', { turn: 1, step: 1, callId: 'call_1', name: 'ls', arguments: '{"path":"."}' });
  c.at(1300).append(
    'tool/result',
    { turn: 1, step: 1, message: toolResult('call_1', 'a.txt\nb.txt') },
    { surfaceOp: 'append', sourceEventSeqs: [10] },
  );
  c.at(1300).append('step/end', { turn: 1, step: 1 });
  c.at(1310).append('step/start', { turn: 1, step: 2 });
  c.at(1400).append('assistant/chunk', { turn: 1, step: 2, chunk: { type: 'block-start', index: 0, blockType: 'text' } });
  c.at(1410).append('assistant/chunk', { turn: 1, step: 2, chunk: { type: 'text-delta', index: 0, text: 'Two files.' } });
  c.at(1420).append('assistant/chunk', {
    turn: 1,
    step: 2,
    chunk: { type: 'block-end', index: 0, block: { type: 'text', text: 'Two files.' } },
  });
  const usage2 = { inputTokens: 30, outputTokens: 10, cacheReadTokens: 420 };
  c.at(1430).append('assistant/chunk', { turn: 1, step: 2, chunk: { type: 'usage', usage: usage2 } });
  // The server named its response and the model that answered (which differs from the one asked for).
  const response = { api: 'chat-completions', provider: 'deepseek', id: 'resp-2', model: 'deepseek-chat-v3' };
  c.at(1440).append('assistant/chunk', {
    turn: 1,
    step: 2,
    chunk: { type: 'finish', reason: { kind: 'stop' }, replayState: { response } },
  });
  c.at(1450).append(
    'assistant/message',
    { turn: 1, step: 2, message: assistant([{ type: 'text', text: 'Two files.' }]), usage: usage2 },
    { surfaceOp: 'append', sourceEventSeqs: [14, 15, 16, 17, 18] },
  );
  c.at(1450).append('step/end', { turn: 1, step: 2 });
  c.at(1460).append('turn/end', { turn: 1, reason: { kind: 'completed' } });
}

export const SESSION = 'sess-map-1';
const base = { 'gen_ai.conversation.id': SESSION, 'session.id': SESSION };

/** The expected spans of `twoStepTurn`, written by hand. */
export const EXPECTED_TWO_STEP: Omit<DshSpan, 'traceId' | 'spanId' | 'parentSpanId'>[] = [
  {
    name: 'invoke_agent dsh',
    kind: 'INTERNAL',
    startTime: 1000,
    endTime: 1460,
    attributes: {
      ...base,
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'dsh',
      'dsh.turn': 1,
      'dsh.turn.steps': 2,
      'dsh.seq.start': 0,
      'dsh.seq.end': 21,
      'dsh.turn.end_reason': 'completed',
    },
    events: [],
    status: { code: 'UNSET' },
  },
  {
    name: 'chat deepseek-chat',
    kind: 'CLIENT',
    // The request left after the request/header (seq 3): the span covers the wait for the first chunk.
    startTime: 1011,
    endTime: 1150,
    attributes: {
      ...base,
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'deepseek-chat',
      'gen_ai.provider.name': 'deepseek',
      'dsh.provider.route': 'deepseek',
      // The route's public endpoint (the log names the route only).
      'server.address': 'api.deepseek.com',
      'server.port': 443,
      'gen_ai.request.max_tokens': 4096,
      'gen_ai.request.temperature': 0.5,
      'dsh.turn': 1,
      'dsh.step': 1,
      'dsh.llm.attempt': 1,
      'dsh.seq.start': 4,
      'dsh.seq.end': 9,
      // 100 uncached + 300 cache reads + 50 cache writes: OTel input counts all three.
      'gen_ai.usage.input_tokens': 450,
      'gen_ai.usage.output_tokens': 20,
      'gen_ai.usage.cache_read.input_tokens': 300,
      'gen_ai.usage.cache_creation.input_tokens': 50,
      'gen_ai.usage.reasoning.output_tokens': 5,
      'dsh.llm.finish': 'tool-calls',
      'gen_ai.response.finish_reasons': ['tool_call'],
    },
    events: [],
    status: { code: 'UNSET' },
  },
  {
    name: 'execute_tool ls',
    kind: 'INTERNAL',
    startTime: 1200,
    endTime: 1300,
    attributes: {
      ...base,
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'ls',
      'gen_ai.tool.call.id': 'call_1',
      'gen_ai.tool.type': 'function',
      'dsh.turn': 1,
      'dsh.step': 1,
      'dsh.seq.start': 10,
      'dsh.seq.end': 11,
    },
    events: [],
    status: { code: 'UNSET' },
  },
  {
    name: 'chat deepseek-chat',
    kind: 'CLIENT',
    startTime: 1310,
    endTime: 1450,
    attributes: {
      ...base,
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'deepseek-chat',
      'gen_ai.provider.name': 'deepseek',
      'dsh.provider.route': 'deepseek',
      // The route's public endpoint (the log names the route only).
      'server.address': 'api.deepseek.com',
      'server.port': 443,
      'gen_ai.request.max_tokens': 4096,
      'gen_ai.request.temperature': 0.5,
      'dsh.turn': 1,
      'dsh.step': 2,
      'dsh.llm.attempt': 1,
      'dsh.seq.start': 14,
      'dsh.seq.end': 19,
      'gen_ai.usage.input_tokens': 450,
      'gen_ai.usage.output_tokens': 10,
      'gen_ai.usage.cache_read.input_tokens': 420,
      'dsh.llm.finish': 'stop',
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.response.model': 'deepseek-chat-v3',
      'gen_ai.response.id': 'resp-2',
    },
    events: [],
    status: { code: 'UNSET' },
  },
];
