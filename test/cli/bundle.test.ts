/**
 * The bundled CLI (`npm run build` links dist/cli into dist/bundle with scripts/bundle.mjs) is what
 * `bin/dsh.js` runs after a full build, so it must behave as the module tree does: the same
 * output, files found beside the package (package.json, the viewer's page), native modules loaded
 * from node_modules. What each command loads from it is held by test/cli/lazy-load.test.ts, which
 * runs over both builds. This file also pins the shim's rule for choosing between the two.
 */
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync, copyFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { builtBundle, dsh } from './support/run.js';
import { examplePath } from './support/files.js';
import { tempDir } from './support/agent.js';
import { repoRoot } from '../support/shared.js';
import { SessionStore } from '../../src/store/index.js';

const bundle = (args: readonly string[], env: Record<string, string> = {}) => dsh(args, { bin: builtBundle().bin, env });

describe('the bundle behaves as the module tree', () => {
  it('prints the package version (package.json found two directories up, as from dist/cli)', async () => {
    const run = await bundle(['--version']);
    expect(run.code, run.stderr).toBe(0);
    const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    expect(run.stdout.trim()).toBe(version);
  });

  it('shows, checks and projects a log byte for byte as the module tree, and fails a bad one the same way', async () => {
    const bad = join(tempDir('dsh-bundle-'), 'bad.jsonl');
    writeFileSync(bad, `${readFileSync(examplePath, 'utf8').split('\n')[0]}\n{"seq": "x"}\n`);
    for (const args of [
      ['log', 'show', '--full', examplePath],
      ['log', 'check', examplePath],
      ['log', 'messages', examplePath],
      ['log', 'stats', examplePath],
      ['log', 'check', bad],
      ['log', 'show', join(repoRoot, 'no-such-file.jsonl')],
    ]) {
      const [a, b] = await Promise.all([bundle(args), dsh(args)]);
      expect(a.code, args.join(' ')).toBe(b.code);
      expect(a.stdout, args.join(' ')).toBe(b.stdout);
      expect(a.stderr, args.join(' ')).toBe(b.stderr);
    }
  });

  it('searches stored sessions (better-sqlite3 stays a native module outside the bundle)', async () => {
    const home = tempDir('dsh-bundle-');
    const store = new SessionStore({ root: join(home, 'sessions') });
    const stored = await store.create({ cwd: repoRoot });
    stored.session.append('turn/start', { turn: 1 });
    stored.session.append(
      'user/message',
      { id: 'u1', role: 'user', content: [{ type: 'text', text: 'the quince preserve' }], source: { kind: 'user' } },
      { surfaceOp: 'append' },
    );
    await store.close();
    const run = await bundle(['sessions', 'search', 'quince', '--json'], { DSH_HOME: home });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(stored.session.id);
  });

  let stop: (() => void) | undefined;
  afterEach(() => stop?.());

  it('serves the viewer page and its scripts (found beside the package, src/viewer/page)', async () => {
    const child = spawn(process.execPath, [builtBundle().bin, 'view', examplePath], { stdio: ['ignore', 'pipe', 'pipe'] });
    stop = () => child.kill('SIGKILL');
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /http:\/\/127\.0\.0\.1:\d+\/\S+\//.exec(out);
        if (m) resolve(m[0]);
      });
      child.on('exit', (code) => reject(new Error(`dsh view exited ${code}: ${out}`)));
    });
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<script type="module" src="app.js">');
    const app = await fetch(new URL('app.js', url));
    expect(app.status).toBe(200);
    expect(await app.text()).toBe(readFileSync(join(repoRoot, 'src', 'viewer', 'page', 'app.js'), 'utf8'));
  });
});

