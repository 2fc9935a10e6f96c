/**
 * Which error classes a tree declares, and whether each derives from the real `CodedError`
 * (issue 12 item 4), asked of the TypeScript type checker rather than read from spellings: a
 * program over the tree's .ts/.mts/.cts/.tsx files, then for every class (declared or an
 * expression, named or not) its chain of base types as the checker resolves it. So an alias
 * (`const Base = Error`), a property (`fake.CodedError`), a mixin (`withCode(Error)`) or a
 * built-in base of any name (`DOMException`) is followed to what it is, and `CodedError` counts
 * only as the symbol declared in src/model/coded-error.ts: a local class of that name does not.
 *
 * A class is an error class when its chain reaches a type declared outside the tree (the ES lib,
 * @types/node) that is assignable to the global `Error`. The base is also asked as a value: a
 * declared type can forget what it holds (`const B: new () => {} = Error`), so the `extends`
 * expression is followed through const aliases, imports and object properties to what makes it,
 * and a cast or a `let`/`var` binding on the way is refused (the checker's answer behind it is not
 * the value's). Errors made without a class are found by their calls, matched by the declaration
 * the call resolves to (so `const { setPrototypeOf } = Object` and `Reflect['setPrototypeOf']`
 * count): `Object.setPrototypeOf(X.prototype, Error.prototype)`, `Object.create(…)`,
 * `Reflect.setPrototypeOf` and `Reflect.construct(Error, args, X)` with a built-in error among the
 * arguments' values (`Error.prototype as object` is still Error's). A class whose base the checker
 * cannot resolve (an `any`) is reported as such.
 *
 * A stable code is a union of string literals: each non-generic CodedError's `code` type must be
 * one (`extends CodedError` alone would make it `string`), and each `new` of a generic one
 * (`ToolError<Code>`) must make one. A class that takes its code from a non-generic coded parent is
 * judged through that parent.
 *
 * Not covered: JavaScript files (tsconfig has no allowJs, so none ships from src/ but the
 * viewer's page scripts, whose ApiError cannot import CodedError), and objects that are errors
 * only by shape (`Object.assign(new Error(m), { code })`), which are instances, not classes.
 */
