/**
 * The store's use of the resume index: `open` writes `resume-index.json` beside a clean log, the
 * next `open` reads through it (and grows it over what was appended), and a resumed session is
 * the one a full load gives. A stale or damaged index is never used: the open loads the file.
 */
import { appendFileSync, existsSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadJsonl, parseResumeIndex } from '../../src/session/index.js';
import { SessionStore } from '../../src/store/index.js';
import { readLog, RESUME_INDEX_FILE, restatIndexAfterWrites } from '../../src/store/load.js';
import { tempDir } from '../cli/support/agent.js';
import { Child } from './support/proc.js';

async function turn(store: SessionStore, id: string | undefined, n: number): Promise<string> {
  const h = id === undefined ? await store.create({ cwd: '/w' }) : await store.open(id);
  const s = h.session;
  const t = s.trace.lastTurn + 1;
  s.append('turn/start', { turn: t });
  s.append('step/start', { turn: t, step: 1 });
  s.append(
    'user/message',
    { id: `u${t}`, role: 'user', content: [{ type: 'text', text: `prompt ${t}` }], source: { kind: 'user' } },
    { surfaceOp: 'append' },
  );
  for (let i = 0; i < n; i++) s.append('assistant/chunk', { turn: t, step: 1, chunk: { type: 'text-delta', index: 0, text: `w${i} ` } });
  s.append(
    'assistant/message',
    {
      turn: t,
      step: 1,
      message: {
        id: `a${t}`,
        role: 'assistant',
        content: [{ type: 'text', text: 'done' }],
        source: { kind: 'model', provider: 'deepseek', model: 'deepseek-chat' },
      },
      usage: { inputTokens: 1, outputTokens: 1 },
    },
    { surfaceOp: 'append' },
  );
  s.append('step/end', { turn: t, step: 1 });
  s.append('turn/end', { turn: t, reason: { kind: 'completed' } });
  const id2 = s.id;
  await store.close();
  return id2;
}

async function load(path: string, resumeIndex: boolean) {
  const fh = await open(path, 'r');
  try {
    return await readLog(fh, path, (await fh.stat()).size, { resumeIndex, clock: () => 1 });
  } finally {
    await fh.close();
  }
}

