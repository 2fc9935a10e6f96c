/**
 * One MCP server connection (stdio or streamable HTTP), through the SDK's `Client`.
 *
 * A server can die at any time (a crashed process, a restarted HTTP service). Calls in flight
 * when it dies fail (the caller turns that into an error result); the connection is then marked
 * dead and the next call starts it again before calling. Protocol errors the server answers
 * (unknown tool, bad params) and timeouts are not deaths.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpServerConfig } from '../config.js';
import { isHttpServer } from '../config-options.js';
import { ToolError } from '../types.js';

export class McpCallError extends ToolError<'MCP_CLOSED' | 'MCP_UNAVAILABLE' | 'MCP_TIMEOUT' | 'MCP_ERROR' | 'MCP_SERVER_DIED'> {
  override name = 'McpError';
}

export const DEFAULT_MCP_TIMEOUT_MS = 60_000;
export const DEFAULT_MCP_CONNECT_TIMEOUT_MS = 30_000;
const STDERR_KEEP = 4000;

type State = 'idle' | 'connecting' | 'ready' | 'dead' | 'closed';

interface McpSdk {
  Client: typeof import('@modelcontextprotocol/sdk/client/index.js').Client;
  StdioClientTransport: typeof StdioClientTransport;
  getDefaultEnvironment: typeof import('@modelcontextprotocol/sdk/client/stdio.js').getDefaultEnvironment;
  StreamableHTTPClientTransport: typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js').StreamableHTTPClientTransport;
  McpError: typeof import('@modelcontextprotocol/sdk/types.js').McpError;
  ErrorCode: typeof import('@modelcontextprotocol/sdk/types.js').ErrorCode;
}

let sdk: Promise<McpSdk> | undefined;
/**
 * The MCP SDK (with its schema and JSON-Schema validators) is imported by the first connection:
 * a run with no MCP servers configured never loads it.
 */
function loadSdk(): Promise<McpSdk> {
  return (sdk ??= Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]).then(([client, stdio, http, types]) => ({
    Client: client.Client,
    StdioClientTransport: stdio.StdioClientTransport,
    getDefaultEnvironment: stdio.getDefaultEnvironment,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    McpError: types.McpError,
    ErrorCode: types.ErrorCode,
  })));
}

export interface McpConnectionOptions {
  clientName?: string;
  clientVersion?: string;
  /** Working directory for stdio servers without their own `cwd`. */
  cwd?: string;
}

export class McpConnection {
  private client: Client | undefined;
  private transport: Transport | undefined;
  /** Set by the first connection attempt. */
  private sdk: McpSdk | undefined;
  private state: State = 'idle';
  private connecting: Promise<Tool[]> | undefined;
  private stderrTail = '';
  /** How many times the server was started again after dying. */
  restarts = 0;
  /** Why the connection last died, for messages. */
  lastDeath: string | undefined;

  constructor(
    readonly name: string,
    readonly config: McpServerConfig,
    private readonly opts: McpConnectionOptions = {},
  ) {}

  get alive(): boolean {
    return this.state === 'ready';
  }

  /** The stdio server's process id (for diagnostics and tests). */
  get pid(): number | null {
    return this.sdk !== undefined && this.transport instanceof this.sdk.StdioClientTransport ? this.transport.pid : null;
  }

  /** Server stderr seen lately (stdio only), to explain a failure. */
  get stderr(): string {
    return this.stderrTail;
  }

  private makeTransport(sdk: McpSdk): Transport {
    const c = this.config;
    if (isHttpServer(c)) {
      return new sdk.StreamableHTTPClientTransport(new URL(c.url), c.headers ? { requestInit: { headers: c.headers } } : {});
    }
    const cwd = c.cwd ?? this.opts.cwd;
    const t = new sdk.StdioClientTransport({
      command: c.command,
      args: c.args ?? [],
      env: { ...sdk.getDefaultEnvironment(), ...c.env },
      stderr: 'pipe',
      ...(cwd !== undefined ? { cwd } : {}),
    });
    t.stderr?.on('data', (d: Buffer) => {
      this.stderrTail = (this.stderrTail + d.toString('utf8')).slice(-STDERR_KEEP);
    });
    return t;
  }

  /** Connect (or reconnect) and list the server's tools. */
  connect(): Promise<Tool[]> {
    if (this.state === 'closed')
      return Promise.reject(new McpCallError('MCP_CLOSED', `the MCP server "${this.name}" connection was closed`));
    this.connecting ??= this.open().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async open(): Promise<Tool[]> {
    const wasDead = this.state === 'dead';
    let sdk: McpSdk;
    try {
      sdk = this.sdk ??= await loadSdk();
    } catch (e) {
      throw new McpCallError('MCP_UNAVAILABLE', `could not load the MCP client for "${this.name}": ${(e as Error).message}`, undefined, {
        cause: e,
      });
    }
    this.state = 'connecting';
    const client = new sdk.Client(
      { name: this.opts.clientName ?? 'dsh', version: this.opts.clientVersion ?? '0.1.0' },
      { capabilities: {} },
    );
    const transport = this.makeTransport(sdk);
    client.onclose = () => {
      if (this.client !== client) return;
      if (this.state !== 'closed') {
        this.state = 'dead';
        this.lastDeath ??= 'the connection closed';
      }
    };
    const timeout = this.config.connectTimeoutMs ?? DEFAULT_MCP_CONNECT_TIMEOUT_MS;
    try {
      this.client = client;
      this.transport = transport;
      await client.connect(transport, { timeout });
      const tools: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : {}, { timeout });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      this.state = 'ready';
      this.lastDeath = undefined;
      if (wasDead) this.restarts++;
      return tools;
    } catch (e) {
      this.state = 'dead';
      await client.close().catch(() => undefined);
      const err = this.stderrTail.trim() ? `; server stderr: ${this.stderrTail.trim().slice(-500)}` : '';
      throw new McpCallError('MCP_UNAVAILABLE', `could not start the MCP server "${this.name}": ${(e as Error).message}${err}`, undefined, {
        cause: e,
      });
    }
  }

  /** Call a tool, starting the server again first if it died since the last call. */
  async callTool(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<unknown> {
    if (this.state !== 'ready') await this.connect();
    const client = this.client!;
    const { McpError, ErrorCode } = this.sdk!;
    try {
      return await client.callTool({ name: tool, arguments: args }, undefined, {
        signal,
        timeout: this.config.timeoutMs ?? DEFAULT_MCP_TIMEOUT_MS,
      });
    } catch (e) {
      if (signal.aborted) throw e;
      if (e instanceof McpError && e.code === ErrorCode.RequestTimeout) {
        throw new McpCallError(
          'MCP_TIMEOUT',
          `the MCP server "${this.name}" did not answer ${tool} within ${this.config.timeoutMs ?? DEFAULT_MCP_TIMEOUT_MS} ms`,
        );
      }
      if (e instanceof McpError && e.code !== ErrorCode.ConnectionClosed) {
        throw new McpCallError('MCP_ERROR', `the MCP server "${this.name}" refused ${tool}: ${e.message}`);
      }
      // Transport-level failure: the server is gone. Drop this client; the next call restarts it.
      if (this.client === client && this.state !== 'closed') this.state = 'dead';
      this.lastDeath = (e as Error).message;
      void client.close().catch(() => undefined);
      throw new McpCallError(
        'MCP_SERVER_DIED',
        `the MCP server "${this.name}" stopped while running ${tool} (${(e as Error).message}); it will be started again on the next call`,
      );
    }
  }

  async close(): Promise<void> {
    this.state = 'closed';
    await this.client?.close().catch(() => undefined);
  }
}
