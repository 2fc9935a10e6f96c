/**
 * Typed viewer errors. A log that does not load keeps its own `SessionError` or `StoreError`
 * (the codec's and the store's verdicts are not re-labelled here); these codes cover what the
 * viewer itself refuses: where it may listen, what it was asked to show, and API requests.
 */
import { CodedError } from '../model/coded-error.js';
export type ViewerErrorCode =
  /** A host other than loopback without `allowRemote: true`. */
  | 'HOST_NOT_ALLOWED'
  /** `source` is none of: a file path, `{sessionId, store}`, a `Session`. */
  | 'INVALID_SOURCE'
  /** The page files are not where the viewer expects them (a broken install). */
  | 'ASSETS_MISSING'
  /** An API request with a missing or malformed parameter. */
  | 'BAD_REQUEST'
  /** An API request naming a seq, turn or segment the log does not have. */
  | 'NOT_FOUND'
  /** Following a live file stopped: it shrank, was replaced, or appended bytes the codec refuses. */
  | 'FOLLOW_STOPPED'
  /** The viewer was closed. */
  | 'CLOSED';

export class ViewerError extends CodedError<ViewerErrorCode> {
  constructor(code: ViewerErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'ViewerError';
  }
}

/** `{code, message}` of any error, for the API and the page's status line. */
export function describeError(e: unknown): { code: string; message: string } {
  if (e instanceof Error) {
    const code = (e as { code?: unknown }).code;
    return { code: typeof code === 'string' ? code : 'INTERNAL', message: e.message };
  }
  return { code: 'INTERNAL', message: String(e) };
}
