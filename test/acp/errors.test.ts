/**
 * What a client gets for each refusal (issue 16 review M4): the store's refusals about the named
 * session are application errors with their code in `data.code`, never JSON-RPC "Internal error"
 * (-32603), which a client cannot tell from a crash; real faults stay internal.
 */
import { describe, expect, it } from 'vitest';
import { AcpError, toRequestError } from '../../src/acp/errors.js';
import { StoreError, type StoreErrorCode } from '../../src/store/errors.js';

// JSON-RPC 2.0's codes (jsonrpc.org/specification#error_object).
const INVALID_REQUEST = -32600;
const INVALID_PARAMS = -32602;
const INTERNAL = -32603;

describe('toRequestError', () => {
  it('maps the store refusals about the named session to application errors naming $.sessionId', () => {
    const cases: [StoreErrorCode, number][] = [
      ['SESSION_LOCKED', INVALID_REQUEST],
      ['LEASE_LOST', INVALID_REQUEST],
      ['SESSION_EXISTS', INVALID_REQUEST],
      ['COMPRESSED_LOG', INVALID_REQUEST],
      ['FORMAT_NOT_WRITABLE', INVALID_REQUEST],
      ['SESSION_NOT_FOUND', INVALID_PARAMS],
      ['AMBIGUOUS_SESSION', INVALID_PARAMS],
    ];
    for (const [code, rpc] of cases) {
      const e = toRequestError(new StoreError(code, `session s1: ${code}`));
      expect([code, e.code, e.data]).toEqual([code, rpc, { code, path: '$.sessionId' }]);
      expect(e.message).toContain(`session s1: ${code}`);
    }
  });

  it('keeps real faults internal, with their code; an AcpError keeps its class', () => {
    for (const code of ['WRITE_FAILED', 'SYNC_FAILED', 'DATABASE_ERROR', 'BAD_HEADER'] as const)
      expect(toRequestError(new StoreError(code, 'x'))).toMatchObject({ code: INTERNAL, data: { code } });
    expect(toRequestError(new Error('boom')).code).toBe(INTERNAL);
    expect(toRequestError(new AcpError('WORKSPACE_MISMATCH', 'x', '$.cwd'))).toMatchObject({
      code: INVALID_PARAMS,
      data: { code: 'WORKSPACE_MISMATCH', path: '$.cwd' },
    });
    expect(toRequestError(new AcpError('NOT_IDLE', 'x'))).toMatchObject({ code: INVALID_REQUEST, data: { code: 'NOT_IDLE' } });
  });
});
