/**
 * Model selection: `provider:model` strings, the config file's `model`/`providers` section and the
 * environment → a provider route, a model, and a ready adapter. Precedence for the model is the
 * explicit argument (a CLI flag), then `DSH_MODEL`, then `config.model`, then DeepSeek's default;
 * for base URLs and keys the environment beats the config file, which beats built-in defaults.
 */
import type { LlmAdapter, ModelInfo } from './adapter.js';
import { LlmError } from '../model/failure.js';
import { AnthropicAdapter, ANTHROPIC_BASE_URL } from './anthropic.js';
import type { AttachmentResolver } from './attachments.js';
import type { LlmConfig, ProviderConfig, ProviderKind } from './config.js';
import { DEEPSEEK_BASE_URL, DEEPSEEK_DEFAULT_MODEL, DeepSeekAdapter } from './deepseek.js';
import { ChatCompletionsAdapter } from './openai-compatible.js';

export type Env = Readonly<Record<string, string | undefined>>;

interface BuiltinProvider {
  kind: ProviderKind;
  baseUrl: string;
  keyEnv: string;
  baseUrlEnv: string;
}

export const BUILTIN_PROVIDERS: Readonly<Record<string, BuiltinProvider>> = {
  deepseek: { kind: 'deepseek', baseUrl: DEEPSEEK_BASE_URL, keyEnv: 'DEEPSEEK_API_KEY', baseUrlEnv: 'DEEPSEEK_BASE_URL' },
  openai: { kind: 'openai-compatible', baseUrl: 'https://api.openai.com/v1', keyEnv: 'OPENAI_API_KEY', baseUrlEnv: 'OPENAI_BASE_URL' },
  anthropic: { kind: 'anthropic', baseUrl: ANTHROPIC_BASE_URL, keyEnv: 'ANTHROPIC_API_KEY', baseUrlEnv: 'ANTHROPIC_BASE_URL' },
};

export const DEFAULT_PROVIDER = 'deepseek';
export const DEFAULT_MODEL_REF = `${DEFAULT_PROVIDER}:${DEEPSEEK_DEFAULT_MODEL}`;

/** The selection could not be made (unknown provider, bad string, gateway without a URL). */
export class ModelSelectionError extends LlmError {
  constructor(message: string) {
    super({ code: 'NO_ADAPTER', message });
    this.name = 'ModelSelectionError';
  }
}

/** A provider needs a key and none is configured; the message names the variable to set. */
export class MissingCredentialError extends LlmError {
  readonly variable: string | undefined;
  readonly provider: string;
  constructor(provider: string, variable: string | undefined) {
    const where = `set providers.${provider}.apiKey in the config file`;
    super({
      code: 'MISSING_CREDENTIAL',
      message: variable ? `${variable} is not set: export it, or ${where}` : `no API key for provider ${provider}: ${where} (or providers.${provider}.apiKeyEnv)`,
    });
    this.name = 'MissingCredentialError';
    this.provider = provider;
    this.variable = variable;
  }
}

export interface ModelRef {
  provider: string;
  model: string;
}

export function knownProviders(config?: LlmConfig): string[] {
  return [...new Set([...Object.keys(BUILTIN_PROVIDERS), ...Object.keys(config?.providers ?? {})])];
}

/**
 * `provider:model` when the prefix is a known provider (model names may hold colons, as Ollama's
 * `qwen3:8b`); a name without a colon is a DeepSeek model; anything else is an error rather than
 * a silent guess.
 */
export function parseModelRef(ref: string, config?: LlmConfig): ModelRef {
  const s = ref.trim();
  if (s === '') throw new ModelSelectionError('empty model name: use provider:model, e.g. deepseek:deepseek-v4-flash');
  const colon = s.indexOf(':');
  if (colon === -1) return { provider: DEFAULT_PROVIDER, model: s };
  const provider = s.slice(0, colon);
  const model = s.slice(colon + 1);
  const known = knownProviders(config);
  if (!known.includes(provider)) {
    throw new ModelSelectionError(
      `unknown provider ${JSON.stringify(provider)} in ${JSON.stringify(s)}: use one of ${known.join(', ')}, or declare it under providers.${provider} with a baseUrl`,
    );
  }
  if (model === '') throw new ModelSelectionError(`no model after ${JSON.stringify(`${provider}:`)}`);
  return { provider, model };
}

export interface SelectOptions {
  /** Explicit choice (e.g. a CLI flag); wins over everything. */
  model?: string | undefined;
  env?: Env | undefined;
  config?: LlmConfig | undefined;
}

export function selectModelRef(opts: SelectOptions = {}): ModelRef {
  const env = opts.env ?? process.env;
  const ref = opts.model ?? nonEmpty(env['DSH_MODEL']) ?? opts.config?.model ?? DEFAULT_MODEL_REF;
  return parseModelRef(ref, opts.config);
}

