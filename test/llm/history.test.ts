/**
 * History conversion: our messages → provider request bodies. Real recordings anchor it: DeepSeek's
 * non-streaming tool-call response (reasoning passback) and the Anthropic tool-runner's recorded
 * requests (parallel tool_use / tool_result pairing).
 */
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AnthropicAdapter } from '../../src/llm/anthropic.js';
import { DeepSeekAdapter } from '../../src/llm/deepseek.js';
import { ChatCompletionsAdapter } from '../../src/llm/openai-compatible.js';
import type { AssistantMessage, ContentBlock, Message, ToolResultMessage } from '../../src/model/message.js';
import type { GenerateRequest } from '../../src/model/request.js';
import { userMessage } from '../support/llm-run.js';
import { describeShared, sharedPath } from '../support/shared.js';

const assistant = (
  content: ContentBlock[],
  provider = 'deepseek',
  replayState?: AssistantMessage['source']['replayState'],
): AssistantMessage => ({
  id: randomUUID(),
  role: 'assistant',
  content,
  source: { kind: 'model', provider, model: 'm', ...(replayState ? { replayState } : {}) },
});
const toolResult = (callId: string, text: string, isError = false): ToolResultMessage => ({
  id: randomUUID(),
  role: 'user',
  content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text }], ...(isError ? { isError } : {}) }],
  source: { kind: 'tool', callId },
});
const req = (provider: string, messages: Message[], extra: Partial<GenerateRequest> = {}): GenerateRequest => ({
  provider,
  model: 'm',
  messages,
  ...extra,
});
const real = (file: string): unknown => JSON.parse(readFileSync(sharedPath('fixtures', 'real', file), 'utf8'));

describe('chat-completions history', () => {
  const deepseek = new DeepSeekAdapter({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9' });
  const generic = new ChatCompletionsAdapter({ provider: 'gw', baseUrl: 'http://127.0.0.1:9' });

  const turn: Message[] = [
    userMessage('list files'),
    assistant([
      { type: 'reasoning', text: 'I should ' },
      { type: 'text', text: 'Looking.' },
      { type: 'reasoning', text: 'call ls.' },
      { type: 'tool-call', id: 'c1', name: 'ls', arguments: '{"path":"."}' },
      { type: 'tool-call', id: 'c2', name: 'stat', arguments: '' },
      { type: 'tool-call', id: 'c3', name: 'cat', arguments: '{"path": "a' },
    ]),
    toolResult('c1', 'a.txt'),
    toolResult('c2', 'no such file', true),
    toolResult('c3', 'bad arguments'),
  ];

  it('sends system, user, assistant tool_calls and role:tool results in order', async () => {
    const body = await deepseek.buildBody(req('deepseek', turn, { system: 'be brief' }));
    expect(body.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'list files' },
      {
        role: 'assistant',
        content: 'Looking.',
        reasoning_content: 'I should call ls.',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'ls', arguments: '{"path":"."}' } },
          // An empty arguments string goes out as {}; invalid JSON goes out as the model wrote it.
          { id: 'c2', type: 'function', function: { name: 'stat', arguments: '{}' } },
          { id: 'c3', type: 'function', function: { name: 'cat', arguments: '{"path": "a' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'a.txt' },
      { role: 'tool', tool_call_id: 'c2', content: 'no such file' },
      { role: 'tool', tool_call_id: 'c3', content: 'bad arguments' },
    ]);
  });

  it('passes reasoning back only for DeepSeek-style dialects', async () => {
    const body = await generic.buildBody(req('gw', turn));
    expect(body.messages[1]).not.toHaveProperty('reasoning_content');
    const withPassback = new ChatCompletionsAdapter({ provider: 'gw', baseUrl: 'http://x', dialect: { reasoningPassback: true } });
    expect((await withPassback.buildBody(req('gw', turn))).messages[1]).toHaveProperty('reasoning_content', 'I should call ls.');
  });

  it('gives a text-only assistant turn string content and no tool_calls', async () => {
    const body = await deepseek.buildBody(req('deepseek', [userMessage('hi'), assistant([{ type: 'text', text: 'hello' }])]));
    expect(body.messages[1]).toEqual({ role: 'assistant', content: 'hello' });
  });

  it('sends images as data URLs when a resolver is given, a placeholder otherwise', async () => {
    const withImage: Message = {
      id: 'u1',
      role: 'user',
      content: [
        { type: 'text', text: 'what is this?' },
        { type: 'image', attachment: { attachmentId: 'sha256-abc', mediaType: 'image/png', name: 'shot.png' } },
      ],
      source: { kind: 'user' },
    };
    const plain = await deepseek.buildBody(req('deepseek', [withImage]));
    expect(plain.messages[0]).toEqual({
      role: 'user',
      content: expect.stringMatching(/^what is this\?\n\n\[image shot\.png, image\/png, attachment sha256-abc: /),
    });

    const resolving = new ChatCompletionsAdapter({
      provider: 'gw',
      baseUrl: 'http://x',
      resolveAttachment: (ref) => ({ data: `DATA-${ref.attachmentId}`, mediaType: ref.mediaType }),
    });
    const withPixels = await resolving.buildBody(req('gw', [withImage]));
    expect(withPixels.messages[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'what is this?' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,DATA-sha256-abc' } },
      ],
    });
  });

  it.each([
    [undefined, {}],
    ['off', { thinking: { type: 'disabled' } }],
    ['low', { thinking: { type: 'enabled' }, reasoning_effort: 'low' }],
    ['max', { thinking: { type: 'enabled' }, reasoning_effort: 'max' }],
  ])('DeepSeek effort %s → %j', async (effort, fields) => {
    const body = (await deepseek.buildBody(
      req('deepseek', [userMessage('x')], effort ? { reasoningEffort: effort } : {}),
    )) as unknown as Record<string, unknown>;
    expect({ thinking: body['thinking'], reasoning_effort: body['reasoning_effort'] }).toEqual({
      thinking: undefined,
      reasoning_effort: undefined,
      ...fields,
    });
  });

  it('maps sampling fields and tools', async () => {
    const body = await deepseek.buildBody(
      req('deepseek', [userMessage('x')], {
        maxTokens: 100,
        temperature: 0.2,
        stop: ['END'],
        tools: [{ name: 'ls', description: 'list', parameters: { type: 'object', properties: {} } }],
      }),
    );
    expect(body).toMatchObject({
      max_tokens: 100,
      temperature: 0.2,
      stop: ['END'],
      tools: [{ type: 'function', function: { name: 'ls', description: 'list', parameters: { type: 'object', properties: {} } } }],
    });
    const openai = new ChatCompletionsAdapter({
      provider: 'openai',
      baseUrl: 'http://x',
      dialect: { maxTokensField: 'max_completion_tokens' },
    });
    const ob = (await openai.buildBody(req('openai', [userMessage('x')], { maxTokens: 100 }))) as unknown as Record<string, unknown>;
    expect([ob['max_completion_tokens'], ob['max_tokens']]).toEqual([100, undefined]);
  });
});

