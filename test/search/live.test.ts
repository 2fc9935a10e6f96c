/**
 * The search index kept current from the write path (src/search/live.ts, src/cli/agent/search-index.ts):
 * a running `dsh chat` process's turns are in the index while it runs, before any search reads
 * the log; a process killed in the middle of an update leaves an index that is whole and continues
 * from where it stood; a busy index is skipped, never waited for.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionStore } from '../../src/store/index.js';
import { IndexDb } from '../../src/search/index-db.js';
import { search } from '../../src/search/search.js';
import { BUSY_RETRIES, BUSY_RETRY_MS, LiveIndex, UPDATE_DELAY_MS, updateIndex } from '../../src/search/live.js';
import { docsOf, type DocKind } from '../../src/search/extract.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { spawnDsh } from '../cli/support/driver.js';
import { builtBin } from '../cli/support/run.js';
import { agentEnv, call, gitRepo, storedLogs, tempDir, text } from '../cli/support/agent.js';
import { append, makeSession } from './support.js';

let provider: FakeProvider | undefined;
afterEach(async () => {
  await provider?.close();
  provider = undefined;
});

interface Line {
  type: string;
  seq: number;
  data: unknown;
}
/** The complete event lines of a log file as it is now (the header left out). */
function lines(path: string): Line[] {
  const all = readFileSync(path, 'utf8').split('\n');
  all.pop(); // the part after the last newline: empty, or a line being written
  return all
    .slice(1)
    .map((l) => JSON.parse(l) as Line)
    .filter((e) => typeof e.seq === 'number');
}

/**
 * What the index holds for a word, read without bringing it up to date (no search's refresh).
 * Every kind is named: a filtered query returns every match (an unfiltered one of a common word
 * ranks only the newest RANK_LIMIT of them).
 */
const ALL_KINDS: readonly DocKind[] = ['prompt', 'context', 'answer', 'reasoning', 'call', 'result', 'title'];
function indexed(index: string, word: string): { seq: number; kind: string }[] {
  const db = IndexDb.open(index);
  try {
    return db
      .query(`"${word}"`, { limit: 100_000, kinds: ALL_KINDS })
      .hits.map((h) => ({ seq: h.seq, kind: h.kind }))
      .sort((a, b) => a.seq - b.seq || a.kind.localeCompare(b.kind));
  } finally {
    db.close();
  }
}

/** The documents holding `word` in the log's lines, computed from the file. */
function expected(path: string, word: string): { seq: number; kind: string }[] {
  const out: { seq: number; kind: string }[] = [];
  for (const e of lines(path))
    for (const d of docsOf(e.type, e.data)) if (d.text.toLowerCase().includes(word)) out.push({ seq: e.seq, kind: d.kind });
  return out.sort((a, b) => a.seq - b.seq || a.kind.localeCompare(b.kind));
}

