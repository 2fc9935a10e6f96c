import { afterEach, describe, expect, it } from 'vitest';
import { AnthropicAdapter } from '../../src/llm/anthropic.js';
import { LlmConfigSchema, type LlmConfig } from '../../src/llm/config.js';
import { DeepSeekAdapter, deepseekDialect } from '../../src/llm/deepseek.js';
import { passesReasoningBack } from '../../src/llm/openai-history.js';
import { ChatCompletionsAdapter } from '../../src/llm/openai-compatible.js';
import {
  BUILTIN_PROVIDERS,
  configuredModels,
  MissingCredentialError,
  ModelSelectionError,
  createAdapter,
  parseModelRef,
  resolveProvider,
  selectModel,
  selectModelRef,
} from '../../src/llm/select.js';
import { LlmError } from '../../src/model/failure.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { chatStream } from '../support/faults.js';
import { request, runAttempt } from '../support/llm-run.js';

const gateways: LlmConfig = LlmConfigSchema.parse({
  providers: {
    openrouter: { baseUrl: 'https://openrouter.ai/api/v1', apiKeyEnv: 'OPENROUTER_API_KEY' },
    ollama: { baseUrl: 'http://localhost:11434/v1' },
  },
});

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

describe('parseModelRef', () => {
  it.each([
    ['deepseek:deepseek-chat', { provider: 'deepseek', model: 'deepseek-chat' }],
    ['openai:gpt-4.1', { provider: 'openai', model: 'gpt-4.1' }],
    ['anthropic:claude-sonnet-4-5', { provider: 'anthropic', model: 'claude-sonnet-4-5' }],
    ['deepseek-v4-pro', { provider: 'deepseek', model: 'deepseek-v4-pro' }],
    ['  deepseek-reasoner ', { provider: 'deepseek', model: 'deepseek-reasoner' }],
    ['ollama:qwen3:8b', { provider: 'ollama', model: 'qwen3:8b' }],
    ['openrouter:anthropic/claude-sonnet-4.5', { provider: 'openrouter', model: 'anthropic/claude-sonnet-4.5' }],
  ])('%s', (ref, expected) => {
    expect(parseModelRef(ref, gateways)).toEqual(expected);
  });

  it('refuses an unknown provider prefix instead of guessing, and says how to declare it', () => {
    const e = thrown(() => parseModelRef('qwen3:8b'));
    expect(e).toBeInstanceOf(ModelSelectionError);
    expect((e as ModelSelectionError).code).toBe('NO_ADAPTER');
    expect((e as Error).message).toMatch(/unknown provider "qwen3".*providers\.qwen3 with a baseUrl/);
  });

  it.each(['', '   ', 'openai:'])('refuses %j', (ref) => {
    expect(() => parseModelRef(ref)).toThrow(ModelSelectionError);
  });
});

describe('configuredModels', () => {
  it("the config's model, then each provider's models, once each; a model with a colon stays whole", () => {
    const config: LlmConfig = {
      model: 'local:qwen3:8b',
      providers: {
        local: { baseUrl: 'http://127.0.0.1:11434/v1', models: { 'qwen3:8b': {}, 'llama3.3': {} } },
        deepseek: { models: { 'deepseek-v4-pro': {} } },
      },
    };
    expect(configuredModels(config)).toEqual([
      { provider: 'local', model: 'qwen3:8b' },
      { provider: 'local', model: 'llama3.3' },
      { provider: 'deepseek', model: 'deepseek-v4-pro' },
    ]);
  });

  it('a model the selection refuses (unknown provider) names none; a bare name is a DeepSeek model', () => {
    expect(configuredModels({ model: 'nowhere:m' })).toEqual([]);
    expect(configuredModels({ model: 'deepseek-v4-flash' })).toEqual([{ provider: 'deepseek', model: 'deepseek-v4-flash' }]);
    expect(configuredModels({})).toEqual([]);
  });
});

describe('selectModelRef precedence', () => {
  const config = LlmConfigSchema.parse({ model: 'anthropic:claude-opus-5' });
  it('explicit > DSH_MODEL > config.model > default', () => {
    expect(selectModelRef({ model: 'openai:gpt-4.1', env: { DSH_MODEL: 'deepseek-chat' }, config })).toEqual({
      provider: 'openai',
      model: 'gpt-4.1',
    });
    expect(selectModelRef({ env: { DSH_MODEL: 'deepseek-chat' }, config })).toEqual({ provider: 'deepseek', model: 'deepseek-chat' });
    expect(selectModelRef({ env: { DSH_MODEL: '' }, config })).toEqual({ provider: 'anthropic', model: 'claude-opus-5' });
    expect(selectModelRef({ env: {} })).toEqual({ provider: 'deepseek', model: 'deepseek-v4-flash' });
  });
});

