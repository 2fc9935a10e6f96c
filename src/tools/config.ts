/**
 * The config file sections the tools own: `mcpServers`, `permissions`, `sandbox`. The CLI
 * composes them with its other sections; each is a zod schema so a bad file is refused with
 * the path of the offending field.
 *
 *     {
 *       "sandbox": { "mode": "workspace-write" },
 *       "permissions": { "approval": "ask", "allow": ["bash(git status*)"], "deny": ["bash(rm -rf *)"] },
 *       "mcpServers": {
 *         "everything": { "command": "npx", "args": ["@modelcontextprotocol/server-everything"] },
 *         "docs": { "url": "http://127.0.0.1:3000/mcp", "headers": { "Authorization": "Bearer …" } }
 *       }
 *     }
 */
import { z } from 'zod';
import { parseRule } from './permissions/rules.js';
import { APPROVAL_POLICIES, SANDBOX_MODES } from './permissions/modes.js';

const SERVER_NAME = /^[A-Za-z0-9_-]{1,32}$/;

const common = {
  /** Skip this server without deleting its entry. */
  disabled: z.boolean().optional(),
  /** Per-call timeout for this server's tools (default 60 s). */
  timeoutMs: z.number().int().positive().optional(),
  /** Connect timeout (default 30 s). */
  connectTimeoutMs: z.number().int().positive().optional(),
};

export const stdioServerSchema = z.strictObject({
  type: z.literal('stdio').optional(),
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  /** Added to a minimal inherited environment (PATH, HOME, …), not to the whole of ours. */
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().optional(),
  ...common,
});

export const httpServerSchema = z.strictObject({
  type: z.literal('http').optional(),
  url: z.url({ protocol: /^https?$/ }),
  headers: z.record(z.string(), z.string()).optional(),
  ...common,
});

export const mcpServerSchema = z.union([stdioServerSchema, httpServerSchema]);

export const mcpServersSchema = z.record(z.string(), mcpServerSchema).superRefine((servers, ctx) => {
  for (const name of Object.keys(servers)) {
    if (!SERVER_NAME.test(name)) {
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message: 'a server name is 1-32 characters of [A-Za-z0-9_-] (it prefixes its tool names)',
      });
    }
  }
});

const ruleList = z.array(
  z.string().superRefine((s, ctx) => {
    try {
      parseRule(s, 'deny');
    } catch (e) {
      ctx.addIssue({ code: 'custom', message: (e as Error).message });
    }
  }),
);

export const permissionsSchema = z.strictObject({
  approval: z.enum(APPROVAL_POLICIES as ['ask', 'never']).optional(),
  allow: ruleList.optional(),
  ask: ruleList.optional(),
  deny: ruleList.optional(),
});

export const sandboxSchema = z.strictObject({
  mode: z.enum(SANDBOX_MODES as ['read-only', 'workspace-write', 'danger-full-access']).optional(),
  /** Path of the bwrap binary, or false to disable the backend (the mode is then partially enforced). */
  bubblewrap: z.union([z.string().min(1), z.literal(false)]).optional(),
  /** Whether shell commands may use the network (default true); false needs bubblewrap. */
  network: z.boolean().optional(),
  /** Unix sockets (or directories of them) commands may reach under read-only and workspace-write; all others are masked. */
  allowSockets: z.array(z.string().min(1)).optional(),
});

/** The three sections, as the CLI merges them into its config schema. */
export const toolsConfigSchema = z.object({
  mcpServers: mcpServersSchema.optional(),
  permissions: permissionsSchema.optional(),
  sandbox: sandboxSchema.optional(),
});

export type McpServerConfig = z.infer<typeof mcpServerSchema>;
export type McpServersConfig = z.infer<typeof mcpServersSchema>;
export type PermissionsConfig = z.infer<typeof permissionsSchema>;
export type SandboxConfig = z.infer<typeof sandboxSchema>;
export type ToolsConfig = z.infer<typeof toolsConfigSchema>;
