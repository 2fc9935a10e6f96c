/**
 * Start-up cost is module loading, so what each command loads is pinned here: the real binary
 * runs with a preload that records every module it loads (ES modules through a loader hook,
 * CommonJS from the require cache), and the record must hold none of the heavy modules the
 * command does not use. A later change that imports one of them on these paths (a static import
 * of an SDK, a config schema, the viewer) fails here. Timings are `npm run bench`'s (startup).
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { builtBundle, dsh, type Run } from './support/run.js';
import { agentEnv, call, gitRepo, tempDir, text } from './support/agent.js';
import { examplePath } from './support/files.js';
import { SessionStore } from '../../src/store/index.js';
import { repoRoot } from '../support/shared.js';
import { describePg, freshSchema, pgUrl } from '../postgres/support/pg.js';

const preload = pathToFileURL(fileURLToPath(new URL('./support/trace-modules.mjs', import.meta.url))).href;

/** Heavy dependencies by package, and our own layers that only some commands need. */
const HEAVY: Record<string, RegExp> = {
  'OpenAI SDK': /\/node_modules\/openai\//,
  'Anthropic SDK': /\/node_modules\/@anthropic-ai\//,
  OpenTelemetry: /\/node_modules\/@opentelemetry\//,
  'MCP SDK': /\/node_modules\/@modelcontextprotocol\//,
  zod: /\/node_modules\/zod(-to-json-schema)?\//,
  pg: /\/node_modules\/pg(-[a-z]+)?\//,
  'better-sqlite3': /\/node_modules\/better-sqlite3\//,
  'ACP SDK': /\/node_modules\/@agentclientprotocol\//,
  'the viewer': /\/dist\/viewer\//,
  'the OTLP export': /\/dist\/observability\//,
  // The query layer's work, not its leaf modules (the alert kinds for parsing --alerts, QueryError,
  // who writes a log), which the CLI's option parsing and dsh log check use.
  'the query layer': /\/dist\/query\/(index|input|turn|call|provenance|stats|dist|fleet)\.js/,
  'the search layer': /\/dist\/search\//,
  'the PostgreSQL store': /\/dist\/postgres\//,
  'dsh serve': /\/dist\/serve\//,
  'dsh worker': /\/dist\/worker\//,
};
/** The built-in tools (and the shell and filesystem seams they run on): only an agent loads them. */
const BUILTIN_TOOLS = /\/dist\/tools\/(builtin|shell|fs)\/|\/dist\/tools\/coding-tools\.js$/;
const NOT_FOR_ANY_RUN = [
  'Anthropic SDK',
  'OpenTelemetry',
  'MCP SDK',
  'zod',
  'pg',
  'ACP SDK',
  'the viewer',
  'the OTLP export',
  'the query layer',
  'the PostgreSQL store',
  'dsh serve',
  'dsh worker',
];

/** The heavy modules a trace holds, by name, with the first URL that matched. */
function heavyIn(trace: readonly string[], names: readonly string[] = Object.keys(HEAVY)): Record<string, string> {
  const found: Record<string, string> = {};
  for (const name of names) {
    const hit = trace.find((url) => HEAVY[name]!.test(url));
    if (hit !== undefined) found[name] = hit;
  }
  return found;
}

const traces: string[] = [];
afterEach(() => {
  for (const t of traces.splice(0)) rmSync(t, { force: true });
});

/**
 * Which build runs: the module tree tsc emits (`dist/cli/main.js`), or `npm run build`'s bundle
 * (what `bin/dsh.js` runs after a full build). A bundle's chunk is read as the modules linked into
 * it (esbuild's metafile), so one trace checks both: a module the bundle puts in a chunk that a
 * command loads counts as loaded, as it is.
 */
type Build = 'modules' | 'bundle';
let build: Build = 'modules';