describeShared('chat-completions history against DeepSeek recordings', () => {
  it('replays the recorded tool-call turn (reasoning_content + tool_calls) the way DeepSeek returned it', async () => {
    const message = (real('vercel-ai-deepseek/deepseek-tool-call.json') as { choices: { message: Record<string, unknown> }[] }).choices[0]!
      .message;
    const calls = message['tool_calls'] as { id: string; type: string; function: { name: string; arguments: string } }[];
    const ours = assistant([
      { type: 'reasoning', text: message['reasoning_content'] as string },
      ...calls.map((c): ContentBlock => ({ type: 'tool-call', id: c.id, name: c.function.name, arguments: c.function.arguments })),
    ]);
    const body = await new DeepSeekAdapter({ apiKey: 'k' }).buildBody(req('deepseek', [userMessage('weather?'), ours]));
    expect(body.messages[1]).toEqual({
      role: 'assistant',
      content: null,
      reasoning_content: message['reasoning_content'],
      tool_calls: calls.map(({ id, type, function: fn }) => ({ id, type, function: fn })),
    });
  });
});

describe('Anthropic history', () => {
  const anthropic = new AnthropicAdapter({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9' });

  it('replays signed thinking from replayState and drops unsigned or foreign reasoning', async () => {
    const signed = assistant(
      [
        { type: 'reasoning', text: 'think A' },
        { type: 'reasoning', text: '' },
        { type: 'text', text: 'answer' },
        { type: 'tool-call', id: 't1', name: 'ls', arguments: '' },
      ],
      'anthropic',
      {
        blocks: [
          { type: 'reasoning', signature: 'sig-A' },
          { type: 'reasoning', redacted: 'opaque' },
          { type: 'text' },
          { type: 'tool-call' },
        ],
      },
    );
    const foreign = assistant(
      [
        { type: 'reasoning', text: 'deepseek thoughts' },
        { type: 'text', text: 'ok' },
      ],
      'deepseek',
      {
        blocks: [{ type: 'reasoning', signature: 'not-ours' }, { type: 'text' }],
      },
    );
    const body = await anthropic.buildBody(req('anthropic', [userMessage('q'), signed, toolResult('t1', 'files'), foreign]));
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'q' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'think A', signature: 'sig-A' },
          { type: 'redacted_thinking', data: 'opaque' },
          { type: 'text', text: 'answer' },
          { type: 'tool_use', id: 't1', name: 'ls', input: {} },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'files' }] }] },
      { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
    ]);
  });

  it('ignores a replay entry written for another block kind (a shifted array never mis-signs)', async () => {
    const shifted = assistant(
      [
        { type: 'text', text: 'a' },
        { type: 'reasoning', text: 'b' },
      ],
      'anthropic',
      { blocks: [{ type: 'reasoning', signature: 's' }] },
    );
    const body = await anthropic.buildBody(req('anthropic', [userMessage('q'), shifted]));
    expect(body.messages[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'a' }] });
  });

  it('sends invalid tool arguments as {} with a note, and hoists system messages into system', async () => {
    const sys: Message = { id: 's', role: 'system', content: [{ type: 'text', text: 'rule 2' }], source: { kind: 'user' } };
    const body = await anthropic.buildBody(
      req(
        'anthropic',
        [
          sys,
          userMessage('q'),
          assistant([{ type: 'tool-call', id: 't', name: 'cat', arguments: '{"path": "a' }], 'anthropic'),
          toolResult('t', 'err', true),
        ],
        {
          system: 'rule 1',
        },
      ),
    );
    expect(body.system).toBe('rule 1\n\nrule 2');
    expect(body.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: expect.stringContaining('were not a JSON object and were sent as {}') },
        { type: 'tool_use', id: 't', name: 'cat', input: {} },
      ],
    });
    expect(body.messages[2]).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'err' }], is_error: true }],
    });
  });

  it('asks for automatic prompt caching unless told not to', async () => {
    expect(await anthropic.buildBody(req('anthropic', [userMessage('q')]))).toMatchObject({ cache_control: { type: 'ephemeral' } });
    const plain = new AnthropicAdapter({ apiKey: 'k', promptCaching: false });
    expect(await plain.buildBody(req('anthropic', [userMessage('q')]))).not.toHaveProperty('cache_control');
  });

  it('maps efforts to a thinking budget (Claude 4.5) or adaptive thinking (later models)', async () => {
    const q = [userMessage('q')];
    const budget = await anthropic.buildBody(
      req('anthropic', q, { model: 'claude-haiku-4-5', reasoningEffort: 'medium', maxTokens: 32_000 }),
    );
    expect(budget).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 8_192 }, max_tokens: 32_000 });
    const small = await anthropic.buildBody(req('anthropic', q, { model: 'claude-haiku-4-5', reasoningEffort: 'high', maxTokens: 4_000 }));
    expect(small).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2_976 } });
    const adaptive = await anthropic.buildBody(req('anthropic', q, { model: 'claude-opus-5', reasoningEffort: 'xhigh' }));
    expect(adaptive).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'xhigh' } });
    const off = await anthropic.buildBody(req('anthropic', q, { model: 'claude-opus-5', reasoningEffort: 'off' }));
    expect(off).toMatchObject({ thinking: { type: 'disabled' } });
    expect(off).not.toHaveProperty('output_config');
  });
});

