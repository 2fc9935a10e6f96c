/**
 * MCP servers as tools. `connectMcpServers(config)` starts every configured server, lists its
 * tools, and returns a plugin that registers them as `server__tool`. Connecting is async and
 * happens before the agent's first request, because the tool list is part of that request.
 *
 * A server that cannot start is reported in `failures` (its tools are not offered); one that
 * dies later yields error results and is started again on its next call.
 */
import type { ToolPlugin } from '../host.js';
import type { JsonObject } from '../../model/json.js';
import type { ToolDefinition } from '../types.js';
import { ToolError } from '../types.js';
import type { McpServersConfig } from '../config.js';
import { McpConnection, type McpConnectionOptions } from './connection.js';
import { mapCallToolResult, type StoreImage } from './content.js';
import { mcpToolName } from './names.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';

export interface McpOptions extends McpConnectionOptions {
  /** Store images a server returns (else they become placeholders). */
  storeImage?: StoreImage;
}

export interface McpServers {
  plugin: ToolPlugin;
  connections: ReadonlyMap<string, McpConnection>;
  /** Registry name → { server, tool }. */
  tools: ReadonlyMap<string, { server: string; tool: string }>;
  /** Servers that could not be started, with the reason. */
  failures: ReadonlyMap<string, string>;
  close(): Promise<void>;
}

/** Only the shape is checked here; the server validates the rest against its own schema. */
function validateObject(args: unknown): { ok: true; value: unknown } | { ok: false; error: string } {
  return typeof args === 'object' && args !== null && !Array.isArray(args)
    ? { ok: true, value: args }
    : { ok: false, error: 'the arguments must be a JSON object' };
}

function toolDefinition(conn: McpConnection, tool: Tool, name: string, opts: McpOptions): ToolDefinition<Record<string, unknown>> {
  const schema: Record<string, unknown> = { ...(tool.inputSchema as Record<string, unknown>) };
  delete schema.$schema;
  const description = `${tool.description ?? tool.title ?? tool.name} (MCP server "${conn.name}", tool "${tool.name}")`;
  return {
    name,
    description,
    parameters: {
      jsonSchema: schema as JsonObject,
      validate: validateObject,
    },
    // The hint comes from the server; it only lets calls overlap, it never skips approval.
    isConcurrencySafe: () => tool.annotations?.readOnlyHint === true,
    permission: { effects: 'external' },
    async execute(args, ctx) {
      const result = await conn.callTool(tool.name, args, ctx.signal);
      return mapCallToolResult(result as Parameters<typeof mapCallToolResult>[0], opts.storeImage);
    },
  };
}

export async function connectMcpServers(config: McpServersConfig, opts: McpOptions = {}): Promise<McpServers> {
  const connections = new Map<string, McpConnection>();
  const failures = new Map<string, string>();
  const defs: ToolDefinition[] = [];
  const tools = new Map<string, { server: string; tool: string }>();
  const entries = Object.entries(config).filter(([, c]) => c.disabled !== true);
  const listed = await Promise.all(
    entries.map(async ([name, c]) => {
      const conn = new McpConnection(name, c, opts);
      connections.set(name, conn);
      try {
        return { conn, list: await conn.connect() };
      } catch (e) {
        failures.set(name, e instanceof ToolError ? e.message : String(e));
        return { conn, list: [] as Tool[] };
      }
    }),
  );
  for (const { conn, list } of listed) {
    for (const tool of list) {
      const name = mcpToolName(conn.name, tool.name, new Set(tools.keys()));
      tools.set(name, { server: conn.name, tool: tool.name });
      defs.push(toolDefinition(conn, tool, name, opts));
    }
  }
  const close = async (): Promise<void> => {
    await Promise.all([...connections.values()].map((c) => c.close()));
  };
  return {
    plugin: (host) => {
      for (const d of defs) host.tool(d);
    },
    connections,
    tools,
    failures,
    close,
  };
}
