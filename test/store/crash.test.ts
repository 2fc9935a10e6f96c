/**
 * Crashes and races with real processes. Children drive a SessionStore and report on stdout what
 * they appended (`ev <seq> <hash>`) and what a flush made durable (`durable <seq>`); they are
 * killed with SIGKILL. Afterwards `open` must succeed, every event reported durable must be in
 * the log exactly as appended, the log must load (`dsh log check`: `loadJsonl`), and a torn tail
 * must be in a sidecar, byte for byte.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hostname } from 'node:os';
import { loadJsonl } from '../../src/session/index.js';
import { SessionStore, StoreError } from '../../src/store/index.js';
import { eventHash, fileSeqs, prng } from './support/events.js';
import { Child, deadPid } from './support/proc.js';
import { tempDir } from './support/tmp.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Ledger {
  expected: Map<number, string>;
  durable: number;
}

function absorb(ledger: Ledger, child: Child): number {
  let durableLines = 0;
  for (const l of child.lines) {
    const [tag, a, b] = l.split(' ');
    if (tag === 'ev') ledger.expected.set(Number(a), b!);
    else if (tag === 'durable') {
      ledger.durable = Math.max(ledger.durable, Number(a));
      durableLines++;
    }
  }
  return durableLines;
}

/** Open after a crash and check everything the brief promises; returns whether a tail was torn. */
async function recoverAndCheck(root: string, id: string, path: string, ledger: Ledger): Promise<boolean> {
  const raw = readFileSync(path);
  // `dsh log check` semantics: the crashed file loads (a torn tail and an open turn are warnings).
  expect(() => loadJsonl(raw.toString('utf8'))).not.toThrow();
  const st = new SessionStore({ root });
  const s = await st.open(id);
  let good = raw.length;
  const torn = s.recovery.tornTail;
  if (torn) {
    good = raw.length - torn.bytes;
    expect(readFileSync(torn.sidecar).equals(raw.subarray(good)), 'the sidecar holds the torn bytes').toBe(true);
  }
  // (Buffer.equals: a deep toEqual over a large buffer is slow.)
  expect(readFileSync(path).subarray(0, good).equals(raw.subarray(0, good)), 'the good prefix is untouched').toBe(true);
  const stored = fileSeqs(raw.subarray(0, good).toString('utf8')).length;
  expect(stored, 'every event reported durable is in the log').toBeGreaterThanOrEqual(ledger.durable);
  const mismatches: number[] = [];
  for (const [seq, h] of ledger.expected) {
    if (seq >= stored)
      ledger.expected.delete(seq); // never stored; the seq is reused by repair and the next writer
    else if (eventHash(s.session.at(seq)!) !== h) mismatches.push(seq);
  }
  expect(mismatches, 'events that differ from what the child appended').toEqual([]);
  expect((await s.close()).ok).toBe(true);
  return torn !== undefined;
}

describe('SIGKILL while appending', () => {
  it('after each kill: open succeeds, flushed events are all there, the log loads, torn bytes are in a sidecar', async () => {
    const root = tempDir();
    const path = join(root, '--w--', 'crash', 'session.jsonl');
    const ledger: Ledger = { expected: new Map(), durable: 0 };
    const rnd = prng(20260901);
    let torn = 0;
    const cycles = 6;
    for (let cycle = 0; cycle < cycles; cycle++) {
      // Odd cycles write in 61-byte syscalls, so a kill often lands inside a line.
      const child = new Child(['append', root, 'crash', String(cycle + 1), String(cycle % 2 ? 61 : 0)]);
      await child.waitFor('ready');
      await child.waitFor('durable');
      await sleep(5 + Math.floor(rnd() * 60));
      await child.kill();
      expect(absorb(ledger, child)).toBeGreaterThan(0);
      if (await recoverAndCheck(root, 'crash', path, ledger)) torn++;
    }
    const final = loadJsonl(readFileSync(path, 'utf8'));
    expect(final.warnings).toEqual([]);
    expect(ledger.durable).toBeGreaterThan(0);
    console.log(`[crash] ${cycles} kills, ${torn} torn tail(s) preserved, ${final.eventCount} events in the final log`);
  });

  it('a kill in the middle of a line leaves a torn tail that open moves to a sidecar', async () => {
    const root = tempDir();
    const path = join(root, '--w--', 'stall', 'session.jsonl');
    const ledger: Ledger = { expected: new Map(), durable: 0 };
    const child = new Child(['stall-write', root, 'stall', '6000']);
    await child.waitFor('stalled');
    await child.kill();
    absorb(ledger, child);
    expect(await recoverAndCheck(root, 'stall', path, ledger)).toBe(true);
    const sidecars = readdirSync(join(root, '--w--', 'stall')).filter((f) => f.startsWith('session.jsonl.torn-'));
    expect(sidecars).toHaveLength(1);
    expect(loadJsonl(readFileSync(path, 'utf8')).warnings).toEqual([]);
  });
});