describeShared('Anthropic history against the recorded tool-runner requests', () => {
  it('rebuilds the recorded request after two parallel tool calls (one user turn with both results)', async () => {
    const pairs = real('anthropic-sdk-typescript/ToolRunner.json') as {
      body: { messages: unknown[] };
      response: { content: Record<string, unknown>[] };
    }[];
    const response = pairs[2]!.response.content;
    const recorded = pairs[3]!.body.messages as { role: string; content: unknown }[];
    const results = (recorded[2]!.content as { tool_use_id: string; content: string }[]).map((r) => toolResult(r.tool_use_id, r.content));

    const ours = assistant(
      response.map(
        (b): ContentBlock =>
          b['type'] === 'text'
            ? { type: 'text', text: b['text'] as string }
            : { type: 'tool-call', id: b['id'] as string, name: b['name'] as string, arguments: JSON.stringify(b['input']) },
      ),
      'anthropic',
    );
    const body = await new AnthropicAdapter({ apiKey: 'k' }).buildBody(
      req('anthropic', [userMessage(recorded[0]!.content as string), ours, ...results]),
    );

    expect(body.messages.map((m) => m.role)).toEqual(recorded.map((m) => m.role));
    expect(body.messages[1]!.content).toEqual(recorded[1]!.content);
    // Same pairing; we always send result content as blocks where the SDK sent a bare string.
    expect(body.messages[2]!.content).toEqual(
      (recorded[2]!.content as { tool_use_id: string; content: string }[]).map((r) => ({
        type: 'tool_result',
        tool_use_id: r.tool_use_id,
        content: [{ type: 'text', text: r.content }],
      })),
    );
  });
});
