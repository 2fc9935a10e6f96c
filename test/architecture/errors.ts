/**
 * Which error classes a tree declares, and whether each derives from `CodedError` (issue 12
 * item 4). Read with the TypeScript parser: `class X extends Y<…>` for every class, declared or
 * an expression, named or anonymous, then each class named `…Error`, or reaching `Error`, is
 * followed up its `extends` chain by name.
 */
import ts from 'typescript';

export interface ClassDecl {
  name: string;
  base: string | undefined;
  file: string;
  line: number;
}

/**
 * The name a class goes by: its own, else the binding it is assigned to (`const X = class …`,
 * `{ X: class … }`, `X = class …`), else `default` for `export default class …`, else
 * `(anonymous class)`.
 */
function className(n: ts.ClassDeclaration | ts.ClassExpression): string {
  if (n.name) return n.name.text;
  let p: ts.Node = n.parent;
  while (ts.isParenthesizedExpression(p) || ts.isAsExpression(p) || ts.isSatisfiesExpression(p)) p = p.parent;
  if ((ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) && ts.isIdentifier(p.name))
    return p.name.text;
  if (ts.isBinaryExpression(p) && p.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
    const target = p.left;
    if (ts.isIdentifier(target)) return target.text;
    if (ts.isPropertyAccessExpression(target)) return target.name.text;
  }
  if (ts.isClassDeclaration(n) || ts.isExportAssignment(p)) return 'default';
  return '(anonymous class)';
}

export function readClasses(file: string, text: string): ClassDecl[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: ClassDecl[] = [];
  const visit = (n: ts.Node): void => {
    // Named or not: `const X = class extends Error {}` and `export default class extends Error {}` too.
    if (ts.isClassDeclaration(n) || ts.isClassExpression(n)) {
      const ext = n.heritageClauses?.find((h) => h.token === ts.SyntaxKind.ExtendsKeyword)?.types[0]?.expression;
      const base =
        ext === undefined
          ? undefined
          : ts.isIdentifier(ext)
            ? ext.text
            : ts.isPropertyAccessExpression(ext)
              ? ext.name.text
              : ext.getText(sf);
      out.push({ name: className(n), base, file, line: sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1 });
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

const BUILTIN_ERRORS = new Set([
  'Error',
  'TypeError',
  'RangeError',
  'SyntaxError',
  'AggregateError',
  'EvalError',
  'ReferenceError',
  'URIError',
]);

/** Error classes (by name or ancestry) whose chain does not reach `root`, as `file:line Name (chain)`. */
export function uncodedErrors(classes: readonly ClassDecl[], root = 'CodedError'): string[] {
  const byName = new Map<string, ClassDecl>();
  for (const c of classes) byName.set(c.name, c);
  const out: string[] = [];
  for (const c of classes) {
    if (c.name === root) continue;
    const chain: string[] = [c.name];
    let base = c.base;
    const seen = new Set([c.name]);
    while (base !== undefined && base !== root && byName.has(base) && !seen.has(base)) {
      seen.add(base);
      chain.push(base);
      base = byName.get(base)!.base;
    }
    if (base === root) continue;
    // A base that is an expression (`mixin(Error)`, `cond ? Error : X`) counts when it names an error class.
    const isError =
      c.name.endsWith('Error') || (base !== undefined && (BUILTIN_ERRORS.has(base) || base.endsWith('Error') || /\b\w*Error\b/.test(base)));
    if (isError) out.push(`${c.file}:${c.line} ${c.name} (${[...chain, base ?? 'no base'].join(' → ')})`);
  }
  return out;
}
