/**
 * Lint, format and the page's type check (issue 12 item 6), each shown rejecting an input, so that
 * the pass of `npm run lint` and `npm run typecheck` on the real tree means something: the repo's
 * biome.jsonc is run on synthetic files in a temp dir, and the page's tsconfig on a synthetic
 * page script.
 */
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/shared.js';
import { tempTrees } from './temp-tree.js';

const BIOME = join(repoRoot, 'node_modules', '.bin', 'biome');
const LINE_WIDTH = 140;
const files = tempTrees('dsh-lint-');

/** A temp tree with the repo's biome.jsonc and the given files. */
function tree(given: Record<string, string>): string {
  const dir = files(given);
  copyFileSync(join(repoRoot, 'biome.jsonc'), join(dir, 'biome.jsonc'));
  return dir;
}

/** The repo's Biome on `dir`; a checkout without it (no `npm ci` since it was added) fails saying so. */
function biome(dir: string, args: string[]): SpawnSyncReturns<string> {
  if (!existsSync(BIOME)) throw new Error(`${BIOME} is missing: run npm ci (Biome is a devDependency)`);
  const r = spawnSync(BIOME, args, { cwd: dir, encoding: 'utf8' });
  if (r.error) throw r.error;
  return r;
}

/** `biome lint` as `npm run lint` runs it; the findings as `rule file:line`. */
function lint(dir: string): { status: number | null; findings: string[] } {
  const r = biome(dir, ['lint', '--vcs-enabled=false', '--error-on-warnings', '--reporter=github', '--colors=off', '.']);
  const findings = [...r.stdout.matchAll(/^::\w+ title=([^,]+),file=([^,]+),line=(\d+)/gm)].map(
    (m) => `${m[1]} ${m[2]!.slice(dir.length + 1)}:${m[3]}`,
  );
  return { status: r.status, findings };
}

describe('lint (biome.jsonc)', () => {
  it('fails on an unused import and on `any` in src/, naming rule, file and line', () => {
    const r = lint(tree({ 'src/x.ts': "import { a } from './a.js';\nexport const x: any = 1;\n" }));
    expect(r.status).not.toBe(0);
    expect(r.findings.sort()).toEqual(['lint/correctness/noUnusedImports src/x.ts:1', 'lint/suspicious/noExplicitAny src/x.ts:2']);
  });

  it('passes the idioms it allows: `xs[i]!`, `any` under test/, a cache set in an expression', () => {
    const r = lint(
      tree({
        'src/ok.ts':
          'const m = new Map<string, number[]>();\nexport function f(xs: number[], k: string): number {\n  let v = m.get(k);\n  ' +
          'if (!v) m.set(k, (v = []));\n  return xs[0]! + v.length;\n}\n',
        'test/ok.ts': 'export const page = (): number => (globalThis as any).document.body.childElementCount;\n',
      }),
    );
    expect(r.findings).toEqual([]);
    expect(r.status).toBe(0);
  });
});

describe('format (biome.jsonc)', () => {
  it(`wraps a line longer than ${LINE_WIDTH} characters, and the check fails until it is`, () => {
    const args = Array.from({ length: 8 }, (_, i) => `argument${i}WithALongName`).join(', ');
    const long = `export const y = call(${args});\n`;
    expect(long.length).toBeGreaterThan(LINE_WIDTH);
    const dir = tree({
      'src/long.ts':
        'declare function call(...a: string[]): void;\n' +
        `${Array.from({ length: 8 }, (_, i) => `declare const argument${i}WithALongName: string;\n`).join('')}${long}`,
    });
    const check = biome(dir, ['format', '--vcs-enabled=false', '.']);
    expect(check.status).not.toBe(0);
    const write = biome(dir, ['format', '--vcs-enabled=false', '--write', '.']);
    expect(write.status).toBe(0);
    const lines = readFileSync(join(dir, 'src/long.ts'), 'utf8').split('\n');
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThanOrEqual(LINE_WIDTH);
    expect(lines.filter((l) => /argument\dWithALongName,$/.test(l.trim()))).toHaveLength(8);
  });
});

