/**
 * The layer rules, as pure functions over data, so the test can feed them both the real tree and
 * synthetic inputs they must reject.
 *
 * The layer order is the table under "## Layers" in docs/architecture.md, read bottom up: the
 * first row is the lowest layer, and a file may import from its own layer and the rows above it
 * in the table, never from a row below. Files directly in `src/` (the package entry) sit above
 * every layer; nothing imports them. A new folder under `src/` is placed by adding its row.
 */
import { readdirSync, statSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { ImportRef } from './imports.js';

export interface Layer {
  name: string;
  /** The folder under `src/`, e.g. `model`. */
  folder: string;
}

export class LayerTableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LayerTableError';
  }
}

/** The rows of the table under `## Layers`: `| Name | \`src/folder\` | … |`, in order. */
export function parseLayerTable(markdown: string): Layer[] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => /^##\s+Layers\s*$/.test(l));
  if (start < 0) throw new LayerTableError('no "## Layers" section');
  const layers: Layer[] = [];
  let inTable = false;
  for (let i = start + 1; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (/^#{1,2}\s/.test(line)) break;
    if (!line.startsWith('|')) {
      if (inTable) break;
      continue;
    }
    inTable = true;
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim());
    if (cells.length < 2 || /^-+$/.test(cells[0]!.replace(/:/g, '')) || cells[1] === 'Folder') continue;
    const m = /^`src\/([a-z0-9-]+)\/?`$/.exec(cells[1]!);
    if (!m) throw new LayerTableError(`row ${JSON.stringify(line)}: the folder cell must be \`src/<folder>\``);
    if (layers.some((l) => l.folder === m[1])) throw new LayerTableError(`src/${m[1]} is listed twice`);
    layers.push({ name: cells[0]!, folder: m[1]! });
  }
  if (layers.length === 0) throw new LayerTableError('the "## Layers" section has no table rows');
  return layers;
}

/**
 * The coarse order: the line `Coarse order: \`model → session → llm, tools → …\`` of the "## Layers"
 * section, as groups bottom up (a comma joins layers whose order between them it leaves open). It
 * is the short form the project's briefs quote; the table must agree with it, so the two cannot
 * drift apart (they did: the table once ranked config and coding below store).
 */
