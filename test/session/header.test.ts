/**
 * The session header: validated on restore and load, refused with
 * INVALID_HEADER naming the path.
 */
import { describe, expect, it } from 'vitest';
import { validateHeader } from '../../src/session/index.js';
import { expectSessionError } from './helpers.js';

const ok = { version: 0, id: 's', createdAt: 1 };

describe('validateHeader', () => {
  it('accepts every documented field', () => {
    const h = { ...ok, cwd: '/abs', parentSession: 'p', seedLength: 3, origin: 'subagent', delegationDepth: 2, agentPreset: 'coder' };
    expect(validateHeader(h)).toEqual(h);
  });
  const bad: [string, unknown, string][] = [
    ['not an object', 'x', '$'],
    ['an array', [], '$'],
    ['no version', { id: 's', createdAt: 1 }, '$.version'],
    ['version 1', { ...ok, version: 1 }, '$.version'],
    ['version "0"', { ...ok, version: '0' }, '$.version'],
    ['no id', { version: 0, createdAt: 1 }, '$.id'],
    ['empty id', { ...ok, id: '' }, '$.id'],
    ['no createdAt', { version: 0, id: 's' }, '$.createdAt'],
    ['negative createdAt', { ...ok, createdAt: -1 }, '$.createdAt'],
    ['fractional createdAt', { ...ok, createdAt: 1.5 }, '$.createdAt'],
    ['relative cwd', { ...ok, cwd: 'work/repo' }, '$.cwd'],
    ['cwd not a string', { ...ok, cwd: 7 }, '$.cwd'],
    ['empty parentSession', { ...ok, parentSession: '' }, '$.parentSession'],
    ['negative seedLength', { ...ok, seedLength: -1 }, '$.seedLength'],
    ['fractional delegationDepth', { ...ok, delegationDepth: 0.5 }, '$.delegationDepth'],
    ['unknown origin', { ...ok, origin: 'fork' }, '$.origin'],
    ['agentPreset not a string', { ...ok, agentPreset: 1 }, '$.agentPreset'],
    ['an unknown field', { ...ok, future: true }, '$.future'],
  ];
  for (const [name, h, path] of bad) {
    it(`refuses ${name}`, () => {
      const err = expectSessionError(() => validateHeader(h), 'INVALID_HEADER');
      expect(err.details.path).toBe(path);
      expect(err.message).toContain('session');
    });
  }
  it('reports {{token}} placeholders for cwd and id when asked, instead of refusing', () => {
    const seen: unknown[] = [];
    const h = { ...ok, id: '{{sessionId}}', cwd: '{{cwd}}' };
    expect(validateHeader(h, { onPlaceholder: (w) => seen.push(w) })).toEqual(h);
    expect(seen).toEqual([
      { seq: -1, eventType: 'session', path: '$.id', token: '{{sessionId}}' },
      { seq: -1, eventType: 'session', path: '$.cwd', token: '{{cwd}}' },
    ]);
    expect(expectSessionError(() => validateHeader(h), 'INVALID_HEADER').details.path).toBe('$.cwd');
  });
});

describe('-0 in the header', () => {
  it('is refused for every number field (it would be written back as 0)', () => {
    for (const k of ['version', 'createdAt', 'seedLength', 'delegationDepth']) {
      const h = { version: 0, id: 's', createdAt: 1, delegationDepth: 0, [k]: -0 };
      const err = expectSessionError(() => validateHeader(h), 'INVALID_HEADER');
      expect(err.details.path).toBe(`$.${k}`);
      expect(err.message).toContain('-0 is not lossless JSON');
    }
  });
});
