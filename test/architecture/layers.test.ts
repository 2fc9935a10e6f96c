/**
 * The layering of src/ (issue 12 item 1): imports run only downward in the order of the layer
 * table in docs/architecture.md, and no files import each other in a cycle, type-only imports
 * included. The rules are pure functions (./layers.ts) and are first shown rejecting synthetic
 * inputs, so a pass on the real tree means something.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/shared.js';
import { readImports, type ImportRef, type UnreadableImport } from './imports.js';
import {
  checkCoarseOrder,
  checkLayers,
  findCycles,
  listSources,
  packageReach,
  parseCoarseOrder,
  parseLayerTable,
  resolveSpecifier,
  type Layer,
  type SourceFile,
} from './layers.js';

const SRC = join(repoRoot, 'src');
const EXTS = ['.ts', '.mts', '.cts', '.tsx', '.js', '.mjs', '.cjs', '.jsx'];

function source(path: string, text: string): SourceFile {
  const r = readImports(path, text);
  expect(r.unreadable).toEqual([]);
  return { path, imports: r.imports };
}

describe('reading imports', () => {
  it('finds every form that names a module, with its line, and nothing in strings or comments', () => {
    const text = [
      "import { a } from './a.js';", // 1
      "import type { B } from './b.js';", // 2
      "import './c.js';", // 3
      "export * from './d.js';", // 4
      "export { e } from './e.js';", // 5
      "export type { F } from './f.js';", // 6
      "import g = require('./g.js');", // 7
      'const h = await import(', // 8
      "  './h.js');", // 9
      "const i = require('./i.js');", // 10
      'type J = import(`./j.js`).J;', // 11
      "declare module './k.js' { interface K { k: 1 } }", // 12
      "const l = require.resolve('./l.js');", // 13
      "const m = import.meta.resolve('./m.js');", // 14
      "// import { n } from './n.js';", // 15
      'const o = "import { o } from \'./o.js\'";', // 16
      "import { type P } from './p.js';", // 17
      "export { type Q } from './q.js';", // 18
    ].join('\n');
    const got = readImports('x/file.ts', text).imports.map((i: ImportRef) => [i.specifier, i.form, i.typeOnly, i.line]);
    expect(got).toEqual([
      ['./a.js', 'import', false, 1],
      ['./b.js', 'import', true, 2],
      ['./c.js', 'import', false, 3],
      ['./d.js', 'export-from', false, 4],
      ['./e.js', 'export-from', false, 5],
      ['./f.js', 'export-from', true, 6],
      ['./g.js', 'import-equals', false, 7],
      ['./h.js', 'dynamic-import', false, 8],
      ['./i.js', 'require', false, 10],
      ['./j.js', 'import-type', true, 11],
      ['./k.js', 'module-augmentation', true, 12],
      ['./l.js', 'require', false, 13],
      ['./m.js', 'require', false, 14],
      // `import { type P }` still loads the module under verbatimModuleSyntax.
      ['./p.js', 'import', false, 17],
      ['./q.js', 'export-from', false, 18],
    ]);
  });

  it('reads JSDoc imports in JavaScript files', () => {
    const text = ["/** @import { A } from './a.js' */", "/** @type {import('./b.js').B} */", 'let b;', "import { c } from './c.js';"].join(
      '\n',
    );
    const got = readImports('page/x.js', text).imports.map((i) => [i.specifier, i.form]);
    expect(got).toEqual(
      expect.arrayContaining([
        ['./a.js', 'jsdoc-import'],
        ['./b.js', 'import-type'],
        ['./c.js', 'import'],
      ]),
    );
    expect(got).toHaveLength(3);
  });

  it('does not take a Worker built from an options object (no module file) for a module loader', () => {
    const r = readImports('x.ts', "new Worker({ store, concurrency: 4 });\nnew Worker('./w.js');");
    expect(r.unreadable.map((u) => [u.form, u.line])).toEqual([['module-loader', 2]]);
  });

  it('reports dynamic imports, requires and module loaders it cannot read', () => {
    const r = readImports(
      'x.ts',
      "const p = './a.js';\nawait import(p);\nrequire(`./${p}`);\nimport.meta.resolve(p);\nconst req = " +
        "createRequire(import.meta.url);\nnew Worker(new URL('./w.js', import.meta.url));",
    );
    expect(r.unreadable.map((u) => [u.form, u.line])).toEqual([
      ['dynamic-import', 2],
      ['require', 3],
      ['require', 4],
      ['module-loader', 5],
      ['module-loader', 6],
    ]);
  });

  it('reports a module loader under another name, through a namespace, default import or destructuring, or passed around', () => {
    const cases: [string, string][] = [
      ["import { createRequire as cr } from 'node:module';", 'const req = cr(import.meta.url);'],
      ["import * as m from 'node:module';", 'const req = m.createRequire(import.meta.url);'],
      ["import m from 'module';", "m.Module._load('../cli/main.js');"],
      ["const { createRequire: load } = await import('node:module');", 'load(import.meta.url);'],
      ["const nm = require('node:module');", 'nm.createRequire(import.meta.url);'],
      ["import { createRequire } from 'node:module';", 'const cr = createRequire;'],
      ["import { Worker as W } from 'node:worker_threads';", "new W(new URL('../cli/main.js', import.meta.url));"],
      ["import * as wt from 'worker_threads';", "new wt.Worker('../cli/main.js');"],
      ['const r = require;', "r('../cli/main.js');"],
      ['const p = "../cli/main.js";', 'require.resolve(p);'],
    ];
    for (const [bind, use] of cases) {
      const r = readImports('x.ts', `${bind}\n${use}`);
      expect(r.unreadable.length, `${bind} ${use}`).toBeGreaterThan(0);
      expect(
        r.unreadable.every((u) => u.form !== 'eval'),
        use,
      ).toBe(true);
    }
    // The reported line is where the loader is used (or, for `const r = require`, where it is taken).
    expect(readImports('x.ts', cases[6]!.join('\n')).unreadable.map((u) => [u.form, u.line])).toEqual([['module-loader', 2]]);
    expect(readImports('x.ts', cases[8]!.join('\n')).unreadable.map((u) => [u.form, u.line])).toEqual([['require', 1]]);
  });

  it('reports code compiled at run time, which can import any text', () => {
    const cases = [
      "new Function('s', 'return import(s)')('../cli/main.js');",
      'Function(\'return import("../cli/main.js")\')();',
      'eval(\'import("../cli/main.js")\');',
      '(0, eval)(\'import("../cli/main.js")\');',
      'globalThis.eval(\'import("../cli/main.js")\');',
      'const F = Function; new F(\'return import("x")\');',
      "import vm from 'node:vm'; new vm.Script('import(\"x\")');",
    ];
    for (const text of cases)
      expect(
        readImports('x.ts', text).unreadable.map((u) => u.form),
        text,
      ).toContain('eval');
    // A type named Function, a property named eval and a string are not code.
    const clean = readImports('x.ts', "type F = Function;\nconst o = { eval: 1 };\no.eval;\nconst s = 'eval(x)';");
    expect(clean.unreadable).toEqual([]);
  });

  it('reads createRequire(…) called at once with a literal as a require of that name', () => {
    const r = readImports('x.ts', "const Db = createRequire(import.meta.url)('better-sqlite3');");
    expect(r.unreadable).toEqual([]);
    expect(r.imports.map((i) => [i.specifier, i.form, i.line])).toEqual([['better-sqlite3', 'require', 1]]);
  });
});