describe("the page's type check (src/viewer/page/tsconfig.json, tsconfig.typed.json)", () => {
  // One program over three page scripts (the DOM library is large to load): each one's errors.
  it('rejects a DOM property the element does not have and a possibly-null element; accepts them typed', () => {
    const dir = files({
      'no-such-property.js': "// @ts-check\ndocument.body.valu = 'x';\n",
      'maybe-null.js': "// @ts-check\ndocument.getElementById('x').hidden = true;\n",
      'typed.js': "// @ts-check\nconst el = /** @type {HTMLInputElement} */ (document.getElementById('x'));\nel.value = 'x';\n",
      // a script in a subfolder of the page is checked too
      'sub/deep.js': "// @ts-check\ndocument.body.valu = 'x';\n",
    });
    expect(pageErrors(dir, 'tsconfig.json')).toEqual(['maybe-null.js TS2531', 'no-such-property.js TS2339', 'sub/deep.js TS2339']);
  });

  it('rejects an untyped parameter in the scripts tsconfig.typed.json lists (noImplicitAny), and accepts a typed one', () => {
    const dir = files({
      'api.js': '// @ts-check\nexport function api(route) {\n  return route;\n}\n',
      'dom.js': '// @ts-check\n/** @param {string} s */\nexport function visible(s) {\n  return s;\n}\n',
      'format.js': '// @ts-check\nexport const nf = (n = 1) => n;\n',
      'inspect.js': '// @ts-check\nexport const i = 1;\n',
      'model.js': '// @ts-check\nexport const m = 1;\n',
      'render.js': '// @ts-check\nexport const r = 1;\n',
      'app.js': '// @ts-check\nexport const a = 1;\n',
      'timeline.js': '// @ts-check\nexport const t = 1;\n',
      'vlist.js': '// @ts-check\nexport const v = 1;\n',
      'types.d.ts': 'export type Kid = Node;\n',
      'unsafe-chars.d.ts': 'export const UNSAFE_CHAR_CLASS: string;\n',
      // not listed: still checked by tsconfig.json, with untyped parameters as any
      'later.js': '// @ts-check\nexport function later(x) {\n  return x;\n}\n',
    });
    expect(pageErrors(dir, 'tsconfig.typed.json')).toEqual(['api.js TS7006']);
    expect(pageErrors(dir, 'tsconfig.json')).toEqual([]);
  });

  const page = join(repoRoot, 'src/viewer/page');
  /** Every page script, in subfolders too, as paths relative to the page folder. */
  const scripts = (readdirSync(page, { recursive: true }) as string[]).filter((f) => f.endsWith('.js')).map((f) => f.split(sep).join('/'));

  it('lists every page script in tsconfig.typed.json (all typed: noImplicitAny on each)', () => {
    // A new script must join the typed list; none leaves it.
    const cfg = ts.getParsedCommandLineOfConfigFile(
      join(page, 'tsconfig.typed.json'),
      {},
      { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
    )!;
    const typed = new Set(cfg.fileNames.map((f) => f.slice(page.length + 1)));
    expect(scripts.filter((f) => !typed.has(f)).sort()).toEqual([]);
    expect(typed.has('app.js') && typed.has('timeline.js')).toBe(true);
  });

  it('finds no explicit `any` in the page scripts, and the counter sees each spelling of one (review 3: typed means typed)', () => {
    // A JSDoc `{any}` satisfies noImplicitAny and checks nothing; so do `{*}`, `{?}`, `{Object}` and
    // a generic named without its arguments (`{Promise}` is Promise<any> in a .js file).
    const probe = [
      '// @ts-check',
      '/** @param {any} a @param {*} b @param {?} c @param {Object} d @param {Promise} e @param {Array} f */',
      'export function f(a, b, c, d, e, f) {',
      '  const g = /** @type {any} */ (a);',
      '  return [g, b, c, d, e, f];',
      '}',
      '/** @typedef {{ x: Record<string, any>, y: Map<string, number>, z: Array<string> }} T */',
      '/** @type {(x: any) => void} */',
      'export const h = () => {};',
    ].join('\n');
    expect(explicitAnys('probe.js', probe)).toBe(9);
    expect(explicitAnys('types.d.ts', 'export type A = any;\nexport interface B { b: Promise<any> }\n')).toBe(2);
    expect(
      explicitAnys('ok.js', '// @ts-check\n/** @param {object} a @param {unknown} b @param {Promise<void>} c */\nexport const k = 1;\n'),
    ).toBe(0);
    const typeFiles = (readdirSync(page, { recursive: true }) as string[])
      .filter((f) => /\.(js|ts)$/.test(f))
      .map((f) => f.split(sep).join('/'));
    expect(typeFiles).toContain('types.d.ts');
    const counts = typeFiles.map((f) => [f, explicitAnys(f, readFileSync(join(page, f), 'utf8'))] as const);
    expect(Object.fromEntries(counts.filter(([, n]) => n !== 0))).toEqual({});
  });
});

/** Generics that a .js file may name without arguments, meaning each missing argument as `any`. */
const GENERICS = new Set(['Array', 'ReadonlyArray', 'Promise', 'Map', 'Set', 'WeakMap', 'WeakSet', 'Record', 'Iterable', 'Partial']);

/**
 * Explicit `any`s in a page script or declaration file: the `any` keyword (in code or JSDoc), JSDoc's
 * `*` and `?`, `Object` in JSDoc (any in a .js file), and a generic from GENERICS written bare in JSDoc.
 */
function explicitAnys(file: string, text: string): number {
  const kind = file.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS;
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  let n = 0;
  const visit = (x: ts.Node, inDoc: boolean): void => {
    const doc = inDoc || ts.isJSDoc(x);
    if (x.kind === ts.SyntaxKind.AnyKeyword || x.kind === ts.SyntaxKind.JSDocAllType || x.kind === ts.SyntaxKind.JSDocUnknownType) n++;
    else if (doc && ts.isTypeReferenceNode(x) && ts.isIdentifier(x.typeName) && !x.typeArguments) {
      if (x.typeName.text === 'Object' || GENERICS.has(x.typeName.text)) n++;
    }
    for (const d of (x as { jsDoc?: ts.Node[] }).jsDoc ?? []) visit(d, true);
    ts.forEachChild(x, (c) => visit(c, doc));
  };
  visit(sf, false);
  return n;
}

/** The page's tsconfig (with the one it extends) run on the scripts in `dir`: `file TScode`, sorted. */
function pageErrors(dir: string, config: string): string[] {
  for (const name of ['tsconfig.json', 'tsconfig.typed.json']) copyFileSync(join(repoRoot, 'src/viewer/page', name), join(dir, name));
  const cfg = ts.getParsedCommandLineOfConfigFile(join(dir, config), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!;
  return ts
    .getPreEmitDiagnostics(ts.createProgram(cfg.fileNames, cfg.options))
    .map((d) => `${d.file?.fileName.slice(dir.length + 1)} TS${d.code}`)
    .sort();
}