async function until<T>(what: string, f: () => T | undefined, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the index follows a running session', () => {
  it('dsh chat: each turn is searchable while the process runs, and a kill -9 leaves the index whole', async () => {
    const repo = gitRepo({ 'README.md': 'The quokkaberry jam recipe.\n' });
    const home = tempDir();
    const index = join(home, 'search', 'index.sqlite');
    provider = await startFakeProvider({
      script: (_req, n) =>
        n === 0
          ? call('c1', 'read', { file_path: 'README.md' })
          : n === 1
            ? text(['Read it: a marsupial preserve.'])
            : n === 2
              ? text(['The wombatfruit answer.'])
              : { sse: [{ hang: true }] },
    });
    const chat = spawnDsh(['chat', '--cwd', repo], { env: agentEnv(provider.url, home) });
    try {
      chat.write('what does the readme say about quokkaberry?\n');
      await chat.transcript.waitFor('stderr', /^turn 1 · .* · completed$/m);
      const path = storedLogs(home)[0]!;
      // Turn 1's prompt, tool call result and answer: in the index, at the seqs the log holds.
      const turn1 = expected(path, 'quokkaberry');
      expect(turn1.map((d) => d.kind)).toEqual(['prompt', 'result']);
      await until('turn 1 in the index', () =>
        JSON.stringify(indexed(index, 'quokkaberry')) === JSON.stringify(turn1) ? true : undefined,
      );
      expect(indexed(index, 'marsupial')).toEqual(expected(path, 'marsupial'));

      chat.write('and wombatfruit?\n');
      await chat.transcript.waitFor('stderr', /^turn 2 · .* · completed$/m);
      const turn2 = expected(path, 'wombatfruit');
      expect(turn2.map((d) => d.kind)).toEqual(['prompt', 'answer']);
      await until('turn 2 in the index', () =>
        JSON.stringify(indexed(index, 'wombatfruit')) === JSON.stringify(turn2) ? true : undefined,
      );

      // A third turn hangs at the provider: its prompt is written; then the process is killed.
      chat.write('third prompt about platypusplum\n');
      await until('the third request', () => (provider!.requests.length >= 4 ? true : undefined));
      chat.kill('SIGKILL');
      await chat.done;

      // A search after the crash: the index opens, reads only the tail it had not seen, and finds
      // every turn once.
      const r = search('quokkaberry', { root: join(home, 'sessions'), index });
      expect(r.refresh.reindexed).toBe(0);
      expect(r.refresh.indexed).toBe(0);
      expect(r.hits.map((h) => ({ seq: h.seq, kind: h.kind })).sort((a, b) => a.seq - b.seq)).toEqual(turn1);
      expect(search('platypusplum', { root: join(home, 'sessions'), index }).hits.map((h) => h.kind)).toEqual(['prompt']);
    } finally {
      chat.kill('SIGKILL');
    }
  }, 90_000);

  it('dsh run: the session is indexed when it ends, in the same entry a search keeps (no second copy)', async () => {
    const repo = gitRepo();
    const home = tempDir();
    provider = await startFakeProvider({ script: [text(['The numbat answer.'])] });
    const run = spawnDsh(['run', '--cwd', repo, 'ask about the numbat'], { env: agentEnv(provider.url, home) });
    expect(await run.done).toBe(0);
    const index = join(home, 'search', 'index.sqlite');
    const path = storedLogs(home)[0]!;
    expect(indexed(index, 'numbat')).toEqual(expected(path, 'numbat'));
    const r = search('numbat', { root: join(home, 'sessions'), index });
    // The search found the log's entry current: nothing read, nothing indexed twice.
    expect(r.refresh).toMatchObject({ files: 1, indexed: 0, reindexed: 0, bytes: 0 });
    expect(r.hits).toHaveLength(2);
    // --no-persist writes no log, so no index either.
    const home2 = tempDir();
    await provider.close();
    provider = await startFakeProvider({ script: [text(['x'])] });
    const mem = spawnDsh(['run', '--no-persist', '--cwd', repo, 'hi'], { env: agentEnv(provider.url, home2) });
    expect(await mem.done).toBe(0);
    expect(storedLogs(home2)).toEqual([]);
    expect(() => readFileSync(join(home2, 'search', 'index.sqlite'))).toThrow();
  }, 60_000);
});

/** A stored log of `turns` turns, each a prompt and an answer holding `word`. */
async function bigLog(root: string, turns: number, word: string): Promise<string> {
  const all = Array.from({ length: turns }, (_, i) => ({
    prompt: `prompt ${i + 1} about ${word} and filler text`,
    answer: `answer ${i + 1}: ${word} ${'lorem ipsum '.repeat(20)}`,
  }));
  return (await makeSession(root, '/w', 'big', all)).path;
}

