/**
 * Search across sessions (issue 14 items 3 and 7): a generated store of 1,000 sessions, about
 * 1 GB, made here (never in git), then
 *
 *   baselines    reading every log: the codec's `loadJsonlFile` (what dsh does to read a log), and
 *                a plain read + `JSON.parse` of each line
 *   build        indexing the whole store from no index (SQLite FTS5), and the index's size
 *   refresh      the freshness check every search starts with, nothing changed; and after ten
 *                sessions each gained a turn (only their tails are read)
 *   queries      `search()` in process (freshness check, query, snippets read from the logs) for
 *                a rare, a middling and a very common word, two words, a phrase and a prefix,
 *                and a common word with --cwd and --kind; each beside the same-run baseline of
 *                ranking every match by BM25 inside FTS5 (the page only, no snippets);
 *                and `dsh sessions search` end to end beside `dsh --version` (process start)
 *   MiniSearch   the JS full-text candidate on the same documents (a sample of the sessions,
 *                scaled): build, serialised size, the load every CLI search would pay, query
 *
 *   node --expose-gc dist-bench/bench/search.js [--sessions N] [--mb-per-session M] [--dir DIR] [--keep] [--sample K]
 *   node --expose-gc dist-bench/bench/search.js --dir DIR --queries-only   (the queries on a store and index kept earlier)
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encodeJsonl, loadJsonlFile, type SessionEvent, type SessionHeader } from '../src/session/index.js';
import { logPath } from '../src/store/index.js';
import { IndexDb } from '../src/search/index-db.js';
import { ftsQuery, refresh, search } from '../src/search/search.js';
import { docsOf } from '../src/search/extract.js';
import { generateWorkload, prng } from './generate.js';
import { parseLines } from './parse-lines.js';
import { amount, benchArgs, count } from './args.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');

const USAGE = `bench/search.js: search across a generated store of sessions (SQLite FTS5), beside reading every log

  node --expose-gc dist-bench/bench/search.js [options]

  --sessions N           sessions in the store (default 1000)
  --mb-per-session M     size of each session's log in MB (default 1.05)
  --distinct N           sessions with a body of their own; the others reuse one (default 100)
  --sample K             sessions given to the MiniSearch comparison (default 100)
  --dir DIR              build the store in DIR (kept) instead of a temporary directory
  --keep                 keep the temporary store
  --queries-only         only the queries, on a store and index kept by an earlier run (--dir DIR)
  --skip-minisearch      leave out the MiniSearch comparison
  -h, --help             this text
`;
const { values: args } = benchArgs(USAGE, {
  sessions: { type: 'string' },
  'mb-per-session': { type: 'string' },
  dir: { type: 'string' },
  keep: { type: 'boolean', default: false },
  sample: { type: 'string' },
  'skip-minisearch': { type: 'boolean', default: false },
  distinct: { type: 'string' },
  // Only the query phase, on a store and index an earlier run kept (--dir DIR --keep).
  'queries-only': { type: 'boolean', default: false },
});
/** Sessions with their own generated body; the others reuse one (with their own header). */
const DISTINCT = count(USAGE, 'distinct', args.distinct, 100);
const SESSIONS = count(USAGE, 'sessions', args.sessions, 1000);
const MB = amount(USAGE, 'mb-per-session', args['mb-per-session'], 1.05);
const SAMPLE = count(USAGE, 'sample', args.sample, 100);