describe('the layer table', () => {
  it('is read in order from the "## Layers" section, and a malformed row is refused', () => {
    const doc = [
      '# T',
      '',
      '## Layers',
      '',
      'text',
      '',
      '| Layer | Folder | What |',
      '|---|---|---|',
      '| Low | `src/low` | x |',
      '| High | `src/high` | y |',
      '',
      '## Next',
      '| A | `src/a` | z |',
    ].join('\n');
    expect(parseLayerTable(doc)).toEqual([
      { name: 'Low', folder: 'low' },
      { name: 'High', folder: 'high' },
    ]);
    expect(() => parseLayerTable(doc.replace('`src/high`', 'src/high'))).toThrow(/folder cell/);
    expect(() => parseLayerTable(doc.replace('`src/high`', '`src/low`'))).toThrow(/listed twice/);
    expect(() => parseLayerTable('# no layers')).toThrow(/no "## Layers"/);
  });
});

describe('the coarse order', () => {
  const doc = (line: string) => `## Layers\n\nCoarse order: \`${line}\`\n\n| Layer | Folder | What |\n|---|---|---|\n`;
  const table = (...folders: string[]): Layer[] => folders.map((folder) => ({ name: folder, folder }));

  it('is read as groups bottom up, and the table must agree with it', () => {
    expect(parseCoarseOrder(doc('a → b, c → d'))).toEqual([['a'], ['b', 'c'], ['d']]);
    expect(() => parseCoarseOrder('## Layers\n')).toThrow(/Coarse order/);
    const groups = [['a'], ['b', 'c'], ['d']];
    // Siblings in either order; extra rows anywhere.
    expect(checkCoarseOrder(table('a', 'c', 'x', 'b', 'd'), groups)).toEqual([]);
    expect(checkCoarseOrder(table('a', 'd', 'b', 'c'), groups)).toEqual([
      'the table ranks d below b, so b could import d; the coarse order puts d above b',
      'the table ranks d below c, so c could import d; the coarse order puts d above c',
    ]);
    expect(checkCoarseOrder(table('a', 'b', 'd'), groups)).toEqual(['src/c is in the coarse order but has no row in the table']);
  });

  it('holds in docs/architecture.md, so the store cannot import the coding preset or config (review 3)', () => {
    const md = readFileSync(join(repoRoot, 'docs', 'architecture.md'), 'utf8');
    const layers = parseLayerTable(md);
    expect(checkCoarseOrder(layers, parseCoarseOrder(md))).toEqual([]);
    const upward = (from: string, text: string): string[] => {
      const to = /'\.\.\/([a-z]+)\//.exec(text)![1]!;
      const tree = [source(`${to}/x.ts`, 'export const x = 1; export type X = 1;'), source(from, text)];
      return checkLayers(tree, layers).violations.map((v) => v.message);
    };
    for (const [from, text] of [
      ['store/s.ts', "import type { X } from '../coding/x.js';"],
      ['store/s.ts', "import type { X } from '../config/x.js';"],
      ['observability/o.ts', "import { x } from '../replay/x.js';"],
      ['compaction/c.ts', "import { x } from '../config/x.js';"],
    ] as const)
      expect(upward(from, text), `${from}: ${text}`).toEqual([expect.stringMatching(/runs upward/)]);
  });
});

