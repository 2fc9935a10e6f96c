/**
 * `/model` and the model selector (`configOptions`, `session/set_config_option`): the models
 * offered, a switch that the next request's header in the log records, a refusal with its code.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_REF } from '../../src/llm/select.js';
import { agentsClosedAfterEach, harness, textCall, type Agent } from './support.js';

const start = agentsClosedAfterEach();

function headers(home: string): string[] {
  const files: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true }))
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.name.endsWith('.jsonl')) files.push(join(d, e.name));
  };
  walk(join(home, 'sessions'));
  return readFileSync(files[0]!, 'utf8')
    .split('\n')
    .filter((l) => l.includes('"request/header"'))
    .map((l) => {
      const c = (JSON.parse(l) as { data: { header: { config: { provider: string; model: string } } } }).data.header.config;
      return `${c.provider}:${c.model}`;
    });
}

const say = (a: Agent, sessionId: string, text: string) =>
  a.conn.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] });

describe('dsh acp: /model and the model selector', { timeout: 90_000 }, () => {
  it('offers the models, switches from the next request on (recorded in its header), refuses an unknown provider', async () => {
    const h = harness();
    const a = start(h, [textCall('one'), textCall('two'), textCall('three')]);
    await a.conn.agent.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    const s = await a.conn.agent.request('session/new', { cwd: h.workspace, mcpServers: [] });
    const opt = s.configOptions?.[0] as { id: string; category: string; currentValue: string; options: { value: string }[] };
    expect(opt).toMatchObject({ id: 'model', category: 'model', currentValue: DEFAULT_MODEL_REF });
    await say(a, s.sessionId, 'one');
    const commands = a.updates.find((u) => u.update.sessionUpdate === 'available_commands_update')!.update as {
      availableCommands: { name: string }[];
    };
    expect(commands.availableCommands.map((c) => c.name)).toContain('model');

    const texts = () =>
      a.updates
        .filter((u) => u.update.sessionUpdate === 'agent_message_chunk')
        .map((u) => (u.update as { content: { text: string } }).content.text);
    await say(a, s.sessionId, '/model');
    expect(texts().at(-1)).toContain(`model ${DEFAULT_MODEL_REF}`);
    await say(a, s.sessionId, '/model deepseek:deepseek-v4-pro');
    expect(texts().at(-1)).toBe('model deepseek:deepseek-v4-pro from the next request on');
    const update = a.updates.filter((u) => u.update.sessionUpdate === 'config_option_update').at(-1)!.update as {
      configOptions: { currentValue: string }[];
    };
    expect(update.configOptions[0]!.currentValue).toBe('deepseek:deepseek-v4-pro');
    await say(a, s.sessionId, 'two');

    await say(a, s.sessionId, '/model nowhere:x');
    expect(texts().at(-1)).toMatch(/^cannot use nowhere:x: .*\[MODEL_INVALID\]$/);
    await expect(
      a.conn.agent.request('session/set_config_option', { sessionId: s.sessionId, configId: 'model', value: 'nowhere:x' }),
    ).rejects.toMatchObject({ data: { code: 'MODEL_INVALID', path: '$.value' } });
    const back = await a.conn.agent.request('session/set_config_option', {
      sessionId: s.sessionId,
      configId: 'model',
      value: DEFAULT_MODEL_REF,
    });
    expect((back.configOptions[0] as { currentValue: string }).currentValue).toBe(DEFAULT_MODEL_REF);
    await say(a, s.sessionId, 'three');
    await a.close();
    expect(headers(h.home)).toEqual([DEFAULT_MODEL_REF, 'deepseek:deepseek-v4-pro', DEFAULT_MODEL_REF]);
  });
});
