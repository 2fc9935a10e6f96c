/** Scratch files for one test file, and the example log's text and lines to derive broken inputs from. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { repoRoot } from '../../support/shared.js';

export const examplePath = join(repoRoot, 'examples', 'fix-typo.jsonl');
export const exampleText = (): string => readFileSync(examplePath, 'utf8');
/** The example's lines without the final empty string (line n is index n − 1). */
export const exampleLines = (): string[] => exampleText().split('\n').slice(0, -1);

export function scratch(): (name: string, content: string | Buffer) => string {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-cli-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return (name, content) => {
    const p = join(dir, name);
    writeFileSync(p, content);
    return p;
  };
}

/** 1-based line of the first line matching `re`. */
export function lineOf(lines: readonly string[], re: RegExp): number {
  const i = lines.findIndex((l) => re.test(l));
  if (i < 0) throw new Error(`no line matches ${re}`);
  return i + 1;
}