const gc = (): void => (globalThis as { gc?: () => void }).gc?.();
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
function timed<T>(f: () => T): { ms: number; value: T } {
  gc();
  const t0 = performance.now();
  const value = f();
  return { ms: performance.now() - t0, value };
}
function medianOf(n: number, f: () => unknown): number {
  const all: number[] = [];
  for (let i = 0; i < n; i++) all.push(timed(f).ms);
  return median(all);
}
const fmt = (ms: number): string => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`);
const mib = (b: number): string => `${(b / (1 << 20)).toFixed(0)} MiB`;

// ---------------------------------------------------------------------------------------------
// A vocabulary with a natural (Zipf) distribution: a few words everywhere, most words rare.

const SYLLABLES = 'ka lo mi ne ru sa ti vo xe za bre cla dro fin gor hul jet kim lun mar nox pel quo ris sut tav ul vek wyn yor'.split(' ');
function vocabulary(n: number): string[] {
  const rnd = prng(7);
  const out = new Set<string>();
  while (out.size < n) {
    const k = 2 + Math.floor(rnd() * 3);
    let w = '';
    for (let i = 0; i < k; i++) w += SYLLABLES[Math.floor(rnd() * SYLLABLES.length)];
    out.add(w);
  }
  return [...out];
}
const VOCAB = vocabulary(60_000);
const CUMULATIVE = (() => {
  const c = new Float64Array(VOCAB.length);
  let s = 0;
  for (let i = 0; i < VOCAB.length; i++) c[i] = s += 1 / (i + 1) ** 1.07;
  for (let i = 0; i < c.length; i++) c[i]! /= s;
  return c;
})();
function zipf(rnd: () => number): string {
  const x = rnd();
  let lo = 0;
  let hi = CUMULATIVE.length - 1;
  while (lo < hi) {
    const m = (lo + hi) >> 1;
    if (CUMULATIVE[m]! < x) lo = m + 1;
    else hi = m;
  }
  return VOCAB[lo]!;
}

const bodies = new Map<string, string>();
function sessionText(i: number, turns: number, distinct = Number.MAX_SAFE_INTEGER): { header: SessionHeader; text: string } {
  const header: SessionHeader = {
    version: 0,
    id: `bench-${String(i).padStart(4, '0')}`,
    createdAt: 1_760_000_000_000 + i * 3_600_000,
    cwd: `/work/repo-${i % 20}`,
    delegationDepth: 0,
  };
  const key = `${i % distinct}/${turns}`;
  let body = bodies.get(key);
  if (body === undefined) {
    const drafts = generateWorkload({ turns, seed: 5000 + (i % distinct), word: zipf, startTime: 1_760_000_000_000 + i * 3_600_000 });
    const events = drafts.map((d, seq) => ({
      type: d.type,
      seq,
      time: d.time,
      data: d.data,
      ...(d.surfaceOp ? { surfaceOp: d.surfaceOp } : {}),
      ...(d.sourceEventSeqs ? { sourceEventSeqs: d.sourceEventSeqs } : {}),
    })) as unknown as SessionEvent[];
    const text = encodeJsonl(header, events);
    body = text.slice(text.indexOf('\n') + 1);
    if (distinct < Number.MAX_SAFE_INTEGER) bodies.set(key, body);
  }
  return { header, text: `${encodeJsonl(header, [])}${body}` };
}

// ---------------------------------------------------------------------------------------------

function main(): void {
  const dir = args.dir ? resolve(args.dir) : mkdtempSync(join(tmpdir(), 'dsh-search-bench-'));
  const root = join(dir, 'sessions');
  const index = join(dir, 'search', 'index.sqlite');
  console.log(`search bench: ${SESSIONS} sessions of ~${MB} MB in ${dir} (node ${process.version})`);
  try {
    const built = args['queries-only'] ? undefined : buildPhases(root, index);
    // Queries, in process: the whole search() a CLI run makes.
    const rank = (r: number): string => VOCAB[r]!;
    const queries: [string, string][] = [
      ['rare word (rank 40,000)', rank(40_000)],
      ['middling word (rank 2,000)', rank(2_000)],
      ['common word (rank 10)', rank(10)],
      ['most common word (rank 0)', rank(0)],
      ['two words', `${rank(300)} ${rank(900)}`],
      ['phrase', `"${rank(0)} ${rank(1)}"`],
      ['prefix', `${rank(500).slice(0, 4)}*`],
    ];
    const opts = { root, index, limit: 20 };
    // Same-run baseline for each query: ranking every match by BM25 inside FTS5 (what a search
    // did before matches over RANK_LIMIT were windowed), through the same open index.
    const base = IndexDb.open(index);
    const rankAll = (q: string, cwd?: string): number =>
      base.rankAll(ftsQuery(q).match, { limit: 20, ...(cwd !== undefined ? { cwd, kinds: ['answer'] } : {}) }).length;
    for (const [what, q, cwd] of [...queries, ['common word, --cwd and --kind', rank(10), '/work/repo-3'] as const]) {
      const o = { ...opts, ...(cwd !== undefined ? { cwd, kinds: ['answer' as const] } : {}) };
      const r = search(q, o);
      const ms = medianOf(5, () => search(q, o));
      const all = medianOf(3, () => rankAll(q, cwd));
      console.log(
        `query ${what.padEnd(30)} ${JSON.stringify(q).padEnd(22)} ${fmt(ms).padStart(9)}  ranking every match: ${fmt(all).padStart(9)}` +
          ` (${((ms / all) * 100).toFixed(0)}%)  ${r.hits.length} hits, order ${r.order}`,
      );
    }
    base.close();

    // End to end: `dsh sessions search` beside `dsh --version` (process start and CLI load).
    const bin = join(repoRoot, 'bin', 'dsh.js');
    const env = { ...process.env, DSH_HOME: dir, NO_COLOR: '1' };
    const run = (argv: string[]): number => {
      const t = performance.now();
      const r = spawnSync(process.execPath, [bin, ...argv], { env, encoding: 'utf8' });
      if (r.status !== 0 && r.status !== 1) throw new Error(`dsh ${argv.join(' ')}: ${r.stderr}`);
      return performance.now() - t;
    };
    const version = median([0, 1, 2, 3, 4].map(() => run(['--version'])));
    const cli = median([0, 1, 2, 3, 4].map(() => run(['sessions', 'search', rank(2_000)])));
    console.log(`dsh sessions search (end to end): ${fmt(cli)}; dsh --version: ${fmt(version)}; search's own part ${fmt(cli - version)}`);

    if (built && !args['skip-minisearch']) miniSearch(built.paths.slice(0, SAMPLE), built.bytes, built.paths.length, rank(2_000));
  } finally {
    if (!args.keep && !args.dir) rmSync(dir, { recursive: true, force: true });
  }
}

