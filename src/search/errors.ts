/** Typed search errors with stable codes. */
import { CodedError } from '../model/coded-error.js';

export type SearchErrorCode =
  /** The query is empty or cannot be searched (unbalanced quotes are read as plain words). */
  | 'BAD_QUERY'
  /** The index cannot be opened or written (the native module is missing, the disk is full). */
  | 'INDEX_UNAVAILABLE';

export class SearchError extends CodedError<SearchErrorCode> {
  constructor(code: SearchErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'SearchError';
  }
}
