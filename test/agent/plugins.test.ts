/** Plugins and live status (issue 3 items 1 and 8). */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { harness } from './helpers.js';
import { textResponse, toolCallResponse, ScriptedAdapter } from '../../src/llm/scripted.js';
import type { Plugin } from '../../src/agent/agent.js';

describe('plugins', () => {
  it('register listeners, tools, prompt sections and adapters, and one disposer removes them all', async () => {
    const seen: string[] = [];
    const extra = new ScriptedAdapter([textResponse('from plugin adapter')], { providers: ['plugin-provider'] });
    const plugin: Plugin = (host) => {
      host.on('agent/status', (p) => void seen.push(p.status));
      host.tool({ name: 'ping', description: 'ping', parameters: z.object({}), execute: () => 'pong' });
      host.section({ name: 'plugin-rules', render: () => 'Always answer in French.' });
      host.adapter(extra);
    };
    const { agent, adapter } = harness([toolCallResponse([{ id: 'p', name: 'ping', args: {} }]), textResponse('ok')]);
    const dispose = agent.use(plugin);
    agent.prompt('x');
    await agent.whenIdle();
    expect(seen).toEqual(['running', 'idle']);
    expect(adapter.requests[0]!.system).toContain('Always answer in French.');
    expect(adapter.requests[0]!.tools!.map((t) => t.name)).toEqual(['ping']);
    expect(agent.adapters.providers()).toContain('plugin-provider');
    dispose();
    expect(agent.tools.names()).toEqual([]);
    expect(agent.adapters.providers()).not.toContain('plugin-provider');
    expect(await agent.systemPrompt.assemble()).toBe('');
    agent.prompt('y');
    await agent.whenIdle();
    expect(seen).toEqual(['running', 'idle']);
  });

  it('a plugin may return its own disposer, which runs on dispose', async () => {
    let cleaned = 0;
    const { agent } = harness([]);
    const d = agent.use(() => () => void cleaned++);
    d();
    expect(cleaned).toBe(1);
    agent.use(() => () => void cleaned++);
    await agent.dispose();
    expect(cleaned).toBe(2);
  });
});

describe('live status', () => {
  it('goes idle → running → idle once per activity, with only real transitions', async () => {
    const { agent, statuses } = harness([textResponse('a'), textResponse('b'), textResponse('c')]);
    agent.prompt('1');
    agent.followup('2');
    await agent.whenIdle();
    agent.prompt('3');
    await agent.whenIdle();
    expect(statuses).toEqual(['running', 'idle', 'running', 'idle']);
  });

  it('agent/session-start fires once, before the first turn, where inject() lands in that turn', async () => {
    const { agent, adapter } = harness([textResponse('a'), textResponse('b')]);
    let starts = 0;
    agent.on('agent/session-start', (p) => {
      starts++;
      p.agent.inject('project notes');
    });
    agent.prompt('x');
    await agent.whenIdle();
    agent.prompt('y');
    await agent.whenIdle();
    expect(starts).toBe(1);
    expect(adapter.requests[0]!.messages.map((m) => (m.content[0]?.type === 'text' ? m.content[0].text : ''))).toEqual([
      'x',
      'project notes',
    ]);
  });
});