/** Generate the store (or reuse one), time the baselines, the build and the refresh. */
function buildPhases(root: string, index: string): { paths: string[]; bytes: number } {
  // Generate (not timed): size one session first to pick the turns per session.
  const probe = sessionText(0, 20).text.length;
  const turns = Math.max(1, Math.round((MB * 1e6 * 20) / probe));
  const paths: string[] = [];
  let bytes = 0;
  const existing = (() => {
    try {
      return readdirSync(root).length > 0;
    } catch {
      return false;
    }
  })();
  const t0 = performance.now();
  for (let i = 0; i < SESSIONS; i++) {
    const { header, text } = sessionText(i, turns, DISTINCT);
    const p = logPath(root, header.cwd, header.id);
    // A reused store gets its first ten logs written again (the refresh phase grows them).
    if (!existing || i < 10) {
      mkdirSync(dirname(p), { recursive: true });
      writeFileSync(p, text);
    }
    paths.push(p);
    bytes += statSync(p).size;
  }
  console.log(
    `store: ${paths.length} logs, ${mib(bytes)} (${turns} turns each, ${Math.min(DISTINCT, SESSIONS)} distinct bodies), ` +
      `generated in ${fmt(performance.now() - t0)}${existing ? ' (reused)' : ''}`,
  );

  // Baselines: reading the logs.
  const codec = timed(() => {
    let events = 0;
    for (const p of paths) events += loadJsonlFile(p).eventCount;
    return events;
  });
  const raw = timed(() => {
    let n = 0;
    for (const p of paths) n += parseLines(readFileSync(p, 'utf8')).length;
    return n;
  });
  console.log(`baseline  read every log with the codec (loadJsonlFile): ${fmt(codec.ms)} (${codec.value} events)`);
  console.log(`baseline  read + JSON.parse every line:                  ${fmt(raw.ms)}`);

  // Build from no index.
  for (const s of ['', '-wal', '-shm']) rmSync(index + s, { force: true });
  const build = timed(() => {
    const db = IndexDb.open(index);
    try {
      return refresh(db, root);
    } finally {
      db.close();
    }
  });
  const size = ['', '-wal'].reduce((n, s) => n + (statSync(index + s, { throwIfNoEntry: false })?.size ?? 0), 0);
  console.log(
    `FTS5 build: ${fmt(build.ms)} = ${(build.ms / codec.ms).toFixed(2)}× the codec read, ${(build.ms / raw.ms).toFixed(2)}` +
      `× read+parse; ${build.value.docs} documents, index ${mib(size)} (${((size / bytes) * 100).toFixed(1)}% of the logs)`,
  );

  // The freshness check every search starts with.
  const db = IndexDb.open(index);
  const idle = medianOf(5, () => refresh(db, root));
  for (let i = 0; i < 10; i++) {
    const { header } = sessionText(i, 1);
    const extra = sessionText(10_000 + i, 1)
      .text.split('\n')
      .slice(1);
    // A turn more: the same events shifted to the next seqs would be a valid log; for the index
    // only the bytes matter, so the appended lines carry their own seqs.
    appendFileSync(logPath(root, header.cwd, header.id), extra.join('\n'));
  }
  const grown = timed(() => refresh(db, root));
  db.close();
  // Back to valid logs (the appended lines repeat seqs: fine for the index, not for a reader).
  for (let i = 0; i < 10; i++) {
    const { header, text } = sessionText(i, turns, DISTINCT);
    writeFileSync(logPath(root, header.cwd, header.id), text);
  }
  console.log(
    `refresh, nothing changed: ${fmt(idle)}; after 10 logs grew by a turn: ${fmt(grown.ms)} (` +
      `${(grown.value.bytes / 1024).toFixed(0)} KiB read, ${grown.value.reindexed} re-indexed)`,
  );
  return { paths, bytes };
}

