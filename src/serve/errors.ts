/**
 * Typed errors of the HTTP service. Every error response is `{"error": {"code", "message",
 * "path"?}}` with the status below; store errors keep their own codes (SESSION_NOT_FOUND → 404,
 * SESSION_EXISTS → 409, anything else the store refuses → 400 or 503 for the database).
 */
import { CodedError } from '../model/coded-error.js';

export type ServeErrorCode =
  /** A host other than loopback without `allowRemote`. */
  | 'HOST_NOT_ALLOWED'
  /** A token shorter than 16 characters. */
  | 'WEAK_TOKEN'
  /** No `Authorization: Bearer <token>`, or the wrong token. */
  | 'UNAUTHORIZED'
  /** No such route. */
  | 'NOT_FOUND'
  /** The route exists, the method does not. */
  | 'METHOD_NOT_ALLOWED'
  /** A body that is not JSON, or JSON without the fields the route needs (the JSON path names which). */
  | 'BAD_REQUEST'
  /** A body over the limit. */
  | 'BODY_TOO_LARGE'
  /** A body not sent as `application/json`. */
  | 'UNSUPPORTED_MEDIA_TYPE'
  /** Every event stream the server allows is open (`maxStreams`); the answer carries Retry-After. */
  | 'TOO_MANY_STREAMS'
  /** An Idempotency-Key already used for another request (another route, session or body). */
  | 'IDEMPOTENCY_KEY_REUSED';

export const STATUS: Readonly<Record<string, number>> = {
  UNAUTHORIZED: 401,
  NOT_FOUND: 404,
  SESSION_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  SESSION_EXISTS: 409,
  BODY_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  CONNECT_FAILED: 503,
  DATABASE_ERROR: 503,
  TOO_MANY_STREAMS: 503,
  IDEMPOTENCY_KEY_REUSED: 422,
};

export class ServeError extends CodedError<ServeErrorCode> {
  readonly path: string | undefined;
  constructor(code: ServeErrorCode, message: string, opts: { path?: string; cause?: unknown } = {}) {
    super(code, message, opts.cause !== undefined ? { cause: opts.cause } : undefined);
    this.name = 'ServeError';
    this.path = opts.path;
  }
}
