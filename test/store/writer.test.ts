/**
 * Write failures: a full disk, a failed fsync, a failed rollback. The file must never hold a
 * partial line, every committed event must stay queued until it is written, and the failure must
 * reach the caller (flush result, error listeners, agent/error).
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { loadJsonl } from '../../src/session/index.js';
import { SessionStore, type StoreError, type StoredSession } from '../../src/store/index.js';
import { appendTurn, fileSeqs, fixedClock } from './support/events.js';
import { FaultyIo } from './support/faulty-io.js';
import { tempDir, tick } from './support/tmp.js';

async function setup(): Promise<{ io: FaultyIo; s: StoredSession; errors: StoreError[] }> {
  const io = new FaultyIo();
  const st = new SessionStore({ root: tempDir(), clock: fixedClock(), io });
  const s = await st.create({ cwd: '/w', id: 'w' });
  const errors: StoreError[] = [];
  s.onError((e) => errors.push(e));
  return { io, s, errors };
}

function expectComplete(s: StoredSession): void {
  const text = readFileSync(s.path, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  expect(fileSeqs(text)).toEqual(Array.from({ length: s.session.length }, (_, i) => i));
  const loaded = loadJsonl(text);
  expect(loaded.warnings).toEqual([]);
  expect(JSON.stringify(loaded.session.events.slice(0, s.session.length))).toBe(JSON.stringify(s.session.events));
}

describe('disk full', () => {
  it('rolls the file back to its last whole line, keeps the batch, reports once, and catches up when space returns', async () => {
    const { io, s, errors } = await setup();
    appendTurn(s.session);
    expect((await s.flush()).ok).toBe(true);
    const good = readFileSync(s.path);

    io.spaceLeft = 17; // part of the next batch fits, then ENOSPC
    appendTurn(s.session);
    await tick();
    expect(readFileSync(s.path)).toEqual(good);
    expect(errors.map((e) => [e.code, e.details.errno])).toEqual([['WRITE_FAILED', 'ENOSPC']]);

    const r = await s.flush();
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('WRITE_FAILED');
      expect(r.pending).toBe(s.session.length - fileSeqs(good.toString('utf8')).length);
    }
    expect(readFileSync(s.path)).toEqual(good);

    // More work while the disk is full: still queued, the same outage is not re-reported.
    appendTurn(s.session);
    await tick();
    await s.flush();
    expect(errors).toHaveLength(1);
    expect(readFileSync(s.path)).toEqual(good);

    io.spaceLeft = undefined;
    expect(await s.flush()).toMatchObject({ ok: true, durableSeq: s.session.length });
    expectComplete(s);
    await s.close();
  });

  it('close() with a full disk fails, keeps the handle open, and succeeds once space returns', async () => {
    const { io, s } = await setup();
    io.spaceLeft = 0;
    appendTurn(s.session);
    const r = await s.close();
    expect(r.ok).toBe(false);
    expect(s.closed).toBe(false);
    io.spaceLeft = undefined;
    expect((await s.close()).ok).toBe(true);
    expect(s.closed).toBe(true);
    expectComplete(s);
  });
});

describe('fsync failure', () => {
  it('truncates to the last synced length and writes the unsynced events again', async () => {
    const { io, s, errors } = await setup();
    appendTurn(s.session);
    await s.flush();
    const synced = readFileSync(s.path);
    // Events between turns: no turn/end, so no checkpoint of their own.
    for (let i = 0; i < 3; i++) s.session.append('agent/inbox/spliced', { target: 'next-turn', start: i, inserted: [] });
    await tick(); // written, not yet synced
    expect(readFileSync(s.path).length).toBeGreaterThan(synced.length);
    io.failNextFsync = true;
    const r = await s.flush();
    expect(r.ok).toBe(false);
    if (!r.ok) expect([r.error.code, r.error.details.errno]).toEqual(['SYNC_FAILED', 'EIO']);
    expect(errors.map((e) => e.code)).toEqual(['SYNC_FAILED']);
    expect(readFileSync(s.path)).toEqual(synced);
    expect(await s.flush()).toMatchObject({ ok: true, durableSeq: s.session.length });
    expectComplete(s);
    await s.close();
  });
});

describe('rollback failure', () => {
  it('retries the truncation before writing anything else', async () => {
    const { io, s, errors } = await setup();
    appendTurn(s.session);
    await s.flush();
    io.spaceLeft = 9;
    io.failTruncates = 1;
    appendTurn(s.session);
    await tick();
    expect(errors.map((e) => e.code)).toEqual(['ROLLBACK_FAILED']);
    io.spaceLeft = undefined;
    expect((await s.flush()).ok).toBe(true);
    expectComplete(s);
    await s.close();
  });
});
