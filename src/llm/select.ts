/**
 * Model selection: `provider:model` strings, the config file's `model`/`providers` section and the
 * environment → a provider route, a model, and a ready adapter. `chooseModel` is the one function
 * that makes the choice; the rest are its steps. Precedence for the model is the explicit
 * argument (a CLI flag), then `DSH_MODEL`, then `config.model`, then DeepSeek's default; for base
 * URLs and keys the environment beats the config file, which beats built-in defaults.
 */
import type { LlmAdapter, ModelInfo } from './adapter.js';
import { LlmError } from '../model/failure.js';
import { AnthropicAdapter, ANTHROPIC_BASE_URL } from './anthropic.js';
import type { AttachmentResolver } from './attachments.js';
import type { LlmConfig, ProviderConfig, ProviderKind } from './config.js';
import type { ModelChoice, ModelChoiceSource, ResolvedProvider } from './model-choice.js';
import type { LlmCallConfig } from '../model/request.js';
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
      message: variable
        ? `${variable} is not set: export it, or ${where}`
        : `no API key for provider ${provider}: ${where} (or providers.${provider}.apiKeyEnv)`,
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
      `unknown provider ${JSON.stringify(provider)} in ${JSON.stringify(s)}: use one of ${known.join(', ')}, or declare it under ` +
        `providers.${provider} with a baseUrl`,
    );
  }
  if (model === '') throw new ModelSelectionError(`no model after ${JSON.stringify(`${provider}:`)}`);
  return { provider, model };
}

/**
 * The models a config names: its `model`, then every model declared under a provider, in order,
 * without duplicates. A `model` the selection would refuse names none (the caller starts with
 * what `chooseModel` chose and reports its error there).
 */
export function configuredModels(config: LlmConfig): ModelRef[] {
  const out: ModelRef[] = [];
  const seen = new Set<string>();
  const add = (r: ModelRef): void => {
    const key = JSON.stringify([r.provider, r.model]);
    if (seen.has(key)) return;
    seen.add(key);
    out.push(r);
  };
  if (config.model !== undefined) {
    try {
      add(parseModelRef(config.model, config));
    } catch {
      // Refused here as everywhere; not a model to offer.
    }
  }
  for (const [provider, c] of Object.entries(config.providers ?? {}))
    for (const model of Object.keys(c.models ?? {})) if (model.trim() !== '') add({ provider, model });
  return out;
}

export interface SelectOptions {
  /** Explicit choice (e.g. a CLI flag); wins over everything. */
  model?: string | undefined;
  env?: Env | undefined;
  config?: LlmConfig | undefined;
}

/** Provider and model only, as `chooseModel` chooses them. */
export function selectModelRef(opts: SelectOptions = {}): ModelRef {
  const { provider, model } = chooseModel({ spec: opts.model, env: opts.env, config: opts.config }).config;
  return { provider, model };
}

export type { ResolvedProvider };

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

export interface ChooseModelOptions extends AdapterExtras {
  /**
   * The explicit choice (a CLI flag, an option): `provider:model`, a bare DeepSeek model name, or
   * a call configuration. Wins over `DSH_MODEL`, the config file's `model` and the default.
   */
  spec?: string | LlmCallConfig | undefined;
  env?: Env | undefined;
  config?: LlmConfig | undefined;
  /** Adapters already at hand (passed in by the caller): one that serves the provider is used as it is. */
  adapters?: readonly LlmAdapter[] | undefined;
  /**
   * Library rules for a spec (the package's `createAgent`): a prefix that names no known provider
   * is a custom route that an adapter passed in, or a plugin, must serve; and a bare model name
   * beside passed-in adapters whose key is missing says to write their provider's prefix. Off
   * (CLI and config rules): an unknown prefix is refused.
   */
  customRoutes?: boolean;
}

