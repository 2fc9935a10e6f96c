/**
 * Every module reference a source file makes, read with the TypeScript parser (not a regular
 * expression, so strings and comments that merely look like imports are not counted, and no form
 * is missed because it spans lines): import declarations (type-only and side-effect ones
 * included), `export … from`, `import x = require(…)`, dynamic `import(…)`, `require(…)`,
 * `require.resolve(…)` and `process.getBuiltinModule(…)`, `import.meta.resolve(…)`, type-level
 * `import('…')`, module augmentations (`declare module '…'`), and in JavaScript files JSDoc's
 * `@import` tags and `import('…')` types.
 *
 * `/// <reference path>` and `/// <reference types>` directives count as type-only imports.
 *
 * What cannot be checked is returned as `unreadable`, so the layer test can refuse it:
 * - a dynamic import, require or `getBuiltinModule` whose argument is not a literal;
 * - a module loaded through `createRequire(…)` (unless called at once with a literal), a
 *   worker_threads `Worker` or a child_process `fork`, under any local name, through a namespace
 *   or default import (`import m from`, `import * as m`, `import { default as m }`), destructured
 *   from a require, import or `getBuiltinModule` of their module, or reached inline without a
 *   binding (`(await import('node:worker_threads')).Worker`);
 * - any other use of those bindings, of `require` (passed around, aliased: `const r = require`;
 *   `module.require`, `process.mainModule.require`) or of `getBuiltinModule`; a named import of
 *   any node:module export but `createRequire` and the two that load nothing (`isBuiltin`,
 *   `builtinModules`): `register` installs loader hooks, `Module._load` loads a file; an
 *   `export … from` of a loader module, which would hand its exports on under other names;
 * - code compiled at run time, which can hold an import of any text: `eval` and `Function`
 *   (called, aliased, `(0, eval)`, destructured under any name, `{ eval: run } = globalThis`, or
 *   as a property of a global object, `globalThis.eval`, `globalThis['eval']`, and any computed
 *   property of a global object); the global object itself used other than by reading a member
 *   (`const g = globalThis`, `Reflect.get(globalThis, k)`, `globalThis.globalThis`,
 *   `document.defaultView`), since its eval is then out of sight; any read of `.constructor`
 *   but its `.name` (`(async () => {}).constructor('…')`, through `.call` or a cast, or bound to a
 *   name: the AsyncFunction and GeneratorFunction constructors); and an import of `node:vm` or
 *   `node:inspector` (whose `Runtime.evaluate` runs text).
 * A specifier with a URL scheme (`file:`, `data:`, `http:`) is returned as an import; the layer
 * rules refuse it, since it cannot be placed in a layer, as they refuse a `#name` package.json
 * alias and every built-in module not on their allow-list (`node:cluster`, `node:repl`,
 * `node:test`, … load or compile code; layers.ts, ALLOWED_BUILTINS).
 *
 * Names are matched by spelling, scopes aside: a local that shadows one of them is refused too,
 * which errs on the safe side. The global object's names are the exception (`window`, `top`,
 * `parent` are common local names): a binding declared in an enclosing scope is not the global.
 *
 * Limits: no static reader can catch every way to run code or load a module, only the spellings
 * that name it. These are not caught: a Function constructor reached through data
 * (`Reflect.construct`, `Reflect.get(fn, 'constr' + 'uctor')`, a key built at run time on an
 * object other than the globals, `const { [k]: v } = process`); `this` at the top of a sloppy
 * script (the page's scripts are modules, where it is undefined); a child process that runs node on a path given as data
 * (`spawn(process.execPath, [file])`, `execFile('node', …)`, `--import` in NODE_OPTIONS); native
 * code (`process.dlopen`); and a file written at run time and imported by a non-literal name (that
 * import itself is reported). The layer test holds the code a reviewer reads, not a determined
 * adversary; the review still is.
 */
import ts from 'typescript';

export type ImportForm =
  | 'import'
  | 'export-from'
  | 'import-equals'
  | 'dynamic-import'
  | 'require'
  | 'import-type'
  | 'module-augmentation'
  | 'jsdoc-import'
  | 'reference';

