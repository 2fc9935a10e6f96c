/** Every error class under src/ is a CodedError (issue 12 item 4); the rule first rejects synthetic classes. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/shared.js';
import { listSources } from './layers.js';
import { readClasses, uncodedErrors } from './errors.js';

describe('the CodedError rule', () => {
  it('rejects an error class on Error or another built-in, directly or through a parent, and accepts CodedError descendants', () => {
    const text = [
      'class CodedError extends Error {}',
      'class GoodError extends CodedError<"X"> {}',
      'class GoodChild extends GoodError {}',
      'export class PlainError extends Error {}',
      'class Weird extends TypeError {}',
      'class ChildOfPlain extends PlainError {}',
      'class Plain {}',
      'class Indirect extends Plain {}',
      'class Cyclic1Error extends Cyclic2Error {}',
      'class Cyclic2Error extends Cyclic1Error {}',
    ].join('\n');
    expect(uncodedErrors(readClasses('x.ts', text))).toEqual([
      'x.ts:4 PlainError (PlainError → Error)',
      'x.ts:5 Weird (Weird → TypeError)',
      'x.ts:6 ChildOfPlain (ChildOfPlain → PlainError → Error)',
      'x.ts:9 Cyclic1Error (Cyclic1Error → Cyclic2Error → Cyclic1Error)',
      'x.ts:10 Cyclic2Error (Cyclic2Error → Cyclic1Error → Cyclic2Error)',
    ]);
  });

  it('rejects anonymous error classes and class expressions, named by the binding they are assigned to', () => {
    const text = [
      'class CodedError extends Error {}',
      "export const SneakyError = class extends Error { code = 'X'; };", // 2
      'export const Sneaky = class extends globalThis.Error {};', // 3
      'export default class extends Error {}', // 4
      'const errors = { Lost: class extends RangeError {} };', // 5
      'let Late; Late = class extends Error {};', // 6
      'class ChildOfSneaky extends SneakyError {}', // 7
      'throw new (class extends Error {})();', // 8
      'const Mixed = class extends withCode(Error) {};', // 9
      'export const GoodError = class extends CodedError {};', // 10
      'const Good = class Named extends CodedError {};', // 11
    ].join('\n');
    expect(uncodedErrors(readClasses('x.ts', text))).toEqual([
      'x.ts:2 SneakyError (SneakyError → Error)',
      'x.ts:3 Sneaky (Sneaky → Error)',
      'x.ts:4 default (default → Error)',
      'x.ts:5 Lost (Lost → RangeError)',
      'x.ts:6 Late (Late → Error)',
      'x.ts:7 ChildOfSneaky (ChildOfSneaky → SneakyError → Error)',
      'x.ts:8 (anonymous class) ((anonymous class) → Error)',
      'x.ts:9 Mixed (Mixed → withCode(Error))',
    ]);
  });
});

describe('src/', () => {
  it('declares every error class on CodedError (the browser page, which cannot import it, aside)', () => {
    const src = join(repoRoot, 'src');
    const files = listSources(src, ['.ts']);
    const classes = files.flatMap((f) => readClasses(f, readFileSync(join(src, f), 'utf8')));
    expect(classes.filter((c) => c.base !== undefined && c.name.endsWith('Error')).length).toBeGreaterThanOrEqual(18);
    expect(uncodedErrors(classes)).toEqual([]);
  });
});