export function parseCoarseOrder(markdown: string): string[][] {
  const m = /^Coarse order: `([^`]+)`/m.exec(markdown);
  if (!m) throw new LayerTableError('no "Coarse order: `a → b, c → …`" line');
  const groups = m[1]!.split('→').map((g) => g.split(',').map((f) => f.trim()));
  if (groups.some((g) => g.some((f) => !/^[a-z0-9-]+$/.test(f))))
    throw new LayerTableError(`coarse order ${JSON.stringify(m[1])}: folder names only`);
  return groups;
}

/** Where the table disagrees with the coarse order: a folder it lacks, or two folders ranked against it. */
export function checkCoarseOrder(layers: readonly Layer[], groups: readonly (readonly string[])[]): string[] {
  const rank = new Map(layers.map((l, i) => [l.folder, i]));
  const problems: string[] = [];
  for (const f of groups.flat()) if (!rank.has(f)) problems.push(`src/${f} is in the coarse order but has no row in the table`);
  for (let i = 0; i < groups.length; i++)
    for (let j = i + 1; j < groups.length; j++)
      for (const low of groups[i]!)
        for (const high of groups[j]!) {
          const a = rank.get(low);
          const b = rank.get(high);
          if (a !== undefined && b !== undefined && a > b)
            problems.push(
              `the table ranks ${high} below ${low}, so ${low} could import ${high}; the coarse order puts ${high} above ${low}`,
            );
        }
  return problems;
}

/** A source file as the checker sees it: its path under `src/` (POSIX separators) and its imports. */
export interface SourceFile {
  path: string;
  imports: readonly ImportRef[];
}

/**
 * The Node built-in modules src/ may import, without their `node:` prefix: an allow-list, not a
 * list of the dangerous ones, so a built-in nobody has judged yet is refused until someone adds it
 * here with a reason. Left out on purpose, because they load or compile code the layer reader
 * cannot follow: `vm`, `repl` (compile text), `inspector` (`Runtime.evaluate`), `cluster` (forks a
 * module), `test` (its `run()` loads files), `wasi`, `v8`
 * (`setFlagsFromString`) and `sea`. `module` and `child_process` are allowed because the reader
 * follows their loaders (`createRequire`, `fork`) and refuses what it cannot read.
 */
export const ALLOWED_BUILTINS: ReadonlySet<string> = new Set([
  'assert',
  'assert/strict',
  'async_hooks',
  'buffer',
  'child_process',
  'crypto',
  'diagnostics_channel',
  'dns',
  'dns/promises',
  'events',
  'fs',
  'fs/promises',
  'http',
  'https',
  'module',
  'net',
  'os',
  'path',
  'path/posix',
  'perf_hooks',
  'process',
  'querystring',
  'readline',
  'readline/promises',
  'stream',
  'stream/promises',
  'stream/web',
  'string_decoder',
  'timers',
  'timers/promises',
  'tls',
  'tty',
  'url',
  'util',
  'util/types',
  'worker_threads',
  'zlib',
]);

/**
 * A built-in one module alone may import, by its path under src/, beyond ALLOWED_BUILTINS. Each
 * with its reason: `cli/baseline-wasm.ts` takes `v8` to set one literal flag, `--liftoff-only`
 * (which compiler V8 uses for WebAssembly), and loads or compiles nothing.
 */
export const BUILTINS_OF_ONE_MODULE: Readonly<Record<string, readonly string[]>> = {
  'cli/baseline-wasm.ts': ['v8'],
};

export type Resolved =
  | { kind: 'file'; path: string }
  | { kind: 'package'; name: string }
  /** A Node built-in, named without its `node:` prefix. */
  | { kind: 'builtin'; name: string }
  /** `#name`: a package.json "imports" alias, which can point at any file. */
  | { kind: 'subpath-import'; specifier: string }
  | { kind: 'outside'; path: string }
  /** `file:///…`, `data:text/javascript,…`, `https://…`: no layer can be told from it. */
  | { kind: 'url'; scheme: string }
  | { kind: 'missing' };

/** `openai/streaming` → `openai`, `@anthropic-ai/sdk/x` → `@anthropic-ai/sdk`, `node:fs` → `node:fs`. */
export function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/**
 * Where a specifier of `from` (a path under `src/`) leads, given the set of files under `src/`.
 * Relative specifiers follow TypeScript's NodeNext rule: `./x.js` names `x.ts` (or `x.js` itself).
 */
export function resolveSpecifier(from: string, specifier: string, files: ReadonlySet<string>): Resolved {
  const scheme = /^([a-z][a-z\d+.-]*):/i.exec(specifier)?.[1]?.toLowerCase();
  if (scheme !== undefined && scheme !== 'node') return { kind: 'url', scheme };
  if (specifier.startsWith('#')) return { kind: 'subpath-import', specifier };
  if (isBuiltin(specifier)) return { kind: 'builtin', name: specifier.replace(/^node:/, '') };
  if (!specifier.startsWith('.') && !specifier.startsWith('/')) return { kind: 'package', name: packageName(specifier) };
  const target = join(dirname(from), specifier).split(sep).join('/');
  if (target.startsWith('../') || target === '..') return { kind: 'outside', path: target };
  const candidates = [
    target,
    target.replace(/\.js$/, '.ts'),
    target.replace(/\.js$/, '.d.ts'),
    target.replace(/\.mjs$/, '.mts'),
    target.replace(/\.cjs$/, '.cts'),
    `${target}.ts`,
    `${target}/index.ts`,
    `${target}/index.js`,
  ];
  for (const c of candidates) if (files.has(c)) return { kind: 'file', path: c };
  return { kind: 'missing' };
}

/** The layer folder of a path under `src/`, or `null` for the package entry (files in `src/` itself). */
export function folderOf(path: string): string | null {
  const i = path.indexOf('/');
  return i < 0 ? null : path.slice(0, i);
}

export interface Violation {
  file: string;
  line: number;
  message: string;
}

export interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
}

