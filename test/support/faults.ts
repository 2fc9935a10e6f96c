/**
 * Named faults and small stream builders for the fake provider, in both wire flavours:
 * `openai` (chat-completions SSE, used by DeepSeek and compatible gateways) and `anthropic`
 * (Messages SSE with `event:` lines). The agent-loop fault tests reuse these.
 */
import type { FakeResponse, SsePart } from './fake-provider.js';

export type Flavor = 'openai' | 'anthropic';

export interface StreamSpec {
  reasoning?: string[];
  text?: string[];
  toolCalls?: { id: string; name: string; args: string[] }[];
  /** Provider finish/stop reason; defaults from content (tool calls → tool_calls / tool_use). */
  finish?: string;
  usage?: { input: number; output: number };
}

/** A chat-completions stream in DeepSeek's shape (usage in the finish chunk, then `[DONE]`). */
export function chatStream(spec: StreamSpec): SsePart[] {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null, usage: unknown = null): SsePart => ({
    data: JSON.stringify({
      id: 'fake-1',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'fake-model',
      choices: [{ index: 0, delta, finish_reason: finish }],
      usage,
    }),
  });
  const parts: SsePart[] = [chunk({ role: 'assistant', content: '' })];
  for (const r of spec.reasoning ?? []) parts.push(chunk({ content: null, reasoning_content: r }));
  for (const t of spec.text ?? []) parts.push(chunk({ content: t }));
  (spec.toolCalls ?? []).forEach((call, i) => {
    parts.push(chunk({ tool_calls: [{ index: i, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    for (const a of call.args) parts.push(chunk({ tool_calls: [{ index: i, function: { arguments: a } }] }));
  });
  const finish = spec.finish ?? ((spec.toolCalls ?? []).length > 0 ? 'tool_calls' : 'stop');
  const usage = spec.usage ?? { input: 10, output: 5 };
  parts.push(
    chunk({ content: '' }, finish, {
      prompt_tokens: usage.input,
      completion_tokens: usage.output,
      total_tokens: usage.input + usage.output,
      prompt_cache_hit_tokens: 0,
      prompt_cache_miss_tokens: usage.input,
    }),
  );
  parts.push({ data: '[DONE]' });
  return parts;
}

/** An Anthropic Messages stream. */
export function anthropicStream(spec: StreamSpec): SsePart[] {
  const ev = (body: Record<string, unknown>): SsePart => ({ event: String(body['type']), data: JSON.stringify(body) });
  const usage = spec.usage ?? { input: 10, output: 5 };
  const parts: SsePart[] = [
    ev({
      type: 'message_start',
      message: {
        id: 'msg_fake',
        type: 'message',
        role: 'assistant',
        model: 'claude-fake',
        content: [],
        stop_reason: null,
        usage: { input_tokens: usage.input, output_tokens: 1 },
      },
    }),
  ];
  let index = 0;
  const textual = (kind: 'thinking' | 'text', pieces: string[] | undefined): void => {
    if (!pieces || pieces.length === 0) return;
    const start = kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' };
    parts.push(ev({ type: 'content_block_start', index, content_block: start }));
    for (const p of pieces) {
      const delta = kind === 'text' ? { type: 'text_delta', text: p } : { type: 'thinking_delta', thinking: p };
      parts.push(ev({ type: 'content_block_delta', index, delta }));
    }
    if (kind === 'thinking')
      parts.push(ev({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: 'sig-fake' } }));
    parts.push(ev({ type: 'content_block_stop', index }));
    index++;
  };
  textual('thinking', spec.reasoning);
  textual('text', spec.text);
  for (const call of spec.toolCalls ?? []) {
    parts.push(ev({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} } }));
    for (const a of call.args) parts.push(ev({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: a } }));
    parts.push(ev({ type: 'content_block_stop', index }));
    index++;
  }
  const stop = spec.finish ?? ((spec.toolCalls ?? []).length > 0 ? 'tool_use' : 'end_turn');
  parts.push(ev({ type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: usage.output } }));
  parts.push(ev({ type: 'message_stop' }));
  return parts;
}

export function streamFor(flavor: Flavor, spec: StreamSpec): SsePart[] {
  return flavor === 'openai' ? chatStream(spec) : anthropicStream(spec);
}

