/**
 * dsh: an agent harness whose session is an append-only, typed event log.
 *
 * Layers, bottom up (each imports only from those before it; the table in docs/architecture.md
 * is the order, and test/architecture/layers.test.ts holds the code to it): model vocabulary →
 * session log → hook bus → model adapters → tools → agent loop → compaction → store → observability
 * → import → query → search → replay → config → PostgreSQL store → viewer → coding preset → worker
 * → service → terminal → ACP → SDK protocol → CLI. This entry re-exports them in that order;
 * nothing imports it.
 */
export * from './model/index.js';
export * from './session/index.js';
export * from './hooks/index.js';
export * from './llm/index.js';
export {
  ScriptedAdapter,
  textResponse,
  toolCallResponse,
  maxTokensResponse,
  errorResponse,
  emptyResponse,
  type ScriptEntry,
  type ScriptedCall,
} from './llm/scripted.js';
export { AdapterRegistry, AdapterRegistryError } from './llm/registry.js';
export {
  PriceTable,
  DEEPSEEK_DEFAULT_PRICES,
  DEEPSEEK_PRICING_URL,
  DEEPSEEK_PRICES_CHECKED,
  DEEPSEEK_PROVIDERS,
  costAt,
  inPeak,
  type PriceRule,
  type TokenRates,
  type PeakTier,
  type Priced,
  type PricePeriod,
  type CallPoint,
  type PriceTableOptions,
} from './llm/pricing.js';
export { pricesConfigShape, PriceEntrySchema, type PriceEntry } from './llm/pricing-config.js';
export * from './tools/index.js';
export { Agent, AgentError, assembleAgent, userMessage, type AssembleAgentOptions } from './agent/agent.js';
export type { AgentContext, AgentHost, AgentOptions, AgentStatus, Plugin, UserInput } from './agent/context.js';
export type { PreStepDecision, RequestErrorDecision } from './agent/hooks.js';
export { Inbox, InboxError } from './agent/inbox.js';
export { BlockAssembler } from './agent/assembler.js';
export { PromptSections, type PromptSection } from './agent/prompt.js';
export { InvariantError, assertModelVisibleRecorded } from './agent/invariant.js';
export { retryPolicy, backoffDelay, DEFAULT_RETRYABLE_CODES, type RetryPolicyOptions } from './agent/retry.js';
export * from './compaction/index.js';
export * from './store/index.js';
export * from './observability/index.js';
export * from './import/index.js';
export * from './query/index.js';
export * from './search/index.js';
export * from './replay/index.js';
export * from './config/index.js';
export * from './postgres/index.js';
export * from './viewer/index.js';
export * from './coding/index.js';
export * from './worker/index.js';
export * from './serve/index.js';
export * from './sdk/index.js';
export { createAgent, type CreateAgentOptions } from './create-agent.js';