function asModules(urls: readonly string[]): string[] {
  if (build === 'modules') return [...urls];
  const { inputs } = builtBundle();
  return urls.flatMap((url) => {
    const linked = url.startsWith('file:') ? inputs.get(basename(fileURLToPath(url))) : undefined;
    return linked ? linked.map((f) => pathToFileURL(f).href) : [url];
  });
}

async function traced(args: readonly string[], env: Record<string, string> = {}, cwd?: string): Promise<{ run: Run; modules: string[] }> {
  const file = join(tempDir('dsh-lazy-'), 'modules.txt');
  traces.push(file);
  const run = await dsh(args, {
    env: { ...env, NODE_OPTIONS: `--import=${preload}`, DSH_TRACE_MODULES: file },
    ...(cwd !== undefined ? { cwd } : {}),
    ...(build === 'bundle' ? { bin: builtBundle().bin } : {}),
  });
  const modules = asModules(
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l !== ''),
  );
  return { run, modules };
}

describe('the checker', () => {
  it('finds each heavy module in a synthetic trace, and nothing in a light one', () => {
    const light = [
      pathToFileURL(join(repoRoot, 'dist/cli/main.js')).href,
      'node:fs',
      pathToFileURL(join(repoRoot, 'node_modules/commander/index.js')).href,
      pathToFileURL(join(repoRoot, 'dist/query/alerts.js')).href,
    ];
    expect(heavyIn(light)).toEqual({});
    const heavy = [
      'file:///x/node_modules/openai/index.mjs',
      'file:///x/node_modules/@anthropic-ai/sdk/index.mjs',
      'file:///x/node_modules/@opentelemetry/api/build/src/index.js',
      'file:///x/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js',
      'file:///x/node_modules/zod/v4/classic/external.js',
      'file:///x/node_modules/pg/lib/index.js',
      'file:///x/node_modules/better-sqlite3/lib/index.js',
      'file:///x/node_modules/@agentclientprotocol/sdk/dist/acp.js',
      'file:///x/dist/viewer/server.js',
      'file:///x/dist/observability/export.js',
      'file:///x/dist/query/stats.js',
      'file:///x/dist/search/index-db.js',
      'file:///x/dist/postgres/store.js',
      'file:///x/dist/serve/server.js',
      'file:///x/dist/worker/worker.js',
    ];
    expect(Object.keys(heavyIn(heavy)).sort()).toEqual(Object.keys(HEAVY).sort());
  });
});