export const FAULT_NAMES = [
  'reset-before-headers',
  'reset-mid-stream',
  'stall-mid-stream',
  'stall-before-headers',
  'malformed-json',
  'rate-limit',
  'server-500',
  'server-503',
  'context-overflow',
  'unauthorized',
  'empty-completion',
  'keep-alive',
] as const;
export type FaultName = (typeof FAULT_NAMES)[number];

/** The failure code each fault must produce (`keep-alive` must produce none). */
export const FAULT_CODES: Readonly<Record<FaultName, string | undefined>> = {
  'reset-before-headers': 'TRANSPORT',
  'reset-mid-stream': 'STREAM_CLOSED',
  'stall-mid-stream': 'TIMEOUT',
  'stall-before-headers': 'TIMEOUT',
  'malformed-json': 'MALFORMED_RESPONSE',
  'rate-limit': 'RATE_LIMIT',
  'server-500': 'SERVER',
  'server-503': 'SERVER',
  'context-overflow': 'CONTEXT_WINDOW_EXCEEDED',
  unauthorized: 'AUTH',
  'empty-completion': 'EMPTY_RESPONSE',
  'keep-alive': undefined,
};

const BASE: StreamSpec = { text: ['Hel', 'lo, ', 'world'] };

/** Error bodies in each provider's shape (DeepSeek/OpenAI `{error:{…}}`, Anthropic `{type:'error',error:{…}}`). */
function errorBody(flavor: Flavor, type: string, message: string): unknown {
  return flavor === 'openai' ? { error: { message, type, param: null, code: type } } : { type: 'error', error: { type, message } };
}

/**
 * A scripted response that injects the named fault. Stream faults cut or spoil `base` (a small
 * text stream by default) after its first half; `stallMs`-free stalls hang until the client gives up.
 */
export function fault(name: FaultName, flavor: Flavor = 'openai', base: StreamSpec = BASE): FakeResponse {
  const full = streamFor(flavor, base);
  const head = full.slice(0, Math.max(1, Math.floor(full.length / 2)));
  switch (name) {
    case 'reset-before-headers':
      return { resetBeforeHeaders: true };
    case 'reset-mid-stream':
      return { sse: [...head, { reset: true }] };
    case 'stall-mid-stream':
      return { sse: [...head, { hang: true }] };
    case 'stall-before-headers':
      return { withholdHeaders: true };
    case 'malformed-json':
      return {
        sse: [
          ...head,
          {
            raw:
              flavor === 'openai'
                ? 'data: {"choices":[{"index":0,"delta":{"content":"x"}\n\n'
                : 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,\n\n',
          },
        ],
      };
    case 'rate-limit':
      return {
        status: 429,
        headers: { 'retry-after': '7' },
        body: errorBody(flavor, flavor === 'openai' ? 'rate_limit_exceeded' : 'rate_limit_error', 'Rate limit reached for requests'),
      };
    case 'server-500':
      return { status: 500, body: errorBody(flavor, flavor === 'openai' ? 'server_error' : 'api_error', 'Internal server error') };
    case 'server-503':
      return {
        status: 503,
        body: errorBody(flavor, flavor === 'openai' ? 'server_error' : 'overloaded_error', 'Service is too busy. Please try again later.'),
      };
    case 'context-overflow':
      return {
        status: 400,
        body:
          flavor === 'openai'
            ? errorBody(
                flavor,
                'invalid_request_error',
                "This model's maximum context length is 131072 tokens. However, you requested 140211 tokens (132019 in the " +
                  'messages, 8192 in the completion). Please reduce the length of the messages or completion.',
              )
            : errorBody(flavor, 'invalid_request_error', 'prompt is too long: 208310 tokens > 200000 maximum'),
      };
    case 'unauthorized':
      return {
        status: 401,
        body: errorBody(
          flavor,
          'authentication_error',
          flavor === 'openai' ? 'Authentication Fails, Your api key: ****abcd is invalid' : 'invalid x-api-key',
        ),
      };
    case 'empty-completion':
      return { sse: streamFor(flavor, {}) };
    case 'keep-alive':
      return { sse: full.flatMap((p) => [{ comment: 'keep-alive' }, p]) };
  }
}
