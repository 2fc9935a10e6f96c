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
 * @types/node) that is assignable to the global `Error`. Errors made without a class are found
 * by their calls: `Object.setPrototypeOf(X.prototype, Error.prototype)`, `Object.create(…)`,
 * `Reflect.setPrototypeOf` and `Reflect.construct(Error, args, X)` with a built-in error among the
 * arguments. A class whose base the checker cannot resolve (an `any`) is reported as such.
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

  const classes: string[] = [];
  const uncoded: string[] = [];
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
          const v = verdict(checker.getDeclaredTypeOfSymbol(sym), true);
          if (v.kind !== 'none') classes.push(`${at(n)} ${name}`);
          if (v.kind === 'uncoded' || v.kind === 'unresolved') uncoded.push(`${at(n)} ${name} (${[name, ...v.chain].join(' → ')})`);
        }
      } else if (ts.isCallExpression(n) && PROTOTYPE_SETTERS.has(calleeText(n.expression))) {
        // A function made an error by hand: its prototype set to, or its instance built by, a built-in error.
        for (const arg of n.arguments) {
          const t = checker.getTypeAtLocation(arg);
          const made = t.getConstructSignatures()[0]?.getReturnType() ?? t;
          const v = verdict(made, false);
          if (v.kind === 'uncoded') uncoded.push(`${at(n)} ${calleeText(n.expression)}(…) (${v.chain.join(' → ')})`);
        }
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return { classes, uncoded };
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
