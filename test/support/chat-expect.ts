/**
 * The documented meaning of chat-completions fields, applied to a fixture's raw values: the test
 * side of the usage and finish mapping (docs/providers.md), written without the adapter's code.
 */
import type { ContentBlock } from '../../src/model/message.js';
import type { FinishReason } from '../../src/model/stream.js';
import type { TokenUsage } from '../../src/model/usage.js';

type Rec = Record<string, unknown>;

export function expectedChatUsage(u: Rec | undefined): TokenUsage | undefined {
  if (!u) return undefined;
  const n = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
  const prompt = n(u['prompt_tokens']) ?? 0;
  const completion = n(u['completion_tokens']) ?? 0;
  const cacheRead = n(u['prompt_cache_hit_tokens']) ?? n((u['prompt_tokens_details'] as Rec | undefined)?.['cached_tokens']);
  const reasoning = n((u['completion_tokens_details'] as Rec | undefined)?.['reasoning_tokens']);
  // When total = prompt + completion + reasoning, the provider counted reasoning outside completion.
  const outside = reasoning !== undefined && reasoning > 0 && n(u['total_tokens']) === prompt + completion + reasoning;
  const usage: TokenUsage = { inputTokens: prompt - (cacheRead ?? 0), outputTokens: completion + (outside ? reasoning : 0) };
  if (cacheRead !== undefined) usage.cacheReadTokens = cacheRead;
  if (reasoning !== undefined) usage.reasoningTokens = reasoning;
  return usage;
}

export function expectedChatFinish(reason: string | undefined, blocks: ContentBlock[]): FinishReason['kind'] {
  if (reason === 'length') return 'max-tokens';
  if (reason === 'tool_calls' || (reason === 'stop' && blocks.some((b) => b.type === 'tool-call'))) return 'tool-calls';
  if (reason === 'stop') return blocks.length > 0 ? 'stop' : 'error';
  return 'error';
}
