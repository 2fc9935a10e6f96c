/**
 * A local OTLP/HTTP receiver for the end-to-end tests: it records every request the real
 * exporter sends and decodes the OTLP/JSON body (the encoding the OTLP/HTTP exporter uses:
 * `application/json`, ids in hex, times as nanosecond strings) into plain spans. It binds
 * 127.0.0.1 on a free port.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface DecodedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: 'UNSPECIFIED' | 'INTERNAL' | 'SERVER' | 'CLIENT' | 'PRODUCER' | 'CONSUMER';
  startMs: number;
  endMs: number;
  attributes: Record<string, unknown>;
  events: { name: string; timeMs: number; attributes: Record<string, unknown> }[];
  status: { code: 'UNSET' | 'OK' | 'ERROR'; message?: string };
  resource: Record<string, unknown>;
  scope: string;
}

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  spans(): DecodedSpan[];
  /** Answer the next requests with this status instead of 200. */
  respondWith(status: number, body?: string): void;
  close(): Promise<void>;
}

type AnyValue = {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
};
type KeyValue = { key: string; value: AnyValue };

function value(v: AnyValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(value);
  return undefined;
}

function attributes(kvs: KeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of kvs ?? []) out[kv.key] = value(kv.value);
  return out;
}

const nanosToMs = (n: string | number): number => Number(BigInt(n) / 1_000_000n);
const KINDS = ['UNSPECIFIED', 'INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'] as const;
const CODES = ['UNSET', 'OK', 'ERROR'] as const;

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: KeyValue[];
  events?: { name: string; timeUnixNano: string; attributes?: KeyValue[] }[];
  status?: { code?: number; message?: string };
}
interface OtlpRequest {
  resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { scope?: { name?: string }; spans?: OtlpSpan[] }[] }[];
}

export function decodeRequest(body: unknown): DecodedSpan[] {
  const out: DecodedSpan[] = [];
  for (const rs of (body as OtlpRequest).resourceSpans ?? []) {
    const resource = attributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        const span: DecodedSpan = {
          traceId: s.traceId,
          spanId: s.spanId,
          name: s.name,
          kind: KINDS[s.kind ?? 0]!,
          startMs: nanosToMs(s.startTimeUnixNano),
          endMs: nanosToMs(s.endTimeUnixNano),
          attributes: attributes(s.attributes),
          events: (s.events ?? []).map((e) => ({ name: e.name, timeMs: nanosToMs(e.timeUnixNano), attributes: attributes(e.attributes) })),
          status: { code: CODES[s.status?.code ?? 0]! },
          resource,
          scope: ss.scope?.name ?? '',
        };
        if (s.parentSpanId) span.parentSpanId = s.parentSpanId;
        if (s.status?.message) span.status.message = s.status.message;
        out.push(span);
      }
    }
  }
  return out;
}

export async function startReceiver(): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  let answer: { status: number; body: string } = { status: 200, body: '{}' };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const type = req.headers['content-type'] ?? '';
      // The OTLP/HTTP exporter in use sends OTLP/JSON; anything else would be a surprise worth failing on.
      const body = type.includes('application/json') ? (JSON.parse(raw) as unknown) : { unexpectedContentType: type };
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    requests,
    spans: () => requests.flatMap((r) => decodeRequest(r.body)),
    respondWith(status, body = '{}') {
      answer = { status, body };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1/traces`;
}
