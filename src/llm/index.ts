/** Provider adapters, model selection, the stream grammar and the normalised attempt runner. */
export * from './adapter.js';
export { StreamGrammar, StreamGrammarError, checkStream, STREAM_GRAMMAR_CODES } from './grammar.js';
export type { StreamGrammarCode, StreamGrammarOptions } from './grammar.js';
export { normalizeStream, collectStream } from './runtime.js';
export { ChatCompletionsAdapter, GENERIC_DIALECT } from './openai-compatible.js';
export type { ChatCompletionsAdapterOptions, ChatDialect } from './openai-compatible.js';
export { DeepSeekAdapter, createDeepSeekAdapter, DEEPSEEK_BASE_URL, DEEPSEEK_DEFAULT_MODEL, DEEPSEEK_EFFORTS } from './deepseek.js';
export type { DeepSeekAdapterOptions } from './deepseek.js';
export { AnthropicAdapter, createAnthropicAdapter, ANTHROPIC_BASE_URL, thinkingStyle } from './anthropic.js';
export type { AnthropicAdapterOptions } from './anthropic.js';
export type { AttachmentResolver, ResolvedAttachment } from './attachments.js';
export { ADAPTER_FAILURE_CODES, httpFailure, retryAfterMs, redactSecrets, withoutSecrets, urlSecrets, REDACTED } from './failures.js';
export { keyVariables, llmSecrets } from './secrets.js';
export { usageFromChatCompletion, usageFromAnthropic } from './usage-map.js';
export { DEFAULT_STREAM_IDLE_TIMEOUT_MS } from './watchdog.js';
export { USER_AGENT, DSH_VERSION } from './attribution.js';
export { LlmConfigSchema, ProviderConfigSchema, llmConfigShape } from './config.js';
export type { LlmConfig, ProviderConfig, ProviderKind } from './config.js';
export {
  BUILTIN_PROVIDERS,
  DEFAULT_MODEL_REF,
  MissingCredentialError,
  ModelSelectionError,
  chooseModel,
  createAdapter,
  parseModelSpec,
  parseModelRef,
  resolveProvider,
  selectModel,
  selectModelRef,
} from './select.js';
export type { Env, ModelRef, ResolvedProvider, Selection, SelectOptions, AdapterExtras, ChooseModelOptions } from './select.js';
export { isModelChoice, type ModelChoice, type ModelChoiceSource } from './model-choice.js';
