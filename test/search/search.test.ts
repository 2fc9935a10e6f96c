/**
 * Search across sessions on a real store (sessions written through the store's API): what is
 * indexed and found, the index following logs as they grow, are rewritten or deleted, a line being
 * written, a deleted or damaged index, other agents' logs, and queries that would be FTS syntax.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { SessionStore } from '../../src/store/index.js';
import { append, makeSession } from './support.js';
import { ftsQuery, search, snippet, type SearchOptions } from '../../src/search/search.js';
import { hasPhrase, IndexDb, RANK_LIMIT } from '../../src/search/index-db.js';
import { runMain } from '../cli/support/inproc.js';
import { tempDir } from '../cli/support/agent.js';
import { hasShared, sharedPath } from '../support/shared.js';

/**
 * A fresh index (in a temp dir named after `prefix`) holding one file's row, for the tests that
 * add documents by hand; closed after `fn`, whatever it throws.
 */
function withIndexedFile(prefix: string, fn: (idx: IndexDb, file: number) => void): void {
  const idx = IndexDb.open(join(tempDir(prefix), 'i.sqlite'));
  try {
    const file = idx.upsertFile({
      path: '/x/s.jsonl',
      session: 's',
      cwd: null,
      ino: 1,
      size: 1,
      mtime: 1,
      offset: 1,
      turn: 1,
      format: 'dsh-store',
      tail: '',
    });
    fn(idx, file);
  } finally {
    idx.close();
  }
}

function home(): { home: string; root: string; opts: (o?: Partial<SearchOptions>) => SearchOptions } {
  const h = tempDir('dsh-search-');
  const root = join(h, 'sessions');
  mkdirSync(root, { recursive: true });
  return { home: h, root, opts: (o = {}) => ({ root, index: join(h, 'search', 'index.sqlite'), ...o }) };
}