/** The JS candidate: MiniSearch over the same documents of the first `sample` logs, scaled. */
function miniSearch(paths: string[], storeBytes: number, total: number, word: string): void {
  let MiniSearch: new (o: unknown) => { addAll(d: unknown[]): void; search(q: string): unknown[]; toJSON(): unknown };
  let load: (json: string, o: unknown) => { search(q: string): unknown[] };
  try {
    const m = createRequire(import.meta.url)('minisearch') as { default?: unknown };
    MiniSearch = (m.default ?? m) as typeof MiniSearch;
    const Ms = MiniSearch as unknown as { loadJSON: typeof load };
    load = (json, o) => Ms.loadJSON(json, o);
  } catch {
    console.log('MiniSearch: not installed (npm i -D minisearch) — skipped');
    return;
  }
  const docs: { id: number; text: string }[] = [];
  let sampleBytes = 0;
  const read = timed(() => {
    for (const p of paths) {
      sampleBytes += statSync(p).size;
      for (const line of readFileSync(p, 'utf8').split('\n')) {
        if (
          !line.startsWith('{"type":"user/message"') &&
          !line.startsWith('{"type":"assistant/message"') &&
          !line.startsWith('{"type":"tool/')
        )
          continue;
        const e = JSON.parse(line) as { type: string; data: unknown };
        for (const d of docsOf(e.type, e.data)) docs.push({ id: docs.length, text: d.text });
      }
    }
  });
  const options = { fields: ['text'], storeFields: [] };
  const build = timed(() => {
    const ms = new MiniSearch(options);
    ms.addAll(docs);
    return ms;
  });
  const ser = timed(() => JSON.stringify(build.value));
  const loaded = timed(() => load(ser.value, options));
  const q = medianOf(7, () => loaded.value.search(word));
  const scale = total / paths.length;
  console.log(
    `MiniSearch on ${paths.length} logs (${mib(sampleBytes)}, ${docs.length} documents; extracting them ${fmt(read.ms)}` +
      `): build ${fmt(build.ms)}, serialised ${mib(ser.value.length)} in ${fmt(ser.ms)}, ` +
      (`load (JSON.parse + loadJSON, paid by every CLI search) ${fmt(loaded.ms)}, query ${fmt(q)}. Scaled ×${scale.toFixed(0)}` +
        ` to the whole store (${mib(storeBytes)}): build ≈ ${fmt((read.ms + build.ms) * scale)}, index ≈ ` +
        `${mib(ser.value.length * scale)}, load ≈ ${fmt(loaded.ms * scale)} per search`),
  );
}

main();