describe('an update is one transaction', () => {
  it('a process killed in the middle of an update leaves a whole index that continues where it stood', async () => {
    const home = tempDir();
    const root = join(home, 'sessions');
    const index = join(home, 'search', 'index.sqlite');
    const path = await bigLog(root, 4000, 'kiwano');
    const want = expected(path, 'kiwano');
    expect(want).toHaveLength(8000);
    const live = join(dirname(dirname(builtBin())), 'dist', 'search', 'live.js');
    const child = `const { updateIndex } = await import(${JSON.stringify(live)});
      process.stdout.write('go\\n'); const r = updateIndex(process.argv[1], process.argv[2]);
      process.stdout.write(r.kind + '\\n');`;
    const Sqlite = createRequire(import.meta.url)('better-sqlite3') as new (
      p: string,
      o?: object,
    ) => { pragma(s: string, o?: object): unknown; close(): void };
    let interrupted = 0;
    for (const delay of [0, 2, 5, 10, 20, 40, 80, 160]) {
      const out = await new Promise<string>((resolve, reject) => {
        const p = spawn(process.execPath, ['--input-type=module', '-e', child, index, path], { stdio: ['ignore', 'pipe', 'inherit'] });
        let text = '';
        p.stdout.setEncoding('utf8').on('data', (s: string) => {
          text += s;
          if (text === 'go\n') setTimeout(() => p.kill('SIGKILL'), delay);
        });
        p.on('error', reject);
        p.on('close', () => resolve(text));
      });
      if (out === 'go\n') interrupted++;
      if (!existsSync(index)) continue; // killed before it made the index
      // Whole after every kill: SQLite's own check, and what it holds is a prefix of the log's
      // documents (never a document twice, never one past the offset it records).
      const raw = new Sqlite(index, { readonly: true });
      expect(raw.pragma('integrity_check', { simple: true })).toBe('ok');
      raw.close();
      const got = indexed(index, 'kiwano');
      expect(got).toEqual(want.slice(0, got.length));
    }
    // Some kills landed inside an update (else this test proves nothing about them).
    expect(interrupted).toBeGreaterThan(0);
    // And the next update completes it.
    expect(updateIndex(index, path).kind).toBe('indexed');
    expect(indexed(index, 'kiwano')).toEqual(want);
  }, 60_000);

  it('a busy index is skipped at once, and the next update catches up', async () => {
    const home = tempDir();
    const root = join(home, 'sessions');
    const index = join(home, 'search', 'index.sqlite');
    const path = await bigLog(root, 3, 'feijoa');
    expect(updateIndex(index, path).kind).toBe('indexed');
    const Sqlite = createRequire(import.meta.url)('better-sqlite3') as new (p: string) => { exec(s: string): void; close(): void };
    const other = new Sqlite(index);
    other.exec('BEGIN IMMEDIATE');
    try {
      // The log grows while another writer holds the index.
      const store = new SessionStore({ root });
      const s = await store.open('big');
      append(s.session, 4, { prompt: 'late feijoa prompt', answer: 'late answer' }, {});
      await store.close();
      const t0 = Date.now();
      expect(updateIndex(index, path).kind).toBe('busy');
      expect(Date.now() - t0).toBeLessThan(5000); // not the 10 s a search waits for a busy index
    } finally {
      other.exec('COMMIT');
      other.close();
    }
    expect(updateIndex(index, path).kind).toBe('indexed');
    expect(indexed(index, 'feijoa')).toEqual(expected(path, 'feijoa'));
  });

  it('a live update that finds the index busy is tried again once the other writer is done, without a further step', async () => {
    const home = tempDir();
    const root = join(home, 'sessions');
    const index = join(home, 'search', 'index.sqlite');
    const path = await bigLog(root, 2, 'jabuticaba');
    const Sqlite = createRequire(import.meta.url)('better-sqlite3') as new (p: string) => { exec(s: string): void; close(): void };
    // Another process creates the index and holds its write lock (a search refreshing it, say).
    mkdirSync(dirname(index), { recursive: true });
    const other = new Sqlite(index);
    other.exec('CREATE TABLE held(x)');
    other.exec('BEGIN IMMEDIATE');
    const live = new LiveIndex(index, path);
    try {
      live.poke(); // the session's last step ended: the one update it asks for
      await new Promise((r) => setTimeout(r, UPDATE_DELAY_MS + 3 * BUSY_RETRY_MS));
      expect(live.updates).toBe(0);
    } finally {
      other.exec('COMMIT');
      other.close();
    }
    // Nothing pokes again, yet the update runs once the lock is free.
    await until('the retried update', () => (live.updates === 1 ? true : undefined), BUSY_RETRIES * BUSY_RETRY_MS);
    expect(indexed(index, 'jabuticaba')).toEqual(expected(path, 'jabuticaba'));
    expect(live.failure).toBeUndefined();
    live.close();
  });

  it('an update of a log that is gone forgets it; one that cannot open the index says why', async () => {
    const home = tempDir();
    const root = join(home, 'sessions');
    const index = join(home, 'search', 'index.sqlite');
    const path = await bigLog(root, 1, 'salak');
    expect(updateIndex(index, path).kind).toBe('indexed');
    expect(indexed(index, 'salak')).toHaveLength(2);
    rmSync(path);
    expect(updateIndex(index, path).kind).toBe('indexed');
    expect(indexed(index, 'salak')).toEqual([]);
    const r = updateIndex(join(path, 'not-a-dir', 'index.sqlite'), path);
    expect(r.kind).toBe('failed');
  });
});
