import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentsClosedAfterEach, harness, textCall, toolCall, type Agent } from './support.js';

const start = agentsClosedAfterEach();

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

describe('dsh acp driven by the ACP SDK client', { timeout: 90_000 }, () => {
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

  async function session(a: Agent, h: { workspace: string }): Promise<string> {
    await a.conn.agent.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    return (await a.conn.agent.request('session/new', { cwd: h.workspace, mcpServers: [] })).sessionId;
  }

  const write = (id: string, content: string) => toolCall(id, 'write', { file_path: 'note.txt', content });
  const pick = (optionId: string) => () => ({ outcome: { outcome: 'selected' as const, optionId } });

  it('allow once: the call runs; the question, the answer and the option chosen are in the log', async () => {
    const h = harness();
    const a = start(h, [write('w1', 'one\n'), textCall('ok')], { args: ['--ask', 'write(note.txt)'], answer: pick('allow-once') });
    const sid = await session(a, h);
    await a.conn.agent.request('session/prompt', { sessionId: sid, prompt: [{ type: 'text', text: 'go' }] });
    expect(a.permissions).toHaveLength(1);
    expect(a.permissions[0]!.toolCall).toMatchObject({ toolCallId: 'w1', kind: 'edit', title: 'Write note.txt' });
    expect(a.permissions[0]!.options.map((o) => o.kind)).toEqual(['allow_once', 'allow_always', 'reject_once', 'reject_always']);
    expect(readFileSync(join(h.workspace, 'note.txt'), 'utf8')).toBe('one\n');
    await a.close();
    const ev = storedLogs(h.home)[0]!.events;
    expect(ev.find((e) => e.type === 'approval/decided')?.data).toMatchObject({ outcome: 'allowed-once' });
    expect(ev.find((e) => e.type === 'acp/permission')?.data).toMatchObject({
      callId: 'w1',
      via: 'asked',
      outcome: 'allowed-once',
      optionId: 'allow-once',
    });
    expect(ev.some((e) => e.type === 'approval/rule')).toBe(false);
  });

  it('allow always: one question for two identical calls; the session rule is logged and answers the second', async () => {
    const h = harness();
    const a = start(h, [write('w1', 'one\n'), write('w2', 'two\n'), textCall('ok')], {
      args: ['--ask', 'write(note.txt)'],
      answer: pick('allow-always'),
    });
    const sid = await session(a, h);
    await a.conn.agent.request('session/prompt', { sessionId: sid, prompt: [{ type: 'text', text: 'go' }] });
    expect(a.permissions.map((p) => p.toolCall.toolCallId)).toEqual(['w1']);
    expect(readFileSync(join(h.workspace, 'note.txt'), 'utf8')).toBe('two\n');
    await a.close();
    const ev = storedLogs(h.home)[0]!.events;
    expect(ev.find((e) => e.type === 'approval/rule')?.data).toMatchObject({ rule: 'write(note.txt)', effect: 'allow' });
    expect(ev.filter((e) => e.type === 'approval/asked')).toHaveLength(1);
  });

  it('allow always on a path holding glob syntax: the rule names only that file (escaped), another file is asked again', async () => {
    const h = harness();
    const to = (id: string, file_path: string) => toolCall(id, 'write', { file_path, content: 'x\n' });
    const a = start(h, [to('w1', 'data[1].json'), to('w2', 'data1.json'), textCall('ok')], {
      args: ['--ask', 'write(*)'],
      answer: pick('allow-always'),
    });
    const sid = await session(a, h);
    await a.conn.agent.request('session/prompt', { sessionId: sid, prompt: [{ type: 'text', text: 'go' }] });
    // `write(data[1].json)` unescaped is a class: it would have allowed data1.json without asking.
    expect(a.permissions.map((p) => p.toolCall.toolCallId)).toEqual(['w1', 'w2']);
    await a.close();
    const ev = storedLogs(h.home)[0]!.events;
    expect(ev.filter((e) => e.type === 'approval/rule').map((e) => (e.data as { rule: string }).rule)).toEqual([
      'write(data\\[1\\].json)',
      'write(data1.json)',
    ]);
  });

  it('allow always on a path written with ./ and ..: the rule names the resolved path, and answers the same call again', async () => {
    const h = harness();
    const to = (id: string, file_path: string) => toolCall(id, 'write', { file_path, content: `${id}\n` });
    const a = start(h, [to('w1', './sub/../note.txt'), to('w2', './sub/../note.txt'), to('w3', 'note.txt'), textCall('ok')], {
      args: ['--ask', 'write(*)'],
      answer: pick('allow-always'),
    });
    const sid = await session(a, h);
    await a.conn.agent.request('session/prompt', { sessionId: sid, prompt: [{ type: 'text', text: 'go' }] });
    // Named as written, `write(./sub/../note.txt)` matched no call, its own included: asked three times.
    expect(a.permissions.map((p) => p.toolCall.toolCallId)).toEqual(['w1']);
    expect(readFileSync(join(h.workspace, 'note.txt'), 'utf8')).toBe('w3\n');
    await a.close();
    const ev = storedLogs(h.home)[0]!.events;
    expect(ev.filter((e) => e.type === 'approval/rule').map((e) => (e.data as { rule: string }).rule)).toEqual(['write(note.txt)']);
  });

  it('reject once: the call does not run and fails; the rejection is logged', async () => {
    const h = harness();
    const a = start(h, [write('w1', 'one\n'), textCall('ok')], { args: ['--ask', 'write(note.txt)'], answer: pick('reject-once') });
    const sid = await session(a, h);
    const r = await a.conn.agent.request('session/prompt', { sessionId: sid, prompt: [{ type: 'text', text: 'go' }] });
    expect(r.stopReason).toBe('end_turn');
    expect(existsSync(join(h.workspace, 'note.txt'))).toBe(false);
    const upd = a.updates.find((u) => u.update.sessionUpdate === 'tool_call_update' && u.update.toolCallId === 'w1')!.update;
    expect(upd).toMatchObject({ status: 'failed' });
    await a.close();
    const ev = storedLogs(h.home)[0]!.events;
    expect(ev.find((e) => e.type === 'approval/decided')?.data).toMatchObject({ outcome: 'rejected' });
    expect(ev.find((e) => e.type === 'acp/permission')?.data).toMatchObject({ optionId: 'reject-once', outcome: 'rejected' });
  });

  it('reject always: the second identical call is rejected without asking, and the log says why', async () => {
    const h = harness();
    const a = start(h, [write('w1', 'one\n'), write('w2', 'two\n'), textCall('ok')], {
      args: ['--ask', 'write(note.txt)'],
      answer: pick('reject-always'),
    });
    const sid = await session(a, h);
    await a.conn.agent.request('session/prompt', { sessionId: sid, prompt: [{ type: 'text', text: 'go' }] });
    expect(a.permissions.map((p) => p.toolCall.toolCallId)).toEqual(['w1']);
    expect(existsSync(join(h.workspace, 'note.txt'))).toBe(false);
    await a.close();
    const ev = storedLogs(h.home)[0]!
      .events.filter((e) => e.type === 'acp/permission')
      .map((e) => e.data);
    expect(ev).toMatchObject([
      { callId: 'w1', via: 'asked', optionId: 'reject-always', outcome: 'rejected' },
      { callId: 'w2', via: 'remembered', outcome: 'rejected' },
    ]);
  });

  it('an answer not of the protocol shape ({}, no optionId) is a rejection; the model is told so, the log says why', async () => {
    const h = harness();
    const malformed: Record<string, unknown> = { w1: {}, w2: { outcome: { outcome: 'selected' } }, w3: { outcome: 'allow-once' } };
    const a = start(h, [write('w1', 'one\n'), write('w2', 'two\n'), write('w3', 'three\n'), textCall('ok')], {
      args: ['--ask', 'write(note.txt)'],
      answer: (r) => malformed[r.toolCall.toolCallId] as never,
    });
    const sid = await session(a, h);
    const r = await a.conn.agent.request('session/prompt', { sessionId: sid, prompt: [{ type: 'text', text: 'go' }] });
    expect(r.stopReason).toBe('end_turn');
    expect(a.permissions).toHaveLength(3);
    expect(existsSync(join(h.workspace, 'note.txt'))).toBe(false);
    await a.close();
    const ev = storedLogs(h.home)[0]!.events;
    expect(ev.filter((e) => e.type === 'acp/permission').map((e) => e.data)).toEqual([
      expect.objectContaining({ callId: 'w1', via: 'asked', outcome: 'rejected', invalid: '$.outcome is missing or not an object' }),
      expect.objectContaining({ callId: 'w2', via: 'asked', outcome: 'rejected', invalid: '$.outcome.optionId is missing' }),
      expect.objectContaining({ callId: 'w3', via: 'asked', outcome: 'rejected', invalid: '$.outcome is missing or not an object' }),
    ]);
    expect(ev.filter((e) => e.type === 'approval/decided').map((e) => e.data.outcome)).toEqual(['rejected', 'rejected', 'rejected']);
    const told = ev.filter((e) => e.type === 'tool/result').map((e) => JSON.stringify(e.data.message) + JSON.stringify(e.data.error));
    for (const t of told) {
      expect(t).toContain('APPROVAL_REJECTED');
      expect(t).toContain('rejected it');
      expect(t).not.toContain('non-interactive');
    }
  });

  it('session/cancel ends the turn cancelled; the log records it aborted with the cause user', async () => {
    const h = harness();
    const a = start(h, [{ kind: 'hang', readyFile: 'ready' }]);
    const sid = await session(a, h);
    const p = a.conn.agent.request('session/prompt', { sessionId: sid, prompt: [{ type: 'text', text: 'go' }] });
    const end = Date.now() + 20_000;
    while (!existsSync(join(h.workspace, 'ready')) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    await a.conn.agent.notify('session/cancel', { sessionId: sid });
    expect((await p).stopReason).toBe('cancelled');
    await a.close();
    const ev = storedLogs(h.home)[0]!.events;
    expect(ev.find((e) => e.type === 'turn/end')?.data.reason).toEqual({ kind: 'aborted', reason: { kind: 'user' } });
  });

  it('session/load replays the stored history as updates in a new process, then continues it; list and resume find it', async () => {
    const h = harness();
    const a = start(h, [textCall('PONG')], { name: 'first' });
    const sid = await session(a, h);
    await a.conn.agent.request('session/prompt', { sessionId: sid, prompt: [{ type: 'text', text: 'ping' }] });
    await a.close();

    const b = start(h, [textCall('second answer')], { name: 'second' });
    await b.conn.agent.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    const listed = await b.conn.agent.request('session/list', { cwd: h.workspace });
    expect(listed.sessions.map((s) => s.sessionId)).toEqual([sid]);
    const loaded = await b.conn.agent.request('session/load', { sessionId: sid, cwd: h.workspace, mcpServers: [] });
    expect(loaded.modes?.currentModeId).toBe('workspace-write/ask');
    const replay = b.updates.filter(
      (u) => u.update.sessionUpdate === 'user_message_chunk' || u.update.sessionUpdate === 'agent_message_chunk',
    );
    expect(replay.map((u) => [u.update.sessionUpdate, (u.update as { content: { text: string } }).content.text])).toEqual([
      ['user_message_chunk', 'ping'],
      ['agent_message_chunk', 'PONG'],
    ]);
    const r = await b.conn.agent.request('session/prompt', { sessionId: sid, prompt: [{ type: 'text', text: 'again' }] });
    expect(r.stopReason).toBe('end_turn');
    await expect(b.conn.agent.request('session/load', { sessionId: sid, cwd: h.dir, mcpServers: [] })).rejects.toMatchObject({
      data: { code: 'WORKSPACE_MISMATCH' },
    });
    await b.close();
    const logs = storedLogs(h.home);
    expect(logs).toHaveLength(1);
    expect(logs[0]!.events.filter((e) => e.type === 'turn/end')).toHaveLength(2);

    const c = start(h, [], { name: 'third' });
    await c.conn.agent.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    await c.conn.agent.request('session/resume', { sessionId: sid, cwd: h.workspace });
    expect(c.updates.filter((u) => u.update.sessionUpdate === 'agent_message_chunk')).toEqual([]);
  });

  it('load or resume of a session another dsh process holds is refused SESSION_LOCKED, not "Internal error"', async () => {
    const h = harness();
    const a = start(h, [textCall('PONG')], { name: 'holder' });
    const sid = await session(a, h);
    await a.conn.agent.request('session/prompt', { sessionId: sid, prompt: [{ type: 'text', text: 'ping' }] });
    const b = start(h, [], { name: 'second' });
    await b.conn.agent.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    const locked = { code: -32600, data: { code: 'SESSION_LOCKED', path: '$.sessionId' } };
    await expect(b.conn.agent.request('session/load', { sessionId: sid, cwd: h.workspace, mcpServers: [] })).rejects.toMatchObject(locked);
    await expect(b.conn.agent.request('session/resume', { sessionId: sid, cwd: h.workspace })).rejects.toMatchObject(locked);
    // Once the holder is gone, the same request succeeds.
    await a.close();
    await b.conn.agent.request('session/resume', { sessionId: sid, cwd: h.workspace });
  });

  it('session/fork starts a new stored session seeded with the history; it takes prompts of its own', async () => {
    const h = harness();
    const a = start(h, [textCall('PONG'), textCall('in the fork')]);
    const sid = await session(a, h);
    await a.conn.agent.request('session/prompt', { sessionId: sid, prompt: [{ type: 'text', text: 'ping' }] });
    const fork = await a.conn.agent.request('session/fork', { sessionId: sid, cwd: h.workspace, mcpServers: [] });
    expect(fork.sessionId).not.toBe(sid);
    const r = await a.conn.agent.request('session/prompt', { sessionId: fork.sessionId, prompt: [{ type: 'text', text: 'fork' }] });
    expect(r.stopReason).toBe('end_turn');
    await a.close();
    const logs = storedLogs(h.home);
    const child = logs.find((l) => l.header.id === fork.sessionId)!;
    expect(child.header.parentSession).toBe(sid);
    expect(child.events.filter((e) => e.type === 'turn/end')).toHaveLength(2);
    expect(logs.find((l) => l.header.id === sid)!.events.filter((e) => e.type === 'turn/end')).toHaveLength(1);
  });

  it('session/set_mode rebuilds the agent under the new policy, logged; an unknown mode is refused with its code', async () => {
    const h = harness();
    const a = start(h, []);
    const sid = await session(a, h);
    await a.conn.agent.request('session/set_mode', { sessionId: sid, modeId: 'read-only/never' });
    await expect(a.conn.agent.request('session/set_mode', { sessionId: sid, modeId: 'nope' })).rejects.toMatchObject({
      data: { code: 'UNKNOWN_MODE', path: '$.modeId' },
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(a.updates.find((u) => u.update.sessionUpdate === 'current_mode_update')?.update).toMatchObject({
      currentModeId: 'read-only/never',
    });
    await a.close();
    const ev = storedLogs(h.home)[0]!.events;
    expect(ev.filter((e) => e.type === 'sandbox/mode').map((e) => e.data.mode)).toEqual(['workspace-write', 'read-only']);
    expect(ev.filter((e) => e.type === 'approval/policy').map((e) => e.data.policy)).toEqual(['ask', 'never']);
  });
});
