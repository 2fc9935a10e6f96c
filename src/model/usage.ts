/**
 * Token usage. The log keeps dsh's *disjoint* kinds: `inputTokens` excludes cache reads and cache
 * writes, `reasoningTokens` is counted inside `outputTokens`. OpenTelemetry GenAI totals count
 * cache reads inside input; `toOtelUsage` converts, so no consumer adds them twice.
 */
export interface TokenUsage {
  /** Prompt tokens that were neither read from nor written to the provider's cache. */
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  /** Subset of `outputTokens`. */
  reasoningTokens?: number;
}

/** OpenTelemetry GenAI semantic-convention usage (input includes cached tokens). */
export interface OtelUsage {
  'gen_ai.usage.input_tokens': number;
  'gen_ai.usage.output_tokens': number;
  'gen_ai.usage.cache_read.input_tokens'?: number;
  'gen_ai.usage.cache_creation.input_tokens'?: number;
  'gen_ai.usage.reasoning.output_tokens'?: number;
}

export function toOtelUsage(u: TokenUsage): OtelUsage {
  const out: OtelUsage = {
    'gen_ai.usage.input_tokens': u.inputTokens + (u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0),
    'gen_ai.usage.output_tokens': u.outputTokens,
  };
  if (u.cacheReadTokens !== undefined) out['gen_ai.usage.cache_read.input_tokens'] = u.cacheReadTokens;
  if (u.cacheWriteTokens !== undefined) out['gen_ai.usage.cache_creation.input_tokens'] = u.cacheWriteTokens;
  if (u.reasoningTokens !== undefined) out['gen_ai.usage.reasoning.output_tokens'] = u.reasoningTokens;
  return out;
}

/** Total prompt tokens the provider processed (cache reads and writes included). */
export function totalInputTokens(u: TokenUsage): number {
  return u.inputTokens + (u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0);
}

export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  const sum = (x?: number, y?: number): number | undefined => (x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0));
  const out: TokenUsage = { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens };
  const cr = sum(a.cacheReadTokens, b.cacheReadTokens);
  if (cr !== undefined) out.cacheReadTokens = cr;
  const cw = sum(a.cacheWriteTokens, b.cacheWriteTokens);
  if (cw !== undefined) out.cacheWriteTokens = cw;
  const r = sum(a.reasoningTokens, b.reasoningTokens);
  if (r !== undefined) out.reasoningTokens = r;
  return out;
}