export interface ImportRef {
  specifier: string;
  form: ImportForm;
  /** Erased at compile time (`import type`, `export type`, type positions, augmentations, JSDoc). */
  typeOnly: boolean;
  /** 1-based. */
  line: number;
}

export interface UnreadableImport {
  form: 'dynamic-import' | 'require' | 'module-loader' | 'eval';
  line: number;
  text: string;
}

export interface FileImports {
  imports: ImportRef[];
  unreadable: UnreadableImport[];
}

function scriptKind(fileName: string): ts.ScriptKind {
  if (/\.(?:js|mjs|cjs)$/.test(fileName)) return ts.ScriptKind.JS;
  if (fileName.endsWith('.tsx')) return ts.ScriptKind.TSX;
  if (fileName.endsWith('.jsx')) return ts.ScriptKind.JSX;
  return ts.ScriptKind.TS;
}

function literalText(node: ts.Node | undefined): string | undefined {
  if (node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node))) return node.text;
  return undefined;
}

function isRequireCallee(e: ts.Expression): boolean {
  if (ts.isIdentifier(e)) return e.text === 'require';
  // require.resolve('x') and import.meta.resolve('x') name a module too.
  if (ts.isPropertyAccessExpression(e) && e.name.text === 'resolve') {
    const o = e.expression;
    if (ts.isIdentifier(o) && o.text === 'require') return true;
    if (ts.isMetaProperty(o) && o.keywordToken === ts.SyntaxKind.ImportKeyword && o.name.text === 'meta') return true;
  }
  return false;
}

/** `(x)`, `await x`, `x as T`, `x!`, `x satisfies T` → x. */
function unwrap(e: ts.Expression): ts.Expression {
  while (
    ts.isParenthesizedExpression(e) ||
    ts.isAwaitExpression(e) ||
    ts.isAsExpression(e) ||
    ts.isNonNullExpression(e) ||
    ts.isSatisfiesExpression(e) ||
    ts.isTypeAssertionExpression(e)
  )
    e = e.expression;
  return e;
}

/** The name a member access reads: `o.name`, `o['name']`; undefined for a key computed at run time. */
function memberName(e: ts.Node): string | undefined {
  if (ts.isPropertyAccessExpression(e)) return e.name.text;
  if (ts.isElementAccessExpression(e)) return literalText(e.argumentExpression);
  return undefined;
}

/** The text of a property key that is a plain name or a string: `{ eval: x }`, `{ 'eval': x }`. */
function memberKey(key: ts.PropertyName): string | undefined {
  if (ts.isIdentifier(key) || ts.isStringLiteral(key) || ts.isNoSubstitutionTemplateLiteral(key)) return key.text;
  if (ts.isComputedPropertyName(key)) return literalText(key.expression) ?? '';
  return undefined;
}

/** `getBuiltinModule`, `process.getBuiltinModule`, `process['getBuiltinModule']`: Node 20.16's loader of built-in modules. */
function isGetBuiltin(e: ts.Expression): boolean {
  e = unwrap(e);
  return (ts.isIdentifier(e) && e.text === 'getBuiltinModule') || memberName(e) === 'getBuiltinModule';
}

type Loader = 'createRequire' | 'Worker' | 'fork';
interface LoaderModule {
  /** The export that loads a module. */
  loader: Loader;
  /** The other exports a named import may take; null: any (they load and run nothing). */
  harmless: ReadonlySet<string> | null;
}
const NODE_MODULE: LoaderModule = { loader: 'createRequire', harmless: new Set(['isBuiltin', 'builtinModules']) };
const WORKER_THREADS: LoaderModule = { loader: 'Worker', harmless: null };
const CHILD_PROCESS: LoaderModule = { loader: 'fork', harmless: null };
/** Modules whose exports load other modules, and the export that does. */
const LOADER_MODULES: Record<string, LoaderModule> = {
  module: NODE_MODULE,
  'node:module': NODE_MODULE,
  worker_threads: WORKER_THREADS,
  'node:worker_threads': WORKER_THREADS,
  child_process: CHILD_PROCESS,
  'node:child_process': CHILD_PROCESS,
};
/** Modules that compile code at run time. */
const COMPILER_MODULES = new Set(['vm', 'node:vm', 'inspector', 'node:inspector', 'inspector/promises', 'node:inspector/promises']);
/** Globals that compile code at run time. */
const COMPILERS = new Set(['eval', 'Function']);
/** The names of the global object (Node's and the page's; `parent`, `top` and `frames` are the window too). */
const GLOBAL_OBJECTS = new Set(['globalThis', 'window', 'self', 'global', 'parent', 'top', 'frames']);
/** Members that hand out a global object from another object: `document.defaultView`, an iframe's `contentWindow`. */
const GLOBAL_MEMBERS = new Set(['defaultView', 'contentWindow']);
/**
 * Names that, destructured off an object (`const { eval: run } = globalThis`,
 * `const { getBuiltinModule: load } = process`), bind a compiler or a loader under a name this
 * reader does not follow.
 */
