/** Small mappings more than one importer needs. */
import { basename, isAbsolute } from 'node:path';
import type { LossLedger } from './losses.js';
import type { TokenUsage } from '../model/usage.js';
import { count, isObj } from './source.js';

/** A dsh header's cwd must be an absolute POSIX path; another (a Windows path) is counted lost. */
export function absoluteCwd(cwd: string | undefined, losses: LossLedger, line: number | undefined): string | undefined {
  if (cwd === undefined || cwd === '') return undefined;
  if (isAbsolute(cwd)) return cwd;
  losses.add('cwd', `not an absolute path here (${cwd.slice(0, 60)}); the session has no cwd`, line);
  return undefined;
}

/**
 * OpenAI-style usage (chat completions, Responses, LiteLLM): prompt tokens include cached ones,
 * which dsh keeps apart (`inputTokens` excludes cache reads and writes); reasoning is part of output.
 */
export function openAiUsage(u: unknown): TokenUsage | undefined {
  if (!isObj(u)) return undefined;
  const prompt = count(u.prompt_tokens ?? u.input_tokens);
  const completion = count(u.completion_tokens ?? u.output_tokens);
  if (prompt === undefined && completion === undefined) return undefined;
  const details = isObj(u.prompt_tokens_details) ? u.prompt_tokens_details : isObj(u.input_tokens_details) ? u.input_tokens_details : {};
  const cached =
    count(details.cached_tokens) ?? count(u.cached_input_tokens) ?? count(u.cache_read_input_tokens) ?? count(u.cache_read_tokens);
  const written = count(u.cache_creation_input_tokens) ?? count(u.cache_write_tokens);
  const outDetails = isObj(u.completion_tokens_details)
    ? u.completion_tokens_details
    : isObj(u.output_tokens_details)
      ? u.output_tokens_details
      : {};
  const reasoning = count(outDetails.reasoning_tokens) ?? count(u.reasoning_output_tokens);
  const out: TokenUsage = { inputTokens: Math.max(0, (prompt ?? 0) - (cached ?? 0) - (written ?? 0)), outputTokens: completion ?? 0 };
  if (cached !== undefined) out.cacheReadTokens = cached;
  if (written !== undefined) out.cacheWriteTokens = written;
  if (reasoning !== undefined) out.reasoningTokens = reasoning;
  return out;
}

/** A session id for a source that has none: the file's name without its extension. */
export function idFromFile(file: string | undefined, fallback: string): string {
  if (file === undefined || file === '-' || file === '<stdin>') return fallback;
  const stem = basename(file).replace(/\.(jsonl|json|traj)$/i, '');
  return stem === '' || stem === '.' || stem === '..' ? fallback : stem;
}