describe('the layer rules, on synthetic trees', () => {
  const layers: Layer[] = [
    { name: 'Low', folder: 'low' },
    { name: 'Mid', folder: 'mid' },
    { name: 'High', folder: 'high' },
  ];

  it('accept imports within a layer and downward', () => {
    const tree = [
      source('low/a.ts', 'export const a = 1;'),
      source('mid/b.ts', "import { a } from '../low/a.js';\nimport { c } from './c.js';"),
      source('mid/c.ts', 'export const c = 1;'),
      source('high/d.ts', "import type { a } from '../low/a.js';\nexport * from '../mid/b.js';"),
      source('index.ts', "export * from './high/d.js';"),
    ];
    const r = checkLayers(tree, layers);
    expect(r.violations).toEqual([]);
    expect(findCycles(r.edges)).toEqual([]);
  });

  it('reject an upward import in every form, naming file, line and both layers', () => {
    const forms = [
      "import { x } from '../high/x.js';",
      "import type { X } from '../high/x.js';",
      "export * from '../high/x.js';",
      "export type { X } from '../high/x.js';",
      "const x = await import('../high/x.js');",
      "const x = require('../high/x.js');",
      "type X = import('../high/x.js').X;",
      "declare module '../high/x.js' { interface X { y: 1 } }",
      "export { x } from '../high/x.js';",
      "import x = require('../high/x.js');",
      "const p = require.resolve('../high/x.js');",
      "const p = import.meta.resolve('../high/x.js');",
      'const x = await import(`../high/x.js`);',
      // A renamed or namespaced createRequire called at once names what it loads.
      "import { createRequire as cr } from 'node:module'; const x = cr(import.meta.url)('../high/x.js');",
      "import * as m from 'node:module'; const x = m.createRequire(import.meta.url)('../high/x.js');",
      '/// <reference path="../high/x.ts" />',
    ];
    const jsForms = [
      "/** @import { X } from '../high/x.js' */",
      "/** @type {import('../high/x.js').X} */\nlet x;",
      "import '../high/x.js';",
    ];
    const cases = [...forms.map((f) => ['mid/m.ts', f]), ...jsForms.map((f) => ['mid/m.js', f])];
    for (const [file, form] of cases) {
      const tree = [source('high/x.ts', 'export const x = 1; export interface X {}'), source(file!, `// a comment line\n${form}`)];
      const r = checkLayers(tree, layers);
      expect(r.violations, form).toHaveLength(1);
      expect(r.violations[0]).toMatchObject({ file, line: 2 });
      expect(r.violations[0]!.message).toMatch(/runs upward: Mid \(src\/mid\) may not import High \(src\/high\)/);
    }
  });

  it('reject a folder missing from the table, an import of the package entry, one that leaves src/, and one that resolves nowhere', () => {
    const tree = [
      source('index.ts', "export * from './low/a.js';"),
      source('low/a.ts', "import '../index.js';\nimport '../../test/x.js';\nimport './nope.js';"),
      source('stray/s.ts', 'export {};'),
    ];
    const messages = checkLayers(tree, layers).violations.map((v) => `${v.file}:${v.line} ${v.message}`);
    expect(messages).toEqual([
      'low/a.ts:1 import "../index.js": nothing imports the package entry (index.ts)',
      'low/a.ts:2 import "../../test/x.js" leaves src/ (../test/x.js)',
      'low/a.ts:3 import "./nope.js" names no file under src/',
      'stray/s.ts:1 src/stray is not in the layer table of docs/architecture.md: add its row where it belongs in the order',
    ]);
  });

  /** What catches a probe in the middle layer reaching the high one: the layer rules' verdicts and the reader's unreadable forms. */
  const caught = (text: string): string[] => {
    const r = readImports('mid/m.ts', text);
    const tree = [source('high/x.ts', 'export const x = 1;'), { path: 'mid/m.ts', imports: r.imports }];
    const verdicts: [RegExp, string][] = [
      [/runs upward/, 'upward'],
      [/URL/, 'url'],
      [/not among the built-ins/, 'builtin'],
      [/"imports" alias/, 'alias'],
    ];
    const v = checkLayers(tree, layers).violations.map((x) => verdicts.find(([re]) => re.test(x.message))?.[1] ?? x.message);
    return [...v, ...r.unreadable.map((u) => u.form)];
  };

  it('catch the loader forms of review 2: getBuiltinModule, { default as m }, node:module exports, inline loaders, URLs', () => {
    // Each probe is a file in the middle layer reaching the high one; what must catch it: an
    // upward violation (the reader followed the load), a URL violation, or an unreadable form.
    const probes: [string, 'upward' | 'url' | UnreadableImport['form']][] = [
      ["const m = process.getBuiltinModule('node:module'); m.createRequire(import.meta.url)('../high/x.js');", 'upward'],
      ["const { createRequire: cr } = process.getBuiltinModule('module'); cr(import.meta.url)('../high/x.js');", 'upward'],
      ["process.getBuiltinModule('node:module').createRequire(import.meta.url)('../high/x.js');", 'module-loader'],
      ["process.getBuiltinModule('node:vm').runInThisContext('import(\"../high/x.js\")');", 'eval'],
      ["process['getBuiltinModule']('node:vm');", 'eval'],
      ['const g = process.getBuiltinModule; g(name);', 'module-loader'],
      ['process.getBuiltinModule(name);', 'require'],
      ["import { default as nm } from 'node:module'; nm.createRequire(import.meta.url)('../high/x.js');", 'upward'],
      ["import { default as nm } from 'node:module'; nm.Module._load('../high/x.js');", 'module-loader'],
      ["import { register } from 'node:module'; register('../high/x.js', import.meta.url);", 'module-loader'],
      ["import { Module } from 'node:module'; Module._load('../high/x.js');", 'module-loader'],
      ["const { register } = await import('node:module'); register('../high/x.js', import.meta.url);", 'module-loader'],
      ["export * from 'node:module';", 'module-loader'],
      ["new (await import('node:worker_threads')).Worker(new URL('../high/x.js', import.meta.url));", 'module-loader'],
      ["require('node:module').createRequire(import.meta.url)(p);", 'module-loader'],
      ["import('node:module').then((m) => m.createRequire(import.meta.url)(p));", 'module-loader'],
      ["(globalThis as any)['eval']('import(\"../high/x.js\")');", 'eval'],
      ['(globalThis as any).eval(\'import("../high/x.js")\');', 'eval'],
      ["const k = 'ev' + 'al'; (globalThis as any)[k]('import(\"../high/x.js\")');", 'eval'],
      ['(async () => {}).constructor(\'return import("../high/x.js")\')();', 'eval'],
      ['new (function* () {}).constructor(\'yield import("../high/x.js")\');', 'eval'],
      ["import { Session } from 'node:inspector';", 'eval'],
      ["import { fork } from 'node:child_process'; fork(new URL('../high/x.js', import.meta.url));", 'module-loader'],
      ["import * as cp from 'node:child_process'; cp.fork('../high/x.js');", 'module-loader'],
      ["module.require('../high/x.js');", 'require'],
      ["process.mainModule?.require('../high/x.js');", 'require'],
      ["const x = await import('file:///work/main/src/high/x.js');", 'url'],
      ['const x = await import(\'data:text/javascript,import "../high/x.js"\');', 'url'],
      ["const x = await import('https://example.com/x.js');", 'url'],
    ];
    for (const [text, by] of probes) expect(caught(text), text).toContain(by);
    // What loads or runs nothing stays clean: the harmless exports, other built-ins, a constructor's name.
    const clean = [
      "import { isBuiltin, builtinModules, type SourceMap } from 'node:module';",
      "import { spawn, execFile } from 'node:child_process'; spawn('ls');",
      "import { isMainThread, parentPort } from 'node:worker_threads';",
      "const fs = process.getBuiltinModule('node:fs'); process.getBuiltinModule('node:path').join('a', 'b');",
      'const n = x.constructor.name; globalThis.fetch(u); o.eval;',
    ];
    for (const text of clean) expect(caught(text), text).toEqual([]);
  });

  it('allow a built-in off the list to the one module named for it, and to no other', () => {
    const text = "process.getBuiltinModule('node:v8').setFlagsFromString('--liftoff-only');";
    const cli: Layer[] = [{ name: 'CLI', folder: 'cli' }];
    const verdict = (path: string) => checkLayers([source(path, text)], cli).violations.map((v) => v.message);
    expect(verdict('cli/baseline-wasm.ts')).toEqual([]);
    expect(verdict('cli/other.ts').join('\n')).toMatch(/node:v8 is not among the built-ins/);
  });

  it('catch the forms of review 3: global object or loader renamed, .constructor, built-ins off the allow-list, #aliases', () => {
    const probes: [string, 'upward' | 'builtin' | 'alias' | UnreadableImport['form']][] = [
      // getBuiltinModule, eval and Function destructured under another name.
      ["const { getBuiltinModule: load } = process; load('node:module').createRequire(import.meta.url)('../high/x.js');", 'module-loader'],
      ['const { eval: run } = globalThis; run(\'import("../high/x.js")\');', 'eval'],
      ['const { Function: F } = globalThis; F(\'return import("../high/x.js")\')();', 'eval'],
      ["const { 'eval': run } = globalThis as any; run('x');", 'eval'],
      // The global object aliased, passed on, reached again through itself or from the DOM.
      ['const g = globalThis; g.eval(\'import("../high/x.js")\');', 'eval'],
      ["Reflect.get(globalThis, 'ev' + 'al')('x');", 'eval'],
      ["globalThis.globalThis.eval('x');", 'eval'],
      ["const w = window; w.eval('x');", 'eval'],
      ["document.defaultView?.eval('x');", 'eval'],
      // A constructor off .constructor, called through .call, a cast, or taken first.
      ['(async () => {}).constructor.call(null, \'return import("../high/x.js")\')();', 'eval'],
      ['((async () => {}).constructor as FunctionConstructor)(\'return import("../high/x.js")\')();', 'eval'],
      ['const AsyncFunction = (async () => {}).constructor as FunctionConstructor;', 'eval'],
      ['const { constructor: C } = async () => {};', 'eval'],
      // Built-ins that load or compile code, in every spelling and form.
      ["import cluster from 'node:cluster'; cluster.setupPrimary({ exec: '../high/x.js' }); cluster.fork();", 'builtin'],
      ["import { start } from 'node:repl';", 'builtin'],
      ["import { run } from 'node:test'; run({ files: ['../high/x.js'] });", 'builtin'],
      ["const c = require('cluster');", 'builtin'],
      ["const r = await import('repl');", 'builtin'],
      ["process.getBuiltinModule('node:test');", 'builtin'],
      ["import vm from 'node:vm';", 'builtin'],
      ["import { WASI } from 'node:wasi';", 'builtin'],
      // v8 is allowed to cli/baseline-wasm.ts alone (BUILTINS_OF_ONE_MODULE).
      ["process.getBuiltinModule('node:v8').setFlagsFromString('--allow-natives-syntax');", 'builtin'],
      // A package.json "imports" alias can point anywhere.
      ["import '#up';", 'alias'],
      ["const x = await import('#internal/x.js');", 'alias'],
    ];
    for (const [text, by] of probes) expect(caught(text), text).toContain(by);
    // Still clean: members of the global object, typeof, locals that shadow a global's name, a
    // constructor's name, allowed built-ins, type-only imports of refused ones.
    const clean = [
      "globalThis.fetch(u); if (typeof window !== 'undefined') window.addEventListener('x', f);",
      'function f(window: number, top: number) { return { window, top }; }',
      'const parent = node.parentNode; use(parent); for (const self of list) use(self);',
      'let n = o.constructor.name; n = o.constructor?.name;',
      "import { readFile } from 'node:fs/promises'; import os from 'os'; import { Worker } from 'node:worker_threads';",
      "import type { Session } from 'node:inspector'; import type { Context } from 'node:vm';",
      "const { getBuiltinModule } = process; const fs = getBuiltinModule('node:fs');",
    ];
    for (const text of clean) expect(caught(text), text).toEqual([]);
  });

  it('find cycles, type-only ones included, as closed paths', () => {
    const tree = [
      source('low/a.ts', "import type { B } from './b.js';\nexport interface A { b?: B }"),
      source('low/b.ts', "import { c } from './c.js';\nexport interface B {}"),
      source('low/c.ts', "import type { A } from './a.js';\nexport const c = 1;"),
      source('low/d.ts', "import type { D } from './d.js';\nexport interface D {}"),
      source('low/e.ts', "import './a.js';"),
    ];
    const r = checkLayers(tree, layers);
    expect(r.violations).toEqual([]);
    expect(findCycles(r.edges)).toEqual([
      { members: ['low/a.ts', 'low/b.ts', 'low/c.ts'], example: ['low/a.ts', 'low/b.ts', 'low/c.ts', 'low/a.ts'] },
      { members: ['low/d.ts'], example: ['low/d.ts', 'low/d.ts'] },
    ]);
  });

  it('find every chain from a layer to a provider SDK, through type-only imports too', () => {
    const tree = [
      source('mid/agent.ts', "import type { Choice } from '../low/choice.js';\nimport { run } from '../low/run.js';"),
      source('low/choice.ts', "import type { Sdk } from './adapter.js';"),
      source('low/adapter.ts', "import OpenAI from 'openai';"),
      source('low/run.ts', 'export const run = 1;'),
      source('low/other.ts', "import Anthropic from '@anthropic-ai/sdk/index.js';"),
      source('mid/clean.ts', "import { run } from '../low/run.js';"),
    ];
    expect(packageReach(tree, 'mid', ['openai', '@anthropic-ai/sdk'])).toEqual([
      ['mid/agent.ts', 'low/choice.ts', 'low/adapter.ts', 'openai'],
    ]);
    expect(packageReach(tree, 'low', ['@anthropic-ai/sdk'])).toEqual([['low/other.ts', '@anthropic-ai/sdk']]);
  });

  it('resolve NodeNext specifiers to the source file', () => {
    const files = new Set(['low/a.ts', 'low/dir/index.ts', 'low/page.js']);
    expect(resolveSpecifier('low/x.ts', './a.js', files)).toEqual({ kind: 'file', path: 'low/a.ts' });
    expect(resolveSpecifier('low/x.ts', './dir/index.js', files)).toEqual({ kind: 'file', path: 'low/dir/index.ts' });
    expect(resolveSpecifier('low/x.js', './page.js', files)).toEqual({ kind: 'file', path: 'low/page.js' });
    expect(resolveSpecifier('low/x.ts', '@scope/pkg/sub', files)).toEqual({ kind: 'package', name: '@scope/pkg' });
    expect(resolveSpecifier('low/x.ts', 'node:fs', files)).toEqual({ kind: 'builtin', name: 'fs' });
  });
});

