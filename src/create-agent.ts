/**
 * The package's `createAgent`: the model chosen from a `provider:model` string (or call
 * configuration) and the environment, then the agent assembled on it. It sits at the package
 * entry, above every layer, because it joins two of them: the choice (`chooseModel`, src/llm,
 * which builds adapters on the provider SDKs) and the agent (`assembleAgent`, src/agent, which
 * loads no SDK).
 */
import { assembleAgent, type Agent, type AssembleAgentOptions } from './agent/agent.js';
import type { LlmAdapter } from './llm/adapter.js';
import type { LlmConfig } from './llm/config.js';
import { isModelChoice, type ModelChoice } from './llm/model-choice.js';
import { chooseModel } from './llm/select.js';
import type { LlmCallConfig } from './model/request.js';

export interface CreateAgentOptions extends Omit<AssembleAgentOptions, 'model'> {
  /**
   * `provider:model` (e.g. `deepseek:deepseek-v4-flash`; a bare name is a DeepSeek model), the
   * parts, or a choice already made. For a built-in or configured provider that nothing passed in
   * or registered by a plugin serves, the adapter is created from the environment and `llmConfig`
   * (a missing key fails here, naming the variable to set). Any other prefix names a custom route
   * that an adapter passed in, or a plugin, must serve.
   */
  model: string | LlmCallConfig | ModelChoice;
  /** Provider declarations and keys, as in the config file's `providers` section. */
  llmConfig?: LlmConfig;
}

export function createAgent(opts: CreateAgentOptions): Agent {
  const { model, llmConfig, ...rest } = opts;
  const adapters: LlmAdapter[] = opts.adapters === undefined ? [] : Array.isArray(opts.adapters) ? opts.adapters : [opts.adapters];
  const choice = isModelChoice(model) ? model : chooseModel({ spec: model, config: llmConfig, adapters, customRoutes: true });
  return assembleAgent({ ...rest, model: choice });
}