import { join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { listSources } from './layers.js';

export const TS_EXTS = ['.ts', '.mts', '.cts', '.tsx'];

/** The repository's compiler options, with the @types of its node_modules (so a temp tree type-checks too). */
export function compilerOptions(repoRoot: string): ts.CompilerOptions {
  const file = join(repoRoot, 'tsconfig.json');
  const json = ts.readConfigFile(file, ts.sys.readFile);
  if (json.error) throw new Error(ts.flattenDiagnosticMessageText(json.error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(json.config, ts.sys, repoRoot, undefined, file);
  return { ...parsed.options, noEmit: true, typeRoots: [join(repoRoot, 'node_modules', '@types')] };
}

export interface ErrorClasses {
  /** Every error class found, coded or not, as `file:line Name`. */
  classes: string[];
  /** Those whose chain does not reach the real CodedError, as `file:line Name (A → B → Error)`. */
  uncoded: string[];
  /**
   * CodedErrors whose `code` is not a union of string literals, as `file:line Name: code is T`:
   * each non-generic class, and each `new` of a generic one (`new ToolError(someString, …)`).
   * A code type may hold `string & {}` on purpose (a code carried verbatim from a log or another
   * system); it is reported with that type, for the test to allow by name.
   */
  looseCodes: string[];
}

interface Verdict {
  kind: 'coded' | 'uncoded' | 'none' | 'unresolved';
  chain: string[];
}

/**
 * The error classes under `root` and those not on `CodedError`, where the real one is the class
 * `CodedError` declared in `codedErrorFile` (a path under `root`).
 */
export function errorClasses(root: string, codedErrorFile: string, options: ts.CompilerOptions): ErrorClasses {
  root = resolve(root);
  const files = listSources(root, TS_EXTS)
    .filter((f) => !f.endsWith('.d.ts'))
    .map((f) => join(root, f));
  const program = ts.createProgram(files, options, cachingHost(options));
  const checker = program.getTypeChecker();
  const inTree = (sf: ts.SourceFile): boolean => !relative(root, sf.fileName).startsWith('..');
  const codedSf = program.getSourceFile(join(root, codedErrorFile));
  const codedDecl = codedSf?.statements.find((s): s is ts.ClassDeclaration => ts.isClassDeclaration(s) && s.name?.text === 'CodedError');
  if (!codedDecl?.name) throw new Error(`${codedErrorFile} declares no class CodedError`);
  const codedSym = checker.getSymbolAtLocation(codedDecl.name)!;
  const codedType = checker.getDeclaredTypeOfSymbol(codedSym) as ts.InterfaceType;
  const errorType = checker.getBaseTypes(codedType)[0];
  if (errorType?.symbol?.name !== 'Error') throw new Error('CodedError does not extend the global Error');

  const declaredOutside = (t: ts.Type): boolean => {
    const decls = t.symbol?.declarations ?? [];
    return decls.length > 0 && decls.every((d) => !inTree(d.getSourceFile()));
  };
  const nameOf = (t: ts.Type): string | undefined => {
    const decl = t.symbol?.declarations?.[0];
    if (decl && (ts.isClassDeclaration(decl) || ts.isClassExpression(decl))) {
      const n = className(decl);
      return n === 'CodedError' && t.symbol !== codedSym ? 'CodedError (not src/model’s)' : n;
    }
    return t.symbol?.name;
  };
  /** The type itself and every ancestor, breadth first, through intersections (mixins) and generic references. */
  const verdict = (start: ts.Type, self: boolean): Verdict => {
    const chain: string[] = [];
    const seen = new Set<ts.Type>();
    const queue: ts.Type[] = [start];
    let kind: Verdict['kind'] = 'none';
    while (queue.length > 0) {
      let t = queue.shift()!;
      if (t.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return { kind: 'unresolved', chain: [...chain, 'any'] };
      if (t.isIntersection() || t.isUnion()) {
        queue.push(...t.types);
        continue;
      }
      if (t.flags & ts.TypeFlags.Object && (t as ts.ObjectType).objectFlags & ts.ObjectFlags.Reference) t = (t as ts.TypeReference).target;
      if (seen.has(t)) continue;
      seen.add(t);
      const name = nameOf(t);
      // A built-in declared twice (@types/node's DOMException: an interface and a var's type) is named once.
      if ((t !== start || !self) && name !== undefined && chain.at(-1) !== name) chain.push(name);
      if (t.symbol === codedSym) kind = 'coded';
      else if (kind === 'none' && declaredOutside(t) && checker.isTypeAssignableTo(t, errorType)) kind = 'uncoded';
      if (t.isClassOrInterface()) queue.push(...checker.getBaseTypes(t));
    }
    return { kind, chain };
  };

  const isCoded = (t: ts.Type): boolean => verdict(t, false).kind === 'coded';
  /**
   * What a base or argument expression is at run time, not what its declared type says: through
   * parentheses, `!`, `satisfies`, const aliases, imports and object properties to the expression
   * that makes it, whose own type is asked. A cast (`as`, `<T>`) or a `let`/`var` binding on the
   * way is returned as such: the type checker's answer behind it is not the value's.
   */
  const baseValue = (e: ts.Expression, throughCasts: boolean, depth = 0): { type: ts.Type } | { hidden: ts.Node } => {
    while (ts.isParenthesizedExpression(e) || ts.isNonNullExpression(e) || ts.isSatisfiesExpression(e)) e = e.expression;
    if (ts.isAsExpression(e) || ts.isTypeAssertionExpression(e)) {
      if (!throughCasts) return { hidden: e };
      return baseValue(e.expression, throughCasts, depth + 1);
    }
    if (depth < 16 && (ts.isIdentifier(e) || ts.isPropertyAccessExpression(e) || ts.isElementAccessExpression(e))) {
      let sym = checker.getSymbolAtLocation(ts.isElementAccessExpression(e) ? e.argumentExpression : e);
      if (sym && sym.flags & ts.SymbolFlags.Alias) sym = checker.getAliasedSymbol(sym);
      const decl = sym?.valueDeclaration;
      if (decl && inTree(decl.getSourceFile())) {
        if (ts.isVariableDeclaration(decl)) {
          const constant = (ts.getCombinedNodeFlags(decl) & ts.NodeFlags.Const) !== 0;
          if (!constant && !throughCasts) return { hidden: decl };
          if (decl.initializer && ts.isIdentifier(decl.name)) return baseValue(decl.initializer, throughCasts, depth + 1);
        } else if (ts.isPropertyAssignment(decl)) {
          return baseValue(decl.initializer, throughCasts, depth + 1);
        }
      }
    }
    return { type: checker.getTypeAtLocation(e) };
  };
  /** The instance a constructor value makes (`Error` → the Error instance type), or the value's type itself. */
  const made = (t: ts.Type): ts.Type => t.getConstructSignatures()[0]?.getReturnType() ?? t;
  /** `Error.prototype` → `Error`'s value; any other argument → itself. */
  const prototypeOwner = (e: ts.Expression): ts.Expression => {
    while (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isTypeAssertionExpression(e) || ts.isNonNullExpression(e))
      e = e.expression;
    return ts.isPropertyAccessExpression(e) && e.name.text === 'prototype' ? e.expression : e;
  };
  /** Is this call Object.setPrototypeOf/create or Reflect.setPrototypeOf/construct, by the declaration it resolves to (any spelling)? */
  const setsPrototype = (call: ts.CallExpression): string | undefined => {
    // Resolving every call's signature costs a full type check: only a callee spelled with one of
    // the setters' names, or a local name bound to something else (`const { setPrototypeOf: sp } = Object`), is asked.
    const callee = call.expression;
    const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : undefined;
    const named = name === undefined || SETTER_NAMES.has(name);
    const local = (): boolean => {
      if (!ts.isIdentifier(callee)) return false;
      const d = checker.getSymbolAtLocation(callee)?.valueDeclaration;
      if (d === undefined) return false;
      if (ts.isBindingElement(d)) return true;
      const init = ts.isVariableDeclaration(d) ? d.initializer : undefined;
      return init !== undefined && (ts.isIdentifier(init) || ts.isPropertyAccessExpression(init) || ts.isElementAccessExpression(init));
    };
    if (!named && !local()) return undefined;
    const sig = checker.getResolvedSignature(call)?.declaration;
    const decl = sig && !ts.isJSDocSignature(sig) ? sig : undefined;
    if (decl && !inTree(decl.getSourceFile()) && decl.name && ts.isIdentifier(decl.name)) {
      const owner = decl.parent;
      const ownerName = ts.isInterfaceDeclaration(owner)
        ? owner.name.text
        : ts.isModuleBlock(owner)
          ? owner.parent.name.getText()
          : undefined;
      const id = `${ownerName === 'ObjectConstructor' ? 'Object' : ownerName}.${decl.name.text}`;
      if (PROTOTYPE_SETTERS.has(id)) return id;
    }
    const text = calleeText(call.expression);
    return PROTOTYPE_SETTERS.has(text) ? text : undefined;
  };
  /** The type of a class instance's `code`, or of a `new` expression's. */
  const codeType = (instance: ts.Type, at: ts.Node): ts.Type | undefined => {
    const prop = checker.getPropertyOfType(instance, 'code');
    return prop ? checker.getTypeOfSymbolAtLocation(prop, at) : undefined;
  };
  /** Does the class take its `code` type from a non-generic coded class of the tree, which is judged itself? */
  const inheritsCode = (instance: ts.Type): boolean => {
    const base = instance.isClassOrInterface() ? checker.getBaseTypes(instance)[0] : undefined;
    const decl = base?.symbol?.valueDeclaration;
    return (
      decl !== undefined &&
      (ts.isClassDeclaration(decl) || ts.isClassExpression(decl)) &&
      inTree(decl.getSourceFile()) &&
      !decl.typeParameters?.length
    );
  };
  /** A union of string literals (or one); `string & {}` members pass here and are named in the report. */
  const literalCodes = (t: ts.Type): boolean => (t.isUnion() ? t.types : [t]).every((m) => m.isStringLiteral());

  const classes: string[] = [];
  const uncoded: string[] = [];
  const looseCodes: string[] = [];
  for (const sf of program.getSourceFiles()) {
    if (!inTree(sf) || sf.isDeclarationFile) continue;
    const file = relative(root, sf.fileName).split(sep).join('/');
    const at = (n: ts.Node): string => `${file}:${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1}`;
    const visit = (n: ts.Node): void => {
      if ((ts.isClassDeclaration(n) || ts.isClassExpression(n)) && n !== codedDecl) {
        const sym = n.name ? checker.getSymbolAtLocation(n.name) : (n as unknown as { symbol?: ts.Symbol }).symbol;
        const hasBase = n.heritageClauses?.some((h) => h.token === ts.SyntaxKind.ExtendsKeyword) === true;
        if (sym && hasBase) {
          const name = className(n);
          const instance = checker.getDeclaredTypeOfSymbol(sym);
          let v = verdict(instance, true);
          // The declared type can forget what the base is (`const B: new () => {} = Error`,
          // `Error as unknown as ObjectConstructor`): ask the base's value too.
          const base = n.heritageClauses!.find((h) => h.token === ts.SyntaxKind.ExtendsKeyword)!.types[0]!.expression;
          const value = baseValue(base, false);
          if ('hidden' in value) {
            const how = ts.isVariableDeclaration(value.hidden) ? 'a let/var binding' : 'a cast';
            v = { kind: 'unresolved', chain: [`${how}: ${value.hidden.getText(sf).slice(0, 60)}`] };
          } else if (v.kind !== 'uncoded') {
            const vv = verdict(made(value.type), false);
            if (vv.kind === 'uncoded' || (vv.kind === 'unresolved' && v.kind !== 'unresolved')) v = vv;
          }
          if (v.kind !== 'none') classes.push(`${at(n)} ${name}`);
          if (v.kind === 'uncoded' || v.kind === 'unresolved') uncoded.push(`${at(n)} ${name} (${[name, ...v.chain].join(' → ')})`);
          else if (v.kind === 'coded' && !n.typeParameters?.length && !inheritsCode(instance)) {
            const code = codeType(instance, n);
            if (code && !literalCodes(code)) looseCodes.push(`${at(n)} ${name}: code is ${checker.typeToString(code)}`);
          }
        }
      } else if (ts.isNewExpression(n)) {
        // A generic CodedError (ToolError<Code>) made with a code that is not a literal.
        const t = checker.getTypeAtLocation(n);
        const decl = t.symbol?.valueDeclaration;
        const generic = decl && (ts.isClassDeclaration(decl) || ts.isClassExpression(decl)) && (decl.typeParameters?.length ?? 0) > 0;
        if (generic && isCoded(t)) {
          const code = codeType(t, n);
          if (code && !literalCodes(code))
            looseCodes.push(`${at(n)} new ${n.expression.getText(sf)}: code is ${checker.typeToString(code)}`);
        }
      } else if (ts.isCallExpression(n) && setsPrototype(n) !== undefined) {
        // A function made an error by hand: its prototype set to, or its instance built by, a
        // built-in error. Each argument's value is asked (`Error.prototype as object` is Error's).
        for (const arg of n.arguments) {
          const value = baseValue(prototypeOwner(arg), true);
          const v = 'type' in value ? verdict(made(value.type), false) : undefined;
          const t = verdict(made(checker.getTypeAtLocation(arg)), false);
          const bad = v?.kind === 'uncoded' ? v : t.kind === 'uncoded' ? t : undefined;
          if (bad) uncoded.push(`${at(n)} ${setsPrototype(n)}(…) (${bad.chain.join(' → ')})`);
        }
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return { classes, uncoded, looseCodes };
}

/** Parsed lib and @types files, shared by the programs of one run (each temp tree makes one). */
const libFiles = new Map<string, ts.SourceFile>();

function cachingHost(options: ts.CompilerOptions): ts.CompilerHost {
  const host = ts.createCompilerHost(options, true);
  const get = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, onError, fresh) => {
    if (!fileName.includes('/node_modules/')) return get(fileName, languageVersion, onError, fresh);
    let sf = libFiles.get(fileName);
    if (!sf) {
      sf = get(fileName, languageVersion, onError, fresh);
      if (sf) libFiles.set(fileName, sf);
    }
    return sf;
  };
  return host;
}

const PROTOTYPE_SETTERS = new Set(['Object.setPrototypeOf', 'Reflect.setPrototypeOf', 'Object.create', 'Reflect.construct']);
const SETTER_NAMES = new Set([...PROTOTYPE_SETTERS].map((s) => s.slice(s.indexOf('.') + 1)));

function calleeText(e: ts.Expression): string {
  return ts.isPropertyAccessExpression(e) && ts.isIdentifier(e.expression) ? `${e.expression.text}.${e.name.text}` : '';
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