describe('the store and the resume index', () => {
  it('open writes the index, the next open reads through it and grows it, and the session is the full load’s', async () => {
    const root = tempDir('dsh-store-idx-');
    const store = new SessionStore({ root });
    const id = await turn(store, undefined, 12);
    const path = (await new SessionStore({ root }).inspect(id)).path;
    const sidecar = join(dirname(path), RESUME_INDEX_FILE);
    await turn(new SessionStore({ root }), id, 12); // this open builds the index of turn 1
    const first = parseResumeIndex(readFileSync(sidecar, 'utf8'));
    expect(first).toBeDefined();
    const viaIndex = await load(path, true);
    expect(viaIndex.fromIndex).toBe(true);
    const whole = loadJsonl(readFileSync(path), { file: path, clock: () => 1 });
    expect(viaIndex.session.deriveMessages().toArray()).toEqual(whole.session.deriveMessages().toArray());
    expect(viaIndex.session.events).toEqual(whole.session.events);
    await turn(new SessionStore({ root }), id, 5); // reads through the index, grows it over turn 2
    const grown = parseResumeIndex(readFileSync(sidecar, 'utf8'))!;
    expect(grown.prefix.events).toBeGreaterThan(first!.prefix.events);
    expect((await load(path, true)).fromIndex).toBe(true);
    // The store without the index opens the same session.
    const plain = await new SessionStore({ root, resumeIndex: false }).open(id);
    const indexed = await load(path, true);
    expect(indexed.session.deriveMessages().toArray()).toEqual(
      plain.session.deriveMessages().toArray().slice(0, indexed.session.deriveMessages().toArray().length),
    );
    await plain.close();
  });

  it('a damaged index or a changed log is not used: the open loads the file, and writes a fresh index', async () => {
    const root = tempDir('dsh-store-idx-');
    const id = await turn(new SessionStore({ root }), undefined, 8);
    await turn(new SessionStore({ root }), id, 8);
    const path = (await new SessionStore({ root }).inspect(id)).path;
    const sidecar = join(dirname(path), RESUME_INDEX_FILE);
    writeFileSync(sidecar, readFileSync(sidecar, 'utf8').slice(0, 40));
    const damaged = await load(path, true);
    expect(damaged.fromIndex).toBe(false);
    expect(damaged.newIndex).toBeDefined();
    await turn(new SessionStore({ root }), id, 8); // rewrites the index
    expect((await load(path, true)).fromIndex).toBe(true);
    // A delta's letter changed in place (same size): the digest no longer matches.
    const text = readFileSync(path, 'utf8');
    const at = text.indexOf('w1 ', text.indexOf('\n'));
    expect(at).toBeGreaterThan(0);
    writeFileSync(path, `${text.slice(0, at)}W${text.slice(at + 1)}`);
    const changed = await load(path, true);
    expect(changed.fromIndex).toBe(false);
    expect(
      changed.session.events.some((e) => e.type === 'assistant/chunk' && (e.data as { chunk: { text?: string } }).chunk.text === 'W1 '),
    ).toBe(true);
  });

  it('a session resumed, appended to and closed gets its index restamped: the next resume takes the prefix unread', async () => {
    const root = tempDir('dsh-store-idx-');
    const id = await turn(new SessionStore({ root }), undefined, 8);
    await turn(new SessionStore({ root }), id, 8); // builds the index at open, appends turn 2, closes
    const path = (await new SessionStore({ root }).inspect(id)).path;
    const sidecar = join(dirname(path), RESUME_INDEX_FILE);
    const index = parseResumeIndex(readFileSync(sidecar, 'utf8'))!;
    const st = statSync(path, { bigint: true });
    expect(index.file).toEqual({ ino: Number(st.ino), size: Number(st.size), mtimeNs: String(st.mtimeNs), ctimeNs: String(st.ctimeNs) });
    expect(index.prefix.bytes).toBeLessThan(Number(st.size)); // turn 2 is the tail, loaded as a full load reads it
    const next = await load(path, true);
    expect(next.prefixCheckedBy).toBe('stat');
    const whole = loadJsonl(readFileSync(path), { file: path, clock: () => 1 });
    expect(next.session.events).toEqual(whole.session.events);
    // Opened through the index and closed with no turn (only the open's end-of-seed marker): the
    // index grown over turn 2 is written at the close (the open leaves it for then).
    const before = statSync(path).size;
    await (await new SessionStore({ root }).open(id)).close();
    const closed = parseResumeIndex(readFileSync(sidecar, 'utf8'))!;
    expect(closed.prefix.bytes).toBe(before);
    expect(closed.prefix.digests.length).toBe(index.prefix.digests.length + 1);
    // Appended by something that is not the store (no restamp): the prefix is read for its digests.
    appendFileSync(path, '');
    const later = new Date(Date.now() + 5_000);
    utimesSync(path, later, later);
    const after = await load(path, true);
    expect(after.fromIndex).toBe(true);
    expect(after.prefixCheckedBy).toBe('digests');
  });

  it('a writer killed before its close leaves the stat unrecorded: the next resume checks the digests and loads the file', async () => {
    const root = tempDir('dsh-store-idx-');
    const id = await turn(new SessionStore({ root }), undefined, 8);
    await turn(new SessionStore({ root }), id, 8);
    const path = (await new SessionStore({ root }).inspect(id)).path;
    // A real process resumes it through the index and appends turns until it is killed.
    const child = new Child(['append', root, id, '5', '0']);
    await child.waitFor('durable ');
    child.proc.kill('SIGKILL');
    await child.exited;
    const after = await load(path, true);
    expect(after.fromIndex).toBe(true);
    expect(after.prefixCheckedBy).toBe('digests');
    const whole = loadJsonl(readFileSync(path), { file: path, clock: () => 1 });
    expect(after.session.events).toEqual(whole.session.events);
    expect(after.eventCount).toBeGreaterThan(parseResumeIndex(readFileSync(join(dirname(path), RESUME_INDEX_FILE), 'utf8'))!.prefix.events);
  });

  it('restatIndexAfterWrites writes an index left unwritten even when the stat did not change, and no other unchanged one', async () => {
    const root = tempDir('dsh-store-idx-');
    const id = await turn(new SessionStore({ root }), undefined, 4);
    await turn(new SessionStore({ root }), id, 4);
    const path = (await new SessionStore({ root }).inspect(id)).path;
    const sidecar = join(dirname(path), RESUME_INDEX_FILE);
    const index = parseResumeIndex(readFileSync(sidecar, 'utf8'))!;
    rmSync(sidecar);
    restatIndexAfterWrites(path, index);
    expect(existsSync(sidecar)).toBe(false);
    restatIndexAfterWrites(path, index, true);
    expect(parseResumeIndex(readFileSync(sidecar, 'utf8'))).toEqual(index);
  });
});
