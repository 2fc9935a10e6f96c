/**
 * `npm run bench`: the session-log benchmark of issue 2 item 9. See bench/README.md.
 *
 *   node --expose-gc dist-bench/bench/main.js                 full run (2,000 turns, ~970k events)
 *   node --expose-gc dist-bench/bench/main.js --quick         200 turns, fewer repetitions
 *   node --expose-gc dist-bench/bench/main.js --only query     one phase (derive seed encode decode longline query rss)
 *   node dist-bench/bench/main.js --write FILE [--no-pack]    write the workload as a dsh v0 JSONL file
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  deriveMessagesFrom,
  encodeJsonl,
  loadJsonl,
  loadJsonlFile,
  MessageProjection,
  Session,
  type SessionEvent,
  type SessionHeader,
} from '../src/session/index.js';
import { generateWorkload, type Draft } from './generate.js';
import { callOf, provenance, stats, turnOf } from '../src/query/index.js';
import { main as cliMain } from '../src/cli/main.js';
import { Output } from '../src/cli/output.js';
import { parseLines } from './parse-lines.js';
import { benchArgs, choices, count } from './args.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');

const USAGE = `bench/main.js: the session-log benchmark (append, derive, encode, decode, queries, peak RSS)

  node --expose-gc dist-bench/bench/main.js [options]
  node dist-bench/bench/main.js --write FILE [--no-pack] [--turns N]

  --only PHASES   comma-separated: derive, seed, encode, decode, longline, query, rss (default: all)
  --turns N       workload turns (default 2000, ~970k events; --quick 200)
  --reps N        timed runs per figure, medians (default 5, --quick 3)
  --quick         a smaller workload and fewer repetitions
  --write FILE    only write the workload as a dsh v0 JSONL file (packed rows unless --no-pack)
  -h, --help      this text
`;
const { values: args } = benchArgs(USAGE, {
  write: { type: 'string' },
  'no-pack': { type: 'boolean', default: false },
  turns: { type: 'string' },
  reps: { type: 'string' },
  quick: { type: 'boolean', default: false },
  only: { type: 'string' },
});

const HEADER: SessionHeader = { version: 0, id: 'bench-session', createdAt: 1_755_000_000_000, cwd: '/work/repo', delegationDepth: 0 };

// ---------------------------------------------------------------------------------------------
// Helpers

const gc = (): void => {
  const g = (globalThis as { gc?: () => void }).gc;
  if (g) {
    g();
    g();
  }
};

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** One untimed warm-up, then `reps` timed runs with a GC before each; returns the median ms. */
function time(reps: number, run: () => void, setup?: () => void): { ms: number; all: number[] } {
  setup?.();
  run();
  const all: number[] = [];
  for (let i = 0; i < reps; i++) {
    setup?.();
    gc();
    const t0 = performance.now();
    run();
    all.push(performance.now() - t0);
  }
  return { ms: median(all), all };
}

/**
 * A baseline and the measured operation, each warmed up once, then run alternately `reps`
 * times with a GC before each run, so a change in machine load hits both alike. Medians.
 */
function pair(reps: number, baseline: () => void, ours: () => void, setup?: () => void): { base: number; ours: number } {
  setup?.();
  baseline();
  setup?.();
  ours();
  const b: number[] = [];
  const o: number[] = [];
  for (let i = 0; i < reps; i++) {
    for (const [fn, into] of [
      [baseline, b],
      [ours, o],
    ] as const) {
      setup?.();
      gc();
      const t0 = performance.now();
      fn();
      into.push(performance.now() - t0);
    }
  }
  return { base: median(b), ours: median(o) };
}

let sink = 0; // keeps results observable so nothing is optimised away

/** `pair` over two producers whose results stay alive until the next run's setup, as a load's would. */
function pairKept(reps: number, baseline: () => unknown, ours: () => unknown): { base: number; ours: number } {
  let keep: unknown;
  const r = pair(
    reps,
    () => {
      keep = baseline();
    },
    () => {
      keep = ours();
    },
    () => {
      keep = undefined;
    },
  );
  sink += keep === undefined ? 0 : 1;
  return r;
}

function appendOpts(d: Draft): { surfaceOp: NonNullable<Draft['surfaceOp']>; sourceEventSeqs?: number[] } | undefined {
  if (d.surfaceOp === undefined) return undefined;
  return d.sourceEventSeqs === undefined ? { surfaceOp: d.surfaceOp } : { surfaceOp: d.surfaceOp, sourceEventSeqs: d.sourceEventSeqs };
}

