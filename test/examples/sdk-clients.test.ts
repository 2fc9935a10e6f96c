/**
 * The SDK client examples of docs/sdk.md (examples/sdk/client.mjs and client.py) drive a real
 * `dsh sdk` over a recorded model and print its answer. The Python one skips, saying why, where
 * there is no python3.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DSH_BIN, makeSandbox, REPO_ROOT, runEnv, type Sandbox } from '../../scripts/conformance/scenario.js';
import { MODEL, PROVIDER, writeRecording } from '../sdk/recording.js';

const python = spawnSync('python3', ['--version']).status === 0;
let box: Sandbox | undefined;
afterEach(() => box?.dispose());

function runExample(command: string, file: string): ReturnType<typeof spawnSync> {
  box = makeSandbox('/nonexistent-scenario');
  const rec = join(box.root, 'recorded.jsonl');
  writeRecording(rec, [{ prompt: 'say hello', answer: 'hello from the recording' }]);
  const flags = ['--replay-model', rec, '--model', `${PROVIDER}:${MODEL}`, '--sandbox', 'danger-full-access', '--approval', 'never'];
  return spawnSync(command, [join(REPO_ROOT, 'examples', 'sdk', file), box.cwd, 'say hello', ...flags], {
    env: { ...runEnv(box), DSH_COMMAND: `${process.execPath} ${DSH_BIN}` },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('SDK client examples', () => {
  it('client.mjs streams the answer and ends the session', () => {
    const r = runExample(process.execPath, 'client.mjs');
    expect(r.status, String(r.stderr)).toBe(0);
    expect(r.stdout).toBe('hello from the recording');
    expect(r.stderr).toContain('[turn 1 ended: completed]');
  }, 60_000);

  it.runIf(python)(
    'client.py prints the final answer',
    () => {
      const r = runExample('python3', 'client.py');
      expect(r.status, String(r.stderr)).toBe(0);
      expect(r.stdout).toBe('hello from the recording\n');
    },
    60_000,
  );
  if (!python) it.skip('client.py (skipped: no python3 on this machine)', () => {});
});
