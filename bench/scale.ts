/**
 * `npm run bench` (part 3): the PostgreSQL store beside the JSONL store, same run, same data
 * (issue 17 item 6). Needs a server: DSH_BENCH_POSTGRES (or DSH_TEST_POSTGRES); without one it
 * says so and exits 0. Each figure is printed beside its same-run baseline as a ratio:
 *
 * - append throughput: the workload's events appended to a stored session with the persist
 *   checkpoints (a flush after every step/start, i.e. before each model call, and after every
 *   tool/call, i.e. before each tool body), then a final flush; PostgreSQL vs the JSONL store;
 * - commit-to-follower latency: one event appended and flushed at a time, a follower on another
 *   connection (LISTEN/NOTIFY plus reads by seq) timing its arrival from the append; p50/p99
 *   beside the commit alone (the flush) and a bare `SELECT 1` round trip;
 * - resume: `open` of the big session (load, validate, take the lease) from each store.
 *
 * - resume baseline: JSON.parse of the session's JSONL lines (read from the file, split) alone, so
 *   each store's resume is also a multiple of the bare parse of the same log; and the PostgreSQL
 *   load's phases (the SELECTs alone; the codec alone on the fetched text) beside it.
 *
 *   node --expose-gc dist-bench/bench/scale.js [--quick] [--turns N] [--reps N] [--events N] [--only append,latency,resume]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Session, SessionHeader } from '../src/session/index.js';
import { SessionStore, type OpenSession, type Store } from '../src/store/index.js';
import { PgStore } from '../src/postgres/index.js';
import { fetchPages, segmentsOf } from '../src/postgres/read.js';
import { namesFor } from '../src/postgres/schema.js';
import { appendDraft, generateWorkload, type Draft } from './generate.js';
import { benchArgs, choices, count } from './args.js';

const USAGE = `bench/scale.js: the PostgreSQL store beside the JSONL store (needs DSH_BENCH_POSTGRES or DSH_TEST_POSTGRES)

  node --expose-gc dist-bench/bench/scale.js [options]

  --only PHASES   comma-separated: append, latency, resume (default: all)
  --turns N       workload turns (default 2000, --quick 100)
  --reps N        timed runs per figure, medians (default 3)
  --events N      events appended one at a time for the latency phase (default 1000, --quick 300)
  --quick         a smaller workload
  -h, --help      this text
`;
const { values: args } = benchArgs(USAGE, {
  quick: { type: 'boolean', default: false },
  turns: { type: 'string' },
  reps: { type: 'string' },
  events: { type: 'string' },
  only: { type: 'string' },
});

const url = process.env.DSH_BENCH_POSTGRES || process.env.DSH_TEST_POSTGRES;
if (!url) {
  console.log(
    'scale bench skipped: set DSH_BENCH_POSTGRES=postgres://… (or DSH_TEST_POSTGRES; eval "$(.ci/pg start)" starts a throwaway server)',
  );
  process.exit(0);
}
const turns = count(USAGE, 'turns', args.turns, args.quick ? 100 : 2000);
const reps = count(USAGE, 'reps', args.reps, 3);
const latencyEvents = count(USAGE, 'events', args.events, args.quick ? 300 : 1000);
const schema = `bench_${process.pid}`;
const phases = new Set(choices(USAGE, 'only', args.only, ['append', 'latency', 'resume']) ?? ['append', 'latency', 'resume']);

const gc = (): void => (globalThis as { gc?: () => void }).gc?.();
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const rows: [string, string, string][] = [];
const row = (metric: string, value: string, ratio: string): void => {
  rows.push([metric, value, ratio]);
  console.log(`${metric.padEnd(58)} ${value.padEnd(46)} ${ratio}`);
};

/** Append the drafts with the persist checkpoints; returns ms from the first append to the last flush. */
async function appendWorkload(h: OpenSession, drafts: readonly Draft[], clock: { now: number }): Promise<number> {
  const s: Session = h.session;
  const t0 = performance.now();
  for (const d of drafts) {
    clock.now = d.time;
    appendDraft(s, d);
    if (d.type === 'step/start' || d.type === 'tool/call') {
      const r = await h.flush();
      if (!r.ok) throw r.error;
    }
  }
  const r = await h.flush();
  if (!r.ok) throw r.error;
  return performance.now() - t0;
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'dsh-bench-scale-'));
  const clock = { now: 0 };
  const jsonl = new SessionStore({ root, clock: () => clock.now });
  const pgs = new PgStore({ url: url!, schema, clock: () => clock.now, poolSize: 4 });
  const reader = new PgStore({ url: url!, schema, poolSize: 2 });
  try {
    console.log(`scale bench: ${turns} turns, ${reps} repetitions, PostgreSQL ${new URL(url!).host}, schema ${schema}`);
    const drafts = generateWorkload({ turns });
    console.log(`workload: ${drafts.length} events`);

    // -- append throughput, alternating JSONL and PostgreSQL -----------------------------------
    if (phases.has('append')) {
      const times: Record<'jsonl' | 'pg', number[]> = { jsonl: [], pg: [] };
      for (let i = 0; i <= reps; i++) {
        for (const [kind, store] of [
          ['jsonl', jsonl],
          ['pg', pgs],
        ] as const) {
          gc();
          const h = await (store as Store).create({ cwd: '/work/repo', id: `append-${kind}-${i}` });
          const ms = await appendWorkload(h, drafts, clock);
          const r = await h.close();
          if (!r.ok) throw r.error;
          if (i > 0) times[kind].push(ms); // the first round warms up
        }
      }
      const rate = (ms: number): string => `${(((drafts.length / ms) * 1000) / 1e6).toFixed(3)} Mevents/s (${ms.toFixed(0)} ms)`;
      const tj = median(times.jsonl);
      const tp = median(times.pg);
      row('append, JSONL store (baseline)', rate(tj), '100%');
      row('append, PostgreSQL store (batched)', rate(tp), `${((tj / tp) * 100).toFixed(1)}% of JSONL`);
      const checkpoints = drafts.filter((d) => d.type === 'step/start' || d.type === 'tool/call').length + 1;
      row('  flushes (checkpoints) per run', String(checkpoints), '');
    }

    // -- commit-to-follower latency --------------------------------------------------------------
    const ms = (x: number): string => `${x.toFixed(2)} ms`;
    if (phases.has('latency')) {
      const w = await pgs.create({ cwd: '/work/repo', id: 'latency' });
      const sent = new Map<number, number>();
      const arrived = new Map<number, number>();
      const tail = await reader.tail('latency', (batch) => {
        const t = performance.now();
        for (const r of batch) arrived.set(r.seq, t);
      });
      const commit: number[] = [];
      const s = w.session;
      for (let i = 0; i < latencyEvents && i < drafts.length; i++) {
        const d = drafts[i]!;
        clock.now = d.time;
        const t0 = performance.now();
        const e = appendDraft(s, d);
        sent.set(e.seq, t0);
        const r = await w.flush();
        if (!r.ok) throw r.error;
        commit.push(performance.now() - t0);
        // Wait for the follower before the next event, so each latency is one event's.
        const deadline = Date.now() + 10_000;
        while (!arrived.has(e.seq)) {
          if (Date.now() > deadline) throw new Error(`the follower never got seq ${e.seq}`);
          await new Promise((r2) => setImmediate(r2));
        }
      }
      tail.stop();
      await w.close();
      const lat = [...sent].map(([seq, t0]) => arrived.get(seq)! - t0);
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      const rtt: number[] = [];
      for (let i = 0; i < 200; i++) {
        const t0 = performance.now();
        await c.query('SELECT 1');
        rtt.push(performance.now() - t0);
      }
      await c.end();
      row(
        `commit-to-follower latency, ${lat.length} events, p50`,
        ms(pct(lat, 50)),
        `${(pct(lat, 50) / pct(commit, 50)).toFixed(2)}× the commit`,
      );
      row(`commit-to-follower latency, p99`, ms(pct(lat, 99)), `${(pct(lat, 99) / pct(commit, 99)).toFixed(2)}× the commit`);
      row('  baseline: the commit alone (append + flush), p50 / p99', `${ms(pct(commit, 50))} / ${ms(pct(commit, 99))}`, '');
      row('  baseline: SELECT 1 round trip, p50 / p99', `${ms(pct(rtt, 50))} / ${ms(pct(rtt, 99))}`, '');
    }
    if (!phases.has('resume')) return;

    // -- resume of the big session ---------------------------------------------------------------
    if (!phases.has('append')) {
      // The big session is the append phase's; without that phase it is written once here.
      const h = await jsonl.create({ cwd: '/work/repo', id: 'append-jsonl-1' });
      await appendWorkload(h, drafts, clock);
      const r = await h.close();
      if (!r.ok) throw r.error;
    }
    const big = await jsonl.inspect('append-jsonl-1');
    const header: SessionHeader = { ...big.header, id: 'resume' };
    const events = big.session.events.slice(0, big.eventCount);
    for (const store of [jsonl, pgs] as Store[]) {
      const t0 = performance.now();
      await store.importLog({ header, events });
      row(`  import of the ${events.length}-event session into ${store.kind}`, ms(performance.now() - t0), '');
    }
    const names = namesFor(schema);
    const fetcher = new pg.Pool({ connectionString: url, max: 1 });
    const logFile = jsonl.pathOf(header.cwd, 'resume');
    const opened: Record<string, number[]> = { parse: [], jsonl: [], postgres: [], select: [], rowparse: [] };
    for (let i = 0; i <= reps; i++) {
      // Baseline: the bare parse of the same log, as lines of its JSONL file.
      gc();
      let t0 = performance.now();
      const lines = readFileSync(logFile, 'utf8').split('\n');
      let parsed = 0;
      for (const l of lines) if (l.length > 0 && JSON.parse(l) !== undefined) parsed++;
      if (i > 0) opened.parse!.push(performance.now() - t0);
      if (i === 0) row(`  the JSONL file of the session`, `${lines.length - 1} lines for ${events.length} events`, '');
      void parsed;
      // The PostgreSQL load's SELECTs alone (what the driver hands over, before the codec).
      gc();
      t0 = performance.now();
      const texts = await fetchPages(fetcher, names, await segmentsOf(fetcher, names, 'resume'), 0, Number.MAX_SAFE_INTEGER);
      if (i > 0) opened.select!.push(performance.now() - t0);
      gc();
      t0 = performance.now();
      for (const page of texts) for (const l of page.text.split('\n')) JSON.parse(l);
      if (i > 0) opened.rowparse!.push(performance.now() - t0);
      for (const store of [jsonl, pgs] as Store[]) {
        gc();
        t0 = performance.now();
        const h = await store.open('resume');
        const t = performance.now() - t0;
        if (h.session.length < events.length) throw new Error('short load');
        await h.close();
        if (i > 0) opened[store.kind]!.push(t);
      }
    }
    const ob = median(opened.parse!);
    const oj = median(opened.jsonl!);
    const op = median(opened.postgres!);
    const os = median(opened.select!);
    row(
      `resume baseline: JSON.parse of the session's JSONL lines`,
      `${ms(ob)} = ${(((events.length / ob) * 1000) / 1e6).toFixed(3)} Mevents/s`,
      '1.00× the parse',
    );
    row(`resume (open) of the ${events.length}-event session, JSONL`, `${ms(oj)}`, `${(oj / ob).toFixed(2)}× the parse`);
    row(`resume (open), PostgreSQL`, ms(op), `${(op / ob).toFixed(2)}× the parse, ${(op / oj).toFixed(2)}× JSONL`);
    row(`  of which the SELECTs (fetch of the stored texts)`, ms(os), `${(os / ob).toFixed(2)}× the parse`);
    const or = median(opened.rowparse!);
    row(`  JSON.parse of the stored rows (one per event), no codec`, ms(or), `${(or / ob).toFixed(2)}× the parse`);
    await fetcher.end();
  } finally {
    await reader.close();
    await pgs.close();
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await c.end();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