/** Append every draft to a new session with the workload's own clock. */
function appendAll(
  drafts: readonly Draft[],
  opts: readonly ReturnType<typeof appendOpts>[],
  onDraft?: (s: Session, i: number) => void,
): Session {
  let now = 0;
  const s = Session.create({
    id: HEADER.id,
    header: { cwd: HEADER.cwd!, delegationDepth: 0, createdAt: HEADER.createdAt },
    clock: () => now,
  });
  const append = s.append as unknown as (type: string, data: unknown, o?: unknown) => SessionEvent;
  for (let i = 0; i < drafts.length; i++) {
    const d = drafts[i]!;
    onDraft?.(s, i);
    now = d.time;
    append.call(s, d.type, d.data, opts[i]);
  }
  return s;
}

/** Write a data file under .bench-data/ (git-ignored) once per run; returns its path. */
const written = new Set<string>();
function writeData(name: string, text: string): string {
  const dir = join(repoRoot, '.bench-data');
  const path = join(dir, name);
  if (!written.has(path)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(path, text);
    written.add(path);
  }
  return path;
}

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;
const rate = (n: number, ms: number): number => (n / ms) * 1000;
const fmtRate = (n: number, ms: number, unit: string): string => `${(rate(n, ms) / 1e6).toFixed(2)} M${unit}/s`;
const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

interface Row {
  metric: string;
  value: string;
  baseline: string;
  ratio: string;
  target: string;
  ok: string;
}
const rows: Row[] = [];
function row(metric: string, value: string, baseline = '', ratio = '', target = '', ok?: boolean): void {
  rows.push({ metric, value, baseline, ratio, target, ok: ok === undefined ? '' : ok ? 'met' : 'MISSED' });
  console.log(
    `  ${metric}: ${value}${baseline ? `  | baseline ${baseline}` : ''}${ratio ? `  | ratio ${ratio}` : ''}` +
      `${target ? `  | target ${target} ${ok ? 'met' : 'MISSED'}` : ''}`,
  );
}

// ---------------------------------------------------------------------------------------------
// Modes

if (args.write !== undefined) {
  writeMode(args.write);
} else {
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}

function writeMode(file: string): void {
  const turns = count(USAGE, 'turns', args.turns, 2000);
  const drafts = generateWorkload({ turns });
  const s = appendAll(drafts, drafts.map(appendOpts));
  const text = encodeJsonl(HEADER, s.events, { pack: !args['no-pack'] });
  mkdirSync(dirname(resolve(file)), { recursive: true });
  writeFileSync(file, text);
  console.log(
    `wrote ${file}: ${s.length} events, ${text.split('\n').length - 2} storage lines, ${mb(Buffer.byteLength(text))}` +
      `${args['no-pack'] ? ' (one event per line)' : ' (packed chunk rows)'}`,
  );
}

