/**
 * The harness's secrets, as values: every provider key dsh could use (the built-in providers' key
 * variables whether or not they are selected, each configured `apiKeyEnv`, literal `apiKey`s), the
 * configured header values, and credentials written into a base URL (user, password, query
 * values), from the config or the environment. Two uses: nothing a tool runs may see them (the
 * tools layer drops every variable holding one, under any name), and no error that is printed or
 * logged may carry them (`redactSecrets`).
 */
import type { LlmConfig } from './config.js';
import { secretValues, urlSecrets } from './failures.js';
import { BUILTIN_PROVIDERS, type Env } from './select.js';

/** The environment variables that hold provider keys: the built-ins' and every configured `apiKeyEnv`. */
export function keyVariables(config: LlmConfig | undefined): string[] {
  const names = Object.values(BUILTIN_PROVIDERS).map((p) => p.keyEnv);
  for (const p of Object.values(config?.providers ?? {})) if (p?.apiKeyEnv) names.push(p.apiKeyEnv);
  return [...new Set(names)];
}

/** Every secret value the LLM config and the environment give dsh (see the module comment). */
export function llmSecrets(config: LlmConfig | undefined, env: Env): string[] {
  const values: (string | undefined)[] = [];
  for (const name of keyVariables(config)) values.push(env[name], env[name]?.trim());
  for (const b of Object.values(BUILTIN_PROVIDERS)) values.push(...urlSecrets(env[b.baseUrlEnv]));
  for (const p of Object.values(config?.providers ?? {})) {
    if (!p) continue;
    values.push(p.apiKey, ...Object.values(p.headers ?? {}), ...urlSecrets(p.baseUrl));
  }
  return secretValues(values);
}
