/**
 * Runs the real CLI as a child process (`node bin/dsh.js …`), built from the current sources.
 *
 * The build transpiles `src/cli/main.ts` and every module it reaches by relative import, file
 * by file (the project compiles with `isolatedModules` and `verbatimModuleSyntax`, so per-file
 * transpilation is exact), into a directory keyed by a hash of those sources, `bin/dsh.js` and
 * `package.json`: node_modules/.cache/dsh-cli-test/<hash>/{bin,dist}. Test files run in separate
 * processes; the first to need a build makes it in a private directory and renames it into
 * place, the rest reuse it. So the suite never runs a stale `dist/`, never writes the real one,
 * and edits elsewhere in src/ do not force a rebuild. Type errors are `npm run typecheck`'s job.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { repoRoot } from '../../support/shared.js';

const cacheRoot = join(repoRoot, 'node_modules', '.cache', 'dsh-cli-test');
const srcRoot = join(repoRoot, 'src');
const entry = join(srcRoot, 'cli', 'main.ts');

/** The sources reachable from the CLI entry by relative imports, in a stable order. */
function closure(): Map<string, string> {
  const files = new Map<string, string>();
  const visit = (file: string): void => {
    if (files.has(file)) return;
    const text = readFileSync(file, 'utf8');
    files.set(file, text);
    for (const ref of ts.preProcessFile(text, true, true).importedFiles) {
      if (!ref.fileName.startsWith('.')) continue;
      const target = resolve(dirname(file), ref.fileName.replace(/\.js$/, '.ts'));
      visit(existsSync(target) ? target : join(target.replace(/\.ts$/, ''), 'index.ts'));
    }
  };
  visit(entry);
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : 1)));
}

function compilerOptions(): ts.CompilerOptions {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(repoRoot, 'tsconfig.build.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (!parsed) throw new Error('cannot read tsconfig.build.json');
  // ESNext module output is what NodeNext emits for this ESM package ("type": "module").
  return {
    ...parsed.options,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    declaration: false,
    sourceMap: false,
    inlineSourceMap: false,
  };
}

function emit(files: Map<string, string>, outDir: string): void {
  const options = compilerOptions();
  for (const [file, text] of files) {
    const out = join(outDir, 'dist', relative(srcRoot, file)).replace(/\.ts$/, '.js');
    const result = ts.transpileModule(text, { compilerOptions: options, fileName: file, reportDiagnostics: true });
    const errors = (result.diagnostics ?? []).filter((d) => d.category === ts.DiagnosticCategory.Error);
    if (errors.length) throw new Error(`${relative(repoRoot, file)}: ${ts.flattenDiagnosticMessageText(errors[0]!.messageText, ' ')}`);
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, result.outputText);
  }
  mkdirSync(join(outDir, 'bin'), { recursive: true });
  copyFileSync(join(repoRoot, 'bin', 'dsh.js'), join(outDir, 'bin', 'dsh.js'));
  copyFileSync(join(repoRoot, 'package.json'), join(outDir, 'package.json'));
}

/** Builds of sources a day gone are dropped; a concurrent run uses a fresh one. */
function pruneOldBuilds(keep: string): void {
  const cutoff = Date.now() - 24 * 3600 * 1000;
  for (const name of readdirSync(cacheRoot)) {
    const p = join(cacheRoot, name);
    if (p !== keep && statSync(p).mtimeMs < cutoff) rmSync(p, { recursive: true, force: true });
  }
}

let built: string | undefined;

/** Path of a `bin/dsh.js` whose `../dist` is built from the current sources. */
export function builtBin(): string {
  if (built) return built;
  const files = closure();
  const h = createHash('sha256');
  for (const [file, text] of files) h.update(relative(repoRoot, file)).update('\0').update(text).update('\0');
  for (const f of ['bin/dsh.js', 'package.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts/bundle.mjs'])
    h.update(f)
      .update('\0')
      .update(readFileSync(join(repoRoot, f)))
      .update('\0');
  const dir = join(cacheRoot, h.digest('hex').slice(0, 16));
  if (!existsSync(join(dir, 'dist', 'cli', 'main.js'))) {
    const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
    emit(files, tmp);
    try {
      renameSync(tmp, dir);
    } catch {
      // Another test process won the race; its build is identical.
      rmSync(tmp, { recursive: true, force: true });
    }
    pruneOldBuilds(dir);
  }
  built = join(dir, 'bin', 'dsh.js');
  return built;
}