export interface Checked {
  violations: Violation[];
  /** Every import between two files under `src/` (the graph the cycle check runs on). */
  edges: Edge[];
}

/**
 * The import rules: every relative import resolves to a file under `src/`; every file sits in a
 * folder the table lists (or is the package entry); no import runs from a layer to a higher one,
 * and nothing imports the package entry.
 */
export function checkLayers(sources: readonly SourceFile[], layers: readonly Layer[]): Checked {
  const rank = new Map(layers.map((l, i) => [l.folder, i]));
  const files = new Set(sources.map((s) => s.path));
  const violations: Violation[] = [];
  const edges: Edge[] = [];
  const placed = (folder: string | null): number => (folder === null ? layers.length : (rank.get(folder) ?? -1));
  for (const s of sources) {
    const own = folderOf(s.path);
    const ownRank = placed(own);
    if (ownRank < 0) {
      violations.push({
        file: s.path,
        line: 1,
        message: `src/${own} is not in the layer table of docs/architecture.md: add its row where it belongs in the order`,
      });
      continue;
    }
    for (const imp of s.imports) {
      const r = resolveSpecifier(s.path, imp.specifier, files);
      if (r.kind === 'package') continue;
      if (r.kind === 'builtin') {
        // A type-only import is erased: it loads nothing.
        if (!imp.typeOnly && !ALLOWED_BUILTINS.has(r.name) && !BUILTINS_OF_ONE_MODULE[s.path]?.includes(r.name))
          violations.push({
            file: s.path,
            line: imp.line,
            message:
              `${imp.form} ${JSON.stringify(imp.specifier)}: node:${r.name} is not among the built-ins src/ may import ` +
              '(ALLOWED_BUILTINS in test/architecture/layers.ts; add it there with a reason if it loads and compiles nothing)',
          });
        continue;
      }
      if (r.kind === 'subpath-import') {
        violations.push({
          file: s.path,
          line: imp.line,
          message:
            `${imp.form} ${JSON.stringify(imp.specifier)} is a package.json "imports" alias, ` +
            'which can name any file: use a relative path',
        });
        continue;
      }
      if (r.kind === 'url') {
        violations.push({
          file: s.path,
          line: imp.line,
          message: `${imp.form} ${JSON.stringify(imp.specifier.slice(0, 80))} names a module by a ${r.scheme}: URL, no layer holds it`,
        });
        continue;
      }
      if (r.kind === 'outside') {
        violations.push({ file: s.path, line: imp.line, message: `${imp.form} ${JSON.stringify(imp.specifier)} leaves src/ (${r.path})` });
        continue;
      }
      if (r.kind === 'missing') {
        violations.push({ file: s.path, line: imp.line, message: `${imp.form} ${JSON.stringify(imp.specifier)} names no file under src/` });
        continue;
      }
      edges.push({ from: s.path, to: r.path, typeOnly: imp.typeOnly });
      const to = folderOf(r.path);
      const toRank = placed(to);
      if (to === null && own !== null) {
        violations.push({
          file: s.path,
          line: imp.line,
          message: `${imp.form} ${JSON.stringify(imp.specifier)}: nothing imports the package entry (${r.path})`,
        });
      } else if (toRank > ownRank) {
        const up = to === null ? 'the package entry' : `${layers[toRank]!.name} (src/${to})`;
        violations.push({
          file: s.path,
          line: imp.line,
          message:
            `${imp.form} ${JSON.stringify(imp.specifier)} runs upward: ${layers[ownRank]?.name ?? 'the package entry'} (src/${own}` +
            `) may not import ${up}`,
        });
      }
    }
  }
  return { violations, edges };
}

export interface Cycle {
  /** The files of one strongly connected component, sorted. */
  members: string[];
  /** A shortest closed path `[a, b, …, a]` through its first member, for the message. */
  example: string[];
}

/**
 * Import cycles between files, type-only edges included (a type cycle still ties the modules
 * together: neither can be understood, moved or split without the other): one per strongly
 * connected component (Tarjan), sorted.
 */
