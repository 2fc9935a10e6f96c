/**
 * Anthropic Messages API adapter on `@anthropic-ai/sdk`. One `stream()` call is one HTTP attempt
 * (SDK retries off); every failure ends the stream with an in-band `error`/`aborted` finish.
 * Thinking is requested from a reasoning effort label (a token budget on Claude 3.7–4.5, adaptive
 * thinking with `output_config.effort` on the later generation), and its signed blocks come back
 * through `finish.replayState` (see anthropic-stream.ts / anthropic-history.ts).
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { LlmAdapter, ModelInfo, ResolvedCall } from './adapter.js';
import type { GenerateRequest, LlmCallConfig } from '../model/request.js';
import type { FinishReason, StreamChunk } from '../model/stream.js';
import { LlmError, errorChain } from '../model/failure.js';
import { USER_AGENT } from './attribution.js';
import { toAnthropicMessages } from './anthropic-history.js';
import { AnthropicTranslator } from './anthropic-stream.js';
import { abortedFailure, interruptionReason, lazySdk, nonHttpFailure, sdkUnavailable } from './attempt.js';
import type { AttachmentResolver } from './attachments.js';
import { adapterSecrets, httpFailure, streamErrorFailure, withoutSecrets } from './failures.js';
import { AttemptWatchdog, DEFAULT_STREAM_IDLE_TIMEOUT_MS } from './watchdog.js';

export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';
/** Labels for models with budgeted extended thinking (Claude 3.7 to 4.5). */
export const ANTHROPIC_BUDGET_EFFORTS = ['off', 'low', 'medium', 'high'] as const;
/** Labels for the adaptive-thinking generation, sent as `output_config.effort`. */
export const ANTHROPIC_ADAPTIVE_EFFORTS = ['off', 'low', 'medium', 'high', 'xhigh', 'max'] as const;
/** Thinking budget per effort label; always kept below `max_tokens` (see `thinkingBudget`). */
export const ANTHROPIC_THINKING_BUDGETS: Readonly<Record<string, number>> = { low: 2_048, medium: 8_192, high: 16_384 };
const MIN_THINKING_BUDGET = 1_024;

// The adaptive generation rejects `budget_tokens`; the earlier thinking models only take it.
const ADAPTIVE_FAMILY = /^claude-((opus|sonnet)-4-[6-9]|[a-z]+-[5-9]|mythos|fable)/;
const BUDGET_FAMILY = /^claude-(3-7-sonnet|(opus|sonnet|haiku)-4)/;

export type ThinkingStyle = 'adaptive' | 'budget';

/** How a model takes thinking; a model id we do not recognise gets the budget form and the API decides. */
export function thinkingStyle(model: string): ThinkingStyle {
  return ADAPTIVE_FAMILY.test(model) ? 'adaptive' : 'budget';
}

export interface AnthropicAdapterOptions {
  provider?: string;
  baseUrl?: string;
  apiKey: string;
  headers?: Record<string, string> | undefined;
  streamIdleTimeoutMs?: number | undefined;
  resolveAttachment?: AttachmentResolver | undefined;
  /** `max_tokens` when the call sets none (the API requires one). */
  defaultMaxTokens?: number | undefined;
  /**
   * Ask for automatic prompt caching (top-level `cache_control`, which marks the last cacheable
   * block). The loop resends a growing history every step, so the prefix is read from cache.
   * Default true; Anthropic-compatible gateways may not know the field.
   */
  promptCaching?: boolean | undefined;
  models?: Record<string, ModelInfo> | undefined;
}

type AnthropicSdk = typeof Anthropic;

const loadSdk = lazySdk<AnthropicSdk>(() => import('@anthropic-ai/sdk').then((m) => m.default));

export class AnthropicAdapter implements LlmAdapter {
  readonly providers: readonly string[];
  private readonly idleTimeoutMs: number;

