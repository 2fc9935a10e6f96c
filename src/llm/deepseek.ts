/**
 * DeepSeek on the chat-completions code path. DeepSeek-specific facts (from the real dsh and the
 * DeepSeek API docs): efforts `off|low|high|max`, `off` sent as `thinking:{type:'disabled'}`, other
 * labels as `thinking:{type:'enabled'}` plus `reasoning_effort`; default `high`; reasoning passed
 * back as `reasoning_content`; harness headers for session correlation.
 */
import type { ModelInfo } from './adapter.js';
import type { GenerateRequest } from '../model/request.js';
import { deepseekHarnessHeaders } from './attribution.js';
import { ChatCompletionsAdapter, type ChatCompletionsAdapterOptions, type ChatDialect } from './openai-compatible.js';

export const DEEPSEEK_BASE_URL = 'https://api.deepseek.com';
export const DEEPSEEK_EFFORTS = ['off', 'low', 'high', 'max'] as const;
export const DEEPSEEK_DEFAULT_EFFORT = 'high';
export const DEEPSEEK_DEFAULT_MODEL = 'deepseek-v4-flash';

const V4_INFO: ModelInfo = { contextWindow: 1_000_000, maxOutputTokens: 256_000, reasoningEfforts: DEEPSEEK_EFFORTS };

export function deepseekDialect(userId?: string): ChatDialect {
  return {
    maxTokensField: 'max_tokens',
    reasoningPassback: true,
    includeUsage: true,
    defaultEffort: DEEPSEEK_DEFAULT_EFFORT,
    effortFields(effort) {
      if (effort === undefined) return {};
      if (effort === 'off') return { thinking: { type: 'disabled' } };
      return { thinking: { type: 'enabled' }, reasoning_effort: effort };
    },
    requestHeaders: (request: GenerateRequest) => deepseekHarnessHeaders(request, userId),
  };
}

export interface DeepSeekAdapterOptions extends Omit<ChatCompletionsAdapterOptions, 'provider' | 'baseUrl' | 'dialect'> {
  /** Route name; `deepseek` unless a config names it otherwise. */
  provider?: string;
  baseUrl?: string;
  apiKey: string;
  /** Sent as `x-deepseek-harness-user-id` when set. */
  userId?: string | undefined;
}

export class DeepSeekAdapter extends ChatCompletionsAdapter {
  constructor(options: DeepSeekAdapterOptions) {
    const { userId, ...rest } = options;
    super({ ...rest, provider: options.provider ?? 'deepseek', baseUrl: options.baseUrl ?? DEEPSEEK_BASE_URL }, deepseekDialect(userId));
  }

  override modelInfo(model: string): ModelInfo | undefined {
    // Only the V4 family takes effort labels; `deepseek-chat`/`deepseek-reasoner` fix thinking by name.
    return super.modelInfo(model) ?? (model.startsWith('deepseek-v4') ? V4_INFO : undefined);
  }
}

export function createDeepSeekAdapter(options: DeepSeekAdapterOptions): DeepSeekAdapter {
  return new DeepSeekAdapter(options);
}
