/**
 * The user's own hook files and the test suite: discovery follows Claude Code's
 * `$CLAUDE_CONFIG_DIR` and Codex's `$CODEX_HOME`, and the suite's setup file
 * (test/support/hermetic-home.ts) points both at nothing, so a developer's own
 * `~/.claude/settings.json` or `~/.codex/hooks.json` never runs in a test that builds an agent
 * without `hooks.home` (issue 16 review, M3). Shown here with a HOME holding blocking hooks.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { userHookFiles } from '../../src/coding/index.js';
import { textResponse } from '../../src/llm/scripted.js';
import { NO_USER_HOOKS } from '../support/hermetic-home.js';
import { agentIn, ofType, workspace } from './support/hook-agent.js';

afterEach(() => {
  vi.unstubAllEnvs();
});

/** A home directory whose Claude Code and Codex files each hold a prompt hook that leaves a mark in the workspace and blocks. */
function homeWithBlockingHooks(): string {
  const home = workspace({});
  mkdirSync(join(home, '.claude'));
  mkdirSync(join(home, '.codex'));
  const blocking = (mark: string): string =>
    JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command: `touch ${mark}; echo no >&2; exit 2` }] }] } });
  writeFileSync(join(home, '.claude', 'settings.json'), blocking('ran-claude'));
  writeFileSync(join(home, '.codex', 'hooks.json'), blocking('ran-codex'));
  return home;
}

/** One prompt through the hook tests' helper (no `hooks.home`); which user hooks ran, and whether the turn was answered. */
async function promptOnce(): Promise<{ ran: string[]; answered: boolean }> {
  const cwd = workspace({});
  const a = await agentIn(cwd, 'claude-code', [textResponse('hi')]);
  try {
    await a.run('hello');
    return {
      ran: ['ran-claude', 'ran-codex'].filter((m) => existsSync(join(cwd, m))),
      answered: ofType(a.events(), 'assistant/message').length === 1,
    };
  } finally {
    await a.close();
  }
}

describe("the developer's own hooks in the test suite", () => {
  it('CLAUDE_CONFIG_DIR and CODEX_HOME point at a directory that does not exist, outside the home directory', () => {
    expect(process.env.CLAUDE_CONFIG_DIR).toBe(join(NO_USER_HOOKS, '.claude'));
    expect(process.env.CODEX_HOME).toBe(join(NO_USER_HOOKS, '.codex'));
    expect(existsSync(NO_USER_HOOKS)).toBe(false);
    expect(NO_USER_HOOKS.startsWith(homedir())).toBe(false);
    expect(userHookFiles().map((f) => f.path)).toEqual([
      join(NO_USER_HOOKS, '.claude', 'settings.json'),
      join(NO_USER_HOOKS, '.codex', 'hooks.json'),
    ]);
  });

  it('an agent built as the tests build it runs no blocking hook in HOME; the same hooks run once the variables name them', async () => {
    const home = homeWithBlockingHooks();
    vi.stubEnv('HOME', home);
    expect(await promptOnce()).toEqual({ ran: [], answered: true });
    // Without the suite's variables, HOME's files are the user's: both run, and block the prompt.
    vi.stubEnv('CLAUDE_CONFIG_DIR', undefined);
    vi.stubEnv('CODEX_HOME', undefined);
    expect(await promptOnce()).toEqual({ ran: ['ran-claude', 'ran-codex'], answered: false });
    // Each agent's own variable names its directory, as Claude Code and Codex read it.
    vi.stubEnv('HOME', workspace({}));
    vi.stubEnv('CODEX_HOME', join(home, '.codex'));
    expect(await promptOnce()).toEqual({ ran: ['ran-codex'], answered: false });
  });

  it('hooks.home, when given, wins over the variables', () => {
    expect(userHookFiles({ home: '/h', env: { CLAUDE_CONFIG_DIR: '/c', CODEX_HOME: '/x', HOME: '/u' } })).toEqual([
      { dialect: 'claude-code', path: '/h/.claude/settings.json' },
      { dialect: 'codex', path: '/h/.codex/hooks.json' },
    ]);
    expect(userHookFiles({ env: { CLAUDE_CONFIG_DIR: '/c', HOME: '/u' } })).toEqual([
      { dialect: 'claude-code', path: '/c/settings.json' },
      { dialect: 'codex', path: '/u/.codex/hooks.json' },
    ]);
  });
});
