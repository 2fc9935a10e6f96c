/**
 * MCP servers as tools, against real servers: `@modelcontextprotocol/server-everything` over
 * stdio, and an SDK server started in-process on 127.0.0.1 over streamable HTTP.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { connectMcpServers, type McpServers } from '../../src/tools/mcp/plugin.js';
import { mcpToolName, MAX_TOOL_NAME } from '../../src/tools/mcp/names.js';
import { permissions } from '../../src/tools/permissions/plugin.js';
import { toolsConfigSchema } from '../../src/tools/config.js';
import { permissionsOptionsFrom } from '../../src/tools/config-options.js';
import { repoRoot } from '../support/shared.js';
import { agentFor, call, tempDir, text } from './helpers.js';

const EVERYTHING = join(repoRoot, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const everything = { command: process.execPath, args: [EVERYTHING, 'stdio'] };

const open: McpServers[] = [];
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((m) => m.close()));
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function connect(
  config: Parameters<typeof connectMcpServers>[0],
  opts: Parameters<typeof connectMcpServers>[1] = {},
): Promise<McpServers> {
  const m = await connectMcpServers(config, opts);
  open.push(m);
  return m;
}

async function until(cond: () => boolean, tries = 200): Promise<void> {
  for (let i = 0; i < tries && !cond(); i++) await new Promise((r) => setTimeout(r, 25));
}

describe('MCP over stdio (server-everything)', () => {
  let shared: McpServers;
  beforeAll(async () => {
    shared = await connectMcpServers({ everything });
  });
  afterAll(() => shared.close());

  it('offers the server tools as server__tool with the server JSON Schema, and calls them', async () => {
    const mcp = shared;
    const agent = agentFor(tempDir(), [mcp.plugin]);
    expect(agent.tools.names()).toEqual(expect.arrayContaining(['everything__echo', 'everything__get-sum', 'everything__get-tiny-image']));
    const schema = agent.tools.schemas().find((s) => s.name === 'everything__echo')!;
    expect(schema.parameters).toMatchObject({ type: 'object', properties: { message: { type: 'string' } }, required: ['message'] });
    expect(schema.description).toContain('(MCP server "everything", tool "echo")');
    const o = await call(agent, 'everything__echo', { message: 'hello mcp' });
    expect(o.isError).toBe(false);
    expect(text(o)).toBe('Echo: hello mcp');
    expect(text(await call(agent, 'everything__get-sum', { a: 2, b: 40 }))).toBe('The sum of 2 and 40 is 42.');
  });

  it('maps images to a placeholder, or to an attachment when the host can store one', async () => {
    const stored: { bytes: number; mediaType: string }[] = [];
    const mcp = await connect(
      { everything },
      {
        storeImage: (data, mediaType) => {
          stored.push({ bytes: data.length, mediaType });
          return { attachmentId: 'att-1', mediaType, bytes: data.length };
        },
      },
    );
    const agent = agentFor(tempDir(), [mcp.plugin]);
    const o = await call(agent, 'everything__get-tiny-image', {});
    const image = o.content.find((b) => b.type === 'image');
    expect(image).toEqual({ type: 'image', attachment: { attachmentId: 'att-1', mediaType: 'image/png', bytes: stored[0]!.bytes } });
    expect(stored[0]!.bytes).toBeGreaterThan(100);

    const agent2 = agentFor(tempDir(), [shared.plugin]);
    const t = text(await call(agent2, 'everything__get-tiny-image', {}));
    expect(t).toMatch(/\[image: image\/png, \d+ bytes, not shown: this session has no attachment store\]/);
  });

  it('maps an embedded resource to its text', async () => {
    const mcp = shared;
    const agent = agentFor(tempDir(), [mcp.plugin]);
    const t = text(await call(agent, 'everything__get-resource-reference', { resourceType: 'Text', resourceId: 1 }));
    expect(t).toContain('[resource demo://resource/dynamic/text/1 (text/plain)]\nResource 1: This is a plaintext resource created at ');
    const blob = text(await call(agent, 'everything__get-resource-reference', { resourceType: 'Blob', resourceId: 1 }));
    expect(blob).toMatch(/\[resource demo:\/\/resource\/dynamic\/blob\/1 \([^)]+\): binary, \d+ bytes, not shown\]/);
  });

  it('honours isError from the server', async () => {
    const mcp = shared;
    const agent = agentFor(tempDir(), [mcp.plugin]);
    const o = await call(agent, 'everything__get-sum', { a: 'two', b: 3 });
    expect(o.isError).toBe(true);
    expect(o.error).toEqual({ name: 'McpToolError', code: 'MCP_TOOL_ERROR' });
  });

  it('a server that dies yields an error result for the call in flight, and is started again on the next call', async () => {
    const mcp = await connect({ everything });
    const conn = mcp.connections.get('everything')!;
    const agent = agentFor(tempDir(), [mcp.plugin]);
    const firstPid = conn.pid!;
    const inFlight = call(agent, 'everything__trigger-long-running-operation', { duration: 20, steps: 2 });
    await new Promise((r) => setTimeout(r, 200));
    process.kill(firstPid, 'SIGKILL');
    const o = await inFlight;
    expect(o.isError).toBe(true);
    expect(o.error).toEqual({ name: 'McpError', code: 'MCP_SERVER_DIED' });
    expect(text(o)).toContain('it will be started again on the next call');
    expect(conn.alive).toBe(false);

    const again = await call(agent, 'everything__echo', { message: 'back' });
    expect(text(again)).toBe('Echo: back');
    expect(conn.restarts).toBe(1);
    expect(conn.pid).not.toBe(firstPid);
  });

  it('a server found dead between calls is restarted before the next call', async () => {
    const mcp = await connect({ everything });
    const conn = mcp.connections.get('everything')!;
    const agent = agentFor(tempDir(), [mcp.plugin]);
    process.kill(conn.pid!, 'SIGKILL');
    await until(() => !conn.alive);
    expect(conn.alive).toBe(false);
    expect(text(await call(agent, 'everything__echo', { message: 'restarted' }))).toBe('Echo: restarted');
    expect(conn.restarts).toBe(1);
  });

  it('reports a server that cannot start instead of failing the others', async () => {
    const { url } = await httpServer();
    const mcp = await connect({ web: { url }, broken: { command: '/nonexistent/mcp-server' } });
    expect(mcp.failures.get('broken')).toContain('could not start the MCP server "broken"');
    expect(mcp.failures.has('web')).toBe(false);
    expect([...mcp.tools.values()].map((t) => t.server)).toEqual(['web', 'web', 'web']);
  });

  it('MCP tools ask for approval under the "ask" policy (the sandbox does not contain them)', async () => {
    const mcp = shared;
    const agent = agentFor(tempDir(), [mcp.plugin, permissions({ approval: 'ask' })]);
    expect((await call(agent, 'everything__echo', { message: 'x' })).error?.code).toBe('APPROVAL_UNAVAILABLE');
    const allowed = agentFor(tempDir(), [mcp.plugin, permissions({ approval: 'ask', allow: ['everything__*'] })]);
    expect(text(await call(allowed, 'everything__echo', { message: 'x' }))).toBe('Echo: x');
  });
});

/** An SDK MCP server on 127.0.0.1, stateless streamable HTTP (a fresh server per request). */
async function httpServer(port = 0): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const mcp = new McpServer({ name: 'inproc', version: '1.0.0' });
    mcp.registerTool('add', { description: 'Add two numbers', inputSchema: { a: z.number(), b: z.number() } }, ({ a, b }) => ({
      content: [{ type: 'text', text: String(a + b) }],
    }));
    mcp.registerTool('fail', { description: 'Always fails', inputSchema: {} }, () => ({
      content: [{ type: 'text', text: 'it failed' }],
      isError: true,
    }));
    mcp.registerTool('doc', { description: 'A resource', inputSchema: {} }, () => ({
      content: [{ type: 'resource', resource: { uri: 'file:///doc.md', mimeType: 'text/markdown', text: '# Title' } }],
    }));
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true }); // no session id generator: stateless;
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    void mcp.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, server };
}