/** A bundled build (scripts/bundle.mjs) of the same sources: its bin, and which inputs each output file holds. */
export interface BundledBuild {
  bin: string;
  /** Output file name (e.g. `chunk-AB12.js`) → the absolute paths of the modules linked into it. */
  inputs: Map<string, string[]>;
}

let bundled: BundledBuild | undefined;

/**
 * `bin/dsh.js` over `npm run build`'s bundle of the current sources, as users run it: a directory
 * beside `builtBin()`'s with no dist/cli/, so the shim can only take the bundle. Made once per
 * source hash, like `builtBin()`, by the real script (`node scripts/bundle.mjs`).
 */
export function builtBundle(): BundledBuild {
  if (bundled) return bundled;
  const plain = dirname(dirname(builtBin()));
  const dir = `${plain}-bundle`;
  const meta = join(dir, 'meta.json');
  if (!existsSync(meta)) {
    const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
    mkdirSync(join(tmp, 'bin'), { recursive: true });
    copyFileSync(join(plain, 'bin', 'dsh.js'), join(tmp, 'bin', 'dsh.js'));
    copyFileSync(join(plain, 'package.json'), join(tmp, 'package.json'));
    // The package ships the viewer's page as src/viewer/page (package.json "files").
    mkdirSync(join(tmp, 'src', 'viewer'), { recursive: true });
    symlinkSync(join(srcRoot, 'viewer', 'page'), join(tmp, 'src', 'viewer', 'page'));
    const script = join(repoRoot, 'scripts', 'bundle.mjs');
    const args = [script, '--dist', join(plain, 'dist'), '--out', join(tmp, 'dist', 'bundle'), '--metafile', join(tmp, 'meta.json')];
    const r = spawnSync(process.execPath, args, { cwd: repoRoot, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`scripts/bundle.mjs failed: ${r.stderr}`);
    try {
      renameSync(tmp, dir);
    } catch {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  const { outputs } = JSON.parse(readFileSync(meta, 'utf8')) as { outputs: Record<string, { inputs: Record<string, unknown> }> };
  const inputs = new Map<string, string[]>();
  for (const [out, { inputs: ins }] of Object.entries(outputs))
    inputs.set(
      basename(out),
      Object.keys(ins).map((i) => resolve(repoRoot, i)),
    );
  bundled = { bin: join(dir, 'bin', 'dsh.js'), inputs };
  return bundled;
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Raw bytes, for checks on what reaches a terminal. */
  rawOut: Buffer;
  rawErr: Buffer;
}

export interface RunOptions {
  input?: string | Buffer;
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Run this script instead of the built `bin/dsh.js`. */
  bin?: string;
}

export function dsh(args: readonly string[], opts: RunOptions = {}): Promise<Run> {
  const bin = opts.bin ?? builtBin();
  const env: Record<string, string | undefined> = {
    ...process.env,
    NO_COLOR: '1',
    FORCE_COLOR: undefined,
    DSH_DEBUG: undefined,
    ...opts.env,
  };
  for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: opts.cwd ?? repoRoot,
      env: env as NodeJS.ProcessEnv,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    child.on('close', (code) => {
      const rawOut = Buffer.concat(out);
      const rawErr = Buffer.concat(err);
      resolve({ code, stdout: rawOut.toString('utf8'), stderr: rawErr.toString('utf8'), rawOut, rawErr });
    });
    child.stdin.end(opts.input ?? '');
  });
}

/** Run many invocations with bounded parallelism (the suite shares two cores with others). */
export async function dshAll(argvs: readonly (readonly string[])[], parallel = 4): Promise<Run[]> {
  const results: Run[] = new Array(argvs.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < argvs.length) {
      const i = next++;
      results[i] = await dsh(argvs[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, argvs.length) }, worker));
  return results;
}
