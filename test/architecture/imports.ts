/**
 * Every module reference a source file makes, read with the TypeScript parser (not a regular
 * expression, so strings and comments that merely look like imports are not counted, and no form
 * is missed because it spans lines): import declarations (type-only and side-effect ones
 * included), `export … from`, `import x = require(…)`, dynamic `import(…)`, `require(…)` and
 * `require.resolve(…)`, `import.meta.resolve(…)`, type-level `import('…')`, module augmentations
 * (`declare module '…'`), and in JavaScript files JSDoc's `@import` tags and `import('…')` types.
 *
 * `/// <reference path>` and `/// <reference types>` directives count as type-only imports.
 *
 * What cannot be checked is returned as `unreadable`, so the layer test can refuse it: a dynamic
 * import or require whose argument is not a literal; a module loaded through `createRequire(…)`
 * (unless called at once with a literal) or a worker_threads `Worker`, under any local name,
 * through a namespace or default import of `node:module`/`node:worker_threads`, or destructured
 * from a require or import of them; any other use of those bindings or of `require` (passed
 * around, aliased: `const r = require`); and code compiled at run time (`eval`, `Function`,
 * `node:vm`), which can hold an import of any text. Names are matched by spelling, scopes aside:
 * a local that shadows one of them is refused too, which errs on the safe side.
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

/** Modules whose exports load other modules, and the export that does. */
const LOADER_MODULES: Record<string, 'createRequire' | 'Worker'> = {
  module: 'createRequire',
  'node:module': 'createRequire',
  worker_threads: 'Worker',
  'node:worker_threads': 'Worker',
};
/** Modules that compile code at run time. */
const COMPILER_MODULES = new Set(['vm', 'node:vm']);
/** Globals that compile code at run time. */
const COMPILERS = new Set(['eval', 'Function']);

/** The bindings a file has for the module loaders: by local name, and namespaces of a loader module. */
interface LoaderBindings {
  /** Local name → which loader it is (`import { createRequire as cr }` → cr: createRequire). */
  names: Map<string, 'createRequire' | 'Worker'>;
  /** Local names bound to a whole loader module (`import * as m from 'node:module'`). */
  namespaces: Map<string, 'createRequire' | 'Worker'>;
}

/** `require('m')`, `await import('m')`: the literal module it loads, if any. */
function loadedModule(e: ts.Expression | undefined): string | undefined {
  while (e && (ts.isAwaitExpression(e) || ts.isParenthesizedExpression(e))) e = e.expression;
  if (!e || !ts.isCallExpression(e)) return undefined;
  const isLoad = e.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(e.expression) && e.expression.text === 'require');
  return isLoad ? literalText(e.arguments[0]) : undefined;
}

function loaderBindings(sf: ts.SourceFile): LoaderBindings {
  const names = new Map<string, 'createRequire' | 'Worker'>([
    // The plain spellings always count: the global Worker, and createRequire however it came.
    ['createRequire', 'createRequire'],
    ['Worker', 'Worker'],
  ]);
  const namespaces = new Map<string, 'createRequire' | 'Worker'>();
  const ownNames = new Set<string>();
  const loaderBound = new Set<string>();
  const bindPattern = (pattern: ts.BindingName, loader: 'createRequire' | 'Worker'): void => {
    if (ts.isIdentifier(pattern)) {
      namespaces.set(pattern.text, loader);
      return;
    }
    if (!ts.isObjectBindingPattern(pattern)) return;
    for (const el of pattern.elements) {
      const key = el.propertyName && ts.isIdentifier(el.propertyName) ? el.propertyName.text : undefined;
      const imported = key ?? (ts.isIdentifier(el.name) ? el.name.text : undefined);
      if (imported === loader && ts.isIdentifier(el.name)) {
        names.set(el.name.text, loader);
        loaderBound.add(el.name.text);
      }
    }
  };
  const visit = (n: ts.Node): void => {
    if (ts.isImportDeclaration(n)) {
      const loader = LOADER_MODULES[literalText(n.moduleSpecifier) ?? ''];
      const clause = n.importClause;
      // A name imported from any other module (dsh's own Worker class) is not the global one.
      const b0 = clause?.namedBindings;
      if (!loader && b0 && ts.isNamedImports(b0)) for (const el of b0.elements) ownNames.add(el.name.text);
      if (loader && clause) {
        if (clause.name) namespaces.set(clause.name.text, loader);
        const b = clause.namedBindings;
        if (b && ts.isNamespaceImport(b)) namespaces.set(b.name.text, loader);
        if (b && ts.isNamedImports(b))
          for (const el of b.elements)
            if ((el.propertyName ?? el.name).text === loader) {
              names.set(el.name.text, loader);
              loaderBound.add(el.name.text);
            }
      }
    } else if (ts.isImportEqualsDeclaration(n) && ts.isExternalModuleReference(n.moduleReference)) {
      const loader = LOADER_MODULES[literalText(n.moduleReference.expression) ?? ''];
      if (loader) namespaces.set(n.name.text, loader);
    } else if (ts.isVariableDeclaration(n)) {
      const loader = LOADER_MODULES[loadedModule(n.initializer) ?? ''];
      if (loader) bindPattern(n.name, loader);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  for (const name of ownNames) if (names.get(name) !== undefined && !loaderBound.has(name)) names.delete(name);
  return { names, namespaces };
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
  const loaderOf = (e: ts.Expression): 'createRequire' | 'Worker' | undefined => {
    if (ts.isIdentifier(e)) return bindings.names.get(e.text);
    if (ts.isPropertyAccessExpression(e) && ts.isIdentifier(e.expression)) {
      const ns = bindings.namespaces.get(e.expression.text);
      if (ns !== undefined && e.name.text === ns) return ns;
    }
    return undefined;
  };
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
      if (!readLoaders.has(n) && !options) unreadable.push({ form: 'module-loader', line: lineOf(n), text: n.getText(sf).slice(0, 120) });
    } else if (ts.isCallExpression(n)) {
      const isDynamicImport = n.expression.kind === ts.SyntaxKind.ImportKeyword;
      if (isDynamicImport || isRequireCallee(n.expression)) {
        const form = isDynamicImport ? 'dynamic-import' : 'require';
        const spec = literalText(n.arguments[0]);
        if (spec !== undefined) add(spec, form, false, n);
        else unreadable.push({ form, line: lineOf(n), text: n.getText(sf).slice(0, 120) });
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
        unreadable.push({ form: 'module-loader', line: lineOf(n), text: n.parent.getText(sf).slice(0, 120) });
      }
    } else if (ts.isPropertyAccessExpression(n) && COMPILERS.has(n.name.text) && ts.isIdentifier(n.expression)) {
      // globalThis.eval, window.Function
      if (['globalThis', 'window', 'self', 'global'].includes(n.expression.text))
        unreadable.push({ form: 'eval', line: lineOf(n), text: n.getText(sf).slice(0, 120) });
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
