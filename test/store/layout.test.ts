/**
 * The layout rules are dsh's (session-persistence-jsonl/src/format.ts): expected names below are
 * worked out by hand from those rules.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { join } from 'node:path';
import { decodeSegment, defaultRoot, encodeSegment, logPath, projectKey } from '../../src/store/index.js';

describe('encodeSegment', () => {
  it.each([
    ['5f0c1e2a-7b3d-4c1e-9a2b-0c1d2e3f4a5b', '5f0c1e2a-7b3d-4c1e-9a2b-0c1d2e3f4a5b'],
    ['session-1', 'session-1'],
    ['a/b', 'a~002Fb'],
    ['a\\b', 'a~005Cb'],
    ['~', '~007E'],
    ['.', '~002E'],
    ['..', '~002E~002E'],
    ['...', '...'],
    ['é', '~00E9'],
    ['😀', '~D83D~DE00'],
    ['\0', '~0000'],
  ])('%j → %s', (id, seg) => {
    expect(encodeSegment(id)).toBe(seg);
  });

  it('is injective: decoding gives the id back', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, unit: 'binary' }), (id) => {
        const seg = encodeSegment(id);
        expect(seg).toMatch(/^[A-Za-z0-9._~-]+$/);
        expect(decodeSegment(seg)).toBe(id);
      }),
    );
  });

  it('refuses the empty id', () => {
    expect(() => encodeSegment('')).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });
});

describe('projectKey', () => {
  it.each([
    ['/home/me/repo', '--home-me-repo--'],
    ['/tmp/demo-repo', '--tmp-demo-repo--'],
    ['/', '--root--'],
    ['//a//b/', '--a-b---'],
    ['C:\\Users\\me', '--C-Users-me--'],
    ['/srv/my project', '--srv-my~0020project--'],
    ['/home/~me', '--home-~007Eme--'],
  ])('%s → %s', (cwd, key) => {
    expect(projectKey(cwd)).toBe(key);
  });

  it('cuts long paths to 251 characters between the dashes', () => {
    const key = projectKey(`/${'a'.repeat(400)}`);
    expect(key).toBe(`--${'a'.repeat(251)}--`);
  });
});

describe('paths', () => {
  it('a session without a cwd lives under _no-cwd', () => {
    expect(logPath('/r', undefined, 'x')).toBe(join('/r', '_no-cwd', 'x', 'session.jsonl'));
  });

  it('the default root is $DSH_HOME/sessions, DSH_HOME defaulting to ~/.dsh', () => {
    expect(defaultRoot({ DSH_HOME: '/opt/dsh' })).toBe('/opt/dsh/sessions');
    expect(defaultRoot({ HOME: '/home/x' }).endsWith(join('.dsh', 'sessions'))).toBe(true);
  });
});
