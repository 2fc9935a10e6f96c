/**
 * One chat-completions adapter for DeepSeek, OpenAI and every OpenAI-compatible server (OpenRouter,
 * Ollama, vLLM, llama.cpp…), on the official `openai` SDK. What differs between them is a small
 * `ChatDialect`; the streaming, failure mapping and history code path is shared.
 *
 * Each `stream()` call is exactly one HTTP attempt: SDK retries are off (the loop's retry policy
 * owns retries, so every attempt is logged), and every failure ends the stream with an in-band
 * `finish` of kind `error` or `aborted` rather than a throw.
 */
import type OpenAI from 'openai';
import type { LlmAdapter, ModelInfo, ResolvedCall } from './adapter.js';
import type { GenerateRequest, LlmCallConfig } from '../model/request.js';
import type { FinishReason, StreamChunk } from '../model/stream.js';
import { LlmError, errorChain } from '../model/failure.js';
import { USER_AGENT } from './attribution.js';
import type { AttachmentResolver } from './attachments.js';
import { abortedFailure, interruptionReason, lazySdk, nonHttpFailure, sdkUnavailable } from './attempt.js';
import { adapterSecrets, httpFailure, streamErrorFailure, withoutSecrets } from './failures.js';
import { toChatMessages } from './openai-history.js';
import { ChatCompletionTranslator } from './openai-stream.js';
import { AttemptWatchdog, DEFAULT_STREAM_IDLE_TIMEOUT_MS } from './watchdog.js';

export interface ChatDialect {
  /** Body field for the output cap: OpenAI's reasoning models reject `max_tokens`. */
  maxTokensField: 'max_tokens' | 'max_completion_tokens';
  /** Send reasoning back as `reasoning_content` on assistant turns (DeepSeek requires it). */
  reasoningPassback: boolean;
  /** Ask for the usage chunk (`stream_options.include_usage`); a few old servers reject it. */
  includeUsage: boolean;
  /** Body fields expressing a reasoning effort label (absent label: the server's default). */
  effortFields(effort: string | undefined, model: string): Record<string, unknown>;
  /** Per-request headers (DeepSeek's harness session headers). */
  requestHeaders(request: GenerateRequest): Record<string, string>;
  /** Effort to fill in when the caller gave none, for models that declare efforts. */
  defaultEffort?: string;
}

/** Generic OpenAI-compatible behaviour: `reasoning_effort` passed through when set. */
export const GENERIC_DIALECT: ChatDialect = {
  maxTokensField: 'max_tokens',
  reasoningPassback: false,
  includeUsage: true,
  effortFields: (effort) => (effort === undefined ? {} : { reasoning_effort: effort }),
  requestHeaders: () => ({}),
};

export interface ChatCompletionsAdapterOptions {
  /** Provider route this adapter serves (`deepseek`, `openai`, or a config-declared gateway name). */
  provider: string;
  baseUrl: string;
  /** Absent for keyless local servers (Ollama, llama.cpp): no Authorization header is sent. */
  apiKey?: string | undefined;
  /** Extra headers for every request (gateway attribution, routing…). */
  headers?: Record<string, string> | undefined;
  /** Abort an attempt when the provider sends no byte for this long (default 300000). */
  streamIdleTimeoutMs?: number | undefined;
  resolveAttachment?: AttachmentResolver | undefined;
  /** Advisory model facts (context window, efforts), keyed by model name. */
  models?: Record<string, ModelInfo> | undefined;
  dialect?: Partial<ChatDialect> | undefined;
}

type OpenAISdk = typeof OpenAI;

const loadSdk = lazySdk<OpenAISdk>(() => import('openai').then((m) => m.default));

export class ChatCompletionsAdapter implements LlmAdapter {
  readonly providers: readonly string[];
  protected readonly dialect: ChatDialect;
  private readonly idleTimeoutMs: number;

  constructor(
    protected readonly options: ChatCompletionsAdapterOptions,
    baseDialect: ChatDialect = GENERIC_DIALECT,
  ) {
    this.providers = [options.provider];
    this.dialect = { ...baseDialect, ...options.dialect };
    this.idleTimeoutMs = options.streamIdleTimeoutMs ?? DEFAULT_STREAM_IDLE_TIMEOUT_MS;
    // Start loading the SDK now: it loads while the agent starts, and the first request finds
    // it ready. A failure is reported by that request.
    loadSdk().catch(() => undefined);
  }

  modelInfo(model: string): ModelInfo | undefined {
    return this.options.models?.[model];
  }

  /** Fills the dialect's default effort for models that declare efforts; rejects an effort they do not take. */
  resolveCall(config: LlmCallConfig): ResolvedCall {
    const efforts = this.modelInfo(config.model)?.reasoningEfforts;
    if (config.reasoningEffort !== undefined) {
      if (efforts && !efforts.includes(config.reasoningEffort)) {
        throw new LlmError({
          code: 'INVALID_REQUEST',
          message:
            `${config.provider}:${config.model} takes reasoning effort ${efforts.join('|')}, not ` +
            `${JSON.stringify(config.reasoningEffort)}`,
        });
      }
      return { config };
    }
    const fallback = this.dialect.defaultEffort;
    if (efforts && fallback !== undefined && efforts.includes(fallback)) {
      return { config: { ...config, reasoningEffort: fallback }, adapterDefaults: { reasoningEffort: true } };
    }
    return { config };
  }