describe('resolveProvider', () => {
  it('names the variable to set when the DeepSeek key is missing', () => {
    const e = thrown(() => resolveProvider('deepseek', { env: {} }));
    expect(e).toBeInstanceOf(MissingCredentialError);
    expect(e).toBeInstanceOf(LlmError);
    expect((e as LlmError).code).toBe('MISSING_CREDENTIAL');
    expect((e as Error).message).toBe('DEEPSEEK_API_KEY is not set: export it, or set providers.deepseek.apiKey in the config file');
  });

  it.each([
    ['openai', 'OPENAI_API_KEY'],
    ['anthropic', 'ANTHROPIC_API_KEY'],
    ['openrouter', 'OPENROUTER_API_KEY'],
  ])('%s without a key → %s is not set', (name, variable) => {
    expect(() => resolveProvider(name, { env: {}, config: gateways })).toThrow(
      `${variable} is not set: export it, or set providers.${name}.apiKey in the config file`,
    );
  });

  it('takes base URL and key from the environment over the config file', () => {
    const config = LlmConfigSchema.parse({ providers: { deepseek: { baseUrl: 'https://proxy.example/v1', apiKey: 'from-file' } } });
    expect(resolveProvider('deepseek', { env: {}, config })).toMatchObject({
      baseUrl: 'https://proxy.example/v1',
      apiKey: 'from-file',
      kind: 'deepseek',
    });
    expect(
      resolveProvider('deepseek', { env: { DEEPSEEK_API_KEY: 'from-env', DEEPSEEK_BASE_URL: 'http://127.0.0.1:8080' }, config }),
    ).toMatchObject({
      baseUrl: 'http://127.0.0.1:8080',
      apiKey: 'from-env',
    });
    expect(resolveProvider('deepseek', { env: { DEEPSEEK_API_KEY: 'k' } }).baseUrl).toBe('https://api.deepseek.com');
    expect(resolveProvider('anthropic', { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: 'https://gw.example' } }).baseUrl).toBe(
      'https://gw.example',
    );
    expect(resolveProvider('openai', { env: { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: 'https://oai.example/v1' } }).baseUrl).toBe(
      'https://oai.example/v1',
    );
  });

  it('rejects a base URL that is not http(s)', () => {
    expect(() => resolveProvider('deepseek', { env: { DEEPSEEK_API_KEY: 'k', DEEPSEEK_BASE_URL: 'api.deepseek.com' } })).toThrow(
      /DEEPSEEK_BASE_URL is not an http\(s\) URL/,
    );
  });

  it('lets a local gateway go keyless, and requires a baseUrl for gateways', () => {
    expect(resolveProvider('ollama', { env: {}, config: gateways })).not.toHaveProperty('apiKey');
    const noUrl = LlmConfigSchema.parse({ providers: { vllm: {} } });
    expect(() => resolveProvider('vllm', { env: {}, config: noUrl })).toThrow(
      'provider vllm has no baseUrl: set providers.vllm.baseUrl in the config file',
    );
  });

  it('builds the adapter kind the provider speaks', async () => {
    const env = { DEEPSEEK_API_KEY: 'a', OPENAI_API_KEY: 'b', ANTHROPIC_API_KEY: 'c', OPENROUTER_API_KEY: 'd' };
    expect(createAdapter(resolveProvider('deepseek', { env }))).toBeInstanceOf(DeepSeekAdapter);
    expect(createAdapter(resolveProvider('anthropic', { env }))).toBeInstanceOf(AnthropicAdapter);
    const openrouter = createAdapter(resolveProvider('openrouter', { env, config: gateways }));
    expect(openrouter).toBeInstanceOf(ChatCompletionsAdapter);
    expect(openrouter.providers).toEqual(['openrouter']);
    const viaAnthropicWire = LlmConfigSchema.parse({
      providers: { 'ds-anthropic': { kind: 'anthropic', baseUrl: 'https://api.deepseek.com/anthropic', apiKeyEnv: 'DEEPSEEK_API_KEY' } },
    });
    const gatewayAnthropic = createAdapter(resolveProvider('ds-anthropic', { env, config: viaAnthropicWire }));
    expect(gatewayAnthropic).toBeInstanceOf(AnthropicAdapter);
    // Prompt caching is only assumed for Anthropic itself.
    const body = await (gatewayAnthropic as AnthropicAdapter).buildBody(request('ds-anthropic', 'deepseek-v4-flash'));
    expect(body).not.toHaveProperty('cache_control');
    expect(
      await (createAdapter(resolveProvider('anthropic', { env })) as AnthropicAdapter).buildBody(request('anthropic', 'claude-opus-5')),
    ).toHaveProperty('cache_control');
  });
});

