/**
 * `npm run bench` (third part): what a user waits for at the command line (issue 13), the built
 * CLI (`bin/dsh.js`) run as a user runs it, each figure beside `node -e 0` timed in the same run,
 * alternately with it, median of the runs.
 *
 *   node dist-bench/bench/cli.js                          every phase
 *   node dist-bench/bench/cli.js --only startup,listing   phases: startup resume logs listing (listing: indexed and --rescan)
 *   node dist-bench/bench/cli.js --reps 5 --turns 2000 --sessions 1000,10000
 *   node dist-bench/bench/cli.js --only logs --logs packed   one of the two logs (packed, plain)
 *
 * "To the first request" is the time from spawning the process to the moment a fake
 * OpenAI-compatible provider on 127.0.0.1 (in this process, idle while it waits) receives the
 * request's headers; the process is then answered and left to finish. Everything else is the
 * whole process, spawn to exit. Peak RSS comes from `/usr/bin/time -f %M` when it exists.
 */
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import {
  closeSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchArgs, choices, count, countList } from './args.js';
import { encodeEvents, encodeHeaderLine, encodeJsonl, Session } from '../src/session/index.js';
import { logPath } from '../src/store/layout.js';
import { appendDraft, generateWorkload } from './generate.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');
const TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;

const USAGE = `bench/cli.js: what a user waits for at the command line, the built CLI beside \`node -e 0\` in the same run

  node dist-bench/bench/cli.js [options]

  --only PHASES      comma-separated: startup, resume, logs, listing (default: all)
  --reps N           timed runs per figure, medians (default 7, --quick 3)
  --turns N          workload size for resume and logs (default 2000, ~165 MB one event per line; 12000 is ~1 GB)
  --sessions N,M     store sizes for listing (default 1000,10000)
  --logs FORM        resume/logs: packed, plain or both (default both)
  --quick            fewer repetitions and a smaller workload
  --dsh FILE         measure another build's bin/dsh.js
  --before FILE      also measure this build (e.g. main before a change), alternately, and print ratios
  -h, --help         this text
`;
const { values: args } = benchArgs(USAGE, {
  only: { type: 'string' },
  reps: { type: 'string' },
  turns: { type: 'string' },
  sessions: { type: 'string' },
  /** resume/logs phases: which stored form of the workload, `packed`, `plain` or both (default). */
  logs: { type: 'string' },
  quick: { type: 'boolean', default: false },
  /** Another build's bin/dsh.js, to measure it (before/after comparisons). */
  dsh: { type: 'string' },
  /** A build to compare with in the same run (e.g. main before a change): its bin/dsh.js. */
  before: { type: 'string' },
});
const DSH = resolve(args.dsh ?? join(repoRoot, 'bin', 'dsh.js'));
const BEFORE = args.before === undefined ? undefined : resolve(args.before);
const quick = args.quick ?? false;
const REPS = count(USAGE, 'reps', args.reps, quick ? 3 : 7);
const TURNS = count(USAGE, 'turns', args.turns, quick ? 200 : 2000);
const FORMS = choices(USAGE, 'logs', args.logs, ['packed', 'plain'])?.map((f) => f === 'packed') ?? [false, true];
const SESSIONS = countList(USAGE, 'sessions', args.sessions, quick ? '1000' : '1000,10000');
const only = choices(USAGE, 'only', args.only, ['startup', 'resume', 'logs', 'listing']);
const want = (k: string): boolean => !only || only.includes(k);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

interface Run {
  ms: number;
  /** Peak RSS in bytes (when /usr/bin/time is there). */
  rss?: number;
  /** User + system CPU time of the process in ms (when /usr/bin/time is there): less sensitive to other load than wall time. */
  cpu?: number;
  firstRequestMs?: number;
}

