/**
 * The CLI recognises dsh's errors by type, not by the `code` an object carries (issue 12 item 4,
 * review 2 finding 5): `dsh search` turns only the search layer's BAD_QUERY into a usage error,
 * and `dsh sessions import` reports only a CodedError's code as its own, with any other code
 * (a PostgreSQL SQLSTATE, a Node errno) kept in the message under IMPORT_FAILED.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CliError } from '../../src/cli/errors.js';
import { searchFailure } from '../../src/cli/search.js';
import { importFailure } from '../../src/cli/transfer.js';
import { SearchError } from '../../src/search/index.js';
import { SessionError } from '../../src/session/errors.js';

describe('search failures', () => {
  it("make the search layer's BAD_QUERY a usage error", () => {
    const e = new SearchError('BAD_QUERY', 'nothing to search for');
    const out = searchFailure(e);
    expect(out).toBeInstanceOf(CliError);
    expect(out).toMatchObject({ code: 'USAGE', message: 'nothing to search for', cause: e });
  });

  it('leave anything else as it is, even an error that carries the code BAD_QUERY', () => {
    const impostor = Object.assign(new Error('from somewhere else'), { code: 'BAD_QUERY' });
    expect(searchFailure(impostor)).toBe(impostor);
    const other = new SearchError('INDEX_UNAVAILABLE', 'x');
    expect(searchFailure(other)).toBe(other);
  });
});

describe('import failures', () => {
  it("report a CodedError's own code", () => {
    expect(importFailure(new CliError('TORN_TAIL', 'torn'))).toEqual({ code: 'TORN_TAIL', message: 'torn' });
    const s = new SessionError('INVALID_EVENT', 'bad event');
    expect(importFailure(s)).toEqual({ code: 'INVALID_EVENT', message: 'bad event' });
  });

  it('report anything else as IMPORT_FAILED, its foreign code kept in the message', () => {
    // A node-postgres error: the SQLSTATE in `code`.
    const pg = Object.assign(new Error('duplicate key value violates unique constraint "sessions_pkey"'), { code: '23505' });
    expect(importFailure(pg)).toEqual({
      code: 'IMPORT_FAILED',
      message: 'duplicate key value violates unique constraint "sessions_pkey" (23505)',
    });
    // A real Node system error.
    let enoent: unknown;
    try {
      readFileSync('/nonexistent/dsh-import-test');
    } catch (e) {
      enoent = e;
    }
    const r = importFailure(enoent);
    expect(r.code).toBe('IMPORT_FAILED');
    expect(r.message).toMatch(/no such file or directory.*\(ENOENT\)$/);
    expect(importFailure('thrown text')).toEqual({ code: 'IMPORT_FAILED', message: 'thrown text' });
  });
});
