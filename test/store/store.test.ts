/**
 * SessionStore, what is particular to files: the layout on disk, packed rows, torn tails moved to
 * sidecars, a missing final newline, seedLength, compressed logs, identity checks. What every store
 * does is in the conformance suite (conformance.ts, conformance-jsonl.test.ts).
 * File contents are checked by parsing the raw lines, not through the codec under test.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync, writeFileSync, appendFileSync, mkdirSync, truncateSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Session, encodeJsonl, loadJsonl } from '../../src/session/index.js';
import { SessionStore, StoreError } from '../../src/store/index.js';
import { appendTurn, fileRecords, fileSeqs, fixedClock } from './support/events.js';
import { tempDir, tick } from './support/tmp.js';

function store(root: string): SessionStore {
  return new SessionStore({ root, clock: fixedClock() });
}

async function expectStoreError(p: Promise<unknown>, code: string): Promise<StoreError> {
  let caught: unknown;
  try {
    await p;
  } catch (e) {
    caught = e;
  }
  expect(caught, `expected StoreError ${code}`).toBeInstanceOf(StoreError);
  expect((caught as StoreError).code, (caught as Error).message).toBe(code);
  return caught as StoreError;
}

/** Write a log file by hand at the layout path for (cwd, id). */
function plant(root: string, cwd: string, id: string, text: string): string {
  const project = `--${cwd.replace(/^\/+/, '').replace(/\//g, '-')}--`;
  const dir = join(root, project, id);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'session.jsonl'), text);
  return join(dir, 'session.jsonl');
}

describe('layout', () => {
  it('puts a session at <root>/--<cwd>--/<id>/session.jsonl with the header on line 1', async () => {
    const root = tempDir();
    const s = await store(root).create({ cwd: '/home/me/repo', id: 'abc' });
    const path = join(root, '--home-me-repo--', 'abc', 'session.jsonl');
    expect(s.path).toBe(path);
    const recs = fileRecords(readFileSync(path, 'utf8'));
    expect(recs).toEqual([
      { type: 'session', version: 0, id: 'abc', createdAt: recs[0]!.createdAt, cwd: '/home/me/repo', delegationDepth: 0 },
    ]);
    await s.close();
  });

  it('escapes ids that are not safe path segments', async () => {
    const root = tempDir();
    const st = store(root);
    // dsh's rule: unsafe units become ~XXXX; '.' is safe, except as the whole segment.
    const s = await st.create({ cwd: '/w', id: '../x y~' });
    expect(s.path).toBe(join(root, '--w--', '..~002Fx~0020y~007E', 'session.jsonl'));
    const dots = await st.create({ cwd: '/w', id: '..' });
    expect(dots.path).toBe(join(root, '--w--', '~002E~002E', 'session.jsonl'));
    await st.close();
  });
});

describe('create', () => {
  it('persists every committed event, packing a macrotask of chunks into rows', async () => {
    const root = tempDir();
    const st = store(root);
    const s = await st.create({ cwd: '/w', id: 's1' });
    appendTurn(s.session, { deltas: 6 });
    await tick();
    const text = readFileSync(s.path, 'utf8');
    expect(fileSeqs(text)).toEqual(Array.from({ length: s.session.length }, (_, i) => i));
    expect(fileRecords(text).filter((r) => r.type === 'text-chunks')).toHaveLength(2);
    await s.close();
  });
});