const HIDDEN_WHEN_DESTRUCTURED = new Set([...COMPILERS, 'constructor', 'require', 'getBuiltinModule']);

/** The names a binding pattern declares: `{ a, b: [c] }` → a, c. */
function boundNames(name: ts.BindingName, out: Set<string>): void {
  if (ts.isIdentifier(name)) out.add(name.text);
  else for (const el of name.elements) if (!ts.isOmittedExpression(el)) boundNames(el.name, out);
}

/** Does `scope` (a block, a file, a function, a `for` or a `catch`) itself declare `name`? */
function declaresHere(scope: ts.Node, name: string): boolean {
  const names = new Set<string>();
  const statements = (list: readonly ts.Statement[]): void => {
    for (const s of list) {
      if (ts.isVariableStatement(s)) for (const d of s.declarationList.declarations) boundNames(d.name, names);
      else if ((ts.isFunctionDeclaration(s) || ts.isClassDeclaration(s) || ts.isEnumDeclaration(s)) && s.name) names.add(s.name.text);
      else if (ts.isImportDeclaration(s) && s.importClause) {
        const c = s.importClause;
        if (c.name) names.add(c.name.text);
        const b = c.namedBindings;
        if (b && ts.isNamespaceImport(b)) names.add(b.name.text);
        if (b && ts.isNamedImports(b)) for (const el of b.elements) names.add(el.name.text);
      }
    }
  };
  if (ts.isSourceFile(scope) || ts.isBlock(scope) || ts.isModuleBlock(scope)) statements(scope.statements);
  else if (ts.isCaseBlock(scope)) for (const c of scope.clauses) statements(c.statements);
  else if (ts.isCatchClause(scope) && scope.variableDeclaration) boundNames(scope.variableDeclaration.name, names);
  else if ((ts.isForStatement(scope) || ts.isForOfStatement(scope) || ts.isForInStatement(scope)) && scope.initializer) {
    if (ts.isVariableDeclarationList(scope.initializer)) for (const d of scope.initializer.declarations) boundNames(d.name, names);
  } else if (ts.isFunctionLike(scope)) {
    for (const p of scope.parameters) boundNames(p.name, names);
    if ((ts.isFunctionExpression(scope) || ts.isClassExpression(scope)) && scope.name) names.add(scope.name.text);
    // `var` is hoisted to the function from any block inside it (not from nested functions).
    const body = (scope as ts.FunctionLikeDeclarationBase).body;
    const hoisted = (n: ts.Node): void => {
      if (ts.isFunctionLike(n)) return;
      if (ts.isVariableDeclarationList(n) && !(n.flags & ts.NodeFlags.BlockScoped))
        for (const d of n.declarations) boundNames(d.name, names);
      ts.forEachChild(n, hoisted);
    };
    if (body) ts.forEachChild(body, hoisted);
  }
  return names.has(name);
}

/** Is this identifier a local binding of its name (declared in an enclosing scope), not the global it spells? */
function isLocal(id: ts.Identifier): boolean {
  for (let a: ts.Node | undefined = id.parent; a; a = a.parent) if (declaresHere(a, id.text)) return true;
  return false;
}

/** The bindings a file has for the module loaders: by local name, and namespaces of a loader module. */
interface LoaderBindings {
  /** Local name → which loader it is (`import { createRequire as cr }` → cr: createRequire). */
  names: Map<string, Loader>;
  /** Local names bound to a whole loader module (`import * as m from 'node:module'`). */
  namespaces: Map<string, Loader>;
  /** Bindings of a loader module's exports that load or run code but are not its loader (`import { register }`). */
  forbidden: ts.Node[];
}

