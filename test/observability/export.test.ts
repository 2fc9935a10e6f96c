/**
 * Offline export end to end: the official OTLP/HTTP exporter sends to a local receiver, which
 * decodes what arrived; failures come back as typed errors.
 */
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { SpanKind } from '@opentelemetry/api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { encodeJsonl, loadJsonl } from '../../src/session/index.js';
import { exportSessionToOtlp, OtelExportError } from '../../src/observability/index.js';
import { clockedSession } from './support/build.js';
import { EXPECTED_TWO_STEP, SESSION, twoStepTurn } from './support/reference.js';
import { closedPortUrl, startReceiver, type DecodedSpan, type Receiver } from './support/receiver.js';

function referenceLog() {
  const c = clockedSession(SESSION);
  twoStepTurn(c);
  return loadJsonl(encodeJsonl(c.session.header, c.session.events));
}

async function failure(p: Promise<unknown>): Promise<OtelExportError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(OtelExportError);
    return e as OtelExportError;
  }
  throw new Error('expected the export to fail');
}

let rx: Receiver;
beforeEach(async () => {
  rx = await startReceiver();
});
afterEach(async () => {
  await rx.close();
});

describe('exportSessionToOtlp', () => {
  it("sends the mapped spans, as the receiver decodes them, with the caller's headers", async () => {
    const summary = await exportSessionToOtlp(referenceLog(), { url: rx.url, headers: { authorization: 'Bearer t0ken' } });
    expect(summary).toEqual({ sessionId: SESSION, turns: 1, traces: 1, spans: 4, incompleteTurns: 0, skippedTurns: 0, requests: 1 });
    expect(rx.requests).toHaveLength(1);
    expect(rx.requests[0]).toMatchObject({ method: 'POST', path: '/v1/traces', headers: { authorization: 'Bearer t0ken' } });

    const spans = rx.spans();
    const expected: Omit<DecodedSpan, 'traceId' | 'spanId' | 'parentSpanId'>[] = EXPECTED_TWO_STEP.map((s) => ({
      name: s.name,
      kind: s.kind,
      startMs: s.startTime,
      endMs: s.endTime,
      attributes: s.attributes,
      events: [],
      status: s.status,
      resource: { 'service.name': 'dsh' },
      scope: 'dsh.observability',
    }));
    expect(spans.map(({ traceId: _t, spanId: _s, parentSpanId: _p, ...rest }) => rest)).toEqual(expected);
    const [root, ...children] = spans;
    for (const s of children) expect([s.traceId, s.parentSpanId]).toEqual([root!.traceId, root!.spanId]);
    expect(root!.parentSpanId).toBeUndefined();
  });

  it('sends the same ids every time the same log is exported (a receiver can dedupe)', async () => {
    await exportSessionToOtlp(referenceLog(), { url: rx.url });
    await exportSessionToOtlp(referenceLog(), { url: rx.url });
    const [first, second] = rx.requests.map((r) => JSON.stringify(r.body));
    expect(rx.requests).toHaveLength(2);
    expect(second).toBe(first);
  });

  it('splits a session into bounded requests', async () => {
    const summary = await exportSessionToOtlp(referenceLog(), { url: rx.url, batchSize: 3 });
    expect(summary.requests).toBe(2);
    expect(
      rx.requests.map(
        (r) => (r.body as { resourceSpans: { scopeSpans: { spans: unknown[] }[] }[] }).resourceSpans[0]!.scopeSpans[0]!.spans.length,
      ),
    ).toEqual([3, 1]);
    expect(new Set(rx.spans().map((s) => s.spanId)).size).toBe(4);
  });

  it('sends nothing for a session without turns', async () => {
    const c = clockedSession('sess-empty');
    const summary = await exportSessionToOtlp(c.session, { url: rx.url });
    expect(summary).toMatchObject({ turns: 0, spans: 0, requests: 0 });
    expect(rx.requests).toHaveLength(0);
  });

  it("goes through a caller's own SpanExporter when given one (and leaves it running)", async () => {
    const mem = new InMemorySpanExporter();
    const summary = await exportSessionToOtlp(referenceLog(), { exporter: mem });
    expect(summary.requests).toBe(1);
    const spans = mem.getFinishedSpans();
    expect(spans.map((s) => [s.name, s.kind, s.parentSpanContext?.spanId === spans[0]!.spanContext().spanId])).toEqual([
      ['invoke_agent dsh', SpanKind.INTERNAL, false],
      ['chat deepseek-chat', SpanKind.CLIENT, true],
      ['execute_tool ls', SpanKind.INTERNAL, true],
      ['chat deepseek-chat', SpanKind.CLIENT, true],
    ]);
    expect(spans[0]!.startTime).toEqual([1, 0]); // 1000 ms
    expect(spans[1]!.endTime).toEqual([1, 150_000_000]); // 1150 ms
    await exportSessionToOtlp(referenceLog(), { exporter: mem });
    expect(mem.getFinishedSpans()).toHaveLength(8);
  });

  it('names service and resource as asked', async () => {
    await exportSessionToOtlp(referenceLog(), {
      url: rx.url,
      serviceName: 'ci-agent',
      resourceAttributes: { 'deployment.environment': 'ci' },
    });
    expect(rx.spans()[0]!.resource).toEqual({ 'service.name': 'ci-agent', 'deployment.environment': 'ci' });
  });
});

