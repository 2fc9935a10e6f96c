/**
 * `--agent-preset` and DSH_AGENT_PRESET on the agent commands: the minimal preset's tools reach
 * the provider's request, the choice is in the stored log, a resumed session keeps it, and a
 * bad name is a usage error (exit 2) before anything starts.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fakeProviderPerTest, type FakeProvider } from '../support/fake-provider.js';
import { runMain } from './support/inproc.js';
import { agentEnv, call, logEvents, logPathFrom, tempDir, text } from './support/agent.js';

const fake = fakeProviderPerTest();

const toolNames = (p: FakeProvider, n: number): string[] =>
  ((p.requests[n]!.body as { tools?: { function: { name: string } }[] }).tools ?? []).map((t) => t.function.name);

describe('agent presets on the command line', () => {
  it('dsh run --agent-preset minimal: two tools, a persistent shell, the editor, recorded and kept on --continue', async () => {
    const cwd = tempDir();
    const home = tempDir();
    const p = await fake([
      call('c1', 'bash', { command: 'cd /tmp; export KEPT=yes' }),
      call('c2', 'bash', { command: 'echo "$KEPT $PWD"' }),
      call('c3', 'str_replace_editor', { command: 'create', path: join(cwd, 'n.txt'), file_text: 'a\n' }),
      text(['done']),
      text(['again']),
    ]);
    const env = agentEnv(p.url, home);
    const r = await runMain(['run', '--cwd', cwd, '--agent-preset', 'minimal', 'go'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(toolNames(p, 0)).toEqual(['bash', 'str_replace_editor']);
    expect(readFileSync(join(cwd, 'n.txt'), 'utf8')).toBe('a\n');
    const events = logEvents(logPathFrom(r.stderr));
    const results = events.filter((e) => e.type === 'tool/result').map((e) => JSON.stringify(e.data));
    expect(results[1]).toContain('yes /tmp');
    expect(events.filter((e) => e.type === 'agent-preset/selected').map((e) => e.data)).toEqual([{ agentPreset: 'minimal' }]);
    // Continued without the flag (and with another default in the environment): the session's own preset.
    const again = await runMain(['run', '--cwd', cwd, '--continue', 'more'], { ...env, DSH_AGENT_PRESET: 'standard' });
    expect(again.code, again.stderr).toBe(0);
    expect(toolNames(p, 4)).toEqual(['bash', 'str_replace_editor']);
  }, 120_000);

  it('DSH_AGENT_PRESET chooses for a new session', async () => {
    const p = await fake([text(['ok'])]);
    const r = await runMain(['run', '--cwd', tempDir(), 'hi'], agentEnv(p.url, tempDir(), { DSH_AGENT_PRESET: 'minimal' }));
    expect(r.code, r.stderr).toBe(0);
    expect(toolNames(p, 0)).toEqual(['bash', 'str_replace_editor']);
  });

  it('a preset name this build lacks is a usage error, from the flag or the environment', async () => {
    const env = agentEnv('http://127.0.0.1:9', tempDir());
    const flag = await runMain(['run', '--cwd', tempDir(), '--agent-preset', 'ptc', 'hi'], env);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/--agent-preset.*ptc.*standard, minimal/);
    const fromEnv = await runMain(['run', '--cwd', tempDir(), 'hi'], { ...env, DSH_AGENT_PRESET: 'cordis' });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toBe('dsh: DSH_AGENT_PRESET="cordis" names no agent preset here: use standard or minimal [USAGE]\n');
  });
});
