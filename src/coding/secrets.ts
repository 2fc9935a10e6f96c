/**
 * Every secret value a dsh configuration holds, whatever section it is in: the LLM section's (keys
 * of every known provider from the environment or the file, header values, URL credentials) and
 * the MCP servers' (HTTP header values and URL credentials; a stdio server's `env` values are not
 * taken: they are as often paths and flags, and a path would hide every variable holding it).
 * Kept out of tool environments and out of every printed or logged error.
 */
import { llmSecrets } from '../llm/secrets.js';
import { secretValues, urlSecrets } from '../llm/failures.js';
import type { Env } from '../llm/select.js';
import { llmSection, type DshConfig } from '../config/config.js';

export function configuredSecrets(config: DshConfig, env: Env): string[] {
  const values = llmSecrets(llmSection(config), env);
  for (const s of Object.values(config.mcpServers ?? {})) {
    if ('url' in s) values.push(...Object.values(s.headers ?? {}), ...urlSecrets(s.url));
  }
  return secretValues(values);
}