/** Spawn `node ARGS` and wait for its exit; with `provider`, also note when its first request arrives. */
function runNode(argv: readonly string[], env: Record<string, string>, cwd: string, provider?: Provider): Promise<Run> {
  return new Promise((done, fail) => {
    const cmd = TIME ?? process.execPath;
    const full = TIME ? ['-f', '%M %U %S', process.execPath, ...argv] : [...argv];
    const t0 = performance.now();
    if (provider) provider.onRequest = () => (provider.firstAt ??= performance.now());
    const child = spawn(cmd, full, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', fail);
    child.on('close', (code) => {
      const ms = performance.now() - t0;
      const lines = err.trim().split('\n');
      const [rssKb, user, sys] = TIME ? (lines.at(-1) ?? '').split(' ').map(Number) : [];
      if (code !== 0) return fail(new Error(`node ${argv.join(' ')} exited ${code}: ${err.slice(-2000)}`));
      const r: Run = { ms };
      if (rssKb !== undefined && Number.isFinite(rssKb)) r.rss = rssKb * 1024;
      if (user !== undefined && sys !== undefined && Number.isFinite(user + sys)) r.cpu = (user + sys) * 1000;
      if (provider) {
        if (provider.firstAt === undefined) return fail(new Error(`node ${argv.join(' ')}: no request reached the provider`));
        r.firstRequestMs = provider.firstAt - t0;
        provider.firstAt = undefined;
      }
      done(r);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// A fake OpenAI-compatible provider: one short text answer to every request.

interface Provider {
  url: string;
  server: Server;
  firstAt: number | undefined;
  onRequest: () => void;
}

function sse(): string {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null, usage: unknown = null): string => {
    const choices = [{ index: 0, delta, finish_reason: finish }];
    return `data: ${JSON.stringify({ id: 'b', object: 'chat.completion.chunk', created: 0, model: 'deepseek-chat', choices, usage })}\n\n`;
  };
  return (
    chunk({ role: 'assistant', content: '' }) +
    chunk({ content: 'ok' }) +
    chunk({ content: '' }, 'stop', {
      prompt_tokens: 10,
      completion_tokens: 1,
      total_tokens: 11,
      prompt_cache_hit_tokens: 0,
      prompt_cache_miss_tokens: 10,
    }) +
    'data: [DONE]\n\n'
  );
}

async function startProvider(): Promise<Provider> {
  const p: Provider = { url: '', server: undefined as unknown as Server, firstAt: undefined, onRequest: () => {} };
  p.server = createServer((req, res) => {
    p.onRequest();
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(sse());
    });
  });
  await new Promise<void>((r) => p.server.listen(0, '127.0.0.1', r));
  p.url = `http://127.0.0.1:${(p.server.address() as AddressInfo).port}`;
  return p;
}

// ---------------------------------------------------------------------------------------------
// Output

interface Row {
  metric: string;
  value: string;
  ratio: string;
  target: string;
  ok: string;
}
const rows: Row[] = [];
const ms = (x: number): string => `${x.toFixed(0)} ms`;
const mb = (b: number | undefined): string => (b === undefined ? '?' : `${(b / 1e6).toFixed(0)} MB`);
function row(metric: string, value: string, ratio = '', target = '', ok?: boolean): void {
  rows.push({ metric, value, ratio, target, ok: ok === undefined ? '' : ok ? 'met' : 'MISSED' });
  console.log(`  ${metric}: ${value}${ratio ? `  | ${ratio}` : ''}${target ? `  | target ${target} ${ok ? 'met' : 'MISSED'}` : ''}`);
}

/** `node -e 0` and each measured command alternately, `REPS` times after a warm-up of each. */
async function alternate(cases: Record<string, () => Promise<Run>>): Promise<Record<string, Run[]>> {
  const out: Record<string, Run[]> = {};
  const names = Object.keys(cases);
  for (const n of names) await cases[n]!();
  for (let i = 0; i < REPS; i++) for (const n of names) (out[n] ??= []).push(await cases[n]!());
  return out;
}

const med = (runs: Run[], f: (r: Run) => number | undefined): number => median(runs.map(f).filter((x): x is number => x !== undefined));

function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

function gitRepo(): string {
  const dir = tempDir('dsh-bench-repo-');
  writeFileSync(join(dir, 'README.md'), '# bench\n');
  const git = (...a: string[]): void => void execFileSync('git', a, { cwd: dir, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('-c', 'user.email=b@example.com', '-c', 'user.name=b', 'commit', '-qm', 'init');
  return dir;
}

function agentEnv(url: string, home: string): Record<string, string> {
  return { DEEPSEEK_BASE_URL: url, DEEPSEEK_API_KEY: 'bench', DSH_HOME: home, DSH_MODEL: '', NO_COLOR: '1' };
}

/** A small finished session (examples/fix-typo.jsonl, a real dsh log) under another id and cwd. */
const EXAMPLE = readFileSync(join(repoRoot, 'examples', 'fix-typo.jsonl'), 'utf8');
function tinySession(id: string, cwd: string, createdAt: number): string {
  const nl = EXAMPLE.indexOf('\n');
  const header = { ...(JSON.parse(EXAMPLE.slice(0, nl)) as Record<string, unknown>), id, cwd, createdAt };
  return JSON.stringify(header) + EXAMPLE.slice(nl);
}

// ---------------------------------------------------------------------------------------------

async function startup(provider: Provider): Promise<void> {
  console.log('\nstart-up (spawn to exit, or to the first model request)');
  const home = tempDir('dsh-bench-home-');
  const repo = gitRepo();
  const tiny = join(home, 'tiny.jsonl');
  writeFileSync(tiny, tinySession('tiny', repo, 1_755_000_000_000));
  const env = { DSH_HOME: home, NO_COLOR: '1' };
  const builds: [string, string][] = [['', DSH]];
  if (BEFORE !== undefined) builds.push([' (before)', BEFORE]);
  const cases: Record<string, () => Promise<Run>> = { base: () => runNode(['-e', '0'], {}, repo) };
  // "Nothing stored" in a home of its own per build: the run cases store a session in `home`
  // each round, and the builds would take each other's kept listing for a change.
  const emptyHomes: string[] = [];
  for (const [tag, bin] of builds) {
    const emptyHome = tempDir('dsh-bench-empty-');
    emptyHomes.push(emptyHome);
    cases[`version${tag}`] = () => runNode([bin, '--version'], env, repo);
    cases[`sessions${tag}`] = () => runNode([bin, 'sessions'], { ...env, DSH_HOME: emptyHome }, repo);
    cases[`check${tag}`] = () => runNode([bin, 'log', 'check', tiny], env, repo);
    cases[`show${tag}`] = () => runNode([bin, 'log', 'show', tiny], env, repo);
    cases[`run${tag}`] = () => runNode([bin, 'run', '--cwd', repo, 'say ok'], agentEnv(provider.url, home), repo, provider);
  }
  const r = await alternate(cases);
  const base = med(r.base!, (x) => x.ms);
  const baseCpu = med(r.base!, (x) => x.cpu);
  row('node -e 0 (baseline)', `${ms(base)}, CPU ${ms(baseCpu)}`);
  const line = (name: string, label: string, target?: number, f: (x: Run) => number | undefined = (x) => x.ms): void => {
    for (const [tag] of builds) {
      const v = med(r[`${name}${tag}`]!, f);
      const cpu = med(r[`${name}${tag}`]!, (x) => x.cpu);
      const before = r[`${name} (before)`];
      const vs =
        tag === '' && before !== undefined
          ? `, ${(v / med(before, f)).toFixed(2)}× before (CPU ${(cpu / med(before, (x) => x.cpu)).toFixed(2)}×)`
          : '';
      row(
        `${label}${tag}`,
        `${ms(v)} (${ms(v - base)} above node -e 0), process CPU ${ms(cpu)}`,
        `${(v / base).toFixed(2)}× node -e 0 (CPU ${(cpu / baseCpu).toFixed(2)}×)${vs}`,
        target === undefined ? '' : `≤ ${target} ms`,
        target === undefined ? undefined : v <= target,
      );
    }
  };
  line('version', 'dsh --version');
  line('sessions', 'dsh sessions, nothing stored', 150);
  line('check', 'dsh log check, tiny log', 150);
  line('show', 'dsh log show, tiny log');
  line('run', 'dsh run "task", new session: to the first request', 300, (x) => x.firstRequestMs);
  line('run', 'dsh run "task", new session: whole process');
  for (const dir of [home, repo, ...emptyHomes]) rmSync(dir, { recursive: true, force: true });
}

/** The bench workload (bench/generate.ts) as a stored session of `home`, for `repo`. */
function storeWorkload(
  home: string,
  repo: string,
  turns: number,
  pack: boolean,
): { id: string; path: string; bytes: number; events: number } {
  const drafts = generateWorkload({ turns });
  const id = `bench-${pack ? 'packed' : 'plain'}`;
  let now = 0;
  const s = Session.create({ id, header: { cwd: repo, delegationDepth: 0, createdAt: 1_755_000_000_000 }, clock: () => now });
  for (const d of drafts) {
    now = d.time;
    appendDraft(s, d);
  }
  const header = { version: 0, id, createdAt: 1_755_000_000_000, cwd: repo, delegationDepth: 0 } as const;
  const path = logPath(join(home, 'sessions'), repo, id);
  mkdirSync(dirname(path), { recursive: true });
  if (pack) {
    const text = encodeJsonl(header, s.events, { pack });
    writeFileSync(path, text);
    return { id, path, bytes: Buffer.byteLength(text), events: s.length };
  }
  // One event per line: written a slice at a time, so a log over V8's 512 MB string limit can be
  // made (--turns 12000 is about 1 GB); the bytes are those of one whole encoding.
  const fd = openSync(path, 'w');
  let bytes = writeSync(fd, encodeHeaderLine(header));
  for (let i = 0; i < s.length; i += 100_000) bytes += writeSync(fd, encodeEvents(s.events.slice(i, i + 100_000), { pack: false }));
  closeSync(fd);
  return { id, path, bytes, events: s.length };
}

async function resume(provider: Provider): Promise<void> {
  const turns = TURNS;
  console.log(`\nresume and log commands on the bench workload (${turns} turns)`);
  const home = tempDir('dsh-bench-home-');
  const repo = gitRepo();
  try {
    const forms = FORMS;
    for (const pack of forms) {
      const w = storeWorkload(home, repo, turns, pack);
      const label = `${pack ? 'packed' : 'one-event-per-line'} log (${(w.bytes / 1e6).toFixed(1)} MB, ${w.events} events)`;
      // Each resume appends a turn; a fresh copy per run keeps the log the same size for every run.
      const parseProbe = join(here, 'parse-child.js');
      const builds: [string, string][] = [['', DSH]];
      if (BEFORE !== undefined) builds.push([' (before)', BEFORE]);
      // The plain load: a process that imports the session layer alone and streams the log
      // through loadJsonlFile, as every command's load does (bench/rss-child.ts, stream mode).
      const loadProbe = join(here, 'rss-child.js');
      const cases: Record<string, () => Promise<Run>> = {
        base: () => runNode(['-e', '0'], {}, repo),
        parse: () => runNode([parseProbe, w.path], {}, repo),
      };
      if (want('logs')) cases.load = () => runNode([loadProbe, 'stream', w.path], {}, repo);
      // The build before gets its own copy of the stored session: each build keeps its own resume
      // index beside the log, and an index of another format would send every resume of the other
      // build to a full load.
      const homeBefore = BEFORE === undefined ? undefined : tempDir('dsh-bench-home-before-');
      if (homeBefore !== undefined && want('resume')) {
        const copy = logPath(join(homeBefore, 'sessions'), repo, w.id);
        mkdirSync(dirname(copy), { recursive: true });
        copyFileSync(w.path, copy);
      }
      for (const [tag, bin] of builds) {
        const h = tag === '' ? home : homeBefore!;
        if (want('resume'))
          cases[`resume${tag}`] = () =>
            runNode([bin, 'run', '--cwd', repo, '--resume', w.id, 'say ok'], agentEnv(provider.url, h), repo, provider);
        if (want('logs')) {
          cases[`check${tag}`] = () => runNode([bin, 'log', 'check', w.path], { NO_COLOR: '1' }, repo);
          cases[`show${tag}`] = () => runNode([bin, 'log', 'show', w.path], { NO_COLOR: '1' }, repo);
        }
      }
      const r = await alternate(cases);
      const base = med(r.base!, (x) => x.ms);
      const parse = med(r.parse!, (x) => x.ms);
      const parseRss = med(r.parse!, (x) => x.rss);
      console.log(`  ${label}`);
      row(`  node -e 0 / read + JSON.parse of each line (baselines)`, `${ms(base)} / ${ms(parse)}, ${mb(parseRss)} peak`);
      const vsBefore = (name: string, tag: string, f: (x: Run) => number | undefined): string =>
        tag === '' && BEFORE !== undefined ? `, ${(med(r[name]!, f) / med(r[`${name} (before)`]!, f)).toFixed(2)}× before` : '';
      const cpuOf = (x: Run): number | undefined => x.cpu;
      const rssOf = (x: Run): number | undefined => x.rss;
      if (r.load) {
        row(
          `  plain load (loadJsonlFile in a process with the session layer only)`,
          `${ms(med(r.load, (x) => x.ms))}, CPU ${ms(med(r.load, cpuOf))}, peak ${mb(med(r.load, rssOf))}`,
        );
      }
      for (const [tag] of builds) {
        if (r[`resume${tag}`]) {
          const first = (x: Run): number | undefined => x.firstRequestMs;
          const res = med(r[`resume${tag}`]!, first);
          // Issue 13: 100 MB to the first request in under a second, 1 GB in under three.
          const target = w.bytes > 500e6 ? 3000 : 1000;
          row(
            `  dsh run --resume${tag}, ${label}: to the first request`,
            `${ms(res)}, CPU ${ms(med(r[`resume${tag}`]!, cpuOf))}, peak ${mb(med(r[`resume${tag}`]!, rssOf))}`,
            `${(res / parse).toFixed(2)}× JSON.parse, ${(res / base).toFixed(1)}× node -e 0${vsBefore('resume', tag, first)}`,
            `< ${target} ms`,
            res < target,
          );
        }
        if (!r.load) continue;
        const load = r.load;
        for (const cmd of ['check', 'show'] as const) {
          const runs = r[`${cmd}${tag}`]!;
          const v = med(runs, (x) => x.ms);
          const cpu = med(runs, cpuOf);
          const rss = med(runs, rssOf);
          const wall = v / med(load, (x) => x.ms);
          const cpuRatio = cpu / med(load, cpuOf);
          const rssRatio = rss / med(load, rssOf);
          row(
            `  dsh log ${cmd}${tag}, ${label}`,
            `${ms(v)}, CPU ${ms(cpu)}, peak ${mb(rss)}`,
            `${wall.toFixed(2)}× / CPU ${cpuRatio.toFixed(2)}× / RSS ${rssRatio.toFixed(2)}× the plain load; ` +
              `${(v / parse).toFixed(2)}× JSON.parse${vsBefore(cmd, tag, (x) => x.ms)}`,
            '≤ 1.2× load (CPU, RSS)',
            cpuRatio <= 1.2 && rssRatio <= 1.2,
          );
        }
      }
      rmSync(dirname(w.path), { recursive: true, force: true });
      if (homeBefore !== undefined) rmSync(homeBefore, { recursive: true, force: true });
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
    rmSync(repo, { recursive: true, force: true });
  }
}

/** A process holding session `id` of the store at `root` open (its lock taken) until released. */
function holdSession(root: string, id: string): { held: Promise<void>; release: () => void } {
  const store = new URL('../src/store/index.js', import.meta.url).href;
  const script =
    `const { SessionStore } = await import(${JSON.stringify(store)});` +
    `const s = new SessionStore({ root: ${JSON.stringify(root)} }); await s.open(${JSON.stringify(id)});` +
    `process.stdout.write('held\\n'); process.stdin.resume(); process.stdin.on('end', async () => { await s.close(); process.exit(0); });`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const held = new Promise<void>((res, rej) => {
    child.stdout.once('data', () => res());
    child.once('exit', (code) => rej(new Error(`the session holder exited (${code}) before it held ${id}`)));
  });
  return { held, release: () => child.stdin.end() };
}

async function listing(): Promise<void> {
  const counts = SESSIONS;
  console.log('\nlisting (dsh sessions --all)');
  for (const n of counts) {
    const home = tempDir('dsh-bench-home-');
    const root = join(home, 'sessions');
    const cwds = ['/work/a', '/work/b', '/work/c', '/work/d'];
    for (let i = 0; i < n; i++) {
      const id = `s-${String(i).padStart(6, '0')}`;
      const cwd = cwds[i % cwds.length]!;
      const path = logPath(root, cwd, id);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, tinySession(id, cwd, 1_755_000_000_000 + i * 1000));
    }
    const made = Date.now();
    const env = { DSH_HOME: home, NO_COLOR: '1' };
    const emptyHome = tempDir('dsh-bench-empty-');
    // The first listing builds the listing index (what a user sees once after an upgrade or on
    // a store the index has never seen); the alternated runs after it use it.
    const cold = await runNode([DSH, 'sessions', '--all'], env, home);
    // Past the 2 s in which a project directory's mtime may still move, listings settle the index
    // (the first re-reads the project directories, the next names its listing and keeps its text).
    await new Promise((r) => setTimeout(r, Math.max(0, made + 2100 - Date.now())));
    for (let i = 0; i < 3; i++) await runNode([DSH, 'sessions', '--all'], env, home);
    // Each case writes its own index or kept text: each gets its own copy of the store, so that
    // none invalidates another's between alternated runs (another build writes another index
    // version; a rescan writes a new snapshot; the long way is the listing with nowhere to keep text).
    const copy = (tag: string): string => {
      const h = tempDir(`dsh-bench-home-${tag}-`);
      cpSync(root, join(h, 'sessions'), { recursive: true });
      return h;
    };
    const longHome = copy('long');
    writeFileSync(join(longHome, 'cache'), 'not a directory: the listing cannot keep its text\n');
    const rescanHome = copy('rescan');
    const beforeHome = BEFORE !== undefined ? copy('before') : undefined;
    // A session held open by another process (a dsh chat running): its lines are printed afresh.
    const liveHome = copy('live');
    const holder = holdSession(join(liveHome, 'sessions'), `s-${String(n >> 1).padStart(6, '0')}`);
    await holder.held;
    const builds: [string, string, string][] = [['', DSH, home]];
    if (BEFORE !== undefined) builds.push([' (before)', BEFORE, beforeHome!]);
    // A copy's index names the original root: its first listing rebuilds it; settle those too.
    const copied = Date.now();
    for (const [, bin, h] of [...builds.slice(1), ['', DSH, longHome], ['', DSH, rescanHome], ['', DSH, liveHome]] as const)
      await runNode([bin, 'sessions', '--all'], { ...env, DSH_HOME: h }, h);
    await new Promise((r) => setTimeout(r, Math.max(0, copied + 2100 - Date.now())));
    for (let i = 0; i < 3; i++)
      for (const [, bin, h] of [...builds.slice(1), ['', DSH, longHome], ['', DSH, liveHome]] as const)
        await runNode([bin, 'sessions', '--all'], { ...env, DSH_HOME: h }, h);
    const cases: Record<string, () => Promise<Run>> = {
      base: () => runNode(['-e', '0'], {}, home),
      empty: () => runNode([DSH, 'sessions'], { DSH_HOME: emptyHome, NO_COLOR: '1' }, home),
      // The listing from the index, rendered: what every listing did before the kept text.
      long: () => runNode([DSH, 'sessions', '--all'], { ...env, DSH_HOME: longHome }, home),
      live: () => runNode([DSH, 'sessions', '--all'], { ...env, DSH_HOME: liveHome }, home),
      // The full fingerprint pass (every log stat-ed, through the listing cache) that rebuilds the index.
      rescan: () => runNode([DSH, 'sessions', '--all', '--rescan'], { ...env, DSH_HOME: rescanHome }, home),
    };
    for (const [tag, bin, h] of builds) cases[`list${tag}`] = () => runNode([bin, 'sessions', '--all'], { ...env, DSH_HOME: h }, h);
    const r = await alternate(cases).finally(() => holder.release());
    const base = med(r.base!, (x) => x.ms);
    const baseCpu = med(r.base!, (x) => x.cpu);
    const empty = med(r.empty!, (x) => x.ms);
    row(`dsh sessions --all, ${n} sessions, first listing (builds the index)`, `${ms(cold.ms)}, CPU ${ms(cold.cpu ?? NaN)}`);
    row(`  dsh sessions, nothing stored (same run)`, `${ms(empty)}, CPU ${ms(med(r.empty!, (x) => x.cpu))}`);
    for (const [tag] of builds) {
      const v = med(r[`list${tag}`]!, (x) => x.ms);
      const cpu = med(r[`list${tag}`]!, (x) => x.cpu);
      const before = r['list (before)'];
      const vs =
        tag === '' && before !== undefined
          ? `, ${(v / med(before, (x) => x.ms)).toFixed(2)}× before (CPU ${(cpu / med(before, (x) => x.cpu)).toFixed(2)}×)`
          : '';
      row(
        `dsh sessions --all${tag}, ${n} sessions`,
        `${ms(v)} (${ms(v - base)} above node -e 0 at ${ms(base)}, ${ms(v - empty)} above nothing stored), CPU ${ms(cpu)}` +
          ` (node -e 0: ${ms(baseCpu)})`,
        `${(v / base).toFixed(2)}× node -e 0${vs}`,
        n >= 10000 ? '< 200 ms' : '',
        n >= 10000 ? v < 200 : undefined,
      );
    }
    const live = med(r.live!, (x) => x.ms);
    row(
      `dsh sessions --all, ${n} sessions, one held open by another process`,
      `${ms(live)} (${ms(live - empty)} above nothing stored), CPU ${ms(med(r.live!, (x) => x.cpu))}`,
      `${(live / base).toFixed(2)}× node -e 0`,
      n >= 10000 ? '< 200 ms' : '',
      n >= 10000 ? live < 200 : undefined,
    );
    const long = med(r.long!, (x) => x.ms);
    row(
      `dsh sessions --all, ${n} sessions, no kept text (read from the index and rendered)`,
      `${ms(long)} (${ms(long - empty)} above nothing stored), CPU ${ms(med(r.long!, (x) => x.cpu))}`,
      `${(long / base).toFixed(2)}× node -e 0, ${(med(r.list!, (x) => x.ms) / long).toFixed(2)}× for the kept text`,
    );
    const rescan = med(r.rescan!, (x) => x.ms);
    row(
      `dsh sessions --all --rescan, ${n} sessions`,
      `${ms(rescan)} (${ms(rescan - base)} above node -e 0), CPU ${ms(med(r.rescan!, (x) => x.cpu))}`,
      `${(rescan / base).toFixed(2)}× node -e 0, ${(rescan / med(r.list!, (x) => x.ms)).toFixed(2)}× the indexed listing`,
    );
    for (const h of [emptyHome, home, longHome, rescanHome, liveHome, beforeHome])
      if (h !== undefined) rmSync(h, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  console.log(
    `dsh CLI benchmark (${DSH}) — node ${process.version}, median of ${REPS} runs after a warm-up, alternating with the baselines`,
  );
  const check = spawnSync(process.execPath, [DSH, '--version'], { encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`bin/dsh.js does not run (npm run build first): ${check.stderr}`);
  const provider = await startProvider();
  try {
    if (want('startup')) await startup(provider);
    if (want('listing')) await listing();
    if (want('resume') || want('logs')) await resume(provider);
  } finally {
    provider.server.close();
  }
  console.log('\nsummary (CLI)');
  const w = (k: keyof Row): number => Math.max(k.length, ...rows.map((x) => x[k].length));
  const keys: (keyof Row)[] = ['metric', 'value', 'ratio', 'target', 'ok'];
  console.log(keys.map((k) => k.padEnd(w(k))).join('  '));
  for (const x of rows) console.log(keys.map((k) => x[k].padEnd(w(k))).join('  '));
}

await main();
