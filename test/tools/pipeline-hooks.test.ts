/** The tool pipeline's capability events, driven through a real agent and the built-in tools. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ScriptedAdapter, textResponse, toolCallResponse } from '../../src/llm/scripted.js';
import { codingTools } from '../../src/tools/coding-tools.js';
import { ToolError, type ToolResultValue } from '../../src/tools/types.js';
import type { Plugin } from '../../src/agent/agent.js';
import { agentFor, call, tempDir, text, writeTree } from './helpers.js';

/** A tool that waits for its signal (or 10 s), like any well-behaved long operation. */
const slowTool: Plugin = (host) =>
  host.tool({
    name: 'slow',
    description: 'waits',
    parameters: z.object({}),
    execute: (_a, ctx) =>
      new Promise<string>((resolve, reject) => {
        const t = setTimeout(() => resolve('finished'), 10_000);
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(t);
          reject(ctx.signal.reason);
        });
      }),
  });

/** A `tools/execute` around-wrapper: a deadline that replaces the body's signal. */
function timeoutWrapper(ms: number): Plugin {
  return (host) =>
    host.on('tools/execute', async (p, next): Promise<ToolResultValue> => {
      const deadline = new AbortController();
      const timer = setTimeout(() => deadline.abort(new ToolError('TIMEOUT', `${p.call.name} exceeded the ${ms} ms deadline`)), ms);
      try {
        return await next({ ...p, ctx: { ...p.ctx, signal: AbortSignal.any([p.ctx.signal, deadline.signal]) } });
      } catch (e) {
        if (deadline.signal.aborted)
          return {
            content: `Error: ${(deadline.signal.reason as Error).message}`,
            isError: true,
            error: { name: 'TimeoutError', code: 'TIMEOUT' },
          };
        throw e;
      } finally {
        clearTimeout(timer);
      }
    });
}

describe('tools/pre-execute', () => {
  it('deny: the tool does not run and the model reads why', async () => {
    const root = tempDir();
    writeTree(root, { 'a.txt': 'a' });
    const agent = agentFor(root, [
      codingTools(),
      (h) =>
        h.on('tools/pre-execute', (p, next) => (p.call.name === 'write' ? { kind: 'deny', reason: 'writes are frozen today' } : next())),
    ]);
    const o = await call(agent, 'write', { file_path: 'a.txt', content: 'changed' });
    expect(text(o)).toBe('Error: write was denied: writes are frozen today');
    expect(o.error?.code).toBe('DENIED');
    expect(text(await call(agent, 'read', { file_path: 'a.txt' }))).toContain('1: a');
  });

  it('ask: goes to the approval callback with the frozen arguments', async () => {
    const root = tempDir();
    const seen: unknown[] = [];
    const agent = agentFor(root, [codingTools(), (h) => h.on('tools/pre-execute', () => ({ kind: 'ask', reason: 'policy says ask' }))], {
      approve: (r) => {
        seen.push(r.args, Object.isFrozen(r.args), r.reason);
        return 'allowed-once';
      },
    });
    expect(text(await call(agent, 'bash', { command: 'echo approved' }))).toBe('approved\n');
    expect(seen).toEqual([{ command: 'echo approved' }, true, 'policy says ask']);
    const types = agent.session.events.map((e) => e.type).filter((t) => t.startsWith('approval/'));
    expect(types).toEqual(['approval/asked', 'approval/decided']);
  });
});

describe('tools/execute', () => {
  it('a timeout wrapper replaces the signal and turns an overrun into a TIMEOUT result', async () => {
    const agent = agentFor(tempDir(), [slowTool, timeoutWrapper(50)]);
    const o = await call(agent, 'slow', {});
    expect(o.isError).toBe(true);
    expect(o.error).toEqual({ name: 'TimeoutError', code: 'TIMEOUT' });
    expect(text(o)).toBe('Error: slow exceeded the 50 ms deadline');
  });

  it('the wrapper leaves a call that finishes in time alone', async () => {
    const root = tempDir();
    writeTree(root, { 'a.txt': 'quick\n' });
    const agent = agentFor(root, [codingTools(), timeoutWrapper(10_000)]);
    expect(text(await call(agent, 'read', { file_path: 'a.txt' }))).toContain('1: quick');
  });
});

