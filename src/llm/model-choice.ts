/**
 * What a model choice is, without the code that makes one: the agent layer takes a `ModelChoice`
 * and never loads a provider SDK, while `chooseModel` (./select.ts), which builds adapters on the
 * SDKs, makes it. The choice is made once, where the spec, the environment and the config are
 * known (the CLI, the coding preset, the package's `createAgent`), and passed down as it is.
 */
import type { LlmCallConfig } from '../model/request.js';
import type { LlmAdapter } from './adapter.js';
import type { ProviderConfig, ProviderKind } from './config.js';

/** Which input decided the model: an explicit spec (a flag, an option), `DSH_MODEL`, the config file's `model`, or DeepSeek's default. */
export type ModelChoiceSource = 'argument' | 'DSH_MODEL' | 'config file' | 'default';

/** A built-in or configured provider, with its base URL and key resolved from environment and config. */
export interface ResolvedProvider {
  name: string;
  kind: ProviderKind;
  baseUrl: string;
  apiKey?: string;
  config: ProviderConfig;
}

export interface ModelChoice {
  /** Provider and model (and any sampling the spec carried). */
  readonly config: LlmCallConfig;
  readonly from: ModelChoiceSource;
  /**
   * The provider's route, for a built-in or configured provider: resolved on first call, then
   * kept. Throws `MissingCredentialError` (naming the variable to set) or `ModelSelectionError`.
   * Undefined for a custom route (a provider only a passed-in adapter or a plugin serves).
   */
  route(): ResolvedProvider | undefined;
  /**
   * The adapter serving `config.provider`: an adapter passed to `chooseModel` that serves it, or
   * one made from `route()` on first call (then kept). Undefined for a custom route no passed-in
   * adapter serves. Throws what `route()` throws.
   */
  adapter(): LlmAdapter | undefined;
}

export function isModelChoice(v: unknown): v is ModelChoice {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as ModelChoice).adapter === 'function' &&
    typeof (v as ModelChoice).route === 'function'
  );
}
