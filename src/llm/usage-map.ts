/**
 * Provider usage objects → the log's disjoint `TokenUsage` (see `model/usage.ts`): `inputTokens`
 * excludes cache reads and writes, `reasoningTokens` is a subset of `outputTokens`. A field is set
 * only when the provider reported it, so "0 cached" and "cache not reported" stay distinguishable.
 */
import type { TokenUsage } from '../model/usage.js';

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined;
}

function field(obj: unknown, key: string): unknown {
  return obj && typeof obj === 'object' ? (obj as Record<string, unknown>)[key] : undefined;
}

/**
 * Chat-completions usage (DeepSeek, OpenAI and compatible gateways). DeepSeek's `prompt_tokens`
 * includes cache hits (`prompt_cache_hit_tokens`, also mirrored in `prompt_tokens_details.cached_tokens`),
 * so cache reads are subtracted. xAI counts reasoning *outside* `completion_tokens` (its
 * `total_tokens` = prompt + completion + reasoning); there the reasoning is added to the output so
 * that `reasoningTokens ⊆ outputTokens` holds for every provider.
 */
export function usageFromChatCompletion(raw: unknown): TokenUsage | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const prompt = num(field(raw, 'prompt_tokens'));
  const completion = num(field(raw, 'completion_tokens'));
  if (prompt === undefined && completion === undefined) return undefined;
  const cacheRead = num(field(raw, 'prompt_cache_hit_tokens')) ?? num(field(field(raw, 'prompt_tokens_details'), 'cached_tokens'));
  const reasoning = num(field(field(raw, 'completion_tokens_details'), 'reasoning_tokens'));
  const total = num(field(raw, 'total_tokens'));

  let output = completion ?? 0;
  const reasoningOutside =
    reasoning !== undefined &&
    reasoning > 0 &&
    total !== undefined &&
    total === (prompt ?? 0) + output + reasoning &&
    total !== (prompt ?? 0) + output;
  if (reasoningOutside) output += reasoning;

  const usage: TokenUsage = { inputTokens: Math.max(0, (prompt ?? 0) - (cacheRead ?? 0)), outputTokens: output };
  if (cacheRead !== undefined) usage.cacheReadTokens = cacheRead;
  if (reasoning !== undefined) usage.reasoningTokens = reasoning;
  return usage;
}

/** Anthropic usage: `input_tokens` already excludes cache reads and cache creation. */
export interface AnthropicUsageFields {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

/** Later reports win field by field (`message_delta` usage is cumulative and may correct `message_start`). */
export function mergeAnthropicUsage(into: AnthropicUsageFields, raw: unknown): void {
  for (const key of ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const) {
    const v = num(field(raw, key));
    if (v !== undefined) into[key] = v;
  }
}

export function usageFromAnthropic(u: AnthropicUsageFields): TokenUsage | undefined {
  if (u.input_tokens == null && u.output_tokens == null) return undefined;
  const usage: TokenUsage = { inputTokens: u.input_tokens ?? 0, outputTokens: u.output_tokens ?? 0 };
  if (u.cache_read_input_tokens != null) usage.cacheReadTokens = u.cache_read_input_tokens;
  if (u.cache_creation_input_tokens != null) usage.cacheWriteTokens = u.cache_creation_input_tokens;
  return usage;
}
