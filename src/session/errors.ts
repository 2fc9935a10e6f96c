/**
 * Typed session errors. Every refusal carries a stable `code`, the rule it enforces in words, and
 * where it happened (event type, seq, JSON path, file line) when known. A refused append or seed
 * leaves the log exactly as it was.
 */
import { CodedError } from '../model/coded-error.js';
export type SessionErrorCode =
  // lossless JSON
  | 'NON_JSON'
  // envelope and vocabulary
  | 'INVALID_EVENT'
  | 'UNKNOWN_EVENT_TYPE'
  | 'LEGACY_VOCABULARY'
  | 'SEQ_GAP'
  | 'REENTRANT_APPEND'
  // surface rules (surface.ts)
  | 'SURFACE_OP_REQUIRED'
  | 'SURFACE_OP_FORBIDDEN'
  | 'INVALID_SURFACE_OP'
  | 'INVALID_SOURCE_SEQS'
  | 'INVALID_REPLACE'
  // trace invariants (trace.ts)
  | 'TRACE_VIOLATION'
  // header, fork
  | 'INVALID_HEADER'
  // storage
  | 'CORRUPT_LOG'
  /** A log line longer than a JavaScript string can hold (about 512 MiB). */
  | 'LINE_TOO_LONG'
  /** A deferred chunk run (resume from the sidecar index) read bytes that no longer hold it: the log changed under the session. */
  | 'STORAGE_CHANGED'
  | 'FORMAT_UNSUPPORTED'
  | 'OPEN_TURN'
  | 'INVALID_BOUNDARY';

export interface SessionErrorDetails {
  /** The event type concerned. */
  eventType?: string;
  /** The seq the event has or would have had. */
  seq?: number;
  /** JSON path of the offending value, e.g. `$.data.chunk.text`. */
  path?: string;
  /** Short name of the rule, e.g. `turn-enclosure`, `tool-result-pairing`. */
  rule?: string;
  /** Source file and 1-based line, when the event came from a file. */
  file?: string;
  line?: number;
}

export class SessionError extends CodedError<SessionErrorCode> {
  readonly details: SessionErrorDetails;
  constructor(code: SessionErrorCode, message: string, details: SessionErrorDetails = {}, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'SessionError';
    this.details = details;
  }
  get seq(): number | undefined {
    return this.details.seq;
  }
  get rule(): string | undefined {
    return this.details.rule;
  }
  /** A copy that also says which file and line the event came from. */
  at(file: string | undefined, line: number | undefined): SessionError {
    const where = [file, line !== undefined ? `line ${line}` : undefined].filter(Boolean).join(':');
    const msg = where ? `${where}: ${this.message}` : this.message;
    const details: SessionErrorDetails = { ...this.details };
    if (file !== undefined) details.file = file;
    if (line !== undefined) details.line = line;
    return new SessionError(this.code, msg, details, { cause: this });
  }
}