describe('open', () => {
  it('moves a torn tail into a sidecar before truncating, and says where it went', async () => {
    const root = tempDir();
    const a = await store(root).create({ cwd: '/w', id: 't' });
    appendTurn(a.session);
    await a.close();
    const good = readFileSync(a.path);
    const torn = '{"type":"turn/start","seq":999,"ti';
    appendFileSync(a.path, torn);
    const b = await store(root).open('t');
    const sidecar = b.recovery.tornTail!.sidecar;
    expect(readFileSync(sidecar, 'utf8')).toBe(torn);
    expect(sidecar.startsWith(join(root, '--w--', 't', 'session.jsonl.torn-'))).toBe(true);
    expect(b.warnings.find((w) => w.code === 'TORN_TAIL')!.message).toContain(sidecar);
    await b.close();
    // The good prefix is intact; what follows is the seed marker written by this open.
    const after = readFileSync(a.path);
    expect(after.subarray(0, good.length)).toEqual(good);
    expect(fileRecords(after.subarray(good.length).toString('utf8')).map((r) => r.type)).toEqual(['session/end-seed']);
  });

  it('closes a turn left open and persists the closers', async () => {
    const root = tempDir();
    const a = await store(root).create({ cwd: '/w', id: 'o' });
    // Stop right after tool/call: the call may have run.
    appendTurn(a.session, { stopAfter: 3 + 5 + 2 });
    // Closing writes nothing more: the file ends mid-turn, as after a crash.
    await a.close();
    const b = await store(root).open('o');
    expect(b.recovery.repaired).toEqual(['tool/result', 'step/end', 'turn/end']);
    await b.close();
    const recs = fileRecords(readFileSync(b.path, 'utf8'));
    const types = recs.slice(-4).map((r) => r.type);
    expect(types).toEqual(['tool/result', 'step/end', 'turn/end', 'session/end-seed']);
    expect((recs[recs.length - 4]!.data as { error: { code: string } }).error.code).toBe('TOOL_OUTCOME_UNKNOWN');
    // A plain load of the file now finds every turn closed.
    const loaded = loadJsonl(readFileSync(b.path, 'utf8'));
    expect(loaded.repaired).toEqual([]);
    expect(loaded.warnings).toEqual([]);
  });

  it('ends a last line that lacks its newline before appending', async () => {
    const root = tempDir();
    const s = Session.create({ id: 'nl', header: { cwd: '/w' }, clock: fixedClock() });
    appendTurn(s);
    const text = encodeJsonl(s.header, s.events);
    const path = plant(root, '/w', 'nl', text.slice(0, -1));
    const b = await store(root).open('nl');
    appendTurn(b.session);
    await b.close();
    expect(fileSeqs(readFileSync(path, 'utf8'))).toEqual(Array.from({ length: b.session.length }, (_, i) => i));
  });

  it('refuses a log shorter than its seedLength (a damaged inherited prefix)', async () => {
    const root = tempDir();
    const s = Session.create({ id: 'seed', header: { cwd: '/w', seedLength: 40, parentSession: 'p' }, clock: fixedClock() });
    appendTurn(s);
    plant(root, '/w', 'seed', encodeJsonl(s.header, s.events));
    const err = await expectStoreError(store(root).open('seed'), 'SEED_TRUNCATED');
    expect(err.message).toContain(`holds only ${s.length}`);
  });

  it('refuses a compressed log with a clear error', async () => {
    const root = tempDir();
    const dir = join(root, '--w--', 'z');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'session.jsonl.zstd'), Buffer.from([0x28, 0xb5, 0x2f, 0xfd]));
    const err = await expectStoreError(store(root).open('z'), 'COMPRESSED_LOG');
    expect(err.message).toContain('only uncompressed');
    const listing = await store(root).list();
    expect(listing.problems.map((p) => p.error.code)).toEqual(['COMPRESSED_LOG']);
  });

  it('refuses a log whose header names another session', async () => {
    const root = tempDir();
    const s = Session.create({ id: 'other', header: { cwd: '/w' }, clock: fixedClock() });
    plant(root, '/w', 'mine', encodeJsonl(s.header, []));
    await expectStoreError(store(root).open('mine'), 'IDENTITY_MISMATCH');
  });

  it('reads a log of a newer dsh format but refuses to append to it, leaving it untouched', async () => {
    const root = tempDir();
    const text =
      '{"type":"session","version":4,"id":"v4","createdAt":1,"cwd":"/w","isSeeded":false,' +
      '"delegationDepth":0}\n{"type":"turn/start","data":{"turn":1}}\n';
    const path = plant(root, '/w', 'v4', text);
    const e = await expectStoreError(store(root).open('v4'), 'FORMAT_NOT_WRITABLE');
    expect(e.message).toMatch(/dsh log convert --to 0/);
    expect(readFileSync(path, 'utf8')).toBe(text);
    expect(readdirSync(join(root, '--w--', 'v4')).filter((f) => f.includes('torn'))).toEqual([]);
    // Read-only inspection still works (crash repair in memory only).
    const seen = await store(root).inspect('v4');
    expect(seen.session.events.map((ev) => ev.type).slice(0, 1)).toEqual(['turn/start']);
  });

  it('leaves a corrupt log untouched (no sidecar, no truncation)', async () => {
    const root = tempDir();
    const a = await store(root).create({ cwd: '/w', id: 'bad' });
    appendTurn(a.session);
    await a.close();
    const lines = readFileSync(a.path, 'utf8').split('\n');
    lines[2] = '{not json';
    writeFileSync(a.path, lines.join('\n'));
    const before = readFileSync(a.path);
    await expect(store(root).open('bad')).rejects.toMatchObject({ code: 'CORRUPT_LOG' });
    expect(readFileSync(a.path)).toEqual(before);
    expect(readdirSync(join(root, '--w--', 'bad')).filter((f) => f.includes('torn'))).toEqual([]);
  });
});

