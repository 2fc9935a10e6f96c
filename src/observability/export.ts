/**
 * Offline export: a whole session, from its log, to an OTLP/HTTP endpoint (what a
 * `dsh log export` command wraps).
 */
import { checkExporterOptions, openExporter, sendSpans, type ExporterOptions } from './exporter.js';
import { checkMappingOptions, mapSession, type SessionInput } from './map-session.js';
import { makeResource, toReadableSpan, type ResourceOptions } from './readable.js';
import type { MappingOptions } from './spans.js';

export interface OtlpExportOptions extends MappingOptions, ExporterOptions, ResourceOptions {}

export interface ExportSummary {
  sessionId: string;
  /** Turns sent: one trace each, or (`traces: 'session'`) all in the session's one trace. */
  turns: number;
  /** Traces sent: the turns, or 1 for one trace per session (0 when nothing was sent). */
  traces: number;
  spans: number;
  /** Turns without `turn/end`, sent ended at their last event and marked `dsh.incomplete`. */
  incompleteTurns: number;
  /** Turns a fork inherited and left to its parent's export. */
  skippedTurns: number;
  /** Export requests made (batches). */
  requests: number;
}

export async function exportSessionToOtlp(input: SessionInput, opts: OtlpExportOptions): Promise<ExportSummary> {
  checkMappingOptions(opts);
  checkExporterOptions(opts);
  const mapped = mapSession(input, opts);
  const summary: ExportSummary = {
    sessionId: mapped.sessionId,
    turns: mapped.turns.length,
    traces: opts.traces === 'session' ? Math.min(1, mapped.turns.length) : mapped.turns.length,
    spans: mapped.spans.length,
    incompleteTurns: mapped.incompleteTurns,
    skippedTurns: mapped.skippedTurns,
    requests: 0,
  };
  if (mapped.spans.length === 0) return summary;
  const resource = makeResource(opts);
  const readable = mapped.spans.map((s) => toReadableSpan(s, resource));
  const { exporter, owned } = openExporter(opts);
  try {
    const batch: { batchSize?: number; url?: string } = {};
    if (opts.batchSize !== undefined) batch.batchSize = opts.batchSize;
    if (opts.url !== undefined && !opts.exporter) batch.url = opts.url;
    summary.requests = await sendSpans(exporter, readable, batch);
  } finally {
    if (owned) await exporter.shutdown().catch(() => undefined);
  }
  return summary;
}
