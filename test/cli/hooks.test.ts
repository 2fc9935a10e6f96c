/**
 * Hooks under the CLI: `transcript_path` on a hook's stdin is the stored session's log file, a
 * real file whose header names the session the hook's `session_id` names (Claude Code points its
 * hooks at its transcript the same way). And a spawned `dsh` in the suite runs no hook from the
 * HOME it is given: the suite's CLAUDE_CONFIG_DIR / CODEX_HOME (test/support/hermetic-home.ts)
 * reach the child.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { textCall } from '../acp/support.js';
import { dsh } from './support/run.js';

it('a hook gets the stored log file as transcript_path', async () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-cli-hooks-')));
  const home = join(dir, 'home');
  const ws = join(dir, 'ws');
  mkdirSync(home);
  mkdirSync(join(ws, '.claude'), { recursive: true });
  writeFileSync(join(home, 'config.json'), JSON.stringify({ trustedProjects: [ws] }));
  writeFileSync(
    join(ws, '.claude', 'settings.json'),
    JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command: 'cat > hook-stdin.json' }] }] } }),
  );
  const log = join(dir, 'rec.jsonl');
  writeFileSync(log, `${JSON.stringify({ type: 'session', version: 0, id: 'rec', createdAt: 1, cwd: ws, delegationDepth: 0 })}\n`);
  const override = join(dir, 'o.json');
  writeFileSync(override, JSON.stringify([textCall('done')]));
  const r = await dsh(['run', '--cwd', ws, '--replay-model', log, '--replay-override', override, 'hi'], {
    env: { DSH_HOME: home, HOME: dir, DSH_MODEL: '', DEEPSEEK_API_KEY: undefined },
  });
  expect(r.code, r.stderr).toBe(0);
  const payload = JSON.parse(readFileSync(join(ws, 'hook-stdin.json'), 'utf8')) as { transcript_path: string; session_id: string };
  expect(payload.transcript_path.startsWith(join(home, 'sessions'))).toBe(true);
  expect(payload.transcript_path.endsWith('session.jsonl')).toBe(true);
  const header = JSON.parse(readFileSync(payload.transcript_path, 'utf8').split('\n')[0]!) as { type: string; id: string };
  expect(header).toMatchObject({ type: 'session', id: payload.session_id });
}, 60_000);

it("a dsh child process in the suite runs no hook from the user's home; without the suite's variables it would", async () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-cli-hooks-home-')));
  const home = join(dir, 'dsh-home');
  const ws = join(dir, 'ws');
  mkdirSync(home);
  mkdirSync(ws);
  mkdirSync(join(dir, '.claude'));
  writeFileSync(
    join(dir, '.claude', 'settings.json'),
    JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command: 'touch user-hook-ran; exit 2' }] }] } }),
  );
  const log = join(dir, 'rec.jsonl');
  writeFileSync(log, `${JSON.stringify({ type: 'session', version: 0, id: 'rec', createdAt: 1, cwd: ws, delegationDepth: 0 })}\n`);
  const override = join(dir, 'o.json');
  writeFileSync(override, JSON.stringify([textCall('done')]));
  const run = (env: Record<string, string | undefined>) =>
    dsh(['run', '--cwd', ws, '--replay-model', log, '--replay-override', override, 'hi'], {
      env: { DSH_HOME: home, HOME: dir, DSH_MODEL: '', DEEPSEEK_API_KEY: undefined, ...env },
    });
  const r = await run({});
  expect(r.code, r.stderr).toBe(0);
  expect(existsSync(join(ws, 'user-hook-ran'))).toBe(false);
  await run({ CLAUDE_CONFIG_DIR: undefined });
  expect(existsSync(join(ws, 'user-hook-ran'))).toBe(true);
}, 60_000);