describe('src/', () => {
  const layers = parseLayerTable(readFileSync(join(repoRoot, 'docs', 'architecture.md'), 'utf8'));
  const paths = listSources(SRC, EXTS);
  const read = paths.map((path) => ({ path, ...readImports(path, readFileSync(join(SRC, path), 'utf8')) }));
  const tree: SourceFile[] = read.map((r) => ({ path: r.path, imports: r.imports }));

  it('has every folder in the layer table, and every table row is a folder', () => {
    const folders = [...new Set(paths.filter((p) => p.includes('/')).map((p) => p.slice(0, p.indexOf('/'))))].sort();
    expect(layers.map((l) => l.folder).sort()).toEqual(folders);
  });

  it("imports nothing by the package's own name (tsconfig and vitest map it to src/index.ts, past the layer order)", () => {
    const own = (r: { path: string; imports: { specifier: string; line: number }[] }) =>
      r.imports.filter((i) => i.specifier === 'dsh' || i.specifier.startsWith('dsh/')).map((i) => `${r.path}:${i.line} ${i.specifier}`);
    // The rule rejects what it must: a type-only self-import from a low layer.
    expect(own({ path: 'model/x.ts', ...readImports('model/x.ts', "import type { PriceEntry } from 'dsh';\nimport './y.js';") })).toEqual([
      'model/x.ts:1 dsh',
    ]);
    expect(read.flatMap(own)).toEqual([]);
  });

  it('names every module it loads with a literal', () => {
    expect(read.flatMap((r) => r.unreadable.map((u) => `${r.path}:${u.line} ${u.text}`))).toEqual([]);
  });

  it('imports only downward', () => {
    expect(checkLayers(tree, layers).violations.map((v) => `src/${v.file}:${v.line}: ${v.message}`)).toEqual([]);
  });

  it('has no import cycles, type-only imports included', () => {
    const cycles = findCycles(checkLayers(tree, layers).edges);
    expect(cycles.map((c) => `${c.members.map((f) => `src/${f}`).join(', ')} (e.g. ${c.example.join(' → ')})`)).toEqual([]);
  });

  it('keeps the provider SDKs out of the agent layer, whatever the import form (issue 12 item 3)', () => {
    expect(packageReach(tree, 'agent', ['openai', '@anthropic-ai/sdk']).map((c) => c.join(' → '))).toEqual([]);
    // And the SDKs are imported at all only by the model adapters.
    const users = read
      .filter((r) => r.imports.some((i) => /^(?:openai|@anthropic-ai\/sdk)(?:\/|$)/.test(i.specifier)))
      .map((r) => r.path.split('/')[0]);
    expect([...new Set(users)]).toEqual(['llm']);
  });

  it("has the package entry's header name the layers in the table's order, and re-export them in it", () => {
    const index = readFileSync(join(SRC, 'index.ts'), 'utf8');
    const header = index.slice(0, index.indexOf('*/')).replace(/\n \*/g, ' ');
    const chain = /:\s*([^:]*?→[^.]*)\./.exec(header)?.[1];
    expect(chain?.split('→').map((n) => n.trim().replace(/\s+/g, ' ').toLowerCase())).toEqual(layers.map((l) => l.name.toLowerCase()));
    // A file beside index.ts (the entry's own composition, e.g. createAgent) ranks above every layer.
    const exported = (read.find((r) => r.path === 'index.ts')?.imports ?? []).map((i) => i.specifier.split('/'));
    const ranks = exported.map((p) => (p.length === 2 ? layers.length : layers.findIndex((l) => l.folder === p[1])));
    expect(ranks.every((r) => r >= 0)).toBe(true);
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
  });

  it('is read whole: the checker sees the imports TypeScript sees', () => {
    // A cross-check against a plain count, so a form the reader silently skips shows up here:
    // every line starting with `import`/`export … from` is matched by a reader result.
    for (const r of read) {
      const text = readFileSync(join(SRC, r.path), 'utf8').split('\n');
      const starts = text.flatMap((l, i) =>
        /^(?:import\s+(?:type\s+)?[\w*{'"]|export\s+(?:type\s+)?[*{].*\sfrom\s)/.test(l) ? [i + 1] : [],
      );
      const found = new Set(r.imports.map((i) => i.line));
      expect(
        starts.filter((l) => !found.has(l)),
        r.path,
      ).toEqual([]);
    }
  });
});
