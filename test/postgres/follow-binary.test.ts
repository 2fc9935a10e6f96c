/**
 * The real `dsh log show --follow` binary on a PostgreSQL session whose LISTEN connection the
 * server kills (pg_terminate_backend), twice, while another store appends: the process stays up,
 * reconnects, and prints every later event once (the same timeline `dsh log show` prints of the
 * final log: no gap, no duplicate), then exits 0 on SIGINT. Inside vitest the event loop is kept
 * alive by the runner, so only a separate process shows whether a follower keeps its own alive.
 */
import { afterEach, expect, it } from 'vitest';
import { PgStore } from '../../src/postgres/index.js';
import { appendTurn, fixedClock } from '../store/support/events.js';
import { printedSeqs } from '../cli/support/timeline.js';
import { spawnDsh, type SpawnedDsh } from '../cli/support/driver.js';
import { runMain } from '../cli/support/inproc.js';
import { tempDir } from '../cli/support/agent.js';
import { describePg, freshSchema, pgUrl, sql } from './support/pg.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const procs: SpawnedDsh[] = [];
afterEach(() => {
  for (const p of procs.splice(0)) if (p.child.exitCode === null && p.child.signalCode === null) p.kill('SIGKILL');
});

/** Terminate the follower's LISTEN connection on `schema`'s events channel; how many were killed. */
async function killListen(schema: string): Promise<number> {
  const c = await sql();
  try {
    const r = await c.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'dsh follow' AND query = $1`, [
      `LISTEN "${schema}.events"`,
    ]);
    return r.rowCount ?? 0;
  } finally {
    await c.end();
  }
}

describePg('dsh log show --follow (the binary) across killed LISTEN connections', () => {
  it('stays up, reconnects, and prints every later event once', async () => {
    const schema = freshSchema('fbin');
    const writer = new PgStore({ url: pgUrl!, schema, clock: fixedClock() });
    const env = { DSH_STORE: pgUrl!, DSH_STORE_SCHEMA: schema, DSH_HOME: tempDir(), HOME: tempDir() };
    try {
      const w = await writer.create({ cwd: '/w', id: 'followed-bin' });
      appendTurn(w.session);
      await w.flush();
      const p = spawnDsh(['log', 'show', '--follow', 'followed-bin'], { env });
      procs.push(p);
      await p.transcript.waitFor('stdout', /turn 1 end/, { timeoutMs: 60_000 });
      for (let round = 2; round <= 3; round++) {
        expect(await killListen(schema)).toBe(1);
        await p.transcript.waitFor('stderr', new RegExp(`reconnecting[^]*`.repeat(round - 1)), { timeoutMs: 20_000 });
        // Long enough for a process with nothing keeping it alive to exit (it did, with code 13).
        await sleep(1500);
        expect(p.child.exitCode, p.transcript.stderr).toBe(null);
        appendTurn(w.session, { deltas: 3 + round });
        await w.flush();
        await p.transcript.waitFor('stdout', new RegExp(`turn ${round} end`), { timeoutMs: 30_000 });
      }
      p.kill('SIGINT');
      expect(await p.done, p.transcript.stderr).toBe(0);
      await w.close();
      const whole = await runMain(['log', 'show', 'followed-bin'], env);
      expect(whole.code, whole.stderr).toBe(0);
      const want = printedSeqs(whole.stdout);
      expect(want.at(-1)).toBe(w.session.length - 1);
      expect(printedSeqs(p.transcript.stdout)).toEqual(want);
    } finally {
      await writer.close();
    }
  }, 120_000);
});