describe('MCP over streamable HTTP (in-process SDK server on 127.0.0.1)', () => {
  it('lists and calls tools; maps resources; honours isError', async () => {
    const { url } = await httpServer();
    const mcp = await connect({ web: { url } });
    const agent = agentFor(tempDir(), [mcp.plugin]);
    expect(agent.tools.names().sort()).toEqual(['web__add', 'web__doc', 'web__fail']);
    expect(text(await call(agent, 'web__add', { a: 20, b: 22 }))).toBe('42');
    expect(text(await call(agent, 'web__doc', {}))).toBe('[resource file:///doc.md (text/markdown)]\n# Title');
    const f = await call(agent, 'web__fail', {});
    expect(f.isError).toBe(true);
    expect(text(f)).toBe('it failed');
    expect((await call(agent, 'web__add', [1, 2])).error?.code).toBe('INVALID_ARGS');
  });

  it('a server that goes away yields an error result; when it is back, the next call reconnects', async () => {
    const first = await httpServer();
    const port = Number(new URL(first.url).port);
    const mcp = await connect({ web: { url: first.url } });
    const agent = agentFor(tempDir(), [mcp.plugin]);
    const closed = new Promise((r) => first.server.close(r));
    first.server.closeAllConnections(); // the client's keep-alive connection would hold close() open
    await closed;
    servers.splice(servers.indexOf(first.server), 1);
    const down = await call(agent, 'web__add', { a: 1, b: 1 });
    expect(down.isError).toBe(true);
    expect(down.error).toEqual({ name: 'McpError', code: 'MCP_SERVER_DIED' });
    await httpServer(port);
    expect(text(await call(agent, 'web__add', { a: 1, b: 1 }))).toBe('2');
  });
});

