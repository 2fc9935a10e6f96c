/**
 * Typed observability errors. A caller (the `dsh log export` command, the live plugin's error
 * listener) switches on `code`; the message is written for a person and names the endpoint.
 */
import { CodedError } from '../model/coded-error.js';
export type OtelExportErrorCode =
  /** Neither `url` nor `exporter` was given, the URL is not http(s), or an option is out of range. */
  | 'INVALID_OPTIONS'
  /** The input is not a Session, a loaded log or `{ id, events }`. */
  | 'INVALID_INPUT'
  /** The redaction hook threw. Nothing of that session or turn was exported (fail closed). */
  | 'REDACTION_FAILED'
  /** No connection could be made (refused, unknown host, unreachable network). */
  | 'ENDPOINT_UNREACHABLE'
  /** The endpoint answered with a non-success HTTP status that is not worth retrying. */
  | 'HTTP_STATUS'
  /** The endpoint kept answering 429/502/503/504, or did not answer, until the export timeout. */
  | 'RETRIES_EXHAUSTED'
  /** Any other exporter failure (a custom exporter's own error, an oversized response…). */
  | 'EXPORT_FAILED';

export interface OtelExportErrorDetails {
  url?: string;
  /** The HTTP status the endpoint answered with. */
  status?: number;
  /** The start of the response body, for a person to read. */
  body?: string;
  /** The operating-system error code behind a connection failure (`ECONNREFUSED`, …). */
  errno?: string;
  /** Spans accepted by the endpoint before the failure (earlier batches). */
  exportedSpans?: number;
  /** Spans that were not exported. */
  failedSpans?: number;
}

export class OtelExportError extends CodedError<OtelExportErrorCode> {
  readonly details: OtelExportErrorDetails;
  constructor(code: OtelExportErrorCode, message: string, details: OtelExportErrorDetails = {}, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'OtelExportError';
    this.details = details;
  }
}
