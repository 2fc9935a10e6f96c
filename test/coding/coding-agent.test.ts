/** The coding agent preset: tools, permissions, prompt, runtime context and instructions, from config. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCodingAgent, CODING_SYSTEM_PROMPT, RUNTIME_CONTEXT_PLUGIN, INSTRUCTIONS_PLUGIN } from '../../src/coding/index.js';
import { ScriptedAdapter, textResponse, toolCallResponse } from '../../src/llm/scripted.js';
import type { Message } from '../../src/model/message.js';

const sources = (msgs: readonly Message[]): string[] =>
  msgs.map((m) => (m.source.kind === 'plugin' ? `plugin:${m.source.plugin}` : m.source.kind));

function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-coding-'));
  writeFileSync(join(dir, 'AGENTS.md'), '# Rules\nAlways run `npm test` after a change.\n');
  writeFileSync(join(dir, 'notes.txt'), 'hello\n');
  return dir;
}

describe('createCodingAgent', () => {
  it('starts a coding agent: base prompt, built-in tools, instructions once, runtime context when it changes', async () => {
    const cwd = workspace();
    const model = new ScriptedAdapter(
      [
        toolCallResponse([{ id: 'r1', name: 'read', args: { file_path: join(cwd, 'notes.txt') } }]),
        textResponse('It says hello.'),
        textResponse('Still hello.'),
      ],
      { providers: ['deepseek'] },
    );
    const { agent, sandbox, close } = await createCodingAgent({ cwd, config: {}, adapters: [model], model: 'deepseek:deepseek-v4-flash' });
    try {
      expect(['full', 'partial']).toContain(sandbox.enforcement);
      agent.prompt('What does notes.txt say?');
      await agent.whenIdle();
      agent.prompt('And now?');
      await agent.whenIdle();
      const [r1, r2, r3] = model.requests;
      expect(r1!.system).toBe(CODING_SYSTEM_PROMPT);
      expect(r1!.tools!.map((t) => t.name)).toEqual(
        expect.arrayContaining(['bash', 'read', 'write', 'edit', 'glob', 'grep', 'todo_write']),
      );
      // Turn 1, step 1: the prompt, the workspace instructions, the runtime context.
      expect(sources(r1!.messages)).toEqual(['user', `plugin:${INSTRUCTIONS_PLUGIN}`, `plugin:${RUNTIME_CONTEXT_PLUGIN}`]);
      const instructions = r1!.messages[1]!.content[0]!;
      expect(instructions.type === 'text' && instructions.text).toContain('Always run `npm test` after a change.');
      const context = r1!.messages[2]!.content[0]!;
      expect(context.type === 'text' && context.text).toContain(`Workspace (current directory): ${cwd}`);
      // The tool really read the file.
      const result = r2!.messages.at(-1)!.content[0]!;
      expect(result.type === 'tool-result' && JSON.stringify(result.content)).toContain('hello');
      // Turn 2: unchanged context is not repeated; instructions are not re-injected.
      expect(sources(r3!.messages).slice(-2)).toEqual(['model', 'user']);
      expect(r3!.messages.filter((m) => m.source.kind === 'plugin')).toHaveLength(2);
      // Everything the model saw is in the log.
      expect(agent.session.deriveMessages().toArray()).toEqual([...r3!.messages, agent.session.deriveMessages().toArray().at(-1)]);
    } finally {
      await close();
    }
  });

  it('denies what would need approval when nobody can approve, and says so', async () => {
    const cwd = workspace();
    const model = new ScriptedAdapter(
      [toolCallResponse([{ id: 'w1', name: 'write', args: { file_path: join(cwd, 'new.txt'), content: 'x' } }]), textResponse('ok')],
      { providers: ['deepseek'] },
    );
    const { agent, close } = await createCodingAgent({
      cwd,
      config: { permissions: { ask: ['write(*)'] } },
      adapters: [model],
      model: 'deepseek:deepseek-v4-flash',
    });
    try {
      agent.prompt('Create new.txt');
      await agent.whenIdle();
      const result = agent.session.events.find((e) => e.type === 'tool/result');
      expect(result?.type === 'tool/result' && result.data.error?.code).toBe('APPROVAL_UNAVAILABLE');
      expect(() => readFileSync(join(cwd, 'new.txt'))).toThrow();
      expect(agent.session.events.map((e) => e.type)).toEqual(
        expect.arrayContaining(['approval/asked', 'approval/decided', 'sandbox/mode', 'approval/policy']),
      );
    } finally {
      await close();
    }
  });
});

describe('provider keys and shell commands', () => {
  it("a configured provider's apiKeyEnv, whatever its name, is not in bash's environment", async () => {
    const cwd = workspace();
    process.env.MYLLM_AUTH = 'sk-myllm-secret-987';
    try {
      const model = new ScriptedAdapter(
        [toolCallResponse([{ id: 'b1', name: 'bash', args: { command: 'echo "[${MYLLM_AUTH:-hidden}]"' } }]), textResponse('done')],
        { providers: ['deepseek'] },
      );
      const config = { providers: { myllm: { baseUrl: 'http://127.0.0.1:9/v1', apiKeyEnv: 'MYLLM_AUTH' } } };
      const { agent, close } = await createCodingAgent({
        cwd,
        config,
        adapters: [model],
        model: 'deepseek:deepseek-v4-flash',
        sandbox: 'danger-full-access',
        approval: 'never',
      });
      try {
        agent.prompt('print it');
        await agent.whenIdle();
        const result = JSON.stringify(agent.session.events.filter((e) => e.type === 'tool/result'));
        expect(result).toContain('[hidden]');
        expect(JSON.stringify(agent.session.events)).not.toContain('sk-myllm-secret-987');
      } finally {
        await close();
      }
    } finally {
      delete process.env.MYLLM_AUTH;
    }
  });
});
