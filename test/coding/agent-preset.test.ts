/**
 * dsh's agent presets choose the coding agent's tools: `minimal` is a persistent-shell `bash`
 * and `str_replace_editor`. The choice is recorded (`agent-preset/selected`) only when it differs
 * from what the session had, and a resumed session keeps its recorded preset.
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCodingAgent, CODING_SYSTEM_PROMPT, MINIMAL_SYSTEM_PROMPT, recordedPreset } from '../../src/coding/index.js';
import { ScriptedAdapter, textResponse, toolCallResponse } from '../../src/llm/scripted.js';
import { Session } from '../../src/session/index.js';
import type { ToolSet } from '../../src/tools/coding-tools.js';

function workspace(): string {
  return realpathSync(mkdtempSync(join(tmpdir(), 'dsh-preset-')));
}

function selections(session: Session): unknown[] {
  return [...session.eventsOfType(['agent-preset/selected'])].map((e) => e.data.agentPreset);
}

async function toolsSeen(
  session: Session,
  opts: { agentPreset?: ToolSet; defaultAgentPreset?: ToolSet } = {},
): Promise<{ tools: string[]; system: string }> {
  const model = new ScriptedAdapter([textResponse('ok')], { providers: ['deepseek'] });
  const cwd = session.header.cwd!;
  const c = await createCodingAgent({ cwd, config: {}, adapters: [model], model: 'deepseek:deepseek-v4-flash', session, ...opts });
  try {
    c.agent.prompt('hi');
    await c.agent.whenIdle();
    return { tools: model.requests[0]!.tools!.map((t) => t.name), system: model.requests[0]!.system! };
  } finally {
    await c.close();
  }
}

describe('agent presets', () => {
  it('minimal: two tools, its own prompt, recorded; the shell keeps state and the editor writes', async () => {
    const cwd = workspace();
    const model = new ScriptedAdapter(
      [
        toolCallResponse([{ id: 'b1', name: 'bash', args: { command: 'cd /tmp && export N=1' } }]),
        toolCallResponse([{ id: 'b2', name: 'bash', args: { command: 'echo "$N $PWD"' } }]),
        toolCallResponse([
          { id: 'e1', name: 'str_replace_editor', args: { command: 'create', path: join(cwd, 'a.txt'), file_text: 'x\n' } },
        ]),
        textResponse('done'),
      ],
      { providers: ['deepseek'] },
    );
    const session = Session.create({ header: { cwd } });
    const c = await createCodingAgent({
      cwd,
      config: {},
      adapters: [model],
      model: 'deepseek:deepseek-v4-flash',
      session,
      agentPreset: 'minimal',
    });
    try {
      c.agent.prompt('go');
      await c.agent.whenIdle();
      const first = model.requests[0]!;
      expect(first.tools!.map((t) => t.name)).toEqual(['bash', 'str_replace_editor']);
      expect(first.system).toBe(MINIMAL_SYSTEM_PROMPT);
      const results = [...session.eventsOfType(['tool/result'])].map((e) => JSON.stringify(e.data.message.content));
      expect(results[1]).toContain('1 /tmp');
      expect(readFileSync(join(cwd, 'a.txt'), 'utf8')).toBe('x\n');
      expect(selections(session)).toEqual(['minimal']);
      expect(recordedPreset(session)).toBe('minimal');
    } finally {
      await c.close();
    }
  });

  it('standard by default, and nothing is recorded for it', async () => {
    const session = Session.create({ header: { cwd: workspace() } });
    const seen = await toolsSeen(session);
    expect(seen.tools).toEqual(expect.arrayContaining(['bash', 'read', 'write', 'edit', 'glob', 'grep', 'todo_write']));
    expect(seen.tools).not.toContain('str_replace_editor');
    expect(seen.system).toBe(CODING_SYSTEM_PROMPT);
    expect(selections(session)).toEqual([]);
  });

  it('a session keeps its recorded preset; the default yields to it; an explicit choice is recorded as a change', async () => {
    const session = Session.create({ header: { cwd: workspace() } });
    expect((await toolsSeen(session, { defaultAgentPreset: 'minimal' })).tools).toEqual(['bash', 'str_replace_editor']);
    expect(selections(session)).toEqual(['minimal']);
    // Reopened: the recorded preset wins over a default, and nothing new is written.
    expect((await toolsSeen(session, { defaultAgentPreset: 'standard' })).tools).toEqual(['bash', 'str_replace_editor']);
    expect((await toolsSeen(session)).tools).toEqual(['bash', 'str_replace_editor']);
    expect(selections(session)).toEqual(['minimal']);
    // Chosen explicitly: the change is recorded, and it holds from then on.
    expect((await toolsSeen(session, { agentPreset: 'standard' })).tools).toContain('read');
    expect(selections(session)).toEqual(['minimal', 'standard']);
    expect((await toolsSeen(session)).tools).toContain('read');
  });

  it('a preset this build does not have (a dsh log naming ptc) counts as none', () => {
    const session = Session.create({ header: { cwd: workspace() } });
    session.append('agent-preset/selected', { agentPreset: 'ptc' });
    expect(recordedPreset(session)).toBeUndefined();
  });
});
