import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { harness, startAgent, textCall, toolCall, type Agent } from './support.js';

let running: Agent[] = [];
afterEach(async () => {
  await Promise.all(running.map((a) => a.close()));
  running = [];
});

function start(...args: Parameters<typeof startAgent>): Agent {
  const a = startAgent(...args);
  running.push(a);
  return a;
}

/** Every stored log under a DSH_HOME, parsed. */
interface StoredLog {
  header: Record<string, unknown>;
  events: { type: string; data: Record<string, unknown> }[];
}

function storedLogs(home: string): StoredLog[] {
  const root = join(home, 'sessions');
  const out: StoredLog[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(dir, e.name));
      else if (e.name.endsWith('.jsonl')) {
        const [header, ...events] = readFileSync(join(dir, e.name), 'utf8')
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => JSON.parse(l) as Record<string, unknown>);
        out.push({ header: header!, events: events as never });
      }
    }
  };
  walk(root);
  return out;
}

describe('dsh acp driven by the ACP SDK client', () => {
  it('initialize, session/new, a prompt streamed as thought and message chunks, stored as an ordinary session', async () => {
    const h = harness();
    const a = start(h, [textCall('PONG, and more', 'thinking it over')]);
    const init = await a.conn.agent.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    expect(init.protocolVersion).toBe(1);
    expect(init.agentCapabilities?.loadSession).toBe(true);
    expect(init.agentCapabilities?.promptCapabilities).toMatchObject({ image: true, embeddedContext: true });
    const s = await a.conn.agent.request('session/new', { cwd: h.workspace, mcpServers: [] });
    expect(s.modes?.currentModeId).toBe('workspace-write/ask');
    const r = await a.conn.agent.request('session/prompt', { sessionId: s.sessionId, prompt: [{ type: 'text', text: 'ping' }] });
    expect(r.stopReason).toBe('end_turn');
    expect((r as { usage?: { outputTokens: number } }).usage?.outputTokens).toBe(7);
    const kinds = a.updates.filter((u) => u.sessionId === s.sessionId).map((u) => u.update.sessionUpdate);
    expect(kinds).toContain('available_commands_update');
    const text = a.updates
      .filter((u) => u.update.sessionUpdate === 'agent_message_chunk')
      .map((u) => (u.update as { content: { text: string } }).content.text);
    expect(text).toEqual(['PONG, a', 'nd more']);
    const thought = a.updates.filter((u) => u.update.sessionUpdate === 'agent_thought_chunk');
    expect(thought.map((u) => (u.update as { content: { text: string } }).content.text)).toEqual(['thinking it over']);
    await a.close();
    const logs = storedLogs(h.home);
    expect(logs).toHaveLength(1);
    expect(logs[0]!.header.id).toBe(s.sessionId);
    expect(logs[0]!.header.cwd).toBe(h.workspace);
    const end = logs[0]!.events.find((e) => e.type === 'turn/end');
    expect(end?.data.reason).toEqual({ kind: 'completed' });
  });

  it('a tool call is a tool_call then a tool_call_update with its diff; todo_write is a plan', async () => {
    const h = harness();
    const a = start(h, [
      toolCall('c1', 'write', { file_path: 'note.txt', content: 'hello\n' }),
      toolCall('c2', 'todo_write', { todos: [{ content: 'write the note', status: 'completed' }] }),
      textCall('done'),
    ]);
    await a.conn.agent.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    const s = await a.conn.agent.request('session/new', { cwd: h.workspace, mcpServers: [] });
    const r = await a.conn.agent.request('session/prompt', { sessionId: s.sessionId, prompt: [{ type: 'text', text: 'write a note' }] });
    expect(r.stopReason).toBe('end_turn');
    expect(readFileSync(join(h.workspace, 'note.txt'), 'utf8')).toBe('hello\n');
    const call = a.updates.find((u) => u.update.sessionUpdate === 'tool_call' && u.update.toolCallId === 'c1')!.update;
    expect(call).toMatchObject({
      kind: 'edit',
      title: 'Write note.txt',
      status: 'in_progress',
      locations: [{ path: join(h.workspace, 'note.txt') }],
    });
    const done = a.updates.find((u) => u.update.sessionUpdate === 'tool_call_update' && u.update.toolCallId === 'c1')!.update;
    expect(done).toMatchObject({ status: 'completed' });
    expect((done as { content: unknown[] }).content).toContainEqual({
      type: 'diff',
      path: join(h.workspace, 'note.txt'),
      oldText: null,
      newText: 'hello\n',
    });
    const plan = a.updates.find((u) => u.update.sessionUpdate === 'plan')!.update;
    expect(plan).toMatchObject({ entries: [{ content: 'write the note', status: 'completed' }] });
  });
});