describe('MCP tool names', () => {
  it('namespaces by server within the 64-character limit', () => {
    expect(mcpToolName('everything', 'get-sum')).toBe('everything__get-sum');
    const long = mcpToolName('a-very-long-server-name-here', 'and_an_even_longer_tool_name_that_goes_on_and_on');
    expect(long.length).toBe(MAX_TOOL_NAME);
    expect(long).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(long).not.toBe(mcpToolName('a-very-long-server-name-here', 'and_an_even_longer_tool_name_that_goes_on_and_ox'));
    expect(mcpToolName('s', 'dotted.name')).toMatch(/^s__dotted_name_[0-9a-f]{8}$/);
  });
});

describe('tools config sections', () => {
  it('accepts mcpServers (stdio and http), permissions and sandbox', () => {
    const r = toolsConfigSchema.safeParse({
      sandbox: { mode: 'read-only', bubblewrap: false },
      permissions: { approval: 'never', allow: ['bash(git status*)', 'edit(src/**)'], deny: ['bash(rm *)'] },
      mcpServers: {
        everything: { command: 'npx', args: ['x'], env: { A: '1' } },
        docs: { url: 'http://127.0.0.1:3000/mcp', timeoutMs: 5000 },
      },
    });
    expect(r.success).toBe(true);
  });

  it('maps the permissions and sandbox sections to permissions() options', () => {
    const cfg = toolsConfigSchema.parse({
      sandbox: { mode: 'read-only', bubblewrap: false },
      permissions: { approval: 'never', deny: ['bash(rm *)'] },
    });
    expect(permissionsOptionsFrom(cfg)).toEqual({ sandbox: 'read-only', bubblewrap: false, approval: 'never', deny: ['bash(rm *)'] });
    expect(permissionsOptionsFrom({})).toEqual({});
  });

  it('refuses a bad section with the path of the field', () => {
    const issues = (v: unknown) => toolsConfigSchema.safeParse(v).error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`) ?? [];
    expect(issues({ sandbox: { mode: 'yolo' } })[0]).toMatch(/^sandbox\.mode: /);
    expect(issues({ permissions: { allow: ['bash('] } })[0]).toMatch(/^permissions\.allow\.0: permission rule "bash\(" must be written/);
    expect(issues({ mcpServers: { 'bad name': { command: 'x' } } })[0]).toMatch(/^mcpServers\.bad name: a server name/);
    expect(issues({ mcpServers: { s: { args: ['x'] } } })).not.toHaveLength(0);
    expect(issues({ mcpServers: { s: { url: 'ftp://x' } } })).not.toHaveLength(0);
  });
});