export interface ResolvedProvider {
  name: string;
  kind: ProviderKind;
  baseUrl: string;
  apiKey?: string;
  config: ProviderConfig;
}

export function resolveProvider(name: string, opts: { env?: Env | undefined; config?: LlmConfig | undefined } = {}): ResolvedProvider {
  const env = opts.env ?? process.env;
  const builtin = BUILTIN_PROVIDERS[name];
  const declared = opts.config?.providers?.[name];
  if (!builtin && !declared) {
    throw new ModelSelectionError(`unknown provider ${JSON.stringify(name)}: declare it under providers.${name} with a baseUrl`);
  }
  const config: ProviderConfig = declared ?? {};
  const kind = config.kind ?? builtin?.kind ?? 'openai-compatible';

  const envUrl = builtin ? nonEmpty(env[builtin.baseUrlEnv]) : undefined;
  if (envUrl !== undefined && !isHttpUrl(envUrl)) {
    throw new ModelSelectionError(`${builtin?.baseUrlEnv} is not an http(s) URL: ${JSON.stringify(envUrl)}`);
  }
  const baseUrl = envUrl ?? config.baseUrl ?? builtin?.baseUrl;
  if (baseUrl === undefined) {
    throw new ModelSelectionError(`provider ${name} has no baseUrl: set providers.${name}.baseUrl in the config file`);
  }

  const keyVar = config.apiKeyEnv ?? builtin?.keyEnv;
  const apiKey = (keyVar ? nonEmpty(env[keyVar]) : undefined) ?? config.apiKey;
  // Built-ins always need a key; a gateway needs one when it says where the key lives.
  const requiresKey = config.requiresKey ?? (builtin !== undefined || config.apiKeyEnv !== undefined);
  if (apiKey === undefined && (requiresKey || kind === 'anthropic')) throw new MissingCredentialError(name, keyVar);

  const resolved: ResolvedProvider = { name, kind, baseUrl, config };
  if (apiKey !== undefined) resolved.apiKey = apiKey;
  return resolved;
}

export interface AdapterExtras {
  resolveAttachment?: AttachmentResolver | undefined;
  /** Overrides the provider's configured idle timeout (tests use a short one). */
  streamIdleTimeoutMs?: number | undefined;
}

export function createAdapter(p: ResolvedProvider, extras: AdapterExtras = {}): LlmAdapter {
  const c = p.config;
  const common = {
    provider: p.name,
    baseUrl: p.baseUrl,
    headers: c.headers,
    streamIdleTimeoutMs: extras.streamIdleTimeoutMs ?? c.streamIdleTimeoutMs,
    resolveAttachment: extras.resolveAttachment,
    // zod types optional keys as `T | undefined`; parsed output simply omits absent keys.
    models: c.models as Record<string, ModelInfo> | undefined,
  };
  switch (p.kind) {
    case 'deepseek':
      return new DeepSeekAdapter({ ...common, apiKey: p.apiKey ?? '', userId: c.userId });
    case 'anthropic':
      return new AnthropicAdapter({
        ...common,
        apiKey: p.apiKey ?? '',
        defaultMaxTokens: c.defaultMaxTokens,
        promptCaching: c.promptCaching ?? p.name === 'anthropic',
      });
    case 'openai-compatible': {
      const dialect: Record<string, unknown> = {};
      // OpenAI's reasoning models reject `max_tokens`; compatible servers mostly only know it.
      const maxTokensField = c.maxTokensField ?? (p.name === 'openai' ? 'max_completion_tokens' : undefined);
      if (maxTokensField !== undefined) dialect['maxTokensField'] = maxTokensField;
      if (c.reasoningPassback !== undefined) dialect['reasoningPassback'] = c.reasoningPassback;
      if (c.includeUsage !== undefined) dialect['includeUsage'] = c.includeUsage;
      return new ChatCompletionsAdapter({ ...common, apiKey: p.apiKey, dialect });
    }
  }
}

export interface Selection {
  ref: ModelRef;
  provider: ResolvedProvider;
  adapter: LlmAdapter;
  reasoningEffort?: string;
}

/** Everything the CLI needs to start an agent: which route and model, and the adapter serving it. */
export function selectModel(opts: SelectOptions & AdapterExtras = {}): Selection {
  const ref = selectModelRef(opts);
  const provider = resolveProvider(ref.provider, opts);
  const selection: Selection = { ref, provider, adapter: createAdapter(provider, opts) };
  if (opts.config?.reasoningEffort !== undefined) selection.reasoningEffort = opts.config.reasoningEffort;
  return selection;
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}