export function findCycles(edges: readonly Edge[]): Cycle[] {
  const next = new Map<string, string[]>();
  for (const e of edges) {
    if (!next.has(e.from)) next.set(e.from, []);
    if (!next.has(e.to)) next.set(e.to, []);
    next.get(e.from)!.push(e.to);
  }
  for (const list of next.values()) list.sort();
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;
  // Iterative Tarjan: the import graph of a big tree would overflow a recursive one only in
  // theory, but a test that fails by stack overflow on a synthetic input says nothing useful.
  for (const root of [...next.keys()].sort()) {
    if (index.has(root)) continue;
    const work: { node: string; i: number }[] = [{ node: root, i: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const succ = next.get(top.node)!;
      if (top.i < succ.length) {
        const w = succ[top.i++]!;
        if (!index.has(w)) {
          index.set(w, counter);
          low.set(w, counter++);
          stack.push(w);
          onStack.add(w);
          work.push({ node: w, i: 0 });
        } else if (onStack.has(w)) {
          low.set(top.node, Math.min(low.get(top.node)!, index.get(w)!));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]!.node;
        low.set(parent, Math.min(low.get(parent)!, low.get(top.node)!));
      }
      if (low.get(top.node) === index.get(top.node)) {
        const comp: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          comp.push(w);
        } while (w !== top.node);
        const selfLoop = comp.length === 1 && next.get(comp[0]!)!.includes(comp[0]!);
        if (comp.length > 1 || selfLoop) components.push(comp);
      }
    }
  }
  return components
    .map((c) => ({ members: [...c].sort(), example: closedPath(c, next) }))
    .sort((a, b) => a.members[0]!.localeCompare(b.members[0]!));
}

/** A shortest cycle through the component's first file (by name), for the failure message. */
function closedPath(component: string[], next: ReadonlyMap<string, readonly string[]>): string[] {
  const members = new Set(component);
  const start = [...component].sort()[0]!;
  const prev = new Map<string, string>();
  const queue = [start];
  for (let q = 0; q < queue.length; q++) {
    const n = queue[q]!;
    for (const w of next.get(n) ?? []) {
      if (!members.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let x: string | undefined = n; x !== undefined && x !== start; x = prev.get(x)) path.splice(1, 0, x);
        path.push(start);
        return path;
      }
      if (!prev.has(w)) {
        prev.set(w, n);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

/** Every file under `dir` whose name ends in one of `exts`, as POSIX paths relative to `dir`. */
export function listSources(dir: string, exts: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (exts.some((e) => name.endsWith(e))) out.push(relative(dir, p).split(sep).join('/'));
    }
  };
  walk(resolve(dir));
  return out;
}

/**
 * Every chain of imports (type-only ones included) from a file under `src/<folder>` to a file
 * that imports one of `packages`, as `[file, …, file that imports it, package]`, one per reached
 * file. The agent layer must reach no provider SDK: it takes a model choice, never makes one.
 */
export function packageReach(sources: readonly SourceFile[], folder: string, packages: readonly string[]): string[][] {
  const files = new Set(sources.map((s) => s.path));
  const next = new Map<string, string[]>();
  const direct = new Map<string, string>();
  for (const s of sources) {
    const out: string[] = [];
    for (const imp of s.imports) {
      const r = resolveSpecifier(s.path, imp.specifier, files);
      if (r.kind === 'file') out.push(r.path);
      else if (r.kind === 'package' && packages.includes(r.name) && !direct.has(s.path)) direct.set(s.path, r.name);
    }
    next.set(s.path, out);
  }
  const chains: string[][] = [];
  const prev = new Map<string, string | null>();
  const queue = sources.filter((s) => folderOf(s.path) === folder).map((s) => s.path);
  for (const q of queue) prev.set(q, null);
  for (let i = 0; i < queue.length; i++) {
    const f = queue[i]!;
    const pkg = direct.get(f);
    if (pkg !== undefined) {
      const chain = [f, pkg];
      for (let p = prev.get(f); p; p = prev.get(p)) chain.unshift(p);
      chains.push(chain);
    }
    for (const n of next.get(f) ?? []) {
      if (!prev.has(n)) {
        prev.set(n, f);
        queue.push(n);
      }
    }
  }
  return chains;
}