describe('search across stored sessions', () => {
  it('finds prompts, answers, reasoning, calls and results at their session, turn and seq', async () => {
    const { root, opts } = home();
    const a = await makeSession(root, '/work/a', 'sess-a', [
      {
        prompt: 'Fix the typo in README',
        answer: 'Found recieve on line 5',
        call: { name: 'grep', args: '{"pattern":"recieve"}', result: 'README.md:5:Pass --quiet to recieve only errors.' },
      },
      { prompt: 'now the changelog', reasoning: 'The changelog mentions zebrafish twice', answer: 'Done.' },
    ]);
    await makeSession(root, '/work/b', 'sess-b', [{ prompt: 'deploy the zebrafish service', answer: 'Deployed.' }]);

    const r = search('recieve', opts());
    const found = r.hits.map((h) => `${h.session} ${h.turn} ${h.seq} ${h.kind}`).sort();
    expect(found).toEqual(
      [
        `sess-a 1 ${a.seqs['Found recieve on line 5']} answer`,
        `sess-a 1 ${a.seqs['{"pattern":"recieve"}']} call`,
        `sess-a 1 ${a.seqs['README.md:5:Pass --quiet to recieve only errors.']} result`,
      ].sort(),
    );
    const zebra = search('zebrafish', opts());
    expect(zebra.hits.map((h) => `${h.session} ${h.kind}`).sort()).toEqual(['sess-a reasoning', 'sess-b prompt']);
    expect(search('zebrafish', opts({ cwd: '/work/b' })).hits.map((h) => h.session)).toEqual(['sess-b']);
    expect(search('zebrafish', opts({ kinds: ['reasoning'] })).hits.map((h) => h.turn)).toEqual([2]);
    // Every word must appear; a phrase keeps its order; a prefix matches.
    expect(search('quiet errors', opts()).hits).toHaveLength(1);
    expect(search('"errors only"', opts()).hits).toHaveLength(0);
    expect(search('zebra*', opts()).hits).toHaveLength(2);
    const hit = search('quiet', opts()).hits[0]!;
    expect(hit.snippet.slice(...hit.match!)).toBe('quiet');
  });

  it('follows sessions as they are written: only the new tail is read, a line being written waits', async () => {
    const { root, opts } = home();
    const { path } = await makeSession(root, '/w', 'grow', [{ prompt: 'first prompt', answer: 'first answer' }]);
    const before = search('first', opts());
    expect(before.refresh.indexed).toBe(1);
    const size = statSync(path).size;
    // Another process appends a turn (resumed through the store).
    const store = new SessionStore({ root });
    const stored = await store.open('grow');
    append(stored.session, 2, { prompt: 'second prompt about marmalade', answer: 'ok' }, {});
    await store.close();
    const r = search('marmalade', opts());
    expect(r.hits.map((h) => [h.session, h.turn, h.kind])).toEqual([['grow', 2, 'prompt']]);
    expect(r.refresh.reindexed).toBe(0);
    expect(r.refresh.bytes).toBe(statSync(path).size - size); // the tail only
    // Half a line (a write in progress): not indexed, no error; found once it is complete.
    const line = JSON.stringify({ type: 'session/title', seq: 9999, time: 1, data: { title: 'quixotic title' } });
    appendFileSync(path, line.slice(0, 20));
    expect(search('quixotic', opts()).hits).toHaveLength(0);
    appendFileSync(path, `${line.slice(20)}\n`);
    expect(search('quixotic', opts()).hits.map((h) => h.kind)).toEqual(['title']);
  });

  it('a rewritten log is indexed again, a deleted one forgotten, a deleted or damaged index rebuilt', async () => {
    const { root, opts } = home();
    const { path } = await makeSession(root, '/w', 'x1', [{ prompt: 'alpha bravo', answer: 'charlie' }]);
    await makeSession(root, '/w', 'x2', [{ prompt: 'alpha delta', answer: 'echo' }]);
    expect(search('alpha', opts()).hits).toHaveLength(2);
    // Rewritten in place with other text: the old words are gone.
    const text = readFileSync(path, 'utf8').replace('alpha bravo', 'omega-omega bravo');
    writeFileSync(path, text);
    expect(search('alpha', opts()).hits.map((h) => h.session)).toEqual(['x2']);
    expect(search('omega', opts()).hits.map((h) => h.session)).toEqual(['x1']);
    rmSync(join(path, '..'), { recursive: true });
    const gone = search('bravo', opts());
    expect(gone.hits).toHaveLength(0);
    expect(gone.refresh.removed).toBe(1);
    // Deleting the index loses nothing.
    const index = opts().index;
    rmSync(index);
    const again = search('alpha', opts());
    expect(again.refresh.indexed).toBe(1);
    expect(again.hits.map((h) => h.session)).toEqual(['x2']);
    // A damaged index file is set aside and rebuilt.
    for (const s of ['-wal', '-shm']) rmSync(index + s, { force: true });
    writeFileSync(index, 'this is not a database'.repeat(100));
    expect(search('alpha', opts()).hits.map((h) => h.session)).toEqual(['x2']);
    expect(existsSync(`${index}.damaged`)).toBe(true);
  });

  it('queries that look like FTS5 syntax are plain text; a query of punctuation only is refused', async () => {
    const { root, opts } = home();
    await makeSession(root, '/w', 'q', [{ prompt: 'NEAR the "end" of it: a-b OR c*d', answer: 'ok' }]);
    for (const q of ['NEAR(', 'a-b', 'OR', 'c*d', '"end', 'AND NOT', '^near', 'col:end', 'text:NEAR', '-end'])
      expect(() => search(q, opts())).not.toThrow();
    expect(search('NEAR', opts()).hits).toHaveLength(1);
    for (const q of ['!!! ...', '{}()', '"', '***', '   '])
      expect(() => search(q, opts())).toThrow(expect.objectContaining({ code: 'BAD_QUERY' }));
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), (q) => {
        let match: string;
        try {
          match = ftsQuery(q).match;
        } catch (e) {
          expect((e as { code?: string }).code).toBe('BAD_QUERY');
          return;
        }
        // Every query made is valid FTS5: a real index accepts it.
        expect(() => db.query(match, { limit: 1 })).not.toThrow();
      }),
      { numRuns: 300 },
    );
  });
  const db = IndexDb.open(join(tempDir('dsh-fts-'), 'i.sqlite'));

  it('a word in more than 5,000 texts is ranked among the newest 5,000; with a filter or a phrase, newest first', () => {
    withIndexedFile('dsh-fts-many-', (idx, file) => {
      // Seq 0 is the best match but the oldest (outside the newest RANK_LIMIT); seq 10 the best
      // inside them; the rest say it once.
      const textOf = (i: number): string =>
        i === 0 ? 'common common common common' : i === 10 ? 'common common common' : `common word ${i % 7 === 0 ? 'rare' : ''}`;
      idx.write(() => {
        for (let i = 0; i < RANK_LIMIT + 3; i++) idx.addDoc(file, i, 1, 0, { kind: i % 2 ? 'answer' : 'prompt', text: textOf(i) });
      });
      const many = idx.query('"common"', { limit: 3 });
      expect([many.ranked, many.order]).toEqual([false, 'rank-newest']);
      expect(many.hits[0]!.seq).toBe(10);
      expect(many.hits.map((h) => h.seq)).not.toContain(0);
      const filtered = idx.query('"common"', { limit: 3, kinds: ['prompt'] });
      expect(filtered.order).toBe('newest');
      expect(filtered.hits.map((h) => h.seq)).toEqual([RANK_LIMIT + 2, RANK_LIMIT, RANK_LIMIT - 2]);
      const phrase = idx.query('"common word"', { limit: 2 });
      expect(phrase.order).toBe('newest');
      expect(phrase.hits.map((h) => h.seq)).toEqual([RANK_LIMIT + 2, RANK_LIMIT + 1]);
      const few = idx.query('"rare"', { limit: 3 });
      expect([few.ranked, few.order]).toEqual([true, 'rank']);
      expect(few.hits).toHaveLength(3);
    });
  });

  it('two unquoted words over more than 5,000 texts are ranked like one; only a quoted group is a phrase', () => {
    withIndexedFile('dsh-fts-two-', (idx, file) => {
      // Seq 10 says both words three times; every other text says each once, with a filler word.
      idx.write(() => {
        for (let i = 0; i < RANK_LIMIT + 3; i++)
          idx.addDoc(file, i, 1, 0, { kind: 'answer', text: i === 10 ? 'common word common word common word' : `common word filler${i}` });
      });
      for (const q of ['common word', 'word common', 'common wor*']) {
        const r = idx.query(ftsQuery(q).match, { limit: 3 });
        expect([q, r.order, r.hits[0]!.seq]).toEqual([q, 'rank-newest', 10]);
      }
      for (const q of ['"common word"', 'common "common word"']) {
        const r = idx.query(ftsQuery(q).match, { limit: 3 });
        expect([q, r.order]).toEqual([q, 'newest']);
      }
      // An unbalanced quote is a plain character: two words, no phrase.
      expect(hasPhrase(ftsQuery('common" word').match)).toBe(false);
    });
  });

  it('Chinese, Japanese and Korean words are found inside a sentence, and only where they occur', () => {
    withIndexedFile('dsh-fts-cjk-', (idx, file) => {
      const texts = ['请帮我修复数据平面的搜索功能 and naïve café 東京タワー', '한국어 검색을 지원합니다', 'plain English only'];
      idx.write(() => texts.forEach((text, seq) => idx.addDoc(file, seq, 1, 0, { kind: 'prompt', text })));
      const found = (q: string): number[] => idx.query(ftsQuery(q).match, { limit: 5 }).hits.map((h) => h.seq);
      // Every substring of a run, of one character or more, finds its text; nothing else does.
      for (const [seq, text] of texts.entries())
        for (const run of text.match(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}ー]+/gu) ?? []) {
          const c = [...run];
          for (let i = 0; i < c.length; i++)
            for (let j = i + 1; j <= c.length; j++)
              expect([c.slice(i, j).join(''), found(c.slice(i, j).join(''))]).toEqual([c.slice(i, j).join(''), [seq]]);
        }
      expect(found('数据 naive')).toEqual([0]);
      expect(found('검색')).toEqual([1]);
      // Characters of the text, but not next to each other in this order: no match.
      for (const q of ['数平', '功搜', 'タ東', '据数', '数据東京タワー']) expect([q, found(q)]).toEqual([q, []]);
    });
  });

  it('snippets: the first term in a window, accents and case ignored', () => {
    const s = snippet(`${'x '.repeat(200)}the Café crème ${'y '.repeat(200)}`, ['cafe']);
    expect(s.text.slice(...s.match!)).toBe('Café');
    expect(s.text.startsWith('…') && s.text.endsWith('…')).toBe(true);
  });
});