async function main(): Promise<void> {
  const quick = args.quick ?? false;
  const turns = count(USAGE, 'turns', args.turns, quick ? 200 : 2000);
  const reps = count(USAGE, 'reps', args.reps, quick ? 3 : 5);
  const only = choices(USAGE, 'only', args.only, ['derive', 'seed', 'encode', 'decode', 'longline', 'query', 'rss']);
  const want = (k: string): boolean => !only || only.includes(k);
  console.log(
    `dsh session-log benchmark — node ${process.version}, ${turns} turns, median of ${reps} runs after a warm-up` +
      `${(globalThis as { gc?: unknown }).gc ? '' : ' (run with --expose-gc for GC between runs)'}`,
  );

  const drafts = generateWorkload({ turns });
  const opts = drafts.map(appendOpts);
  const n = drafts.length;
  const chunks = drafts.filter((d) => d.type === 'assistant/chunk').length;
  console.log(`workload: ${n} events (${chunks} assistant/chunk), ${drafts.filter((d) => d.type === 'step/start').length} steps`);

  // -- append + validate -----------------------------------------------------------------------
  let session: Session | undefined;
  const appendPair = pair(
    reps,
    () => {
      let total = 0;
      for (let i = 0; i < n; i++) {
        const d = drafts[i]!;
        total += JSON.stringify({
          type: d.type,
          seq: i,
          time: d.time,
          data: d.data,
          surfaceOp: d.surfaceOp,
          sourceEventSeqs: d.sourceEventSeqs,
        }).length;
      }
      sink += total;
    },
    () => {
      session = appendAll(drafts, opts);
    },
    () => {
      session = undefined;
    },
  );
  const stringifyEach = { ms: appendPair.base };
  const append = { ms: appendPair.ours };
  session = appendAll(drafts, opts);
  const s = session!;
  const appendRatio = stringifyEach.ms / append.ms;
  console.log('\nappend');
  row(
    'append+validate',
    fmtRate(n, append.ms, 'events'),
    `${fmtRate(n, stringifyEach.ms, 'events')} (JSON.stringify of each event)`,
    pct(appendRatio),
    '≥ 50%',
    appendRatio >= 0.5,
  );

  // -- incremental derivation, once per step (when the step's request would be built) ----------
  // Wall time inside the calls as they interleave with the appends (collector pauses an
  // allocation in a call happens to trigger included). Measured twice in the same run: as shipped
  // (an O(1) MessageHistory snapshot per call, each new surface node projected once) and with
  // the fresh frozen O(history) copy per call that the old contract handed out, as a baseline.
  const events = s.events;
  if (want('derive')) {
    console.log('\nderivation');
    const isPoint = new Uint8Array(n);
    let calls = 0;
    for (let i = 1; i < n; i++) {
      if (drafts[i]!.type === 'assistant/chunk' && drafts[i - 1]!.type !== 'assistant/chunk') {
        isPoint[i] = 1;
        calls++;
      }
    }
    // `copy`: each call also makes the fresh frozen array the old contract handed out (before
    // issue 13 item 4 deriveMessages() returned one per change): the naive baseline, same run.
    const measureCalls = (copy: boolean): { total: number; max: number } => {
      const totals: number[] = [];
      const maxes: number[] = [];
      for (let r = 0; r < Math.max(1, Math.min(reps, 3)); r++) {
        let total = 0;
        let max = 0;
        session = undefined;
        gc();
        session = appendAll(drafts, opts, (sess, i) => {
          if (isPoint[i]) {
            const t0 = performance.now();
            const h = sess.deriveMessages();
            sink += copy ? Object.freeze(h.toArray()).length : h.length;
            const dt = performance.now() - t0;
            total += dt;
            if (dt > max) max = dt;
          }
        });
        totals.push(total);
        maxes.push(max);
      }
      session = undefined;
      return { total: median(totals), max: median(maxes) };
    };
    const shipped = measureCalls(false);
    const copying = measureCalls(true);
    // Intrinsic cost: the same 4,000 calls replayed on the finished log with a fresh projection
    // over a surface that grows exactly as it did during the appends — the projection and the
    // fresh arrays it hands out (and the collector work they cause), without the appends' own
    // garbage, whose collection the in-loop figure charges to whichever call allocates at the
    // wrong moment.
    const nodes = s.surface.nodes;
    const lookup = (seq: number): SessionEvent => s.at(seq)!;
    const nodesAt: number[] = [];
    {
      let k = 0;
      for (let i = 0; i < n; i++) {
        while (k < nodes.length && nodes[k]! < i) k++;
        if (isPoint[i]) nodesAt.push(k);
      }
    }
    const intrinsic = time(reps, () => {
      const proj = new MessageProjection();
      const grow: number[] = [];
      let k = 0;
      for (const upTo of nodesAt) {
        while (k < upTo) grow.push(nodes[k++]!);
        sink += proj.derive({ nodes: grow, replaceGeneration: 0 }, lookup).length;
      }
    });
    row(
      'incremental deriveMessages(), intrinsic',
      `${intrinsic.ms.toFixed(1)} ms over ${calls} calls (${((intrinsic.ms / calls) * 1000).toFixed(1)} µs/call)`,
      `append time ${append.ms.toFixed(0)} ms`,
      pct(intrinsic.ms / append.ms),
      '< 1% of append',
      intrinsic.ms / append.ms < 0.01,
    );
    row(
      'incremental deriveMessages(), inside the append loop',
      `${shipped.total.toFixed(1)} ms over ${calls} calls (${((shipped.total / calls) * 1000).toFixed(1)} µs/call), ` +
        `slowest call ${shipped.max.toFixed(2)} ms`,
      `append time ${append.ms.toFixed(0)} ms`,
      pct(shipped.total / append.ms),
      'no call > 5 ms',
      shipped.max <= 5,
    );
    row(
      '  baseline: a fresh frozen array per call (the old contract)',
      `${copying.total.toFixed(1)} ms (${((copying.total / calls) * 1000).toFixed(2)} µs/call), slowest call ${copying.max.toFixed(2)} ms`,
      `ours ${(shipped.total / copying.total).toFixed(2)}× of it`,
      pct(copying.total / append.ms),
    );
    const cold = time(reps, () => {
      sink += deriveMessagesFrom(events).length;
    });
    row(
      'cold derive (deriveMessagesFrom, whole log)',
      `${cold.ms.toFixed(1)} ms (${s.deriveMessages().length} messages)`,
      `append time ${append.ms.toFixed(0)} ms`,
      pct(cold.ms / append.ms),
    );
  }

  // -- seed and restore -----------------------------------------------------------------------
  console.log('\nseed / restore');
  const plainText = encodeJsonl(HEADER, events, { pack: false });
  const packedText = encodeJsonl(HEADER, events);
  let plain = parseLines(plainText);
  const stringifyPlain = (): void => {
    let total = 0;
    for (const e of plain) total += JSON.stringify(e).length;
    sink += total;
  };
  if (want('seed')) {
    const seed = pair(reps, stringifyPlain, () => {
      sink += Session.create({ seed: plain, clock: () => 0 }).length;
    });
    row(
      'seed (Session.create({seed}), copies)',
      fmtRate(n, seed.ours, 'events'),
      `${fmtRate(n, seed.base, 'events')} (JSON.stringify of each event)`,
      pct(seed.base / seed.ours),
    );
    let fresh: unknown[] = [];
    const restore = pair(
      reps,
      stringifyPlain,
      () => {
        sink += Session.restore(HEADER, fresh as unknown[], { clock: () => 0 }).length;
      },
      () => {
        fresh = [];
        gc();
        fresh = parseLines(plainText);
      },
    );
    row(
      'restore (Session.restore, in place)',
      fmtRate(n, restore.ours, 'events'),
      `${fmtRate(n, restore.base, 'events')} (JSON.stringify of each event)`,
      pct(restore.base / restore.ours),
    );
    fresh = [];
  }
  plain = [];

  // -- JSONL encode ---------------------------------------------------------------------------
  const packedBytes = Buffer.byteLength(packedText);
  const plainBytes = Buffer.byteLength(plainText);
  console.log(
    `\nJSONL sizes: packed (as dsh writes it) ${mb(packedBytes)} in ${packedText.split('\n').length - 2} lines; one event per ` +
      `line ${mb(plainBytes)} (${pct(packedBytes / plainBytes)} of it)`,
  );
  if (want('encode')) encodeBench();
  function encodeBench(): void {
    console.log('\nJSONL encode');
    const stringifyLines = (): void => {
      let out = '';
      for (let i = 0; i < n; i++) out += `${JSON.stringify(events[i])}\n`;
      sink += out.length;
    };
    const encPacked = pair(reps, stringifyLines, () => {
      sink += encodeJsonl(HEADER, events).length;
    });
    const encPlain = pair(reps, stringifyLines, () => {
      sink += encodeJsonl(HEADER, events, { pack: false }).length;
    });
    for (const [label, r, bytes] of [
      ['encode, packed', encPacked, packedBytes],
      ['encode, one event per line', encPlain, plainBytes],
    ] as const) {
      row(
        label,
        `${fmtRate(bytes, r.ours, 'B')} = ${fmtRate(n, r.ours, 'events')}`,
        `${fmtRate(plainBytes, r.base, 'B')} = ${fmtRate(n, r.base, 'events')} (JSON.stringify of each event, one per line)`,
        `${pct(r.base / r.ours)} (events/s)`,
      );
    }
  }

  // -- JSONL decode + load --------------------------------------------------------------------
  if (want('decode')) decodeBench();
  function decodeBench(): void {
    console.log('\nJSONL decode + load');
    for (const [label, text, bytes] of [
      ['packed file', packedText, packedBytes],
      ['one-event-per-line file', plainText, plainBytes],
    ] as const) {
      // (a) In this process, whose heap also holds the workload and a million-event session.
      const r = pairKept(
        reps,
        () => parseLines(text),
        () => loadJsonl(text).session,
      );
      // (b) In a fresh process that holds only the file text.
      const file = writeData(label === 'packed file' ? 'bench-packed.jsonl' : 'bench-plain.jsonl', text);
      const c = spawnSync(process.execPath, ['--expose-gc', join(here, 'load-child.js'), file, String(reps)], {
        encoding: 'utf8',
        maxBuffer: 1 << 20,
      });
      if (c.status !== 0) throw new Error(`load child failed: ${c.stderr}`);
      const f = JSON.parse(c.stdout) as { base: number; ours: number };
      row(
        `decode+load, ${label}, fresh process`,
        `${fmtRate(bytes, f.ours, 'B')} = ${fmtRate(n, f.ours, 'events')}`,
        `${fmtRate(bytes, f.base, 'B')} (JSON.parse of each line of the same file, objects kept)`,
        pct(f.base / f.ours),
        '≥ 75%',
        f.base / f.ours >= 0.75,
      );
      row(
        `decode+load, ${label}, in the bench process`,
        `${fmtRate(bytes, r.ours, 'B')} = ${fmtRate(n, r.ours, 'events')}`,
        `${fmtRate(bytes, r.base, 'B')} (same baseline)`,
        pct(r.base / r.ours),
      );
    }
  }

  // -- queries (docs/data-plane.md) ------------------------------------------------------------
  // Each query is one pass over the loaded session; the baseline is the cost of merely parsing
  // the same file (JSON.parse of each line, objects kept). Measured on the loaded session alone,
  // and end to end as the command runs it (the streamed load of the file, the query, the output).
  if (want('query')) await queryBench();
  async function queryBench(): Promise<void> {
    console.log('\nqueries on the packed file (one pass each)');
    const file = writeData('bench-packed.jsonl', packedText);
    const loaded = loadJsonl(packedText);
    const callDraft = drafts.findIndex((d, i) => d.type === 'tool/call' && i > n / 2);
    const callId = (drafts[callDraft]!.data as { callId: string }).callId;
    const messageSeq = drafts.findIndex((d, i) => d.type === 'assistant/message' && i > n / 2);
    const midTurn = Math.ceil(turns / 2);
    const parse = (): unknown => parseLines(packedText);
    const queries: [string, () => unknown, string[]][] = [
      ['stats (whole session, per turn and step)', () => stats(loaded), ['stats', file]],
      [`call (round trip of ${callId}, seq ${callDraft})`, () => callOf(loaded, callId), ['call', file, callId]],
      [
        `trace (provenance of the assistant/message at seq ${messageSeq})`,
        () => provenance(loaded, messageSeq),
        ['trace', file, String(messageSeq)],
      ],
      [`turn (every event of turn ${midTurn})`, () => turnOf(loaded, midTurn), ['turn', file, String(midTurn)]],
    ];
    const quiet = {
      out: new Output({ write: () => undefined }, false),
      err: new Output({ write: () => undefined }, false),
      env: { ...process.env, DSH_HOME: join(repoRoot, '.bench-data', 'home') },
    };
    for (const [label, run] of queries) {
      const r = pairKept(reps, parse, run);
      row(
        `query: ${label}`,
        `${r.ours.toFixed(0)} ms = ${fmtRate(n, r.ours, 'events')}`,
        `${r.base.toFixed(0)} ms (JSON.parse of each line of the same file, objects kept)`,
        pct(r.base / r.ours),
      );
    }
    for (const [label, , argv] of queries) {
      const cmd = `dsh log ${argv[0]}`;
      const e2e: number[] = [];
      const base: number[] = [];
      // A warm-up of each, then alternately, as pair() does.
      sink += (parse() as unknown[]).length;
      await cliMain(['log', ...argv, '--json'], quiet);
      for (let i = 0; i < reps; i++) {
        gc();
        let t0 = performance.now();
        sink += (parse() as unknown[]).length;
        base.push(performance.now() - t0);
        gc();
        t0 = performance.now();
        const code = await cliMain(['log', ...argv, '--json'], quiet);
        e2e.push(performance.now() - t0);
        if (code !== 0) throw new Error(`${cmd} exited ${code}`);
      }
      const b = median(base);
      const o = median(e2e);
      row(
        `command: ${cmd} --json (load + ${label.split(' ')[0]} + output)`,
        `${o.toFixed(0)} ms`,
        `${b.toFixed(0)} ms (same baseline)`,
        pct(b / o),
      );
    }
  }

  // -- one very long line, streamed ------------------------------------------------------------
  // A single 64 MiB tool result: the streamed reader must keep a line that spans many reads in
  // linear time (it once rescanned the unfinished line on every 1 MiB read: ~9 s for this line).
  if (want('longline')) longLineBench();
  function longLineBench(): void {
    console.log('\none 64 MiB line (a huge tool result), streamed from the file');
    const s = Session.create({
      id: 'long-line',
      header: { cwd: HEADER.cwd!, delegationDepth: 0, createdAt: HEADER.createdAt },
      clock: () => 0,
    });
    s.append('turn/start', { turn: 1 });
    s.append('step/start', { turn: 1, step: 1 });
    s.append(
      'user/message',
      { id: 'u1', role: 'user', content: [{ type: 'text', text: 'x'.repeat(64 << 20) }], source: { kind: 'user' } },
      { surfaceOp: 'append' },
    );
    s.append('step/end', { turn: 1, step: 1 });
    s.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
    const text = encodeJsonl({ ...s.header, delegationDepth: 0 }, s.events);
    const file = writeData('bench-long-line.jsonl', text);
    const bytes = statSync(file).size;
    const r = pairKept(
      reps,
      () => parseLines(text),
      () => loadJsonlFile(file).session,
    );
    row(
      'streamed load (loadJsonlFile), one 64 MiB line',
      fmtRate(bytes, r.ours, 'B'),
      `${fmtRate(bytes, r.base, 'B')} (JSON.parse of each line of the text in memory)`,
      pct(r.base / r.ours),
    );
  }

  // -- peak RSS, each in a fresh child that only loads the file ---------------------------------
  if (want('rss')) rssBench();
  function rssBench(): void {
    console.log('\npeak RSS (fresh child process per measurement)');
    const files = { packed: writeData('bench-packed.jsonl', packedText), plain: writeData('bench-plain.jsonl', plainText) };
    const probe = join(here, 'rss-child.js');
    type Probe = { idle: number; peak: number; heapUsedAfter: number; young: number; count: number };
    const child = (mode: 'stream' | 'text' | 'json' | 'expand', file: string): Probe => {
      const r = spawnSync(process.execPath, ['--expose-gc', probe, mode, file], { encoding: 'utf8', maxBuffer: 1 << 20 });
      if (r.status !== 0) throw new Error(`rss child failed: ${r.stderr}`);
      return JSON.parse(r.stdout) as Probe;
    };
    for (const [label, file] of [
      ['packed file', files.packed],
      ['one-event-per-line file', files.plain],
    ] as const) {
      const size = statSync(file).size;
      const json = child('json', file);
      // Reference, not a target: the same events held one object per event (rows expanded), as a
      // loader without compact runs holds them; dsh's loader decodes rows into events this way.
      const expanded = child('expand', file);
      console.log(
        `  reference, ${label}: one frozen object per event (decodeJsonl, rows expanded) peaks at ${mb(expanded.peak)}` +
          ` = ${(expanded.peak / size).toFixed(2)}× the file, live heap after ${mb(expanded.heapUsedAfter)} (` +
          `${(expanded.heapUsedAfter / size).toFixed(2)}×)`,
      );
      for (const [how, mode] of [
        ['streamed (loadJsonlFile)', 'stream'],
        ['read whole (readFileSync + loadJsonl)', 'text'],
      ] as const) {
        const ours = child(mode, file);
        const r = ours.peak / size;
        row(
          `peak RSS, ${label} (${mb(size)}), ${how}`,
          `${mb(ours.peak)} = ${r.toFixed(2)}× the file; ${((ours.peak - ours.idle) / size).toFixed(2)}× above the idle process (` +
            `${mb(ours.idle)})`,
          `${mb(json.peak)} = ${(json.peak / size).toFixed(2)}× (readFileSync + JSON.parse of each line, objects kept)`,
          `${(ours.peak / json.peak).toFixed(2)}× baseline`,
          '< 2× the JSONL size',
          r < 2,
        );
        // Where the peak goes: the process before the load, the heap the loaded session keeps
        // alive, and the young generation V8 grew on the way (held committed afterwards).
        console.log(
          `    of which: idle process ${mb(ours.idle)} (${(ours.idle / size).toFixed(2)}×), live heap after the load ` +
            `${mb(ours.heapUsedAfter)} (${(ours.heapUsedAfter / size).toFixed(2)}×), young generation still committed ` +
            `${mb(ours.young)} (${(ours.young / size).toFixed(2)}×)`,
        );
      }
    }
  }

  console.log('\nsummary');
  const w = (k: keyof Row): number => Math.max(k.length, ...rows.map((r) => r[k].length));
  const keys: (keyof Row)[] = ['metric', 'value', 'ratio', 'target', 'ok'];
  console.log(keys.map((k) => k.padEnd(w(k))).join('  '));
  for (const r of rows) console.log(keys.map((k) => r[k].padEnd(w(k))).join('  '));
  if (sink === 42) console.log('');
}
