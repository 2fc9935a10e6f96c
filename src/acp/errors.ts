/**
 * The ACP surface's refusals, with stable codes. A client gets each as a JSON-RPC error whose
 * `data` carries the code and, where a parameter is at fault, its JSON path (`toRequestError`).
 */
import { RequestError } from '@agentclientprotocol/sdk/unstable';
import { CodedError } from '../model/coded-error.js';

export type AcpErrorCode =
  | 'SESSION_NOT_OPEN'
  | 'SESSION_CLOSED'
  | 'NOT_IDLE'
  | 'WORKSPACE_INVALID'
  | 'WORKSPACE_MISMATCH'
  | 'UNSUPPORTED'
  | 'INVALID_PROMPT'
  | 'UNKNOWN_MODE'
  | 'INVALID_CURSOR'
  | 'ATTACHMENT_INVALID'
  | 'UNKNOWN_CONFIG_OPTION'
  | 'INVALID_CONFIG_VALUE'
  | 'MODEL_INVALID';

export class AcpError extends CodedError<AcpErrorCode> {
  /** The JSON path of the request parameter at fault, when one is. */
  readonly path: string | undefined;
  constructor(code: AcpErrorCode, message: string, path?: string) {
    super(code, message);
    this.name = 'AcpError';
    this.path = path;
  }
}

const INVALID_PARAMS = new Set<AcpErrorCode>([
  'WORKSPACE_INVALID',
  'WORKSPACE_MISMATCH',
  'INVALID_PROMPT',
  'UNKNOWN_MODE',
  'INVALID_CURSOR',
  'ATTACHMENT_INVALID',
  'SESSION_NOT_OPEN',
  'UNKNOWN_CONFIG_OPTION',
  'INVALID_CONFIG_VALUE',
  'MODEL_INVALID',
]);

/**
 * The store's refusals about the session a request names: the client's situation, not a fault of
 * dsh, so never "Internal error" (-32603). The id names no session, or two: invalid params at
 * `$.sessionId` (-32602). The session is in use by another live writer (`SESSION_LOCKED`: a
 * `dsh` process has it open; `LEASE_LOST`: another took it over), or its log is one this build
 * cannot append to: an invalid request (-32600) as `NOT_IDLE` is, the code in `data.code`; the
 * client can wait, fork it, or open it elsewhere.
 */
const STORE_REFUSALS: ReadonlyMap<string, 'params' | 'request'> = new Map([
  ['SESSION_NOT_FOUND', 'params'],
  ['AMBIGUOUS_SESSION', 'params'],
  ['SESSION_LOCKED', 'request'],
  ['LEASE_LOST', 'request'],
  ['SESSION_EXISTS', 'request'],
  ['COMPRESSED_LOG', 'request'],
  ['FORMAT_NOT_WRITABLE', 'request'],
]);

/** Any failure as the JSON-RPC error the client gets; a coded one keeps its code in `data.code`. */
export function toRequestError(e: unknown): RequestError {
  if (e instanceof RequestError) return e;
  if (e instanceof AcpError) {
    const data = { code: e.code, ...(e.path !== undefined ? { path: e.path } : {}) };
    if (INVALID_PARAMS.has(e.code)) return RequestError.invalidParams(data, e.message);
    return RequestError.invalidRequest(data, e.message);
  }
  if (e instanceof CodedError) {
    if (e.code === 'MISSING_CREDENTIAL') return RequestError.authRequired({ code: e.code }, e.message);
    const refusal = STORE_REFUSALS.get(e.code);
    if (refusal === 'params') return RequestError.invalidParams({ code: e.code, path: '$.sessionId' }, e.message);
    if (refusal === 'request') return RequestError.invalidRequest({ code: e.code, path: '$.sessionId' }, e.message);
    return RequestError.internalError({ code: e.code }, e.message);
  }
  return RequestError.internalError(undefined, e instanceof Error ? e.message : String(e));
}
