/**
 * Every error text the agent records is redacted of the configured secrets, whoever produced it:
 * an adapter only knows (and redacts) its own key, so a failure quoting another secret (an MCP
 * server's header, another provider's key) or an error thrown outside any adapter used to reach
 * the log, and the model, as it was.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { harness } from './helpers.js';
import { errorResponse, ScriptedAdapter, textResponse, toolCallResponse } from '../../src/llm/scripted.js';
import { defineTool, ToolError } from '../../src/tools/types.js';
import { createCodingAgent } from '../../src/coding/index.js';
import { runCompactCommand } from '../../src/compaction/command.js';
import { TestModel, testAgent, say, fail, call, bigTool } from '../compaction/helpers.js';

const SECRET = 'mcp-header-0123456789abcdef';
const OTHER = 'sk-other-provider-fedcba9876543210';

describe('redaction of recorded errors', () => {
  it('a failure quoting a secret: assistant/chunk, llm/retry and turn/end carry [REDACTED]', async () => {
    const failure = {
      code: 'SERVER',
      message: `gateway said: headers {"x-mcp":"${SECRET}","authorization":"Bearer ${OTHER}"}`,
      status: 500,
      requestId: `req-${SECRET}`,
    };
    const { agent } = harness([errorResponse(failure), errorResponse({ ...failure, code: 'INVALID_REQUEST', status: 400 })], {
      secrets: [SECRET, OTHER],
    });
    agent.prompt('x');
    await agent.whenIdle();
    const log = JSON.stringify(agent.session.events);
    expect(log).not.toContain(SECRET);
    expect(log).not.toContain(OTHER);
    const types = agent.session.events.filter((e) => JSON.stringify(e.data).includes('[REDACTED]')).map((e) => e.type);
    expect(new Set(types)).toEqual(new Set(['assistant/chunk', 'llm/retry', 'turn/end']));
  });

  it('an error thrown outside any adapter reaches turn/end redacted', async () => {
    const { agent } = harness([{ throw: new Error(`could not reach https://user:${SECRET}@gw.example/v1`) }], {
      secrets: [SECRET],
      retry: false,
    });
    agent.prompt('x');
    await agent.whenIdle();
    const end = agent.session.events.find((e) => e.type === 'turn/end')!;
    expect(JSON.stringify(end.data)).toContain('https://user:[REDACTED]@gw.example/v1');
    expect(JSON.stringify(agent.session.events)).not.toContain(SECRET);
  });

  it('a failing tool’s error result is redacted for the log and for the model; a successful one is not touched', async () => {
    const leak = defineTool({
      name: 'leak',
      description: 'fails quoting a secret',
      parameters: z.object({ ok: z.boolean() }),
      execute: ({ ok }) => {
        if (ok) return `fine ${SECRET}`;
        throw new Error(`upstream refused token ${SECRET}`);
      },
    });
    const { agent, adapter } = harness(
      [
        toolCallResponse([
          { id: 'c1', name: 'leak', args: { ok: false } },
          { id: 'c2', name: 'leak', args: { ok: true } },
        ]),
        textResponse('done'),
      ],
      {
        secrets: [SECRET],
        tools: [leak],
      },
    );
    agent.prompt('x');
    await agent.whenIdle();
    const results = agent.session.events.filter((e) => e.type === 'tool/result').map((e) => JSON.stringify(e.data));
    expect(results[0]).toContain('upstream refused token [REDACTED]');
    expect(results[0]).not.toContain(SECRET);
    // A successful result is the tool's output (a file's content, say): rewriting it could lose data.
    expect(results[1]).toContain(`fine ${SECRET}`);
    expect(JSON.stringify(adapter.requests[1]!.messages)).toContain('upstream refused token [REDACTED]');
  });

  it('without configured secrets nothing changes', async () => {
    const { agent } = harness([errorResponse({ code: 'INVALID_REQUEST', message: `says ${SECRET}`, status: 400 })]);
    agent.prompt('x');
    await agent.whenIdle();
    expect(JSON.stringify(agent.session.events.find((e) => e.type === 'turn/end')!.data)).toContain(SECRET);
  });

  it('a throwing hook: a tool hook’s error becomes a redacted result, an agent hook’s a redacted turn/end', async () => {
    const noop = defineTool({ name: 'noop', description: 'does nothing', parameters: z.object({}), execute: () => 'ok' });
    const { agent } = harness([toolCallResponse([{ id: 'c1', name: 'noop', args: {} }]), textResponse('done')], {
      secrets: [SECRET],
      tools: [noop],
    });
    agent.on('tools/pre-execute', () => {
      throw new Error(`policy server rejected ${SECRET}`);
    });
    agent.prompt('x');
    await agent.whenIdle();
    let step = 0;
    agent.on('agent/pre-step', () => {
      if (++step === 1) throw new Error(`plugin could not load its token ${SECRET}`);
      return undefined as never;
    });
    agent.prompt('y');
    await agent.whenIdle();
    const log = JSON.stringify(agent.session.events);
    expect(log).not.toContain(SECRET);
    const result = agent.session.events.find((e) => e.type === 'tool/result')!;
    expect(JSON.stringify(result.data)).toContain('policy server rejected [REDACTED]');
    const ends = agent.session.events.filter((e) => e.type === 'turn/end').map((e) => JSON.stringify(e.data));
    expect(ends[1]).toContain('plugin could not load its token [REDACTED]');
  });

  it('every field of a tool error is redacted: text, code and meta', async () => {
    const coded = defineTool({
      name: 'coded',
      description: 'fails with a coded error',
      parameters: z.object({}),
      execute: () => {
        throw new ToolError(`E_${SECRET}`, `denied for ${OTHER}`, { header: `Bearer ${SECRET}`, nested: [OTHER] });
      },
    });
    const { agent } = harness([toolCallResponse([{ id: 'c1', name: 'coded', args: {} }]), textResponse('done')], {
      secrets: [SECRET, OTHER],
      tools: [coded],
    });
    agent.prompt('x');
    await agent.whenIdle();
    const result = agent.session.events.find((e) => e.type === 'tool/result')!;
    const data = JSON.stringify(result.data);
    expect(data).not.toContain(SECRET);
    expect(data).not.toContain(OTHER);
    expect(data).toContain('denied for [REDACTED]');
    expect(data).toContain('"Bearer [REDACTED]"');
  });

  it('a failing compaction: compaction/end, command/done and the command’s text are redacted', async () => {
    const model = new TestModel(
      [call('c1', 'read', { path: 'notes.md' }), say('It is lorem ipsum.'), say('Nothing else.')],
      [fail({ code: 'SERVER', message: `summariser gateway echoed x-api-key: ${SECRET}` })],
    );
    const agent = testAgent(model, { compaction: { auto: false, retainTokens: 50 }, agent: { secrets: [SECRET], tools: [bigTool(3000)] } });
    for (const p of ['Read notes.md', 'Anything else?']) {
      agent.prompt(p);
      await agent.whenIdle();
    }
    const out = await runCompactCommand(agent);
    expect(out.error?.code).toBe('SUMMARY_FAILED');
    expect(out.text).toContain('x-api-key: [REDACTED]');
    const log = JSON.stringify(agent.session.events);
    expect(log).not.toContain(SECRET);
    const types = agent.session.events.filter((e) => JSON.stringify(e.data).includes('[REDACTED]')).map((e) => e.type);
    expect(new Set(types)).toEqual(new Set(['compaction/end', 'command/done']));
  });
});

describe('MCP errors quoting the configured header (createCodingAgent, a real HTTP MCP server)', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  });

  it('neither an isError result nor a thrown error of the server reaches the log with the header value', async () => {
    const server = createServer((req, res) => {
      const mcp = new McpServer({ name: 'echo', version: '1.0.0' });
      const auth = (extra: { requestInfo?: { headers: Record<string, unknown> } }): string =>
        String(extra.requestInfo?.headers.authorization);
      mcp.registerTool('refuse', { description: 'fails quoting the request', inputSchema: {} }, (_args, extra) => ({
        content: [{ type: 'text', text: `refused: authorization=${auth(extra)}` }],
        isError: true,
      }));
      mcp.registerTool('crash', { description: 'throws quoting the request', inputSchema: {} }, (_args, extra) => {
        throw new Error(`crashed on authorization=${auth(extra)}`);
      });
      const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void mcp.close();
      });
      void mcp.connect(transport).then(() => transport.handleRequest(req, res));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    servers.push(server);
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    const cwd = mkdtempSync(join(tmpdir(), 'dsh-redact-'));
    const model = new ScriptedAdapter(
      [
        toolCallResponse([
          { id: 'm1', name: 'gw__refuse', args: {} },
          { id: 'm2', name: 'gw__crash', args: {} },
        ]),
        textResponse('done'),
      ],
      { providers: ['deepseek'] },
    );
    const { agent, close } = await createCodingAgent({
      cwd,
      config: { mcpServers: { gw: { url, headers: { authorization: `Bearer ${SECRET}` } } }, permissions: { approval: 'never' } } as never,
      adapters: [model],
      model: 'deepseek:deepseek-v4-flash',
      retry: false,
    });
    try {
      agent.prompt('x');
      await agent.whenIdle();
      const results = agent.session.events.filter((e) => e.type === 'tool/result').map((e) => JSON.stringify(e.data));
      expect(results).toHaveLength(2);
      // The server really echoed the header: the redaction, not a missing header, keeps it out.
      // (The whole header value is the configured secret, so it goes whole.)
      expect(results[0]).toContain('refused: authorization=[REDACTED]');
      expect(results[1]).toContain('authorization=[REDACTED]');
      expect(JSON.stringify(agent.session.events)).not.toContain(SECRET);
      expect(JSON.stringify(model.requests)).not.toContain(SECRET);
    } finally {
      await close();
    }
  });
});
