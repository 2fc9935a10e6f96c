// Links the built CLI (dist/cli/main.js and everything it imports, our modules and the pure-JS
// dependencies) into a few files under dist/bundle/, which bin/dsh.js runs when it is at least as
// new as dist/cli/main.js.
//
// Why: start-up is module loading. Unbundled, `dsh run` loads ~320 files (117 of them the OpenAI
// SDK's), and resolving, opening and compiling them one by one costs more than the compiling
// itself. Linked, a command loads its entry chunk and the chunks of what it uses: each dynamic
// `import()` stays a chunk of its own (esbuild's code splitting), so a command still loads only
// what it uses (test/cli/bundle.test.ts holds that). The library (`dist/index.js`) stays unbundled.
//
// Native modules stay outside: better-sqlite3 (loaded through createRequire, so never seen here)
// and koffi (pi-tui's optional terminal helper); pg's optional pg-native is not installed.
// The bundle sits two directories under the package root, as dist/cli/main.js does, so every
// `new URL('../../…', import.meta.url)` (package.json, the viewer's page) resolves the same.
//
//   node scripts/bundle.mjs                              dist/cli → dist/bundle
//   node scripts/bundle.mjs --dist D --out O --metafile M  (the tests: D/cli → O, inputs per output in M)
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, transform } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Native or optional packages left to Node's own resolution at run time. */
export const EXTERNAL = ['better-sqlite3', 'koffi', 'pg-native'];

/**
 * commander requires `node:child_process` as it loads, for the one thing dsh never does (running a
 * subcommand as its own executable), and that require loads ~20 of Node's modules (net, dgram,
 * streams: ~5 ms of every start). Here it becomes a require on first use. The line is matched
 * exactly, so a commander that words it otherwise fails the build rather than loading it eagerly
 * again unnoticed; so does one that moves it out of lib/command.js (bundleCli checks).
 */
const COMMANDER_CHILD_PROCESS = "const childProcess = require('node:child_process');";
const COMMANDER_COMMAND = /[\\/]node_modules[\\/]commander[\\/]lib[\\/]command\.js$/;
const lazyChildProcess = {
  name: 'lazy-child-process',
  setup(b) {
    b.onLoad({ filter: COMMANDER_COMMAND }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      if (source.split(COMMANDER_CHILD_PROCESS).length !== 2)
        throw new Error(`${args.path}: expected the line ${COMMANDER_CHILD_PROCESS} once (scripts/bundle.mjs makes it lazy)`);
      const lazy = "const childProcess = { spawn: (...a) => require('node:child_process').spawn(...a) };";
      return { contents: source.replace(COMMANDER_CHILD_PROCESS, lazy), loader: 'js' };
    });
  },
};

/**
 * Make every linked file pure ASCII. esbuild escapes non-ASCII characters in strings, templates,
 * regular expressions and names, but keeps the comments tsc left as they were (an arrow, a dash,
 * an ellipsis). One such character makes Node decode the whole file into a two-byte string, and
 * V8 scan it as one: ~9 ms of decoding alone in `dsh run`'s start (bench/README.md). Each character
 * left becomes its `\uXXXX` escape, which means the same character in a comment, a string or a name.
 *
 * Not everywhere: esbuild also keeps a tagged template's text (String.raw`→`: its `.raw` is the
 * text as written) and a `u` or `v` regular expression (its `.source`) as they are, because an
 * escape there changes what the code computes. So a file is escaped only when its code, comments
 * left out, is ASCII as esbuild prints it; a file that is not is left whole, and named on stderr
 * (it still works, only its start-up decoding is slower).
 */
async function asciiOnly(dir) {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.js'))
    .map((f) => ({ file: join(dir, f), text: readFileSync(join(dir, f), 'utf8') }))
    .filter(({ text }) => NON_ASCII.test(text));
  await Promise.all(
    files.map(async ({ file, text }) => {
      // Whitespace minification drops every comment (legal ones too, with legalComments 'none').
      const code = await transform(text, { loader: 'js', format: 'esm', target: 'node20', minifyWhitespace: true, legalComments: 'none' });
      if (NON_ASCII.test(code.code)) {
        process.stderr.write(`bundle: ${file} keeps its non-ASCII characters: some are in code where an escape would change its meaning\n`);
        return;
      }
      writeFileSync(
        file,
        text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
      );
    }),
  );
}
const NON_ASCII = /[^\x00-\x7f]/;

