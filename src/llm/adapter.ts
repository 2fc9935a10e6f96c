/**
 * The adapter seam. One `stream()` call is one provider attempt (provider SDK retries are off:
 * the loop's retry policy owns retries, so every attempt is logged). An adapter either throws an
 * `LlmError` or ends its stream with a `finish` chunk; `normalizeStream` turns both into exactly
 * one terminal `finish`, so the loop has a single failure path.
 */
import type { GenerateRequest, LlmCallConfig, AdapterDefaults } from '../model/request.js';
import type { StreamChunk } from '../model/stream.js';

export interface ModelInfo {
  contextWindow?: number;
  maxOutputTokens?: number;
  /** Effort labels the model accepts; absent when it takes none. */
  reasoningEfforts?: readonly string[];
}

export interface ResolvedCall {
  config: LlmCallConfig;
  adapterDefaults?: AdapterDefaults;
}

export interface LlmAdapter {
  /** Provider routes this adapter serves (`deepseek`, `openai`, `anthropic`, or a config-named gateway). */
  readonly providers: readonly string[];
  /** Fill in defaults the adapter owns (effort, max tokens) and mark them, so resume can tell them apart. */
  resolveCall?(config: LlmCallConfig): ResolvedCall;
  modelInfo?(model: string): ModelInfo | undefined;
  stream(request: GenerateRequest): AsyncIterable<StreamChunk>;
}