/** `require('m')`, `await import('m')`, `process.getBuiltinModule('m')`: the literal module it loads, if any. */
function loadedModule(e: ts.Expression | undefined): string | undefined {
  if (e) e = unwrap(e);
  if (!e || !ts.isCallExpression(e)) return undefined;
  const isLoad =
    e.expression.kind === ts.SyntaxKind.ImportKeyword ||
    (ts.isIdentifier(e.expression) && e.expression.text === 'require') ||
    isGetBuiltin(e.expression);
  return isLoad ? literalText(e.arguments[0]) : undefined;
}

/** The name an import or binding element takes from its module: `{ a as b }` → a, `{ b }` → b. */
function importedName(el: ts.ImportSpecifier | ts.BindingElement): string | undefined {
  const key = el.propertyName;
  if (key && (ts.isIdentifier(key) || ts.isStringLiteral(key))) return key.text;
  return ts.isIdentifier(el.name) ? el.name.text : undefined;
}

function loaderBindings(sf: ts.SourceFile): LoaderBindings {
  const names = new Map<string, Loader>([
    // The plain spellings always count: the global Worker, and createRequire however it came.
    ['createRequire', 'createRequire'],
    ['Worker', 'Worker'],
  ]);
  const namespaces = new Map<string, Loader>();
  const forbidden: ts.Node[] = [];
  const ownNames = new Set<string>();
  const loaderBound = new Set<string>();
  /** One named import or destructured element of a loader module. */
  const bindElement = (el: ts.ImportSpecifier | ts.BindingElement, mod: LoaderModule): void => {
    const imported = importedName(el);
    // A type is erased: `import { type SourceMap }` runs nothing.
    if (ts.isImportSpecifier(el) && (el.isTypeOnly || el.parent.parent.isTypeOnly)) return;
    if (!ts.isIdentifier(el.name)) {
      forbidden.push(el);
    } else if (imported === mod.loader) {
      names.set(el.name.text, mod.loader);
      loaderBound.add(el.name.text);
    } else if (imported === 'default') {
      // `import { default as m }` is the default import spelled as a named one.
      namespaces.set(el.name.text, mod.loader);
    } else if (mod.harmless !== null && (imported === undefined || !mod.harmless.has(imported))) {
      forbidden.push(el);
    }
  };
  const bindPattern = (pattern: ts.BindingName, mod: LoaderModule): void => {
    if (ts.isIdentifier(pattern)) namespaces.set(pattern.text, mod.loader);
    else if (ts.isObjectBindingPattern(pattern)) for (const el of pattern.elements) bindElement(el, mod);
    else forbidden.push(pattern);
  };
  const visit = (n: ts.Node): void => {
    if (ts.isImportDeclaration(n)) {
      const mod = LOADER_MODULES[literalText(n.moduleSpecifier) ?? ''];
      const clause = n.importClause;
      // A name imported from any other module (dsh's own Worker class) is not the global one.
      const b0 = clause?.namedBindings;
      if (!mod && b0 && ts.isNamedImports(b0)) for (const el of b0.elements) ownNames.add(el.name.text);
      if (mod && clause) {
        if (clause.name) namespaces.set(clause.name.text, mod.loader);
        const b = clause.namedBindings;
        if (b && ts.isNamespaceImport(b)) namespaces.set(b.name.text, mod.loader);
        if (b && ts.isNamedImports(b)) for (const el of b.elements) bindElement(el, mod);
      }
    } else if (ts.isImportEqualsDeclaration(n) && ts.isExternalModuleReference(n.moduleReference)) {
      const mod = LOADER_MODULES[literalText(n.moduleReference.expression) ?? ''];
      if (mod) namespaces.set(n.name.text, mod.loader);
    } else if (ts.isVariableDeclaration(n)) {
      const mod = LOADER_MODULES[loadedModule(n.initializer) ?? ''];
      if (mod) bindPattern(n.name, mod);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  for (const name of ownNames) if (names.get(name) !== undefined && !loaderBound.has(name)) names.delete(name);
  return { names, namespaces, forbidden };
}

/** Is this load (`import('m')`, `require('m')`) the whole initializer of a variable, so that its bindings were read? */
function isBound(load: ts.Node): boolean {
  let e: ts.Node = load;
  while (
    ts.isParenthesizedExpression(e.parent) ||
    ts.isAwaitExpression(e.parent) ||
    ts.isAsExpression(e.parent) ||
    ts.isNonNullExpression(e.parent) ||
    ts.isSatisfiesExpression(e.parent)
  )
    e = e.parent;
  return ts.isVariableDeclaration(e.parent) && e.parent.initializer === e;
}

/** Is this identifier a name being declared, a property name or part of a type, rather than a use of a binding? */
function isReference(id: ts.Identifier): boolean {
  const p = id.parent;
  if (ts.isPropertyAccessExpression(p) && p.name === id) return false;
  if (
    (ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p) || ts.isMethodDeclaration(p) || ts.isPropertySignature(p)) &&
    p.name === id
  )
    return false;
  if (ts.isBindingElement(p) && (p.propertyName === id || p.name === id)) return false;
  if ((ts.isVariableDeclaration(p) || ts.isParameter(p) || ts.isFunctionDeclaration(p) || ts.isClassDeclaration(p)) && p.name === id)
    return false;
  if (ts.isImportSpecifier(p) || ts.isImportClause(p) || ts.isNamespaceImport(p) || ts.isImportEqualsDeclaration(p)) return false;
  // `export { X } from '…'` and `export { a as X }` name another module's or an alias's binding.
  if (ts.isExportSpecifier(p) && (p.propertyName !== undefined ? p.name === id : p.parent.parent.moduleSpecifier !== undefined))
    return false;
  for (let a: ts.Node | undefined = p; a && !ts.isStatement(a); a = a.parent)
    if (ts.isTypeNode(a) && !ts.isExpressionWithTypeArguments(a)) return false;
  return true;
}

export function readImports(fileName: string, text: string): FileImports {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, scriptKind(fileName));
  const imports: ImportRef[] = [];
  const unreadable: UnreadableImport[] = [];
  const lineOf = (n: ts.Node): number => sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
  // createRequire(…) calls whose result is called at once with a literal (read as a require).
  const readLoaders = new Set<ts.Node>();
  // Callees of loader calls already judged above, so the reference check below does not count them again.
  const loaderCallees = new Set<ts.Node>();
  const bindings = loaderBindings(sf);
  /** Which loader an expression names: `cr`, `createRequire`, `m.createRequire`, `wt.Worker`. */
  const loaderOf = (e: ts.Expression): Loader | undefined => {
    if (ts.isIdentifier(e)) return bindings.names.get(e.text);
    if ((ts.isPropertyAccessExpression(e) || ts.isElementAccessExpression(e)) && ts.isIdentifier(e.expression)) {
      const ns = bindings.namespaces.get(e.expression.text);
      if (ns !== undefined && memberName(e) === ns) return ns;
    }
    return undefined;
  };
  const report = (form: UnreadableImport['form'], at: ts.Node, shown: ts.Node = at): void => {
    unreadable.push({ form, line: lineOf(at), text: shown.getText(sf).slice(0, 120) });
  };
  for (const f of bindings.forbidden) report('module-loader', f, f.parent);
  const add = (specifier: string, form: ImportForm, typeOnly: boolean, at: ts.Node): void => {
    imports.push({ specifier, form, typeOnly, line: lineOf(at) });
  };

  const visit = (n: ts.Node): void => {
    if (ts.isImportDeclaration(n)) {
      const spec = literalText(n.moduleSpecifier);
      // Only `import type` is erased: under verbatimModuleSyntax `import { type A } from 'x'`
      // still loads 'x'.
      if (spec !== undefined) add(spec, 'import', n.importClause?.isTypeOnly === true, n);
    } else if (ts.isExportDeclaration(n) && n.moduleSpecifier) {
      const spec = literalText(n.moduleSpecifier);
      if (spec !== undefined) add(spec, 'export-from', n.isTypeOnly, n);
      // Re-exporting a loader module hands its loaders on under names this reader does not follow.
      if (spec !== undefined && LOADER_MODULES[spec] && !n.isTypeOnly) report('module-loader', n);
    } else if (ts.isImportEqualsDeclaration(n) && ts.isExternalModuleReference(n.moduleReference)) {
      const spec = literalText(n.moduleReference.expression);
      if (spec !== undefined) add(spec, 'import-equals', n.isTypeOnly, n);
    } else if (
      ts.isCallExpression(n) &&
      ts.isCallExpression(n.expression) &&
      loaderOf(n.expression.expression) === 'createRequire' &&
      literalText(n.arguments[0]) !== undefined
    ) {
      // `createRequire(…)('name')` names what it loads: read as a require of it.
      add(literalText(n.arguments[0])!, 'require', false, n);
      readLoaders.add(n.expression);
    } else if ((ts.isCallExpression(n) || ts.isNewExpression(n)) && loaderOf(n.expression) !== undefined) {
      loaderCallees.add(n.expression);
      // worker_threads' Worker takes a file name or URL first; one built from an options object
      // (dsh's own `dsh worker`) loads no module.
      const options = loaderOf(n.expression) === 'Worker' && n.arguments?.[0] !== undefined && ts.isObjectLiteralExpression(n.arguments[0]);
      // A require made at run time, or a worker's module: what they load is not in the syntax.
      if (!readLoaders.has(n) && !options) report('module-loader', n);
    } else if (ts.isCallExpression(n)) {
      const isDynamicImport = n.expression.kind === ts.SyntaxKind.ImportKeyword;
      if (isDynamicImport || isRequireCallee(n.expression) || isGetBuiltin(n.expression)) {
        const form = isDynamicImport ? 'dynamic-import' : 'require';
        const spec = literalText(n.arguments[0]);
        if (spec !== undefined) add(spec, form, false, n);
        else report(form, n);
        // A loader module used inline, `(await import('node:worker_threads')).Worker`: no binding to follow.
        const loaded = loadedModule(n);
        if (loaded !== undefined && LOADER_MODULES[loaded] && !isBound(n)) report('module-loader', n, n.parent);
      }
    } else if (ts.isImportTypeNode(n)) {
      const arg = n.argument;
      const spec = ts.isLiteralTypeNode(arg) ? literalText(arg.literal) : undefined;
      if (spec !== undefined) add(spec, 'import-type', true, n);
    } else if (ts.isModuleDeclaration(n) && ts.isStringLiteral(n.name)) {
      add(n.name.text, 'module-augmentation', true, n);
    } else if (ts.isJSDocImportTag?.(n)) {
      const spec = literalText(n.moduleSpecifier);
      if (spec !== undefined) add(spec, 'jsdoc-import', true, n);
    }
    if (ts.isIdentifier(n) && isReference(n)) {
      const name = n.text;
      const callee = n.parent && (ts.isCallExpression(n.parent) || ts.isNewExpression(n.parent)) && n.parent.expression === n;
      const viaNamespace = ts.isPropertyAccessExpression(n.parent) && n.parent.expression === n && loaderCallees.has(n.parent);
      if (COMPILERS.has(name)) {
        // eval(…), new Function(…), (0, eval)(…), const f = Function: code from a string.
        unreadable.push({ form: 'eval', line: lineOf(n), text: n.parent.getText(sf).slice(0, 120) });
      } else if (name === 'require' && !callee && !(ts.isPropertyAccessExpression(n.parent) && isRequireCallee(n.parent))) {
        // `const r = require`, `module.require`-style indirection: what it loads is out of sight.
        unreadable.push({ form: 'require', line: lineOf(n), text: n.parent.getText(sf).slice(0, 120) });
      } else if ((bindings.names.has(name) && !loaderCallees.has(n)) || (bindings.namespaces.has(name) && !viaNamespace)) {
        // A loader used other than by a direct call: aliased, passed on, or another export of its module.
        report('module-loader', n, n.parent);
      } else if (name === 'getBuiltinModule' && !callee) {
        report('module-loader', n, n.parent);
      } else if (GLOBAL_OBJECTS.has(name) && !isLocal(n)) {
        // The global object itself: only a member read of a name that compiles or loads nothing, or
        // `typeof`. Taken as a value (`const g = globalThis`, `{ eval: run } = globalThis`,
        // `Reflect.get(globalThis, k)`), its eval and Function go out of sight.
        const p = n.parent;
        const memberRead = (ts.isPropertyAccessExpression(p) || ts.isElementAccessExpression(p)) && p.expression === n;
        if (!memberRead && !ts.isTypeOfExpression(p)) report('eval', n, p);
      }
    } else if (ts.isBindingElement(n)) {
      // `const { eval: run } = globalThis`, `const { getBuiltinModule: load } = process`: the key is what counts.
      const key = n.propertyName ? memberKey(n.propertyName) : ts.isIdentifier(n.name) ? n.name.text : undefined;
      const renamed = n.propertyName !== undefined;
      if (key !== undefined && HIDDEN_WHEN_DESTRUCTURED.has(key) && (renamed || COMPILERS.has(key) || key === 'constructor'))
        report(COMPILERS.has(key) || key === 'constructor' ? 'eval' : 'module-loader', n, n.parent);
    } else if (ts.isPropertyAccessExpression(n) || ts.isElementAccessExpression(n)) {
      const name = memberName(n);
      const object = unwrap(n.expression);
      const onGlobal = ts.isIdentifier(object) && GLOBAL_OBJECTS.has(object.text);
      const callee = (ts.isCallExpression(n.parent) || ts.isNewExpression(n.parent)) && n.parent.expression === n;
      const readsName = ts.isPropertyAccessExpression(n.parent) && n.parent.expression === n && n.parent.name.text === 'name';
      if (onGlobal && (name === undefined || COMPILERS.has(name) || GLOBAL_OBJECTS.has(name))) {
        // globalThis.eval, window['Function'], globalThis[key], globalThis.globalThis: code from a
        // string, any global at all, or the global object again.
        report('eval', n);
      } else if (name !== undefined && GLOBAL_MEMBERS.has(name)) {
        // document.defaultView, frame.contentWindow: a global object reached from another object.
        report('eval', n);
      } else if (name === 'constructor' && !readsName) {
        // (async () => {}).constructor('…'), `.constructor.call(…)`, `(x.constructor as F)(…)`: the
        // AsyncFunction constructor compiles its text. Only a constructor's `.name` is read.
        report('eval', callee ? n.parent : n);
      } else if (name === 'require') {
        // module.require, process.mainModule.require: CommonJS's require reached through an object.
        report('require', n);
      } else if (name === 'getBuiltinModule' && !callee) {
        report('module-loader', n, n.parent);
      }
    }
    // JSDoc is not among a node's children; in JavaScript files it can name modules
    // (`@import`, `@type {import('./x.js').T}`).
    const docs = (n as { jsDoc?: ts.JSDoc[] }).jsDoc;
    if (docs) for (const d of docs) visitDoc(d);
    ts.forEachChild(n, visit);
  };
  const visitDoc = (n: ts.Node): void => {
    if (ts.isJSDocImportTag?.(n)) {
      const spec = literalText(n.moduleSpecifier);
      if (spec !== undefined) add(spec, 'jsdoc-import', true, n);
    } else if (ts.isImportTypeNode(n)) {
      const arg = n.argument;
      const spec = ts.isLiteralTypeNode(arg) ? literalText(arg.literal) : undefined;
      if (spec !== undefined) add(spec, 'import-type', true, n);
    }
    ts.forEachChild(n, visitDoc);
  };
  visit(sf);
  for (const imp of imports)
    if (COMPILER_MODULES.has(imp.specifier) && !imp.typeOnly)
      unreadable.push({ form: 'eval', line: imp.line, text: `${imp.form} ${JSON.stringify(imp.specifier)}` });
  // `/// <reference path="…" />` pulls a file into the program; `types="…"` a package's types.
  const directiveLine = (pos: number): number => sf.getLineAndCharacterOfPosition(pos).line + 1;
  for (const r of sf.referencedFiles)
    imports.push({ specifier: r.fileName, form: 'reference', typeOnly: true, line: directiveLine(r.pos) });
  for (const r of sf.typeReferenceDirectives)
    imports.push({ specifier: r.fileName, form: 'reference', typeOnly: true, line: directiveLine(r.pos) });
  return { imports, unreadable };
}
