/**
 * `dsh serve` and `dsh worker` as commands: both need the PostgreSQL store and say so; the real
 * `dsh serve` binary prints its address and a fresh token, answers with that token only, takes
 * DSH_SERVE_TOKEN instead when set, and stops on SIGTERM (exit 0).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runMain } from '../cli/support/inproc.js';
import { spawnDsh, type SpawnedDsh } from '../cli/support/driver.js';
import { tempDir } from '../cli/support/agent.js';
import { describePg, freshSchema, pgUrl } from '../postgres/support/pg.js';

const procs: SpawnedDsh[] = [];
afterEach(() => {
  for (const p of procs.splice(0)) if (p.child.exitCode === null && p.child.signalCode === null) p.kill('SIGKILL');
});

describe('dsh serve / dsh worker without PostgreSQL', () => {
  it('refuse with NEEDS_POSTGRES, naming DSH_STORE', async () => {
    for (const cmd of [['serve'], ['worker']]) {
      const r = await runMain(cmd, { DSH_HOME: tempDir(), HOME: tempDir() });
      expect(r.code, cmd.join(' ')).toBe(1);
      expect(r.stderr).toMatch(/needs the PostgreSQL store: set DSH_STORE=postgres:\/\/.*\[NEEDS_POSTGRES\]/);
    }
  });
  it('refuse a short DSH_SERVE_TOKEN and a non-loopback host', async () => {
    const env = { DSH_HOME: tempDir(), HOME: tempDir(), DSH_STORE: 'postgres://nobody@127.0.0.1:1/x' };
    const short = await runMain(['serve'], { ...env, DSH_SERVE_TOKEN: 'abc' });
    expect([short.code, short.stderr]).toEqual([2, expect.stringContaining('DSH_SERVE_TOKEN must be at least 16 characters')]);
  });
});

describePg('dsh serve (the binary)', () => {
  it('prints its address and token; the token works, another does not; DSH_SERVE_TOKEN replaces it; SIGTERM exits 0', async () => {
    const env = { DSH_HOME: tempDir(), DSH_STORE: pgUrl!, DSH_STORE_SCHEMA: freshSchema('servecli') };
    const p = spawnDsh(['serve'], { env });
    procs.push(p);
    const [, url, token] = await p.transcript.waitFor('stdout', /^(http:\/\/127\.0\.0\.1:\d+)\ntoken (\S+)\n/, { timeoutMs: 60_000 });
    expect(token!.length).toBeGreaterThanOrEqual(40);
    const ok = await fetch(`${url}/v1/sessions`, { headers: { authorization: `Bearer ${token}` } });
    expect([ok.status, await ok.json()]).toEqual([200, { sessions: [] }]);
    expect((await fetch(`${url}/v1/sessions`, { headers: { authorization: 'Bearer not-the-token-at-all' } })).status).toBe(401);
    p.kill('SIGTERM');
    expect(await p.done).toBe(0);

    const fixed = 'fixed-token-for-this-test-0001';
    const q = spawnDsh(['serve', '--host', 'localhost'], { env: { ...env, DSH_SERVE_TOKEN: fixed } });
    procs.push(q);
    const [, url2] = await q.transcript.waitFor('stdout', /^(http:\/\/127\.0\.0\.1:\d+)\n/, { timeoutMs: 60_000 });
    expect(q.transcript.stdout).not.toContain('token');
    expect((await fetch(`${url2}/v1/sessions`, { headers: { authorization: `Bearer ${fixed}` } })).status).toBe(200);
    q.kill('SIGTERM');
    expect(await q.done).toBe(0);
  }, 120_000);
});
