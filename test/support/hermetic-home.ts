/**
 * Run before every test file (vitest.config.ts `setupFiles`): the user-level Claude Code and Codex
 * hook files are looked for under `$CLAUDE_CONFIG_DIR` and `$CODEX_HOME` (src/coding/hook-bridge/
 * discover.ts), so both point at a directory that does not exist. A developer's own
 * `~/.claude/settings.json` or `~/.codex/hooks.json` then never runs in the suite: not in an agent
 * a test builds without `hooks.home`, nor in a `dsh` child process, which inherits the variables.
 * HOME itself is left alone (browsers, git and toolchains find their files through it).
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const NO_USER_HOOKS = join(tmpdir(), `dsh-test-no-user-hooks-${process.pid}`, 'absent');

process.env.CLAUDE_CONFIG_DIR = join(NO_USER_HOOKS, '.claude');
process.env.CODEX_HOME = join(NO_USER_HOOKS, '.codex');