  constructor(private readonly options: AnthropicAdapterOptions) {
    this.providers = [options.provider ?? 'anthropic'];
    this.idleTimeoutMs = options.streamIdleTimeoutMs ?? DEFAULT_STREAM_IDLE_TIMEOUT_MS;
    // Start loading the SDK now: it loads while the agent starts, and the first request finds
    // it ready. A failure is reported by that request.
    loadSdk().catch(() => undefined);
  }

  modelInfo(model: string): ModelInfo | undefined {
    const configured = this.options.models?.[model];
    if (configured) return configured;
    if (ADAPTIVE_FAMILY.test(model))
      return { contextWindow: 200_000, maxOutputTokens: 32_000, reasoningEfforts: ANTHROPIC_ADAPTIVE_EFFORTS };
    if (BUDGET_FAMILY.test(model)) return { contextWindow: 200_000, maxOutputTokens: 32_000, reasoningEfforts: ANTHROPIC_BUDGET_EFFORTS };
    return undefined;
  }

  /** `max_tokens` is mandatory for Anthropic, so it is always filled (and marked) here. */
  resolveCall(config: LlmCallConfig): ResolvedCall {
    const efforts = this.modelInfo(config.model)?.reasoningEfforts;
    if (config.reasoningEffort !== undefined && efforts && !efforts.includes(config.reasoningEffort)) {
      throw new LlmError({
        code: 'INVALID_REQUEST',
        message:
          `${config.provider}:${config.model} takes reasoning effort ${efforts.join('|')}, not ` +
          `${JSON.stringify(config.reasoningEffort)}`,
      });
    }
    if (config.maxTokens !== undefined) return { config };
    return { config: { ...config, maxTokens: this.defaultMaxTokens(config.model) }, adapterDefaults: { maxTokens: true } };
  }

  async *stream(request: GenerateRequest): AsyncGenerator<StreamChunk, void, undefined> {
    // A failure that quotes what was sent (some gateways echo the key, a header, the URL) is
    // printed and logged: never a secret. Only finish chunks carry failures; `withoutSecrets`
    // passes every other chunk as it is.
    const key = adapterSecrets(this.options);
    const provider = this.providers[0] ?? 'anthropic';
    // Loaded before the attempt's clock starts: the first request of a process waits for it.
    let Sdk: AnthropicSdk;
    try {
      Sdk = await loadSdk();
    } catch (e) {
      yield { type: 'finish', reason: sdkUnavailable(provider, e) };
      return;
    }
    const watchdog = new AttemptWatchdog({ signal: request.signal, idleTimeoutMs: this.idleTimeoutMs });
    try {
      const body = await this.buildBody(request);
      const translator = new AnthropicTranslator(provider);
      const stream = await this.client(Sdk, watchdog).messages.create(body, { signal: watchdog.signal });
      for await (const event of stream) {
        for (const chunk of translator.push(event)) yield withoutSecrets(chunk, key);
      }
      if (watchdog.interruption) {
        yield { type: 'finish', reason: interruptionReason(watchdog, request.signal) };
        return;
      }
      for (const chunk of translator.end()) yield withoutSecrets(chunk, key);
    } catch (e) {
      yield withoutSecrets({ type: 'finish', reason: this.failureReason(Sdk, e, watchdog, request.signal) }, key);
    } finally {
      watchdog.dispose();
    }
  }

  /** The request body; exposed for history tests. */
  async buildBody(request: GenerateRequest): Promise<Anthropic.Messages.MessageCreateParamsStreaming> {
    const history = await toAnthropicMessages(request.messages, {
      system: request.system,
      replayProviders: this.providers,
      resolveAttachment: this.options.resolveAttachment,
    });
    const maxTokens = request.maxTokens ?? this.defaultMaxTokens(request.model);
    const body: Anthropic.Messages.MessageCreateParamsStreaming = {
      model: request.model,
      max_tokens: maxTokens,
      messages: history.messages,
      stream: true,
    };
    if (history.system !== undefined) body.system = history.system;
    if (this.options.promptCaching !== false) body.cache_control = { type: 'ephemeral' };
    if (request.tools && request.tools.length > 0) {
      body.tools = request.tools.map((t) => ({
        name: t.name,
        description: t.description,
        input_schema: { ...t.parameters, type: 'object' } as Anthropic.Messages.Tool.InputSchema,
      }));
    }
    if (request.stop && request.stop.length > 0) body.stop_sequences = [...request.stop];
    Object.assign(body, thinkingFields(request.model, request.reasoningEffort, maxTokens));
    // No temperature: the Messages API deprecated it and SDK 1.x no longer has the parameter.
    return body;
  }

