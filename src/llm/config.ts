/**
 * The config file's `model` / `providers` section. The CLI composes `llmConfigShape` with its other
 * sections; everything here is optional so an empty config selects DeepSeek from the environment.
 */
import { z } from 'zod';

const ProviderKind = z.enum(['deepseek', 'openai-compatible', 'anthropic']);
export type ProviderKind = z.infer<typeof ProviderKind>;

const HttpUrl = z
  .string()
  .min(1)
  .refine((s) => {
    try {
      const u = new URL(s);
      return u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'must be an http(s) URL');

const ModelInfoSchema = z
  .object({
    contextWindow: z.number().int().positive().optional(),
    maxOutputTokens: z.number().int().positive().optional(),
    reasoningEfforts: z.array(z.string().min(1)).optional(),
  })
  .strict();

export const ProviderConfigSchema = z
  .object({
    /** Wire protocol; built-in names imply theirs, any other name defaults to `openai-compatible`. */
    kind: ProviderKind.optional(),
    baseUrl: HttpUrl.optional(),
    /** A literal key. Prefer `apiKeyEnv` so the file holds no secret. */
    apiKey: z.string().min(1).optional(),
    /** Environment variable holding the key. */
    apiKeyEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
      .optional(),
    /** `false` for local servers (Ollama, llama.cpp) that take no key. */
    requiresKey: z.boolean().optional(),
    headers: z.record(z.string(), z.string()).optional(),
    /** Chat-completions output cap field (OpenAI reasoning models need `max_completion_tokens`). */
    maxTokensField: z.enum(['max_tokens', 'max_completion_tokens']).optional(),
    /** Send assistant reasoning back as `reasoning_content` (DeepSeek-style servers). */
    reasoningPassback: z.boolean().optional(),
    /** Ask for `stream_options.include_usage`; turn off for servers that reject it. */
    includeUsage: z.boolean().optional(),
    streamIdleTimeoutMs: z.number().int().positive().optional(),
    /** Anthropic wire: request automatic prompt caching (default: on for `anthropic`, off for gateways). */
    promptCaching: z.boolean().optional(),
    /** Anthropic: `max_tokens` when the call sets none. */
    defaultMaxTokens: z.number().int().positive().optional(),
    /** DeepSeek: sent as `x-deepseek-harness-user-id`. */
    userId: z.string().min(1).optional(),
    /** Advisory facts for models the adapter does not know (context window, effort labels). */
    models: z.record(z.string(), ModelInfoSchema).optional(),
  })
  .strict();
export type ProviderConfig = z.infer<typeof ProviderConfigSchema>;

export const llmConfigShape = {
  /** `provider:model`, or a bare model name for DeepSeek. */
  model: z.string().min(1).optional(),
  reasoningEffort: z.string().min(1).optional(),
  providers: z
    .record(z.string().regex(/^[a-z][a-z0-9_-]*$/, 'provider names are lower-case letters, digits, - and _'), ProviderConfigSchema)
    .optional(),
};

export const LlmConfigSchema = z.object(llmConfigShape);
export type LlmConfig = z.infer<typeof LlmConfigSchema>;
