/**
 * The redaction hook, applied to every span the mapping produces (live and offline alike): each
 * attribute, each span-event attribute and the status message passes through the caller's
 * function, which keeps, rewrites or drops it. A throwing hook is not caught here: the export
 * fails closed (`REDACTION_FAILED`) rather than sending what the hook was meant to scrub.
 */
import type { AttrValue, DshSpan, Redactor, SpanAttributes } from './spans.js';

function redactAttributes(
  attrs: SpanAttributes,
  redact: Redactor,
  span: { name: string; traceId: string; spanId: string },
  event?: string,
): SpanAttributes {
  const out: SpanAttributes = {};
  for (const [key, value] of Object.entries(attrs)) {
    const v: AttrValue | undefined = redact(event === undefined ? { key, value, span } : { key, value, span, event });
    if (v !== undefined) out[key] = v;
  }
  return out;
}

export function applyRedaction(s: DshSpan, redact: Redactor): DshSpan {
  const span = { name: s.name, traceId: s.traceId, spanId: s.spanId };
  const out: DshSpan = {
    ...s,
    attributes: redactAttributes(s.attributes, redact, span),
    events: s.events.map((e) => ({ ...e, attributes: redactAttributes(e.attributes, redact, span, e.name) })),
    status: { code: s.status.code },
  };
  if (s.status.message !== undefined) {
    const m = redact({ key: 'status.message', value: s.status.message, span });
    if (m !== undefined) out.status.message = String(m);
  }
  return out;
}
