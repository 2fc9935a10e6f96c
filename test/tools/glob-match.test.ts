import { describe, expect, it } from 'vitest';
import { globToRegExp, pathMatcher } from '../../src/tools/glob-match.js';
import { IgnoreStack } from '../../src/tools/fs/gitignore.js';

describe('glob patterns', () => {
  const m = (p: string, s: string): boolean => globToRegExp(p).test(s);
  it('keeps * and ? within a segment and lets ** span segments', () => {
    expect(m('src/*.ts', 'src/a.ts')).toBe(true);
    expect(m('src/*.ts', 'src/x/a.ts')).toBe(false);
    expect(m('src/**/*.ts', 'src/a.ts')).toBe(true);
    expect(m('src/**/*.ts', 'src/x/y/a.ts')).toBe(true);
    expect(m('**', 'a/b/c')).toBe(true);
    expect(m('a?c', 'abc')).toBe(true);
    expect(m('a?c', 'a/c')).toBe(false);
  });
  it('supports braces (nested), classes, negated classes and escapes', () => {
    expect(m('*.{ts,tsx}', 'a.tsx')).toBe(true);
    expect(m('*.{ts,{js,mjs}}', 'a.mjs')).toBe(true);
    expect(m('[ab].txt', 'b.txt')).toBe(true);
    expect(m('[!ab].txt', 'c.txt')).toBe(true);
    expect(m('[!ab].txt', 'a.txt')).toBe(false);
    expect(m('\\*.txt', '*.txt')).toBe(true);
    expect(m('\\*.txt', 'a.txt')).toBe(false);
    expect(m('a.b', 'axb')).toBe(false);
  });
  it('text mode lets * span spaces and slashes', () => {
    expect(globToRegExp('git status*', 'text').test('git status --short ./src')).toBe(true);
  });
  it('a pattern without / matches basenames at any depth', () => {
    expect(pathMatcher('*.ts')('deep/down/a.ts')).toBe(true);
    expect(pathMatcher('src/*.ts')('deep/src/a.ts')).toBe(false);
    expect(pathMatcher('./src/*.ts')('src/a.ts')).toBe(true);
  });
});

describe('.gitignore rules', () => {
  it('anchoring, directory-only patterns, negation and deeper files overriding shallower ones', () => {
    const s = new IgnoreStack();
    s.add('', '# comment\n*.log\n!keep.log\n/build\ncache/\ndocs/*.tmp\n');
    s.add('sub', '!*.log\n');
    expect(s.ignored('a.log', false)).toBe(true);
    expect(s.ignored('x/a.log', false)).toBe(true);
    expect(s.ignored('keep.log', false)).toBe(false);
    expect(s.ignored('build', true)).toBe(true);
    expect(s.ignored('x/build', true)).toBe(false);
    expect(s.ignored('x/cache', true)).toBe(true);
    expect(s.ignored('x/cache', false)).toBe(false);
    expect(s.ignored('docs/a.tmp', false)).toBe(true);
    expect(s.ignored('other/docs/a.tmp', false)).toBe(false);
    expect(s.ignored('sub/a.log', false)).toBe(false);
  });
});