  async *stream(request: GenerateRequest): AsyncGenerator<StreamChunk, void, undefined> {
    // A failure that quotes what was sent (some gateways echo the key, a header, the URL) is
    // printed and logged: never a secret. Only finish chunks carry failures; `withoutSecrets`
    // passes every other chunk as it is.
    const key = adapterSecrets(this.options);
    const provider = this.options.provider;
    // Loaded before the attempt's clock starts: the first request of a process waits for it.
    let Sdk: OpenAISdk;
    try {
      Sdk = await loadSdk();
    } catch (e) {
      yield { type: 'finish', reason: sdkUnavailable(provider, e) };
      return;
    }
    const watchdog = new AttemptWatchdog({ signal: request.signal, idleTimeoutMs: this.idleTimeoutMs });
    try {
      const body = await this.buildBody(request);
      const client = this.client(Sdk, watchdog);
      const translator = new ChatCompletionTranslator(provider);
      const stream = await client.chat.completions.create(body, {
        signal: watchdog.signal,
        headers: this.dialect.requestHeaders(request),
      });
      for await (const payload of stream) {
        for (const chunk of translator.push(payload)) yield withoutSecrets(chunk, key);
      }
      // The SDK ends its iterator quietly when aborted; the watchdog knows whether that happened.
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
  async buildBody(request: GenerateRequest): Promise<OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming> {
    const body: Record<string, unknown> = {
      model: request.model,
      messages: await toChatMessages(request.messages, {
        system: request.system,
        reasoningPassback: this.dialect.reasoningPassback,
        resolveAttachment: this.options.resolveAttachment,
      }),
      stream: true,
    };
    if (this.dialect.includeUsage) body['stream_options'] = { include_usage: true };
    if (request.tools && request.tools.length > 0) {
      body['tools'] = request.tools.map((t) => ({
        type: 'function',
        function: { name: t.name, description: t.description, parameters: t.parameters },
      }));
    }
    if (request.maxTokens !== undefined) body[this.dialect.maxTokensField] = request.maxTokens;
    if (request.temperature !== undefined) body['temperature'] = request.temperature;
    if (request.stop && request.stop.length > 0) body['stop'] = [...request.stop];
    Object.assign(body, this.dialect.effortFields(request.reasoningEffort, request.model));
    return body as unknown as OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming;
  }

  private client(Sdk: OpenAISdk, watchdog: AttemptWatchdog): OpenAI {
    const keyless = this.options.apiKey === undefined || this.options.apiKey === '';
    return new Sdk({
      // The SDK insists on a key; keyless servers get a placeholder and the header is removed below.
      apiKey: keyless ? 'keyless' : this.options.apiKey,
      baseURL: this.options.baseUrl,
      // Without these the SDK would forward OPENAI_ORG_ID / OPENAI_PROJECT_ID to any gateway.
      organization: null,
      project: null,
      maxRetries: 0,
      // Headers-wait bound; the watchdog (same budget, reset by every byte) normally fires first.
      timeout: watchdog.idleTimeoutMs + 1_000,
      fetch: watchdog.fetch,
      logLevel: 'off',
      defaultHeaders: {
        'User-Agent': USER_AGENT,
        ...(keyless ? { Authorization: null } : {}),
        ...this.options.headers,
      },
    });
  }

  private failureReason(Sdk: OpenAISdk, e: unknown, watchdog: AttemptWatchdog, signal: AbortSignal | undefined): FinishReason {
    const provider = this.options.provider;
    if (watchdog.interruption) return interruptionReason(watchdog, signal);
    const OpenAI = Sdk;
    if (e instanceof OpenAI.APIUserAbortError) return { kind: 'aborted', failure: abortedFailure(signal) };
    if (e instanceof OpenAI.APIConnectionTimeoutError) {
      return { kind: 'error', failure: { code: 'TIMEOUT', message: `${provider}: no response headers in time` } };
    }
    if (e instanceof OpenAI.APIConnectionError) {
      return { kind: 'error', failure: { code: 'TRANSPORT', message: `${provider}: connection failed: ${errorChain(e.cause ?? e)}` } };
    }
    if (e instanceof OpenAI.APIError) {
      if (typeof e.status === 'number') {
        const body = e.error ?? e.message.replace(/^\d{3}\s+/, '');
        return { kind: 'error', failure: httpFailure({ provider, status: e.status, body, headers: e.headers }) };
      }
      return { kind: 'error', failure: streamErrorFailure(provider, e.error ?? e.message) };
    }
    return { kind: 'error', failure: nonHttpFailure(provider, e, watchdog) };
  }
}