describe('tools/post-execute', () => {
  it('block: the model gets the feedback as an error; the original output stays in meta', async () => {
    const agent = agentFor(tempDir(), [
      codingTools(),
      (h) => h.on('tools/post-execute', () => ({ kind: 'block', feedback: 'output rejected by policy: retry once' })),
    ]);
    const o = await call(agent, 'bash', { command: 'echo HELLO' });
    expect(text(o)).toBe('Error: the result of bash was blocked: output rejected by policy: retry once');
    expect(o.error?.code).toBe('BLOCKED');
    expect(o.meta).toMatchObject({ original: { content: [{ type: 'text', text: 'HELLO\n' }] } });
  });

  it('rewrite, end to end: the next request shows the replacement, the log keeps the original', async () => {
    const root = tempDir();
    writeTree(root, { 'secrets.env': 'API_KEY=sk-live-123\n' });
    const adapter = new ScriptedAdapter([
      toolCallResponse([{ id: 'c1', name: 'read', args: { file_path: 'secrets.env' } }]),
      textResponse('ok'),
    ]);
    const redact: Plugin = (h) =>
      h.on('tools/post-execute', ({ output }) => {
        const t =
          typeof output.content === 'string' ? output.content : output.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
        return t.includes('sk-live') ? { kind: 'accept', content: t.replace(/sk-live-\w+/g, '[REDACTED]') } : { kind: 'accept' };
      });
    const agent = agentFor(root, [codingTools(), redact], { adapter });
    agent.prompt('show me the env file');
    await agent.whenIdle();

    const second = adapter.requests[1]!;
    const toolMsg = second.messages.find((m) => m.content.some((b) => b.type === 'tool-result'))!;
    const block = toolMsg.content[0] as { type: 'tool-result'; content: { type: string; text: string }[] };
    expect(block.content[0]!.text).toContain('1: API_KEY=[REDACTED]');
    expect(JSON.stringify(second.messages)).not.toContain('sk-live-123');

    const result = agent.session.events.find((e) => e.type === 'tool/result')!;
    const meta = (result.data as unknown as { meta: { original: { content: { text: string }[] }; path: string } }).meta;
    expect(meta.original.content[0]!.text).toContain('1: API_KEY=sk-live-123');
    expect(meta.path).toBe(`${root}/secrets.env`); // the tool's own meta is kept beside the original
  });
});

describe('pipeline guarantees for the built-ins', () => {
  it('a throwing tool becomes an error result', async () => {
    const agent = agentFor(tempDir(), [
      (h) =>
        h.tool({
          name: 'boom',
          description: 'throws',
          parameters: z.object({}),
          execute: () => {
            throw new Error('kaboom');
          },
        }),
    ]);
    const o = await call(agent, 'boom', {});
    expect(o.isError).toBe(true);
    expect(o.error?.code).toBe('TOOL_FAILED');
    expect(text(o)).toBe('Error: boom failed: kaboom');
  });

  it('read-only tools are concurrency-safe; tools with effects are barriers', () => {
    const agent = agentFor(tempDir(), [codingTools()]);
    const safe = agent.tools.names().filter((n) => agent.tools.get(n)!.isConcurrencySafe?.({} as never) === true);
    expect(safe.sort()).toEqual(['glob', 'grep', 'job_list', 'read']);
  });

  it('the model is shown JSON Schema with dsh argument names', () => {
    const agent = agentFor(tempDir(), [codingTools()]);
    const byName = Object.fromEntries(
      agent.tools.schemas().map((s) => [s.name, s.parameters as { properties: Record<string, unknown>; required?: string[] }]),
    );
    expect(Object.keys(byName).sort()).toEqual([
      'bash',
      'edit',
      'glob',
      'grep',
      'job_kill',
      'job_list',
      'job_output',
      'read',
      'todo_write',
      'write',
    ]);
    expect(byName.read!.required).toEqual(['file_path']);
    expect(Object.keys(byName.read!.properties)).toEqual(['file_path', 'offset', 'limit']);
    expect(Object.keys(byName.edit!.properties)).toEqual(expect.arrayContaining(['file_path', 'old_string', 'new_string', 'replace_all']));
    expect(Object.keys(byName.bash!.properties)).toEqual(
      expect.arrayContaining(['command', 'description', 'timeoutMs', 'workdir', 'run_in_background']),
    );
    expect(byName.job_output!.required).toEqual(['job_id']);
    expect(byName.todo_write!.required).toEqual(['todos']);
    for (const s of Object.values(byName)) expect(s).not.toHaveProperty('$schema');
  });
});
