/**
 * Every error class under src/ is a CodedError (issue 12 item 4), as the TypeScript type checker
 * resolves each class's base types (./errors.ts). The rule first rejects synthetic trees in a
 * temp dir, each holding a copy of the real src/model/coded-error.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/shared.js';
import { compilerOptions, errorClasses } from './errors.js';
import { tempTrees } from './temp-tree.js';

const CODED = 'model/coded-error.ts';
const options = compilerOptions(repoRoot);
const tree = tempTrees('dsh-errors-');
const check = (files: Record<string, string>) =>
  errorClasses(tree({ [CODED]: readFileSync(join(repoRoot, 'src', CODED), 'utf8'), ...files }), CODED, options);

describe('the CodedError rule', () => {
  it('rejects an error class on Error or another built-in, directly or through a parent, and accepts CodedError descendants', () => {
    const text = [
      "import { CodedError } from './coded-error.js';",
      "class GoodError extends CodedError<'X'> {}", // 2
      'class GoodChild extends GoodError {}', // 3
      'export class PlainError extends Error {}', // 4
      'class Weird extends TypeError {}', // 5
      'class ChildOfPlain extends PlainError {}', // 6
      'class Plain {}', // 7
      'class Indirect extends Plain {}', // 8
      'export { GoodChild, Weird, ChildOfPlain, Indirect };',
    ].join('\n');
    const r = check({ 'model/x.ts': text });
    expect(r.uncoded).toEqual([
      'model/x.ts:4 PlainError (PlainError → Error)',
      'model/x.ts:5 Weird (Weird → TypeError → Error)',
      'model/x.ts:6 ChildOfPlain (ChildOfPlain → PlainError → Error)',
    ]);
    expect(r.classes).toEqual(['model/x.ts:2 GoodError', 'model/x.ts:3 GoodChild', ...r.uncoded.map((u) => u.split(' (')[0])].sort());
  });

  it('rejects anonymous error classes and class expressions, named by the binding they are assigned to', () => {
    const text = [
      "import { CodedError } from './coded-error.js';",
      "export const SneakyError = class extends Error { code = 'X'; };", // 2
      'export const Sneaky = class extends globalThis.Error {};', // 3
      'export default class extends Error {}', // 4
      'export const errors = { Lost: class extends RangeError {} };', // 5
      'export let Late; Late = class extends Error {};', // 6
      'export class ChildOfSneaky extends SneakyError {}', // 7
      'throw new (class extends Error {})();', // 8
      // The mixin's own class is generic, not an error: only its use on Error is.
      'const withCode = <T extends new (...a: any[]) => object>(B: T) => class extends B { code = 1 };', // 9
      'export const Mixed = class extends withCode(Error) {};', // 10
      'export const GoodError = class extends CodedError {};', // 11
      'export const Good = class Named extends CodedError {};', // 12
    ].join('\n');
    expect(check({ 'model/x.ts': text }).uncoded).toEqual([
      'model/x.ts:2 SneakyError (SneakyError → Error)',
      'model/x.ts:3 Sneaky (Sneaky → Error)',
      'model/x.ts:4 default (default → Error)',
      'model/x.ts:5 Lost (Lost → RangeError → Error)',
      'model/x.ts:6 Late (Late → Error)',
      'model/x.ts:7 ChildOfSneaky (ChildOfSneaky → SneakyError → Error)',
      'model/x.ts:8 (anonymous class) ((anonymous class) → Error)',
      'model/x.ts:10 Mixed (Mixed → (anonymous class) → Error)',
    ]);
  });

  it('follows bindings, not spellings: aliases, a local CodedError, other built-in bases, classless errors, .mts/.cts (review 2)', () => {
    const r = check({
      'model/alias.ts': 'const Base = Error;\nexport class Oops extends Base { code = "OOPS"; }',
      'model/local.ts': 'class CodedError extends Error {}\nexport class FakeCodedError extends CodedError { code = "FAKE"; }',
      'model/laundered.ts': 'const fake = { CodedError: Error };\nexport class LaunderedError extends fake.CodedError {}',
      'model/dom.ts': 'export class Aborted extends DOMException {}',
      'model/legacy.ts': [
        'export function LegacyError(this: unknown, m: string) { return Reflect.construct(Error, [m], LegacyError); }',
        'Object.setPrototypeOf(LegacyError.prototype, Error.prototype);',
      ].join('\n'),
      'model/untyped.ts': 'declare const Anything: any;\nexport class Unknown extends Anything {}',
      'model/m.mts': 'export class MtsError extends Error {}',
      'model/c.cts': 'export class CtsError extends Error {}',
      'model/ok.ts': "import { CodedError } from './coded-error.js';\nexport class OkError extends CodedError {}",
    });
    expect(r.uncoded).toEqual([
      'model/alias.ts:2 Oops (Oops → Error)',
      'model/c.cts:1 CtsError (CtsError → Error)',
      'model/dom.ts:1 Aborted (Aborted → DOMException → Error)',
      'model/laundered.ts:2 LaunderedError (LaunderedError → Error)',
      'model/legacy.ts:1 Reflect.construct(…) (Error)',
      'model/legacy.ts:2 Object.setPrototypeOf(…) (Error)',
      'model/local.ts:1 CodedError (CodedError → Error)',
      'model/local.ts:2 FakeCodedError (FakeCodedError → CodedError (not src/model’s) → Error)',
      'model/m.mts:1 MtsError (MtsError → Error)',
      'model/untyped.ts:2 Unknown (Unknown → any)',
    ]);
  });

  it('asks the base value, not its declared type: upcasts, casts, let bindings, setters by any spelling (review 3)', () => {
    const r = check({
      'model/upcast.ts': [
        'const Base: new (message: string) => { readonly message: string } = Error;',
        'export class Sneaky extends Base {}', // 2
        'export class Upcast extends (Error as unknown as ObjectConstructor) {}', // 3
        'let Later = Object; Later = Error;',
        'export class Rebound extends Later {}', // 5
      ].join('\n'),
      'model/setters.ts': [
        'export function A(this: unknown) {}',
        'const { setPrototypeOf } = Object;',
        'setPrototypeOf(A.prototype, Error.prototype);', // 3
        "Reflect['setPrototypeOf'](A.prototype, Error.prototype);", // 4
        'Object.setPrototypeOf(A.prototype, Error.prototype as object);', // 5
        'const sp = Object.setPrototypeOf;',
        'sp(A.prototype, TypeError.prototype);', // 7
      ].join('\n'),
      'model/clean.ts': [
        "import { CodedError } from './coded-error.js';",
        'const Good = CodedError;',
        "export class Fine extends Good<'FINE'> {}",
        'export function B(this: unknown) {}',
        'Object.setPrototypeOf(B.prototype, Object.prototype);',
      ].join('\n'),
    });
    expect(r.uncoded).toEqual([
      'model/setters.ts:3 Object.setPrototypeOf(…) (Error)',
      'model/setters.ts:4 Reflect.setPrototypeOf(…) (Error)',
      'model/setters.ts:5 Object.setPrototypeOf(…) (Error)',
      'model/setters.ts:7 Object.setPrototypeOf(…) (TypeError → Error)',
      'model/upcast.ts:2 Sneaky (Sneaky → Error)',
      'model/upcast.ts:3 Upcast (Upcast → a cast: Error as unknown as ObjectConstructor)',
      'model/upcast.ts:5 Rebound (Rebound → a let/var binding: Later = Object)',
    ]);
  });

  it('requires a stable code: a union of string literals, per class or per `new` of a generic one (review 3)', () => {
    const r = check({
      'model/codes.ts': [
        "import { CodedError } from './coded-error.js';",
        'export class LooseError extends CodedError {}', // 2
        'export class WideError extends CodedError<string> {}', // 3
        "export class GoodError extends CodedError<'A' | 'B'> {}",
        'export class GoodChild extends GoodError {}',
        'export class Generic<C extends string = string> extends CodedError<C> {}',
        'export class LooseChild extends Generic {}', // 7
        "export class TightChild extends Generic<'T'> {}",
        "export const ok = new Generic('LITERAL', 'm');",
        'export const loose = (c: string) => new Generic(c, "m");', // 10
        "export class OpenError extends CodedError<'A' | (string & {})> {}", // 11
      ].join('\n'),
    });
    expect(r.uncoded).toEqual([]);
    expect(r.looseCodes).toEqual([
      'model/codes.ts:2 LooseError: code is string',
      'model/codes.ts:3 WideError: code is string',
      'model/codes.ts:7 LooseChild: code is string',
      'model/codes.ts:10 new Generic: code is string',
      'model/codes.ts:11 OpenError: code is "A" | (string & {})',
    ]);
  });
});

/**
 * CodedErrors whose code is open on purpose, each with why. A new entry needs a reason as good:
 * everywhere else a program matching `code` must be able to list every value.
 */
const OPEN_CODES: Record<string, string> = {
  'model/failure.ts LlmError': 'carries a recorded failure verbatim: a replayed log holds the codes its recording had',
};

describe('src/', () => {
  it('declares every error class on CodedError (the browser page, which cannot import it, aside), each with literal codes', () => {
    const r = errorClasses(join(repoRoot, 'src'), CODED, options);
    expect(r.classes.length).toBeGreaterThanOrEqual(18);
    expect(r.uncoded).toEqual([]);
    const open = (l: string): boolean => Object.keys(OPEN_CODES).some((k) => l.replace(/:\d+ /, ' ').startsWith(`${k}:`));
    expect(r.looseCodes.filter((l) => !open(l))).toEqual([]);
    // Each allowance still names a class that needs it.
    for (const k of Object.keys(OPEN_CODES))
      expect(
        r.looseCodes.some((l) => l.replace(/:\d+ /, ' ').startsWith(`${k}:`)),
        k,
      ).toBe(true);
  }, 120_000);
});
