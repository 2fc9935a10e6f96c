/**
 * Lock files this process did not write: unreadable ones, ones from another boot, another host,
 * a reused pid. Races between real processes are in crash.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SessionStore, StoreError } from '../../src/store/index.js';
import { tempDir } from './support/tmp.js';

async function withLock(content: string): Promise<{ st: SessionStore; lockPath: string }> {
  const root = tempDir();
  const st = new SessionStore({ root });
  await (await st.create({ cwd: '/w', id: 's' })).close();
  const lockPath = join(root, '--w--', 's', 'session.lock');
  writeFileSync(lockPath, content);
  return { st, lockPath };
}

describe('lock files', () => {
  it('an unreadable lock (a power loss between create and write) is stale', async () => {
    const { st, lockPath } = await withLock('');
    const s = await st.open('s');
    expect(JSON.parse(readFileSync(lockPath, 'utf8'))).toMatchObject({ pid: process.pid });
    await s.close();
    expect(existsSync(lockPath)).toBe(false);
  });

  it('a lock from an earlier boot is stale even if its pid is alive now', async () => {
    const { st } = await withLock(
      JSON.stringify({ pid: process.pid, host: (await import('node:os')).hostname(), since: 1, token: 'old-boot', bootId: 'another-boot' }),
    );
    const boot = existsSync('/proc/sys/kernel/random/boot_id');
    if (boot) await (await st.open('s')).close();
    else await expect(st.open('s')).rejects.toMatchObject({ code: 'SESSION_LOCKED' });
  });

  it('a reused pid (same pid, another start time) is stale', async () => {
    const proc = existsSync(`/proc/${process.pid}/stat`);
    const { st } = await withLock(
      JSON.stringify({ pid: process.pid, host: (await import('node:os')).hostname(), since: 1, token: 'reused', startTime: '1' }),
    );
    if (proc) await (await st.open('s')).close();
    else await expect(st.open('s')).rejects.toMatchObject({ code: 'SESSION_LOCKED' });
  });

  it('a lock held on another host is respected, and the error says how to clear it', async () => {
    const { st, lockPath } = await withLock(
      JSON.stringify({ pid: 4242, host: 'build-server-7', since: Date.UTC(2025, 0, 2, 3, 4, 5), token: 'remote' }),
    );
    const err = (await st.open('s').catch((e: unknown) => e)) as StoreError;
    expect(err).toBeInstanceOf(StoreError);
    expect(err.code).toBe('SESSION_LOCKED');
    expect(err.details.holder).toEqual({ pid: 4242, host: 'build-server-7', since: Date.UTC(2025, 0, 2, 3, 4, 5) });
    expect(err.message).toContain('pid 4242 on build-server-7, since 2025-01-02T03:04:05.000Z');
    expect(err.message).toContain(`delete ${lockPath}`);
    expect((await st.list()).sessions[0]!.lockedBy?.host).toBe('build-server-7');
  });
});