/** Which input decides the model: the spec, else `DSH_MODEL`, else the config file's `model`, else the default. */
export function modelSource(opts: Pick<ChooseModelOptions, 'spec' | 'env' | 'config'>): ModelChoiceSource {
  if (opts.spec !== undefined) return 'argument';
  if (nonEmpty((opts.env ?? process.env)['DSH_MODEL']) !== undefined) return 'DSH_MODEL';
  return opts.config?.model !== undefined ? 'config file' : 'default';
}

/**
 * The model choice, made once: provider and model from the spec, `DSH_MODEL`, the config file or
 * the default (in that order), the route from environment and config, the adapter from a passed-in
 * one or from the route. Route and adapter are resolved when first asked for (see `ModelChoice`),
 * so a caller that only reports the choice creates no adapter, and one whose plugins may serve the
 * provider asks only when none does.
 */
export function chooseModel(opts: ChooseModelOptions = {}): ModelChoice {
  const env = opts.env ?? process.env;
  const spec = opts.spec;
  const from = modelSource(opts);
  let config: LlmCallConfig;
  if (spec !== undefined) {
    config =
      typeof spec === 'string'
        ? { ...(opts.customRoutes ? parseModelSpec(spec, opts.config) : parseModelRef(spec, opts.config)) }
        : { ...spec };
  } else {
    config = { ...parseModelRef(nonEmpty(env['DSH_MODEL']) ?? opts.config?.model ?? DEFAULT_MODEL_REF, opts.config) };
  }
  const provider = config.provider;
  const known = knownProviders(opts.config).includes(provider);
  const given = opts.adapters?.find((a) => a.providers.includes(provider));
  let route: ResolvedProvider | undefined;
  let adapter: LlmAdapter | undefined = given;
  const routeOnce = (): ResolvedProvider | undefined => {
    if (route === undefined && known) route = resolveProvider(provider, { env, config: opts.config });
    return route;
  };
  const adapterOnce = (): LlmAdapter | undefined => {
    if (adapter !== undefined || !known) return adapter;
    try {
      adapter = createAdapter(routeOnce()!, opts);
    } catch (e) {
      // A bare model name beside a passed-in adapter: the likely fix is the prefix, not a key.
      const served = (opts.adapters ?? []).flatMap((a) => a.providers);
      if (
        opts.customRoutes &&
        e instanceof MissingCredentialError &&
        typeof spec === 'string' &&
        !spec.includes(':') &&
        served.length > 0
      ) {
        throw new ModelSelectionError(
          `model ${JSON.stringify(spec)} has no provider prefix, so it goes to ${provider}, and ${e.message}; to use the adapter ` +
            `you passed, name its provider: ${JSON.stringify(`${served[0]}:${spec}`)}`,
        );
      }
      throw e;
    }
    return adapter;
  };
  return { config, from, route: routeOnce, adapter: adapterOnce };
}

/**
 * Read a model reference by library rules. Known providers follow the selection rules (a bare
 * name is a DeepSeek model; model names may hold colons); any other `provider:model` names a
 * custom route that an adapter passed in, or a plugin, must serve.
 */
export function parseModelSpec(spec: string, config?: LlmConfig): ModelRef {
  try {
    return parseModelRef(spec, config);
  } catch (e) {
    const i = spec.indexOf(':');
    if (i > 0 && i < spec.length - 1) return { provider: spec.slice(0, i), model: spec.slice(i + 1) };
    throw e;
  }
}

export interface Selection {
  ref: ModelRef;
  provider: ResolvedProvider;
  adapter: LlmAdapter;
  reasoningEffort?: string;
}

/** `chooseModel` with its route and adapter resolved at once, and the config file's reasoning effort. */
export function selectModel(opts: SelectOptions & AdapterExtras = {}): Selection {
  const choice = chooseModel({ ...opts, spec: opts.model });
  const selection: Selection = {
    ref: { provider: choice.config.provider, model: choice.config.model },
    provider: choice.route()!,
    adapter: choice.adapter()!,
  };
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
