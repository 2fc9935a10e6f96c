/**
 * A coding agent on a scripted model with one hooks file, in a scratch workspace holding the hook
 * scripts: what the hook-bridge tests share. Scripts save their stdin to files the tests read.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { createCodingAgent, type CodingAgentOptions, type HookDialect } from '../../../src/coding/index.js';
import { ScriptedAdapter } from '../../../src/llm/scripted.js';
import type { StreamChunk } from '../../../src/model/stream.js';
import type { SessionEvent } from '../../../src/session/index.js';

export const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A workspace holding the hook scripts (name → body, made executable) and the hooks file. */
export function workspace(hooks: object, scripts: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-hooks-'));
  dirs.push(dir);
  for (const [name, body] of Object.entries(scripts)) {
    writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(dir, name), 0o755);
  }
  writeFileSync(join(dir, 'hooks.json'), JSON.stringify({ hooks }));
  writeFileSync(join(dir, 'notes.txt'), 'hello\n');
  return dir;
}

export const cmd = (script: string, extra: object = {}): object => ({ hooks: [{ type: 'command', command: `./${script}`, ...extra }] });

export async function agentIn(
  cwd: string,
  dialect: HookDialect,
  script: StreamChunk[][],
  extra: Partial<CodingAgentOptions> = {},
): Promise<{
  id: string;
  model: ScriptedAdapter;
  events: () => readonly SessionEvent[];
  run: (p: string) => Promise<void>;
  close: () => Promise<void>;
}> {
  const model = new ScriptedAdapter(script, { providers: ['deepseek'] });
  const coding = await createCodingAgent({
    cwd,
    config: {},
    adapters: [model],
    model: 'deepseek:deepseek-v4-flash',
    sandbox: 'danger-full-access',
    approval: 'never',
    mcp: false,
    hooks: { files: [{ dialect, path: join(cwd, 'hooks.json') }] },
    ...extra,
  });
  return {
    id: coding.agent.session.id,
    model,
    events: () => coding.agent.session.events,
    run: async (p) => {
      coding.agent.prompt(p);
      await coding.agent.whenIdle();
    },
    close: () => coding.close(),
  };
}

export const ofType = <T extends SessionEvent['type']>(events: readonly SessionEvent[], t: T): Extract<SessionEvent, { type: T }>[] =>
  events.filter((e): e is Extract<SessionEvent, { type: T }> => e.type === t);
export const data = (e: SessionEvent): Record<string, unknown> => e.data as unknown as Record<string, unknown>;
export const texts = (m: { content: readonly { type: string; text?: string }[] }): string =>
  m.content.map((b) => (b.type === 'text' ? b.text : b.type === 'tool-result' ? JSON.stringify(b) : '')).join('');
export const stdin = (cwd: string, name: string): Record<string, unknown> => JSON.parse(readFileSync(join(cwd, name), 'utf8'));