describe('LlmConfigSchema', () => {
  it.each([
    [{ providers: { ollama: { baseUrl: 'localhost:11434' } } }, 'baseUrl'],
    [{ providers: { Ollama: { baseUrl: 'http://localhost:11434/v1' } } }, 'provider names'],
    [{ providers: { ollama: { baseUrl: 'http://x', bogus: true } } }, 'bogus'],
    [{ providers: { ollama: { apiKeyEnv: 'not a var' } } }, 'environment variable'],
    [{ model: '' }, 'model'],
  ])('rejects %j', (input, hint) => {
    const result = LlmConfigSchema.safeParse(input);
    expect(result.success).toBe(false);
    expect(JSON.stringify(result.error?.issues)).toMatch(new RegExp(hint));
  });
});

describe('selectModel end to end', () => {
  let server: FakeProvider | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('streams from a keyless local gateway without an Authorization header', async () => {
    server = await startFakeProvider({ script: [{ sse: chatStream({ text: ['local'] }) }] });
    const config = LlmConfigSchema.parse({
      model: 'ollama:qwen3:8b',
      providers: { ollama: { baseUrl: `${server.url}/v1`, headers: { 'x-gateway': 'yes' } } },
    });
    const { ref, adapter } = selectModel({ env: {}, config });
    const r = await runAttempt(adapter, request(ref.provider, ref.model));
    expect(r.blocks).toEqual([{ type: 'text', text: 'local' }]);
    const sent = server.requests[0]!;
    expect(sent.headers['authorization']).toBeUndefined();
    expect(sent.headers['x-gateway']).toBe('yes');
    expect(sent.body).toMatchObject({ model: 'qwen3:8b' });
  });

  it('sends max_completion_tokens to OpenAI and honours OPENAI_BASE_URL', async () => {
    server = await startFakeProvider({ script: [{ sse: chatStream({ text: ['hi'] }) }] });
    const { ref, adapter } = selectModel({ model: 'openai:gpt-4.1', env: { OPENAI_API_KEY: 'sk-o', OPENAI_BASE_URL: `${server.url}/v1` } });
    await runAttempt(adapter, request(ref.provider, ref.model, { maxTokens: 64 }));
    expect(server.requests[0]!.body).toMatchObject({ model: 'gpt-4.1', max_completion_tokens: 64 });
    expect(server.requests[0]!.body).not.toHaveProperty('max_tokens');
    expect(server.requests[0]!.headers['authorization']).toBe('Bearer sk-o');
  });
});

describe('resolveCall (adapter defaults)', () => {
  it('DeepSeek V4 gets effort high as a marked default; an effort it does not take is refused', () => {
    const ds = new DeepSeekAdapter({ apiKey: 'k' });
    expect(ds.resolveCall({ provider: 'deepseek', model: 'deepseek-v4-flash' })).toEqual({
      config: { provider: 'deepseek', model: 'deepseek-v4-flash', reasoningEffort: 'high' },
      adapterDefaults: { reasoningEffort: true },
    });
    expect(ds.resolveCall({ provider: 'deepseek', model: 'deepseek-v4-pro', reasoningEffort: 'off' })).toEqual({
      config: { provider: 'deepseek', model: 'deepseek-v4-pro', reasoningEffort: 'off' },
    });
    expect(() => ds.resolveCall({ provider: 'deepseek', model: 'deepseek-v4-flash', reasoningEffort: 'medium' })).toThrow(
      /takes reasoning effort off\|low\|high\|max, not "medium"/,
    );
    // Legacy names fix thinking by model; no effort is invented for them.
    expect(ds.resolveCall({ provider: 'deepseek', model: 'deepseek-chat' })).toEqual({
      config: { provider: 'deepseek', model: 'deepseek-chat' },
    });
  });

  it('Anthropic always gets a max_tokens, marked as a default', () => {
    const a = new AnthropicAdapter({ apiKey: 'k' });
    expect(a.resolveCall({ provider: 'anthropic', model: 'claude-haiku-4-5' })).toEqual({
      config: { provider: 'anthropic', model: 'claude-haiku-4-5', maxTokens: 32_000 },
      adapterDefaults: { maxTokens: true },
    });
    expect(a.resolveCall({ provider: 'anthropic', model: 'claude-haiku-4-5', maxTokens: 10 }).adapterDefaults).toBeUndefined();
  });
});

describe('which routes pass reasoning back (for rebuilding a logged request, issue 12 review 2 finding 6)', () => {
  it('follows each built-in route’s dialect, and takes a route named after DeepSeek for one', () => {
    for (const [name, route] of Object.entries(BUILTIN_PROVIDERS))
      expect(passesReasoningBack(name), name).toBe(route.kind === 'deepseek' && deepseekDialect().reasoningPassback);
    expect(passesReasoningBack('deepseek-beta')).toBe(true);
    expect(passesReasoningBack('my-gateway')).toBe(false);
    expect(passesReasoningBack('')).toBe(false);
  });
});
