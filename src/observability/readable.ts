/**
 * The mapping's spans as the SDK's `ReadableSpan`s, the shape every `SpanExporter` takes. The
 * spans are finished values built after the fact, so they are plain objects rather than SDK
 * spans started through a tracer (which would mint random ids).
 */
import { SpanKind, SpanStatusCode, TraceFlags, type HrTime, type SpanStatus } from '@opentelemetry/api';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { DshSpan, SpanAttributes } from './spans.js';

export const INSTRUMENTATION_SCOPE = { name: 'dsh.observability', version: '1' } as const;

export interface ResourceOptions {
  /** `service.name` (default `dsh`). */
  serviceName?: string;
  /** More resource attributes (`deployment.environment`, `service.version`, …). */
  resourceAttributes?: SpanAttributes;
}

export function makeResource(opts: ResourceOptions = {}): Resource {
  return resourceFromAttributes({ ...opts.resourceAttributes, 'service.name': opts.serviceName ?? 'dsh' });
}

function hr(ms: number): HrTime {
  const sec = Math.floor(ms / 1000);
  return [sec, Math.round((ms - sec * 1000) * 1e6)];
}

function status(s: DshSpan['status']): SpanStatus {
  if (s.code === 'ERROR')
    return s.message === undefined ? { code: SpanStatusCode.ERROR } : { code: SpanStatusCode.ERROR, message: s.message };
  return { code: SpanStatusCode.UNSET };
}

export function toReadableSpan(s: DshSpan, resource: Resource): ReadableSpan {
  const ctx = { traceId: s.traceId, spanId: s.spanId, traceFlags: TraceFlags.SAMPLED };
  const span: ReadableSpan = {
    name: s.name,
    kind: s.kind === 'CLIENT' ? SpanKind.CLIENT : SpanKind.INTERNAL,
    spanContext: () => ctx,
    startTime: hr(s.startTime),
    endTime: hr(s.endTime),
    duration: hr(s.endTime - s.startTime),
    status: status(s.status),
    attributes: s.attributes,
    links: [],
    events: s.events.map((e) => ({ name: e.name, time: hr(e.time), attributes: e.attributes })),
    ended: true,
    resource,
    instrumentationScope: INSTRUMENTATION_SCOPE,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
  return s.parentSpanId === undefined
    ? span
    : { ...span, parentSpanContext: { traceId: s.traceId, spanId: s.parentSpanId, traceFlags: TraceFlags.SAMPLED } };
}
