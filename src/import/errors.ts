/**
 * Typed import errors. A foreign file is never "corrupt": either its format is recognised and
 * read (what has no dsh event is counted as a loss), or it is refused as `UNKNOWN_FORMAT`, naming
 * the formats this build reads, or as `MALFORMED_SOURCE` when a recognised format breaks its own
 * rules (a record that is not JSON, a truncated document), with the file, line and JSON path.
 */
import { CodedError } from '../model/coded-error.js';

export type ImportErrorCode = 'UNKNOWN_FORMAT' | 'MALFORMED_SOURCE' | 'NO_SUCH_SESSION';

export interface ImportErrorDetails {
  file?: string;
  /** 1-based line of the source file. */
  line?: number;
  /** JSON path inside the record or document. */
  path?: string;
  format?: string;
}

export class ImportError extends CodedError<ImportErrorCode> {
  readonly details: ImportErrorDetails;
  constructor(code: ImportErrorCode, message: string, details: ImportErrorDetails = {}, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'ImportError';
    this.details = details;
  }
}
