/**
 * Sending spans through an SDK `SpanExporter` (the official OTLP/HTTP one unless the caller
 * brings their own), in batches, with the exporter's failures turned into typed errors.
 */
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { OtelExportError } from './errors.js';

export interface ExporterOptions {
  /**
   * The OTLP/HTTP traces endpoint, used as given (e.g. `http://localhost:4318/v1/traces`).
   * Required unless `exporter` is given.
   */
  url?: string;
  /** HTTP headers for every request (authentication, tenant). */
  headers?: Record<string, string>;
  /** Per-export deadline, retries included (the exporter's default is 10 s). */
  timeoutMillis?: number;
  /** Any SDK span exporter (OTLP over protobuf or gRPC, console, in-memory…) instead of `url`. */
  exporter?: SpanExporter;
  /** Spans per request (default 512): a long session is sent in several bounded requests. */
  batchSize?: number;
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
]);

export function checkExporterOptions(opts: ExporterOptions): void {
  if (opts.exporter !== undefined) {
    if (typeof opts.exporter?.export !== 'function')
      throw new OtelExportError('INVALID_OPTIONS', 'exporter must be a SpanExporter (with export and shutdown)');
  } else {
    if (typeof opts.url !== 'string' || opts.url === '')
      throw new OtelExportError(
        'INVALID_OPTIONS',
        'give the OTLP/HTTP traces endpoint as url (e.g. http://localhost:4318/v1/traces), or an exporter',
      );
    let u: URL;
    try {
      u = new URL(opts.url);
    } catch {
      throw new OtelExportError('INVALID_OPTIONS', `url ${JSON.stringify(opts.url)} is not a URL`, { url: opts.url });
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:')
      throw new OtelExportError('INVALID_OPTIONS', `url ${JSON.stringify(opts.url)} is not http(s)`, { url: opts.url });
  }
  const b = opts.batchSize;
  if (b !== undefined && !(Number.isSafeInteger(b) && b >= 1))
    throw new OtelExportError('INVALID_OPTIONS', `batchSize must be a positive integer, not ${String(b)}`);
  const t = opts.timeoutMillis;
  if (t !== undefined && !(Number.isFinite(t) && t > 0))
    throw new OtelExportError('INVALID_OPTIONS', `timeoutMillis must be a positive number, not ${String(t)}`);
}

/** The caller's exporter, or an OTLP/HTTP one for `url` (which the caller must shut down). */
export function openExporter(opts: ExporterOptions): { exporter: SpanExporter; owned: boolean } {
  if (opts.exporter) return { exporter: opts.exporter, owned: false };
  const config: ConstructorParameters<typeof OTLPTraceExporter>[0] = { url: opts.url! };
  if (opts.headers) config.headers = { ...opts.headers };
  if (opts.timeoutMillis !== undefined) config.timeoutMillis = opts.timeoutMillis;
  return { exporter: new OTLPTraceExporter(config), owned: true };
}

function errnoOf(e: unknown): string | undefined {
  for (let cur = e, depth = 0; cur && depth < 5; depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The exporter's failure as a typed error; `where` names the endpoint for the message. */
export function classifyFailure(
  error: unknown,
  where: string | undefined,
  counts: { exportedSpans: number; failedSpans: number },
): OtelExportError {
  const at = where ? ` ${where}` : '';
  const details = { ...(where ? { url: where } : {}), ...counts };
  const status = (error as { code?: unknown } | undefined)?.code;
  if (typeof status === 'number') {
    const body = (error as { data?: unknown }).data;
    const excerpt = typeof body === 'string' && body !== '' ? body.slice(0, 500) : undefined;
    return new OtelExportError(
      'HTTP_STATUS',
      `the OTLP endpoint${at} answered HTTP ${status}${excerpt ? `: ${excerpt}` : ''}`,
      { ...details, status, ...(excerpt ? { body: excerpt } : {}) },
      { cause: error },
    );
  }
  const errno = errnoOf(error);
  if (errno !== undefined && NETWORK_CODES.has(errno)) {
    return new OtelExportError(
      'ENDPOINT_UNREACHABLE',
      `cannot reach the OTLP endpoint${at} (${errno}); is the collector running and the URL right?`,
      { ...details, errno },
      { cause: error },
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  if (/timed out|retryable status/i.test(message)) {
    return new OtelExportError(
      'RETRIES_EXHAUSTED',
      `the OTLP endpoint${at} did not accept the spans before the export timeout (${message})`,
      details,
      { cause: error },
    );
  }
  return new OtelExportError('EXPORT_FAILED', `exporting spans${at ? ` to${at}` : ''} failed: ${message}`, details, { cause: error });
}

function exportOnce(exporter: SpanExporter, spans: ReadableSpan[]): Promise<ExportResult> {
  return new Promise((resolve) => {
    try {
      exporter.export(spans, resolve);
    } catch (e) {
      resolve({ code: ExportResultCode.FAILED, error: e instanceof Error ? e : new Error(String(e)) });
    }
  });
}

/** Send spans in batches, in order; throws on the first failed batch. Returns the request count. */
export async function sendSpans(
  exporter: SpanExporter,
  spans: ReadableSpan[],
  opts: { batchSize?: number; url?: string },
): Promise<number> {
  const size = opts.batchSize ?? 512;
  let sent = 0;
  let requests = 0;
  while (sent < spans.length) {
    const batch = spans.slice(sent, sent + size);
    const r = await exportOnce(exporter, batch);
    requests++;
    if (r.code !== ExportResultCode.SUCCESS)
      throw classifyFailure(r.error, opts.url, { exportedSpans: sent, failedSpans: spans.length - sent });
    sent += batch.length;
  }
  return requests;
}