describe('what every command loads from the bundle', () => {
  it('is one chunk for all the entry imports: dsh --version reads the entry, that chunk and the shared helpers, no more', async () => {
    const trace = join(tempDir('dsh-bundle-'), 'modules.txt');
    const preload = pathToFileURL(join(repoRoot, 'test', 'cli', 'support', 'trace-modules.mjs')).href;
    const run = await bundle(['--version'], { NODE_OPTIONS: `--import=${preload}`, DSH_TRACE_MODULES: trace });
    expect(run.code, run.stderr).toBe(0);
    // (The bundle's directory as the trace names it: the real path, which can differ from bin's.)
    const files = readFileSync(trace, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('file:') && basename(dirname(dirname(fileURLToPath(l)))) === 'dist' && l.includes('/dist/bundle/'))
      .map((l) => basename(fileURLToPath(l)));
    expect(files).toContain('main.js');
    // Each ES module costs ~0.5 ms to load however small: esbuild alone made the entry's imports
    // ~20 chunks (bench/README.md, session 13).
    expect(files.length, files.join(' ')).toBeLessThanOrEqual(3);
    const inputs = builtBundle().inputs;
    const holder = (module: string) => files.find((f) => (inputs.get(f) ?? []).some((i) => i.endsWith(module)));
    const core = holder('/dist/cli/commands.js');
    expect(core).toBeDefined();
    for (const m of ['/dist/cli/output.js', '/dist/cli/text.js', '/commander/lib/command.js']) expect(holder(m), m).toBe(core);
    // The log codec is not among them: the modules every command loads name session modules
    // directly, not through the layer's index, which links all of it (~165 KB of source to compile).
    for (const m of ['/dist/session/session.js', '/dist/session/codec/load.js', '/dist/session/validate.js'])
      expect(holder(m), m).toBeUndefined();
  });
});

/** Run scripts/bundle.mjs on `<dir>/dist` into `<dir>/out` (no source maps). */
function bundleDist(dir: string): { out: string; r: SpawnSyncReturns<string> } {
  const out = join(dir, 'out');
  const args = [join(repoRoot, 'scripts', 'bundle.mjs'), '--dist', join(dir, 'dist'), '--out', out, '--no-sourcemap'];
  return { out, r: spawnSync(process.execPath, args, { cwd: repoRoot, encoding: 'utf8' }) };
}

describe("scripts/bundle.mjs: commander's require of child_process, made lazy", () => {
  /**
   * A dist/ whose entry imports a stand-in commander (found first, beside it) of one file `file`
   * holding `source`, bundled by the real script. Its status and stderr, and the bundle's text.
   */
  function bundleWith(file: string, source: string): { status: number | null; stderr: string; text: string } {
    const dir = tempDir('dsh-bundle-commander-');
    const pkgDir = join(dir, 'node_modules', 'commander');
    mkdirSync(join(pkgDir, 'lib'), { recursive: true });
    writeFileSync(join(pkgDir, 'package.json'), JSON.stringify({ name: 'commander', main: file }));
    writeFileSync(join(pkgDir, file), source);
    mkdirSync(join(dir, 'dist', 'cli'), { recursive: true });
    writeFileSync(join(dir, 'dist', 'cli', 'main.js'), "import { Command } from 'commander';\nexport const main = () => new Command();\n");
    const { out, r } = bundleDist(dir);
    const text = existsSync(out)
      ? readdirSync(out)
          .filter((f) => f.endsWith('.js'))
          .map((f) => readFileSync(join(out, f), 'utf8'))
          .join('\n')
      : '';
    return { status: r.status, stderr: r.stderr, text };
  }
  const eager =
    "const childProcess = require('node:child_process');\nexports.Command = class { spawn() { return childProcess.spawn; } };\n";

  it('rewrites the eager require in lib/command.js into one made on first use', () => {
    const r = bundleWith('lib/command.js', eager);
    expect(r.status, r.stderr).toBe(0);
    expect(r.text).toContain('spawn: (...a) => __require("node:child_process").spawn(...a)');
    expect(r.text).not.toMatch(/childProcess = __require\("node:child_process"\)/);
  });

  it('fails the build when lib/command.js words the require otherwise', () => {
    const r = bundleWith('lib/command.js', eager.replace("'node:child_process'", "'child_process'"));
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("expected the line const childProcess = require('node:child_process'); once");
  });

  it('fails the build when commander is bundled without lib/command.js (a moved or renamed file)', () => {
    // Without the check the rewrite never runs and the bundle loads child_process eagerly again.
    const r = bundleWith('lib/command.cjs', eager);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('commander is bundled without lib/command.js');
  });
});

