/**
 * `dsh log show --follow` on a file another writer appends to (the store's writer, in this
 * process): the timeline first, then each new event as it lands, every seq printed once and in
 * order, a chunk run as one line once it is over.
 */
import { expect, it, describe } from 'vitest';
import { Output } from '../../src/cli/output.js';
import { runShowFollow } from '../../src/cli/log/follow.js';
import { SessionStore } from '../../src/store/index.js';
import { appendTurn, fixedClock } from '../store/support/events.js';
import { tempDir } from '../store/support/tmp.js';
import { printedSeqs } from './support/timeline.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('dsh log show --follow (a file)', () => {
  it('prints what is there, then each appended event once, in order, until stopped', async () => {
    const root = tempDir();
    const st = new SessionStore({ root, clock: fixedClock() });
    const w = await st.create({ cwd: '/w', id: 'f' });
    appendTurn(w.session);
    await w.flush();
    let stdout = '';
    let stderr = '';
    const io = {
      out: new Output({ write: (s: string) => (stdout += s) }, false),
      err: new Output({ write: (s: string) => (stderr += s) }, false),
      env: {},
    };
    let stop!: () => void;
    const until = new Promise<void>((r) => (stop = r));
    const run = runShowFollow(w.path, {}, io, until);
    await sleep(300);
    const before = printedSeqs(stdout);
    appendTurn(w.session, { deltas: 12 });
    await w.flush();
    for (let i = 0; i < 100 && !stdout.includes('turn 2 end'); i++) await sleep(50);
    stop();
    expect(await run).toBe(0);
    expect(stderr).toContain(`following ${w.path}`);
    const seqs = printedSeqs(stdout);
    expect(before.length).toBeGreaterThan(0);
    // Strictly increasing: nothing printed twice, nothing out of order; the last event is there.
    expect(seqs.every((s, i) => i === 0 || s > seqs[i - 1]!)).toBe(true);
    expect(seqs.at(-1)).toBe(w.session.length - 1);
    expect(stdout).toMatch(/stream: text ×12 deltas/);
    await st.close();
  });
});
