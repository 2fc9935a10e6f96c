/**
 * The observability layer: OpenTelemetry GenAI traces built from the session log alone, exported
 * offline (a whole log) or live (an agent plugin), identically. See docs/observability.md.
 */
export { OtelExportError, type OtelExportErrorCode, type OtelExportErrorDetails } from './errors.js';
export { traceIdFor, spanIdFor, sessionTraceIdFor, sessionSpanIdFor } from './ids.js';
export {
  DEFAULT_ENDPOINTS,
  DEFAULT_MAX_CONTENT_LENGTH,
  type AttrValue,
  type DshSpan,
  type DshSpanEvent,
  type DshSpanKind,
  type DshSpanStatus,
  type MappedTurn,
  type MappingOptions,
  type RedactionField,
  type Redactor,
  type SpanAttributes,
} from './spans.js';
export { serverOf } from './span-builder.js';
export { SpanMapper, type SessionIdentity } from './mapper.js';
export { mapSession, type MappedSession, type SessionInput } from './map-session.js';
export { toReadableSpan, makeResource, INSTRUMENTATION_SCOPE, type ResourceOptions } from './readable.js';
export type { ExporterOptions } from './exporter.js';
export { exportSessionToOtlp, type ExportSummary, type OtlpExportOptions } from './export.js';
export { otel, type OtelPlugin, type OtelPluginOptions, type OtelPluginStats } from './plugin.js';
