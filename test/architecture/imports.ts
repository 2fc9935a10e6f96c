/**
 * Every module reference a source file makes, read with the TypeScript parser (not a regular
 * expression, so strings and comments that merely look like imports are not counted, and no form
 * is missed because it spans lines): import declarations (type-only and side-effect ones
 * included), `export … from`, `import x = require(…)`, dynamic `import(…)`, `require(…)` and
 * `require.resolve(…)`, `import.meta.resolve(…)`, type-level `import('…')`, module augmentations
 * (`declare module '…'`), and in JavaScript files JSDoc's `@import` tags and `import('…')` types.
 *
 * A dynamic import or require whose argument is not a literal cannot be checked, nor can a module
 * loaded through `createRequire(…)` or `new Worker(…)`; these are returned as `unreadable` so the
 * layer test can refuse them.
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
  | 'jsdoc-import';

export interface ImportRef {
  specifier: string;
  form: ImportForm;
  /** Erased at compile time (`import type`, `export type`, type positions, augmentations, JSDoc). */
  typeOnly: boolean;
  /** 1-based. */
  line: number;
}

export interface UnreadableImport {
  form: 'dynamic-import' | 'require' | 'module-loader';
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

export function readImports(fileName: string, text: string): FileImports {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, scriptKind(fileName));
  const imports: ImportRef[] = [];
  const unreadable: UnreadableImport[] = [];
  const lineOf = (n: ts.Node): number => sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
  // createRequire(…) calls whose result is called at once with a literal (read as a require).
  const readLoaders = new Set<ts.Node>();
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
      ts.isIdentifier(n.expression.expression) &&
      n.expression.expression.text === 'createRequire' &&
      literalText(n.arguments[0]) !== undefined
    ) {
      // `createRequire(…)('name')` names what it loads: read as a require of it.
      add(literalText(n.arguments[0])!, 'require', false, n);
      readLoaders.add(n.expression);
    } else if (
      (ts.isCallExpression(n) || ts.isNewExpression(n)) &&
      ts.isIdentifier(n.expression) &&
      (n.expression.text === 'createRequire' || n.expression.text === 'Worker') &&
      !readLoaders.has(n) &&
      // worker_threads' Worker takes a file name or URL first; one built from an options object
      // (dsh's own `dsh worker`) loads no module.
      !(n.expression.text === 'Worker' && n.arguments?.[0] !== undefined && ts.isObjectLiteralExpression(n.arguments[0]))
    ) {
      // A require made at run time, or a worker's module: what they load is not in the syntax.
      unreadable.push({ form: 'module-loader', line: lineOf(n), text: n.getText(sf).slice(0, 120) });
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
  return { imports, unreadable };
}