  private defaultMaxTokens(model: string): number {
    return this.options.defaultMaxTokens ?? this.modelInfo(model)?.maxOutputTokens ?? 4_096;
  }

  private client(Sdk: AnthropicSdk, watchdog: AttemptWatchdog): Anthropic {
    return new Sdk({
      apiKey: this.options.apiKey,
      authToken: null,
      baseURL: this.options.baseUrl ?? ANTHROPIC_BASE_URL,
      maxRetries: 0,
      timeout: watchdog.idleTimeoutMs + 1_000,
      fetch: watchdog.fetch,
      logLevel: 'off',
      openTelemetry: false,
      defaultHeaders: { 'User-Agent': USER_AGENT, ...this.options.headers },
    });
  }

  private failureReason(Sdk: AnthropicSdk, e: unknown, watchdog: AttemptWatchdog, signal: AbortSignal | undefined): FinishReason {
    const provider = this.providers[0] ?? 'anthropic';
    if (watchdog.interruption) return interruptionReason(watchdog, signal);
    const Anthropic = Sdk;
    if (e instanceof Anthropic.APIUserAbortError) return { kind: 'aborted', failure: abortedFailure(signal) };
    if (e instanceof Anthropic.APIConnectionTimeoutError) {
      return { kind: 'error', failure: { code: 'TIMEOUT', message: `${provider}: no response headers in time` } };
    }
    if (e instanceof Anthropic.APIConnectionError) {
      return { kind: 'error', failure: { code: 'TRANSPORT', message: `${provider}: connection failed: ${errorChain(e.cause ?? e)}` } };
    }
    if (e instanceof Anthropic.APIError) {
      if (typeof e.status === 'number')
        return { kind: 'error', failure: httpFailure({ provider, status: e.status, body: e.error ?? e.message, headers: e.headers }) };
      return { kind: 'error', failure: streamErrorFailure(provider, e.error ?? e.message) };
    }
    return { kind: 'error', failure: nonHttpFailure(provider, e, watchdog) };
  }
}

/** Request fields for an effort label; no label leaves the model's default behaviour. */
export function thinkingFields(
  model: string,
  effort: string | undefined,
  maxTokens: number,
): Pick<Anthropic.Messages.MessageCreateParamsStreaming, 'thinking' | 'output_config'> {
  if (effort === undefined) return {};
  if (effort === 'off') return { thinking: { type: 'disabled' } };
  if (thinkingStyle(model) === 'adaptive') {
    return { thinking: { type: 'adaptive' }, output_config: { effort: effort as 'high' } };
  }
  const budget = thinkingBudget(effort, maxTokens);
  return budget === undefined ? {} : { thinking: { type: 'enabled', budget_tokens: budget } };
}

/** Budget for an effort label, kept below `max_tokens`; undefined when `max_tokens` leaves no room to think. */
export function thinkingBudget(effort: string, maxTokens: number): number | undefined {
  const wanted = ANTHROPIC_THINKING_BUDGETS[effort] ?? ANTHROPIC_THINKING_BUDGETS['medium'] ?? MIN_THINKING_BUDGET;
  const budget = Math.min(wanted, maxTokens - MIN_THINKING_BUDGET);
  return budget >= MIN_THINKING_BUDGET ? budget : undefined;
}

export function createAnthropicAdapter(options: AnthropicAdapterOptions): AnthropicAdapter {
  return new AnthropicAdapter(options);
}
