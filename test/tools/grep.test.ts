/** grep gives the same answers with ripgrep and with the JS fallback. */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { codingTools } from '../../src/tools/coding-tools.js';
import { ripgrepAvailable } from '../../src/tools/fs/search.js';
import { agentFor, call, tempDir, text, writeTree } from './helpers.js';

const TREE = {
  '.gitignore': 'dist/\n*.log\n!keep.log\n',
  'src/a.ts': 'export const needle = 1;\nconst other = 2;\n',
  'src/b.js': 'let needle;\n',
  'src/nested/.gitignore': 'gen.ts\n',
  'src/nested/gen.ts': 'needle generated\n',
  'src/nested/c.ts': 'no match here\nneedle in nested\n',
  'dist/out.js': 'needle in dist\n',
  'debug.log': 'needle in log\n',
  'keep.log': 'needle kept\n',
  '.hidden/h.ts': 'needle hidden\n',
  '.git/config': 'needle in git\n',
  'bin.dat': 'needle\u0000binary',
};

const backends: { name: string; ripgrep: 'off' | 'auto'; available: boolean }[] = [
  { name: 'js fallback', ripgrep: 'off', available: true },
  { name: 'ripgrep', ripgrep: 'auto', available: ripgrepAvailable() },
];

for (const b of backends) {
  const d = b.available ? describe : describe.skip;
  d(`grep (${b.name}${b.available ? '' : ', skipped: rg is not installed on this machine'})`, () => {
    const setup = () => {
      const root = tempDir();
      writeTree(root, TREE);
      return { root, agent: agentFor(root, [codingTools({ ripgrep: b.ripgrep })]) };
    };

    it('honours .gitignore (nested files, negation), searches hidden files, skips .git and binaries', async () => {
      const { agent } = setup();
      const o = await call(agent, 'grep', { pattern: 'needle' });
      expect(o.isError).toBe(false);
      expect(text(o)).toBe(
        [
          'Found 5 matches in 5 files',
          '',
          '.hidden/h.ts:',
          '  Line 1: needle hidden',
          '',
          'keep.log:',
          '  Line 1: needle kept',
          '',
          'src/a.ts:',
          '  Line 1: export const needle = 1;',
          '',
          'src/b.js:',
          '  Line 1: let needle;',
          '',
          'src/nested/c.ts:',
          '  Line 2: needle in nested',
        ].join('\n'),
      );
      expect(o.meta).toMatchObject({ backend: b.ripgrep === 'off' ? 'js' : 'ripgrep', total: 5 });
    });

    it('filters with include and narrows with path', async () => {
      const { agent } = setup();
      expect(text(await call(agent, 'grep', { pattern: 'needle', include: '*.ts' }))).toContain('Found 3 matches in 3 files');
      const sub = text(await call(agent, 'grep', { pattern: 'needle', path: 'src/nested' }));
      expect(sub).toBe('Found 1 match in 1 file\n\nsrc/nested/c.ts:\n  Line 2: needle in nested');
    });

    it('searches an explicitly named file even when it is ignored', async () => {
      const { agent } = setup();
      expect(text(await call(agent, 'grep', { pattern: 'needle', path: 'dist/out.js' }))).toContain(
        'dist/out.js:\n  Line 1: needle in dist',
      );
    });

    it('says "No matches found" and reports an invalid regex with a code', async () => {
      const { agent } = setup();
      expect(text(await call(agent, 'grep', { pattern: 'zzz_absent' }))).toBe('No matches found');
      const bad = await call(agent, 'grep', { pattern: '(unclosed' });
      expect(bad.isError).toBe(true);
      expect(bad.error?.code).toBe('SEARCH_INVALID_PATTERN');
    });

    it('caps the inline page at 250 matches and saves the complete list', async () => {
      const root = tempDir();
      writeTree(root, { 'many.txt': Array.from({ length: 300 }, (_, i) => `hit ${i}`).join('\n') });
      const agent = agentFor(root, [codingTools({ ripgrep: b.ripgrep })]);
      const t = text(await call(agent, 'grep', { pattern: '^hit' }));
      expect(t).toContain('Found 300 matches in 1 file');
      expect(t).toContain('Line 250: hit 249');
      expect(t).not.toContain('Line 251:');
      const saved = /Full output saved to: (\S+)\. /.exec(t)?.[1];
      expect(readFileSync(saved!, 'utf8')).toContain('Line 300: hit 299');
    });
  });
}

describe('grep arguments', () => {
  it('rejects a list-valued or negated include up front', async () => {
    const root = tempDir();
    const agent = agentFor(root, [codingTools({ ripgrep: 'off' })]);
    expect((await call(agent, 'grep', { pattern: 'x', include: '*.ts,*.js' })).error?.code).toBe('INVALID_INCLUDE');
    expect((await call(agent, 'grep', { pattern: 'x', include: '!*.ts' })).error?.code).toBe('INVALID_INCLUDE');
    expect((await call(agent, 'grep', { pattern: 'x', include: '*.{ts,js}' })).isError).toBe(false);
  });
});
