/**
 * A comment in the code that says which test holds a rule (`test/cli/program.test.ts holds each
 * command's subtree to the whole program's`) sends its reader to that file: a name that is wrong
 * (a file renamed, or never called that) sends them nowhere. Every test file named in src/,
 * scripts/, bin/ and bench/ exists. (Tests themselves are left out: they name made-up files in
 * the trees they build.)
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/shared.js';
import { codeFiles } from './line-length.js';
import { tempTrees } from './temp-tree.js';

const CHECKED = /^(src|scripts|bin|bench)\//;
const TEST_PATH = /(?<![\w./-])test\/[\w./-]+?\.(?:ts|mjs|js)\b/g;

/** `file:line: path` for each test file named in the code under `root` that is not there. */
function missingTestFiles(root: string): string[] {
  const out: string[] = [];
  for (const file of codeFiles(root).filter((f) => CHECKED.test(f)))
    readFileSync(join(root, file), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        for (const [path] of line.matchAll(TEST_PATH)) if (!existsSync(join(root, path))) out.push(`${file}:${i + 1}: ${path}`);
      });
  return out;
}

const tree = tempTrees('dsh-test-refs-');

describe('test files named in the code', () => {
  it('all exist', () => {
    expect(missingTestFiles(repoRoot)).toEqual([]);
  });

  it('a name with no file is found, with the file and line naming it; an existing one and a test tree are not', () => {
    const dir = tree({
      'test/cli/real.test.ts': '',
      'src/a.ts': '// test/cli/real.test.ts holds this\nconst x = 1; // and test/cli/gone.test.ts that\n',
      'scripts/b.mjs': '// (test/cli/support/gone.mjs)\n',
      'test/c.test.ts': "const f = 'test/made-up.test.ts';\n",
      'src/d.ts': '// not a test path: src/test/x.ts, latest/y.ts\n',
    });
    expect(missingTestFiles(dir)).toEqual(['scripts/b.mjs:1: test/cli/support/gone.mjs', 'src/a.ts:2: test/cli/gone.test.ts']);
  });
});