describe('scripts/bundle.mjs: every linked file is ASCII', () => {
  /** `source` as dist/cli/main.js, bundled by the real script: its stderr, the output files' text, and `main()`. */
  async function bundleMain(source: string): Promise<{ stderr: string; texts: string[]; main: string }> {
    const dir = tempDir('dsh-bundle-ascii-');
    mkdirSync(join(dir, 'dist', 'cli'), { recursive: true });
    writeFileSync(join(dir, 'dist', 'cli', 'main.js'), source);
    const { out, r } = bundleDist(dir);
    expect(r.status, r.stderr).toBe(0);
    const texts = readdirSync(out)
      .filter((n) => n.endsWith('.js'))
      .map((f) => readFileSync(join(out, f), 'utf8'));
    const linked = (await import(pathToFileURL(join(out, 'main.js')).href)) as { main: () => string };
    return { stderr: r.stderr, texts, main: linked.main() };
  }

  it('escapes what tsc left in comments, and the code means what it meant', async () => {
    // A non-ASCII character anywhere in a file makes Node decode the whole file into a two-byte string.
    const b = await bundleMain(
      '/** A comment with an arrow →, a dash – and an ellipsis …. */\n' +
        "export const main = () => JSON.stringify(['arrow → ellipsis …', `t→${1}`, '😀'.length, { é: 1 }.é]);\n",
    );
    for (const text of b.texts) expect(text).not.toMatch(/[^\x00-\x7f]/);
    expect(b.main).toBe(JSON.stringify(['arrow \u2192 ellipsis \u2026', 't\u21921', 2, 1]));
  });

  it('leaves a file whose characters esbuild kept outside a comment: a tagged template, a regular expression', async () => {
    // esbuild keeps these as written (an escape would change a template's `.raw`, a regular
    // expression's `.source`, and after a backslash what either means), so neither may be escaped.
    const b = await bundleMain(
      '// a comment →\n' +
        'export const main = () => JSON.stringify([' +
        "String.raw`a→b`, ((s) => s[0])`\\é`, /😀/u.source, /\\é/.test('é'), /é+/.test('éé'), 'é']);\n",
    );
    expect(JSON.parse(b.main)).toEqual(['a\u2192b', '\u00e9', '\ud83d\ude00', true, true, '\u00e9']);
    expect(b.stderr).toContain('main.js');
  });
});

describe('bin/dsh.js: which build it runs', () => {
  /** A package directory with the real shim and stand-in builds that say which one ran. */
  function pkg(builds: { plain?: number; bundle?: number }): string {
    const dir = tempDir('dsh-shim-');
    mkdirSync(join(dir, 'bin'));
    copyFileSync(join(repoRoot, 'bin', 'dsh.js'), join(dir, 'bin', 'dsh.js'));
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n');
    for (const [name, at] of Object.entries(builds)) {
      const file = join(dir, 'dist', name === 'plain' ? 'cli' : 'bundle', 'main.js');
      mkdirSync(join(file, '..'), { recursive: true });
      writeFileSync(file, `export async function main() { process.stdout.write(${JSON.stringify(name)}); return 0; }\n`);
      utimesSync(file, at, at);
    }
    return join(dir, 'bin', 'dsh.js');
  }
  const t = 1_700_000_000;

  it('runs the bundle when it is as new as dist/cli or newer, dist/cli when tsc rebuilt it since', async () => {
    expect((await dsh([], { bin: pkg({ plain: t, bundle: t + 5 }) })).stdout).toBe('bundle');
    expect((await dsh([], { bin: pkg({ plain: t, bundle: t }) })).stdout).toBe('bundle');
    expect((await dsh([], { bin: pkg({ plain: t + 5, bundle: t }) })).stdout).toBe('plain');
  });

  it('runs whichever build exists alone, and says what to do when neither does', async () => {
    expect((await dsh([], { bin: pkg({ bundle: t }) })).stdout).toBe('bundle');
    expect((await dsh([], { bin: pkg({ plain: t }) })).stdout).toBe('plain');
    const none = await dsh([], { bin: pkg({}) });
    expect(none.code).toBe(1);
    expect(none.stderr).toBe('dsh: the CLI is not built (dist/cli/main.js is missing): run npm run build\n');
  });
});
