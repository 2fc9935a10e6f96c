/**
 * Reading the tools' config sections (`config.ts` holds their zod schemas, which only the config
 * file's validation needs): kept apart so the agent start-up can use them without loading zod.
 */
import type { McpServerConfig, ToolsConfig } from './config.js';
import type { PermissionsOptions } from './permissions/plugin.js';

export function isHttpServer(s: McpServerConfig): s is Extract<McpServerConfig, { url: string }> {
  return 'url' in s;
}

/** The `permissions()` options the `permissions` and `sandbox` sections describe. */
export function permissionsOptionsFrom(cfg: Pick<ToolsConfig, 'permissions' | 'sandbox'>): PermissionsOptions {
  const o: PermissionsOptions = {};
  if (cfg.sandbox?.mode !== undefined) o.sandbox = cfg.sandbox.mode;
  if (cfg.sandbox?.bubblewrap !== undefined) o.bubblewrap = cfg.sandbox.bubblewrap;
  if (cfg.sandbox?.network !== undefined) o.network = cfg.sandbox.network;
  if (cfg.sandbox?.allowSockets) o.allowSockets = cfg.sandbox.allowSockets;
  if (cfg.permissions?.approval !== undefined) o.approval = cfg.permissions.approval;
  if (cfg.permissions?.allow) o.allow = cfg.permissions.allow;
  if (cfg.permissions?.ask) o.ask = cfg.permissions.ask;
  if (cfg.permissions?.deny) o.deny = cfg.permissions.deny;
  return o;
}