/**
 * Bundle `<distDir>/cli/main.js` into `out` (replaced whole: built beside it, then renamed into
 * place, so a failed build leaves the previous bundle). Returns esbuild's metafile: which inputs
 * each output file holds.
 */
export async function bundleCli(distDir = join(root, 'dist'), out = join(distDir, 'bundle'), { sourcemap = true } = {}) {
  const entry = join(distDir, 'cli', 'main.js');
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run tsc -p tsconfig.build.json first`);
  const tmp = `${out}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const options = {
    entryPoints: { main: entry },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    absWorkingDir: root,
    outdir: tmp,
    chunkNames: 'chunk-[hash]',
    external: EXTERNAL,
    // CommonJS dependencies (commander, pg) call require(); an ES module has none of its own.
    banner: {
      js: "import { createRequire as __dshCreateRequire } from 'node:module'; const require = __dshCreateRequire(import.meta.url);",
    },
    // Linked source maps back to src/*.ts (through tsc's maps): `node --enable-source-maps` then
    // names our sources in stack traces.
    sourcemap: sourcemap ? 'linked' : false,
    sourcesContent: false,
    legalComments: 'eof',
    metafile: true,
    logLevel: 'warning',
  };
  // esbuild gives code shared by the entry and a dynamically imported module a chunk per set of
  // entries that reach it, not knowing that the entry is always loaded first: the entry's own
  // imports came out as ~20 small chunks that every command loads, and an ES module costs ~0.5 ms
  // to load however small (bench/README.md). Each dynamic import's target is made to import the
  // entry too (it runs after the entry anyway), so all the entry loads is reached from every entry
  // point alike and lands in one chunk; what each command loads beyond it is unchanged.
  const first = await build({ ...options, write: false });
  const targets = new Set();
  for (const input of Object.values(first.metafile.inputs))
    for (const i of input.imports) if (i.kind === 'dynamic-import' && !i.external) targets.add(resolve(root, i.path));
  const entryFirst = {
    name: 'entry-first',
    setup(b) {
      b.onLoad({ filter: /\.js$/ }, (args) => {
        if (!targets.has(args.path)) return undefined;
        // Appended, not prepended: an import is hoisted wherever it stands, and the lines of tsc's
        // source map stay where they were.
        return {
          contents: `${readFileSync(args.path, 'utf8')}\nimport ${JSON.stringify(entry)};\n`,
          loader: 'js',
          resolveDir: dirname(args.path),
        };
      });
    },
  };
  const result = await build({ ...options, plugins: [entryFirst, lazyChildProcess] });
  // The rewrite finds commander's file by its path: a commander that moved or renamed it would be
  // linked with its eager require again, and nothing would say so. Bundled commander must include it.
  const linked = Object.keys(result.metafile.inputs).map((i) => resolve(root, i));
  if (linked.some((i) => /[\\/]node_modules[\\/]commander[\\/]/.test(i)) && !linked.some((i) => COMMANDER_COMMAND.test(i))) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error('commander is bundled without lib/command.js, whose require of node:child_process scripts/bundle.mjs makes lazy');
  }
  await asciiOnly(tmp);
  // Swapped in by two renames, so a dsh starting meanwhile finds one whole bundle or (for an
  // instant) none and runs dist/cli instead.
  const previous = `${out}.old-${process.pid}`;
  if (existsSync(out)) renameSync(out, previous);
  renameSync(tmp, out);
  rmSync(previous, { recursive: true, force: true });
  return result.metafile;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    const { values } = parseArgs({
      options: { dist: { type: 'string' }, out: { type: 'string' }, metafile: { type: 'string' }, 'no-sourcemap': { type: 'boolean' } },
    });
    const dist = resolve(values.dist ?? join(root, 'dist'));
    const meta = await bundleCli(dist, resolve(values.out ?? join(dist, 'bundle')), { sourcemap: !values['no-sourcemap'] });
    if (values.metafile) writeFileSync(values.metafile, JSON.stringify(meta));
  } catch (e) {
    process.stderr.write(`bundle: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  }
}
