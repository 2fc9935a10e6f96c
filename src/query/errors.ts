/**
 * Typed query errors. A query names a turn, a call id or a seq; when the log has none, the error
 * says what it does have (the turn range, the nearest call ids, the seq range), so a caller can
 * correct the question without another query.
 */
import { CodedError } from '../model/coded-error.js';

export type QueryErrorCode =
  /** The input is not a Session, a loaded log, `{ id, events }` or an event reader. */
  | 'INVALID_INPUT'
  /** A seq outside the log (details: `seq`, `length`). */
  | 'SEQ_OUT_OF_RANGE'
  /** A turn number the log does not have (details: `turn`, `turns`). */
  | 'TURN_NOT_FOUND'
  /** A call id no `tool/call`, tool-call block or `tool/result` carries (details: `callId`, `nearest`). */
  | 'CALL_NOT_FOUND';

export interface QueryErrorDetails {
  seq?: number;
  /** Events in the log. */
  length?: number;
  turn?: number;
  /** The turn numbers the log has, first and last. */
  turns?: { first: number; last: number } | null;
  callId?: string;
  /** Call ids of the log closest to the one asked for, best first. */
  nearest?: string[];
}

export class QueryError extends CodedError<QueryErrorCode> {
  readonly details: QueryErrorDetails;
  constructor(code: QueryErrorCode, message: string, details: QueryErrorDetails = {}) {
    super(code, message);
    this.name = 'QueryError';
    this.details = details;
  }
}