describe('dsh sessions search', () => {
  it('prints session · turn · seq · kind and a snippet, escapes hostile text, exits 1 without hits', async () => {
    const { home: h, root } = home();
    const hostile = 'evil \u001b[2J\u001b]0;pwned\u0007 title \u202e rot';
    const { seqs } = await makeSession(root, '/w', 'cli-1', [{ prompt: hostile, answer: 'fine' }]);
    const env = { DSH_HOME: h, NO_COLOR: '1' };
    const r = await runMain(['sessions', 'search', 'pwned'], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`cli-1 · turn 1 · seq ${seqs[hostile]} · prompt`);
    expect(r.stdout).not.toMatch(/[\u001b\u0007\u202e]/);
    expect(r.stdout).toContain('\\e[2J');
    expect(r.stderr).toMatch(/1 hit .*dsh view SESSION --seq N/);
    const json = JSON.parse((await runMain(['sessions', 'search', '--json', 'evil'], env)).stdout) as {
      hits: { session: string; seq: number }[];
      index: { path: string };
    };
    expect(json.hits).toEqual([expect.objectContaining({ session: 'cli-1', seq: seqs[hostile] })]);
    expect(json.index.path).toBe(join(h, 'search', 'index.sqlite'));
    const none = await runMain(['sessions', 'search', 'nothinglikeit'], env);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no match for "nothinglikeit" in 1 log/);
    expect((await runMain(['sessions', 'search', '...'], env)).code).toBe(2);
    expect((await runMain(['sessions', 'search', '--kind', 'nope', 'x'], env)).code).toBe(2);
    expect((await runMain(['sessions', 'search', '--rebuild', 'evil'], env)).code).toBe(0);
  });

  it.runIf(hasShared)("--in searches other agents' logs, naming the file and the session key", async () => {
    const { home: h } = home();
    const env = { DSH_HOME: h, NO_COLOR: '1' };
    const dir = sharedPath('fixtures', 'real', 'claude-code-viewer');
    const r = await runMain(['sessions', 'search', '--json', '--in', dir, 'TodoItem'], env);
    expect(r.code).toBe(0);
    const hits = (JSON.parse(r.stdout) as { hits: { path: string; format: string; session: string }[] }).hits;
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.every((x) => x.format === 'foreign')).toBe(true);
    expect(hits.some((x) => /fe5e1c67-53e7-4862-81ae-d0e013e3270b\.jsonl#sidechain-\d$/.test(x.path))).toBe(true);
    // Without --in, those logs are not searched.
    expect((await runMain(['sessions', 'search', 'TodoItem'], env)).code).toBe(1);
  });
});
