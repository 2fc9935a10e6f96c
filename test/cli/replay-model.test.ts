/**
 * `--replay-model LOG [--replay-override FILE]`: the one flag family that feeds a command recorded
 * model streams (run, chat, sdk and acp share it through addModelFlags). An override alone (over a
 * header-only log) serves `dsh run` the same way it serves `dsh acp`; bad files are refused with
 * stable codes naming the file and JSON path; the old `dsh acp --replay` is gone.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { textCall } from '../acp/support.js';
import { writeRecording } from '../sdk/recording.js';
import { dsh } from './support/run.js';

function box(): { dir: string; home: string; ws: string; env: Record<string, string | undefined> } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-replay-model-')));
  const home = join(dir, 'home');
  const ws = join(dir, 'ws');
  mkdirSync(home);
  mkdirSync(ws);
  return { dir, home, ws, env: { DSH_HOME: home, DSH_MODEL: '', DEEPSEEK_API_KEY: undefined } };
}

function headerOnly(file: string, cwd: string): void {
  writeFileSync(file, `${JSON.stringify({ type: 'session', version: 0, id: 'rec', createdAt: 1, cwd, delegationDepth: 0 })}\n`);
}

function storedEvents(home: string): { type: string; data: Record<string, unknown> }[] {
  const root = join(home, 'sessions');
  const log = readdirSync(root, { recursive: true, withFileTypes: true }).find((e) => e.isFile() && e.name === 'session.jsonl');
  if (!log) throw new Error(`no stored log under ${root}`);
  return readFileSync(join(log.parentPath, log.name), 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> });
}

describe('--replay-model and --replay-override', () => {
  it('dsh run serves the override over a header-only log, with no key', async () => {
    const b = box();
    const log = join(b.dir, 'rec.jsonl');
    headerOnly(log, b.ws);
    const override = join(b.dir, 'o.json');
    writeFileSync(override, JSON.stringify([textCall('served by the override')]));
    const r = await dsh(['run', '--cwd', b.ws, '--replay-model', log, '--replay-override', override, 'hello'], { env: b.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('served by the override');
    const answer = storedEvents(b.home).find((e) => e.type === 'assistant/message');
    expect(JSON.stringify(answer?.data)).toContain('served by the override');
  }, 60_000);

  it('a patch replaces one recorded call and keeps the others', async () => {
    const b = box();
    const log = join(b.dir, 'rec.jsonl');
    writeRecording(log, [{ prompt: 'one', answer: 'first recorded' }]);
    const override = join(b.dir, 'o.json');
    writeFileSync(override, JSON.stringify({ patches: [{ at: 0, entry: textCall('patched') }] }));
    const r = await dsh(['run', '--cwd', b.ws, '--replay-model', log, '--replay-override', override, 'one'], { env: b.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('patched');
    expect(r.stdout).not.toContain('first recorded');
  }, 60_000);

  it('refuses --replay-override without --replay-model (usage, exit 2)', async () => {
    const b = box();
    const override = join(b.dir, 'o.json');
    writeFileSync(override, '[]');
    const r = await dsh(['run', '--cwd', b.ws, '--replay-override', override, 'hi'], { env: b.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--replay-override patches a recording: give --replay-model too/);
  }, 60_000);

  it('refuses a bad override with REPLAY_OVERRIDE_INVALID naming the file and JSON path, before any session', async () => {
    const b = box();
    const log = join(b.dir, 'rec.jsonl');
    headerOnly(log, b.ws);
    const cases: [string, string, RegExp][] = [
      ['kind.json', JSON.stringify([textCall('a'), { kind: 'sleep' }]), /kind\.json: \$\[1\]\.kind: unknown entry kind "sleep"/],
      ['notjson.json', '[{', /notjson\.json: not JSON/],
      [
        'past.json',
        JSON.stringify({ patches: [{ at: 2, entry: { kind: 'hang' } }] }),
        /past\.json: \$\.patches: call 2 is past the 0 recorded/,
      ],
    ];
    for (const [name, text, message] of cases) {
      const file = join(b.dir, name);
      writeFileSync(file, text);
      const r = await dsh(['run', '--cwd', b.ws, '--json', '--replay-model', log, '--replay-override', file, 'hi'], { env: b.env });
      expect(r.code, name).toBe(1);
      expect(r.stderr + r.stdout, name).toMatch(message);
      expect(r.stderr + r.stdout, name).toContain('REPLAY_OVERRIDE_INVALID');
    }
    const missing = await dsh(['run', '--cwd', b.ws, '--replay-model', join(b.dir, 'absent.jsonl'), 'hi'], { env: b.env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('REPLAY_LOG_INVALID');
    expect(() => readdirSync(join(b.home, 'sessions'))).toThrow();
  }, 60_000);

  it('dsh acp takes the same flags; its old --replay is gone', async () => {
    const b = box();
    const r = await dsh(['acp', '--replay', join(b.dir, 'x.jsonl')], { env: b.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown option '--replay'/);
    const help = await dsh(['acp', '--help'], { env: b.env });
    expect(help.stdout).toContain('--replay-model <log>');
    expect(help.stdout).toContain('--replay-override <file>');
  }, 60_000);
});