describe('export failures', () => {
  it('an unreachable endpoint: ENDPOINT_UNREACHABLE, naming the URL and the system error', async () => {
    const url = await closedPortUrl();
    const err = await failure(exportSessionToOtlp(referenceLog(), { url, timeoutMillis: 500 }));
    expect(err.code).toBe('ENDPOINT_UNREACHABLE');
    expect(err.details).toMatchObject({ url, errno: 'ECONNREFUSED', exportedSpans: 0, failedSpans: 4 });
    expect(err.message).toContain(url);
  });

  it('a refusing endpoint: HTTP_STATUS with the status and the start of the body', async () => {
    rx.respondWith(401, '{"error":"bad credentials"}');
    const err = await failure(exportSessionToOtlp(referenceLog(), { url: rx.url }));
    expect(err.code).toBe('HTTP_STATUS');
    expect(err.details).toMatchObject({ status: 401, body: '{"error":"bad credentials"}' });
    expect(err.message).toContain('HTTP 401');
  });

  it('an endpoint that stays unavailable: RETRIES_EXHAUSTED once the export deadline leaves no room to retry', async () => {
    rx.respondWith(503);
    const err = await failure(exportSessionToOtlp(referenceLog(), { url: rx.url, timeoutMillis: 500 }));
    expect(err.code).toBe('RETRIES_EXHAUSTED');
    expect(rx.requests.length).toBeGreaterThanOrEqual(1);
  });

  it('a redaction hook that throws: REDACTION_FAILED, and nothing sent', async () => {
    const err = await failure(
      exportSessionToOtlp(referenceLog(), {
        url: rx.url,
        redact: () => {
          throw new Error('no policy');
        },
      }),
    );
    expect(err.code).toBe('REDACTION_FAILED');
    expect(rx.requests).toHaveLength(0);
  });

  it('bad options: INVALID_OPTIONS before anything is sent', async () => {
    expect((await failure(exportSessionToOtlp(referenceLog(), {}))).code).toBe('INVALID_OPTIONS');
    expect((await failure(exportSessionToOtlp(referenceLog(), { url: 'ftp://127.0.0.1/v1/traces' }))).code).toBe('INVALID_OPTIONS');
    expect((await failure(exportSessionToOtlp(referenceLog(), { url: rx.url, batchSize: 0 }))).code).toBe('INVALID_OPTIONS');
    expect(rx.requests).toHaveLength(0);
  });
});