describe('inspect', () => {
  it('reads without a lock and writes nothing, repairing only in memory', async () => {
    const root = tempDir();
    const a = await store(root).create({ cwd: '/w', id: 'i' });
    appendTurn(a.session, { stopAfter: 4 });
    await a.flush();
    appendFileSync(a.path, '{"type":"tu');
    const before = readFileSync(a.path);
    const view = await store(root).inspect('i'); // while `a` holds the lock
    expect(view.tornTail?.line).toBe(6);
    expect(view.repaired.map((d) => d.type)).toEqual(['step/end', 'turn/end']);
    expect(readFileSync(a.path)).toEqual(before);
    truncateSync(a.path, before.length - '{"type":"tu'.length);
    await a.close();
  });
});

describe('list', () => {
  it('lists headers without reading bodies, newest first, with the live lock holder', async () => {
    const root = tempDir();
    const st = new SessionStore({ root, clock: fixedClock() });
    const a = await st.create({ cwd: '/w', id: 'a', header: { createdAt: 1000 } });
    await a.close();
    const b = await st.create({ cwd: '/v', id: 'b', header: { createdAt: 2000 } });
    // A body that would not load: listing never reads it.
    appendFileSync(a.path, 'garbage that is not json\n');
    const { sessions, problems } = await st.list();
    expect(problems).toEqual([]);
    expect(sessions.map((x) => [x.id, x.header.cwd, x.size === statSync(x.path).size])).toEqual([
      ['b', '/v', true],
      ['a', '/w', true],
    ]);
    expect(sessions[0]!.lockedBy?.pid).toBe(process.pid);
    expect(sessions[1]!.lockedBy).toBeUndefined();
    await b.close();
  });

  it('is empty for a root that does not exist', async () => {
    expect(await store(join(tempDir(), 'none')).list()).toEqual({ sessions: [], problems: [] });
  });
});

describe('fork', () => {
  it('copies the seed into the child file, published whole', async () => {
    const root = tempDir();
    const st = store(root);
    const a = await st.create({ cwd: '/w', id: 'parent' });
    appendTurn(a.session);
    const boundary = a.session.length - 1;
    appendTurn(a.session);
    await a.close();
    const child = await st.fork('parent', boundary, { id: 'child' });
    const recs = fileRecords(readFileSync(child.path, 'utf8'));
    expect(recs[0]).toMatchObject({ id: 'child', parentSession: 'parent', seedLength: boundary + 1, cwd: '/w' });
    expect(fileSeqs(readFileSync(child.path, 'utf8'))).toEqual(Array.from({ length: boundary + 2 }, (_, i) => i));
    expect(recs[recs.length - 1]!.type).toBe('session/end-seed');
    await child.close();
  });
});