describe('exit hooks', () => {
  it.each(['exit', 'uncaught'])('events still queued at %s are written before the process ends', async (how) => {
    const root = tempDir();
    const child = new Child(['exit-now', root, 'x', how]);
    const { code } = await child.exited;
    expect(code).toBe(how === 'exit' ? 0 : 1);
    const appended = Number((await child.waitFor('appended ')).split(' ')[1]);
    const ledger: Ledger = { expected: new Map(), durable: appended }; // every committed event must be there
    absorb(ledger, child);
    expect(ledger.expected.size).toBe(5);
    expect(await recoverAndCheck(root, 'x', join(root, '--w--', 'x', 'session.jsonl'), ledger)).toBe(false);
    // The lock was released by the exit hook, or taken over after the crash: either way it is gone.
    expect(existsSync(join(root, '--w--', 'x', 'session.lock'))).toBe(false);
  });
});

describe('SIGKILL during the header publish', () => {
  it('before the link: no log appears, and the id can be created afterwards', async () => {
    const root = tempDir();
    const child = new Child(['create-stall', root, 'h1', 'temp-written']);
    await child.waitFor('at temp-written');
    await child.kill();
    const dir = join(root, '--w--', 'h1');
    expect(existsSync(join(dir, 'session.jsonl'))).toBe(false);
    const st = new SessionStore({ root });
    expect(await st.list()).toEqual({ sessions: [], problems: [] });
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toHaveLength(1); // the dead child's temp header
    const s = await st.create({ cwd: '/w', id: 'h1' }); // takes over the dead child's lock
    expect((await s.close()).ok).toBe(true);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('after the link: the log is complete and opens', async () => {
    const root = tempDir();
    const child = new Child(['create-stall', root, 'h2', 'linked']);
    await child.waitFor('at linked');
    await child.kill();
    const st = new SessionStore({ root });
    const { sessions } = await st.list();
    expect(sessions.map((x) => x.id)).toEqual(['h2']);
    const s = await st.open('h2');
    expect(s.session.header.id).toBe('h2');
    await expect(st.create({ cwd: '/w', id: 'h2' })).rejects.toMatchObject({ code: 'SESSION_EXISTS' });
    await s.close();
  });

  it('at a random point of a create loop: every listed session opens, every reported one is listed', async () => {
    const root = tempDir();
    const child = new Child(['create-loop', root]);
    await child.waitFor('created c-3');
    await sleep(7);
    await child.kill();
    const reported = child.lines.filter((l) => l.startsWith('created ')).map((l) => l.slice(8));
    const st = new SessionStore({ root });
    const { sessions, problems } = await st.list();
    expect(problems).toEqual([]);
    const listed = sessions.map((x) => x.id);
    for (const id of reported) expect(listed).toContain(id);
    for (const id of listed) expect((await (await st.open(id)).close()).ok).toBe(true);
  });
});

function results(children: Child[]): { winners: Child[]; losers: { child: Child; code: string; holder: string }[] } {
  const winners: Child[] = [];
  const losers: { child: Child; code: string; holder: string }[] = [];
  for (const c of children) {
    const l = c.lines.find((x) => x === 'ok' || x.startsWith('err '))!;
    if (l === 'ok') winners.push(c);
    else {
      const [, code, holder] = l.split(' ');
      losers.push({ child: c, code: code!, holder: holder! });
    }
  }
  return { winners, losers };
}

async function waitAll(children: Child[]): Promise<void> {
  await Promise.all(children.map((c) => Promise.race([c.waitFor('ok'), c.waitFor('err ')]).catch(() => undefined)));
}

describe('races between processes', () => {
  it('two processes creating the same id: one wins, the other is refused, nothing is overwritten', async () => {
    const root = tempDir();
    const kids = [new Child(['race-create', root, 'same', 'p0']), new Child(['race-create', root, 'same', 'p1'])];
    await Promise.all(kids.map((c) => c.waitFor('ready')));
    for (const c of kids) c.send('go');
    await waitAll(kids);
    const { winners, losers } = results(kids);
    expect(winners).toHaveLength(1);
    expect(losers.map((l) => l.code).every((c) => c === 'SESSION_EXISTS' || c === 'SESSION_LOCKED')).toBe(true);
    const header = JSON.parse(readFileSync(join(root, '--w--', 'same', 'session.jsonl'), 'utf8').split('\n')[0]!) as {
      agentPreset: string;
    };
    expect(header.agentPreset).toBe(winners[0] === kids[0] ? 'p0' : 'p1');
    await Promise.all(kids.map((c) => c.finish()));
  });

  it('two processes opening the same session: one wins, the other gets SESSION_LOCKED naming it', async () => {
    const root = tempDir();
    const st = new SessionStore({ root });
    await (await st.create({ cwd: '/w', id: 'shared' })).close();
    const kids = [new Child(['race-open', root, 'shared']), new Child(['race-open', root, 'shared'])];
    await Promise.all(kids.map((c) => c.waitFor('ready')));
    for (const c of kids) c.send('go');
    await waitAll(kids);
    const { winners, losers } = results(kids);
    expect(winners).toHaveLength(1);
    expect(losers.map((l) => [l.code, Number(l.holder)])).toEqual([['SESSION_LOCKED', winners[0]!.pid]]);
    // And this process is refused too, with the holder named.
    const err = await st.open('shared').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).details.holder).toMatchObject({ pid: winners[0]!.pid, host: hostname() });
    await Promise.all(kids.map((c) => c.finish()));
    expect((await (await st.open('shared')).close()).ok).toBe(true);
  });

  it('a stale lock taken over by several processes at once: exactly one wins, every round', async () => {
    const root = tempDir();
    const st = new SessionStore({ root });
    await (await st.create({ cwd: '/w', id: 'stale' })).close();
    const lockPath = join(root, '--w--', 'stale', 'session.lock');
    for (let round = 0; round < 2; round++) {
      const dead = await deadPid();
      const token = `dead-${round}`;
      writeFileSync(lockPath, JSON.stringify({ pid: dead, host: hostname(), since: Date.now() - 1000, token }));
      // Round 1: a reaper died mid-takeover too; its reap lock is stale as well.
      if (round === 1)
        writeFileSync(
          `${lockPath}.reap-${token}`,
          JSON.stringify({ pid: await deadPid(), host: hostname(), since: Date.now(), token: 'dead-reaper' }),
        );
      const kids = Array.from({ length: 3 }, () => new Child(['race-open', root, 'stale']));
      await Promise.all(kids.map((c) => c.waitFor('ready')));
      for (const c of kids) c.send('go');
      await waitAll(kids);
      const { winners, losers } = results(kids);
      expect(winners, `round ${round}`).toHaveLength(1);
      for (const l of losers) expect([l.code, Number(l.holder)]).toEqual(['SESSION_LOCKED', winners[0]!.pid]);
      await Promise.all(kids.map((c) => c.finish()));
      expect(existsSync(lockPath)).toBe(false);
    }
  });

  it('a holder killed with SIGKILL: its lock is taken over by the next open', async () => {
    const root = tempDir();
    const st = new SessionStore({ root });
    await (await st.create({ cwd: '/w', id: 'k' })).close();
    const holder = new Child(['race-open', root, 'k']);
    await holder.waitFor('ready');
    holder.send('go');
    await holder.waitFor('ok');
    const err = (await st.open('k').catch((e: unknown) => e)) as StoreError;
    expect([err.code, err.details.holder?.pid]).toEqual(['SESSION_LOCKED', holder.pid]);
    expect(err.message).toContain(`pid ${holder.pid} on ${hostname()}`);
    await holder.kill();
    const s = await st.open('k');
    expect((await s.close()).ok).toBe(true);
  });
});