describe.each<Build>(['modules', 'bundle'])('what each command loads (%s)', (which) => {
  beforeAll(() => {
    build = which;
  });
  let provider: FakeProvider | undefined;
  afterEach(async () => {
    await provider?.close();
    provider = undefined;
  });

  it('the trace sees the process: the CLI entry and commander', async () => {
    const { run, modules } = await traced(['--version']);
    expect(run.code, run.stderr).toBe(0);
    expect(modules.filter((m) => BUILTIN_TOOLS.test(m))).toEqual([]);
    expect(modules.some((m) => m.endsWith('/dist/cli/main.js'))).toBe(true);
    expect(modules.some((m) => m.includes('/node_modules/commander/'))).toBe(true);
  });

  it('dsh sessions, with nothing stored and with a session: no heavy module', async () => {
    const home = tempDir();
    const empty = await traced(['sessions', '--all'], { DSH_HOME: home });
    expect(empty.run.code, empty.run.stderr).toBe(0);
    expect(heavyIn(empty.modules)).toEqual({});
    const store = new SessionStore({ root: join(home, 'sessions') });
    const stored = await store.create({ cwd: repoRoot });
    stored.session.append('turn/start', { turn: 1 });
    await store.close();
    const listed = await traced(['sessions'], { DSH_HOME: home }, repoRoot);
    expect(listed.run.code, listed.run.stderr).toBe(0);
    expect(listed.run.stdout).toContain(stored.session.id);
    expect(heavyIn(listed.modules)).toEqual({});
    // Listing names sessions; it reads no log: not the log reader, nor the other agents' importers.
    const reader = /\/dist\/(cli\/read-log|import\/index|cli\/log\/show)\.js$/;
    for (const t of [empty, listed, await traced(['--version'])]) expect(t.modules.filter((m) => reader.test(m))).toEqual([]);
    // With nothing stored, and printing the text kept from the listing before, not even the store
    // or the log codec: the listing index's own modules answer (src/cli/sessions.ts).
    const store_ = /\/dist\/(store\/(store|load|writer|index)|session\/(session|index)|session\/codec\/load)\.js$/;
    expect(listed.modules.filter((m) => store_.test(m)).length).toBeGreaterThan(0);
    // A listing keeps its text once the project directory is 2 s old (docs/store.md).
    await sleep(2100);
    const keptFile = join(home, 'cache', 'sessions.txt');
    for (let i = 0; i < 3 && !existsSync(keptFile); i++) await traced(['sessions'], { DSH_HOME: home }, repoRoot);
    const kept = await traced(['sessions'], { DSH_HOME: home }, repoRoot);
    expect(kept.run.code, kept.run.stderr).toBe(0);
    expect(kept.run.stdout).toBe(listed.run.stdout);
    expect(empty.run.stderr).toBe(`no sessions under ${join(home, 'sessions')}\n`);
    for (const [name, t] of [
      ['kept', kept],
      ['nothing stored', empty],
    ] as const)
      expect(
        t.modules.filter((m) => store_.test(m)),
        name,
      ).toEqual([]);
  });

  it('dsh log check, show and messages of a small file: no heavy module (show and messages: not the store)', async () => {
    const file = examplePath;
    for (const cmd of ['check', 'show', 'messages']) {
      const { run, modules } = await traced(['log', cmd, file]);
      expect(run.code, `${cmd}: ${run.stderr}`).toBe(0);
      expect(heavyIn(modules), cmd).toEqual({});
      // The option parsing offers the agent presets' names, not the tools behind them.
      expect(
        modules.filter((m) => BUILTIN_TOOLS.test(m)),
        cmd,
      ).toEqual([]);
      // A path names a file: the store loads only for a session id (check asks the lock beside
      // the log who writes it, through the lock's own module, not the store's index); the config
      // only for check's prices.
      expect(
        modules.filter((m) => /\/dist\/store\/(index|store|load|discover|listing-index)\.js$/.test(m)),
        cmd,
      ).toEqual([]);
      if (cmd !== 'check')
        expect(
          modules.filter((m) => /\/dist\/config\/config\.js$/.test(m)),
          cmd,
        ).toEqual([]);
      // A dsh log is read without other agents' formats (src/import/first-line.ts decides).
      expect(
        modules.filter((m) => /\/dist\/import\/(index|read|builder|detect|claude-code|codex|openhands|pi|swe-agent)\.js$/.test(m)),
        cmd,
      ).toEqual([]);
    }
  });

  it("dsh --version, sessions with nothing stored, log check and show: not Node's crypto, nor (bundled) its child processes", async () => {
    // Each loads ~20-30 of Node's own modules (~5 ms of a start, bench/README.md). The light
    // commands hash nothing and spawn nothing: crypto loads on first use (src/model/node-crypto.ts);
    // commander's eager require of child_process is made lazy by the bundle (scripts/bundle.mjs),
    // so the module tree, which runs commander as published, still loads it.
    const home = tempDir();
    for (const args of [['--version'], ['sessions', '--all'], ['log', 'check', examplePath], ['log', 'show', examplePath]]) {
      const { run, modules } = await traced(args, { DSH_HOME: home });
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
      expect(modules, args.join(' ')).toContain('node:fs');
      expect(modules, args.join(' ')).not.toContain('node:crypto');
      if (build === 'bundle') expect(modules, args.join(' ')).not.toContain('node:child_process');
    }
  });

  it('dsh run on DeepSeek, no config file: the OpenAI SDK, then the search index after a step; a tool call loads zod', async () => {
    const repo = gitRepo();
    const home = tempDir();
    provider = await startFakeProvider({ script: [text(['hi']), text(['hi'])] });
    const answer = await traced(['run', '--cwd', repo, 'say hi'], agentEnv(provider.url, home), repo);
    expect(answer.run.code, answer.run.stderr).toBe(0);
    // The search index follows the log once a step has ended (src/cli/agent/search-index.ts):
    // better-sqlite3 and the search layer load then, after the model answered, never at start.
    expect(Object.keys(heavyIn(answer.modules))).toEqual(['OpenAI SDK', 'better-sqlite3', 'the search layer']);
    expect(heavyIn(answer.modules, NOT_FOR_ANY_RUN)).toEqual({});
    const sdkAt = answer.modules.findIndex((m) => HEAVY['OpenAI SDK']!.test(m));
    const searchAt = answer.modules.findIndex((m) => HEAVY['the search layer']!.test(m));
    expect(searchAt).toBeGreaterThan(sdkAt);
    const inMemory = await traced(['run', '--no-persist', '--cwd', repo, 'say hi'], agentEnv(provider.url, home), repo);
    expect(inMemory.run.code, inMemory.run.stderr).toBe(0);
    expect(Object.keys(heavyIn(inMemory.modules))).toEqual(['OpenAI SDK']);

    await provider.close();
    provider = await startFakeProvider({ script: [call('c1', 'read', { file_path: 'README.md' }), text(['done'])] });
    const tool = await traced(['run', '--cwd', repo, 'read the readme'], agentEnv(provider.url, home), repo);
    expect(tool.run.code, tool.run.stderr).toBe(0);
    expect(Object.keys(heavyIn(tool.modules)).sort()).toEqual(['OpenAI SDK', 'better-sqlite3', 'the search layer', 'zod']);
  });

  it('dsh log stats and log turn of a small file: the query layer, nothing else heavy', async () => {
    for (const args of [
      ['log', 'stats', examplePath],
      ['log', 'turn', examplePath, '1'],
    ]) {
      const { run, modules } = await traced(args);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
      expect(Object.keys(heavyIn(modules)), args.join(' ')).toEqual(['the query layer']);
    }
  });

  it('dsh sessions search: better-sqlite3 and the search layer, nothing else heavy', async () => {
    const home = tempDir();
    const store = new SessionStore({ root: join(home, 'sessions') });
    const stored = await store.create({ cwd: repoRoot });
    stored.session.append('turn/start', { turn: 1 });
    stored.session.append(
      'user/message',
      { id: 'u1', role: 'user', content: [{ type: 'text', text: 'find the marmalade' }], source: { kind: 'user' } },
      { surfaceOp: 'append' },
    );
    await store.close();
    const { run, modules } = await traced(['sessions', 'search', 'marmalade', '--json'], { DSH_HOME: home }, repoRoot);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(stored.session.id);
    expect(Object.keys(heavyIn(modules)).sort()).toEqual(['better-sqlite3', 'the search layer']);
  });
});

for (const which of ['modules', 'bundle'] as const)
  describePg(`what a command loads on the PostgreSQL store (${which})`, () => {
    beforeAll(() => {
      build = which;
    });
    it('dsh sessions with DSH_STORE=postgres://… loads pg and the PostgreSQL store, nothing else heavy; without it, neither', async () => {
      const home = tempDir();
      const env = { DSH_HOME: home, DSH_STORE: pgUrl!, DSH_STORE_SCHEMA: freshSchema('lazy') };
      const pgRun = await traced(['sessions', '--all'], env);
      expect(pgRun.run.code, pgRun.run.stderr).toBe(0);
      expect(Object.keys(heavyIn(pgRun.modules)).sort()).toEqual(['pg', 'the PostgreSQL store']);
      const files = await traced(['sessions', '--all'], { DSH_HOME: home });
      expect(files.run.code, files.run.stderr).toBe(0);
      expect(heavyIn(files.modules)).toEqual({});
    });
  });
