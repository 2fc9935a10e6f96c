/**
 * The span model the mapping produces: plain data, independent of the OpenTelemetry SDK, so a
 * test can write the expected spans by hand and the exporter conversion stays a thin layer.
 * Times are epoch milliseconds (the log's unit).
 */

/** An OTel attribute value, as far as this mapping produces them. */
export type AttrValue = string | number | boolean | string[];
export type SpanAttributes = Record<string, AttrValue>;

export type DshSpanKind = 'INTERNAL' | 'CLIENT';

export interface DshSpanStatus {
  code: 'UNSET' | 'ERROR';
  message?: string;
}

export interface DshSpanEvent {
  name: string;
  time: number;
  attributes: SpanAttributes;
}

export interface DshSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: DshSpanKind;
  startTime: number;
  endTime: number;
  attributes: SpanAttributes;
  events: DshSpanEvent[];
  status: DshSpanStatus;
}

/** One turn's spans: the `invoke_agent` span first, then its children in log order. */
export interface MappedTurn {
  turn: number;
  traceId: string;
  /** No `turn/end` in the log yet (a crash without repair, or a live turn). */
  incomplete: boolean;
  /** The turn came with a fork's seed: the parent session owns it. */
  inherited: boolean;
  spans: DshSpan[];
}

/** What the redaction hook sees: one attribute, span-event attribute or status message. */
export interface RedactionField {
  /** The attribute key; `status.message` for the span status description. */
  readonly key: string;
  readonly value: AttrValue;
  /** The span-event name when the attribute belongs to a span event (`llm/retry`). */
  readonly event?: string;
  readonly span: { readonly name: string; readonly traceId: string; readonly spanId: string };
}

/**
 * Rewrites or drops a field before export: return the value to keep (possibly changed), or
 * `undefined` to drop it. Runs on every span, content or not, after the content cap.
 */
export type Redactor = (field: RedactionField) => AttrValue | undefined;

export interface MappingOptions {
  /**
   * `none` (default): no prompts, completions, system prompt, tool arguments or results.
   * `full`: those too, each attribute capped at `maxContentLength` characters.
   */
  content?: 'none' | 'full';
  /** Per-attribute cap for captured content, in UTF-16 code units (default 16 384). */
  maxContentLength?: number;
  redact?: Redactor;
  /** `gen_ai.agent.name` and the `invoke_agent {name}` span name (default `dsh`). */
  agentName?: string;
  /**
   * Turns a fork inherited from its parent (`header.seedLength`): `skip` (default) leaves them
   * to the parent's export, so a dashboard summing tokens does not count them twice.
   */
  inherited?: 'skip' | 'include';
  /**
   * `turn` (default): one trace per turn. `session`: one trace for the whole session, a
   * `session {agent}` span as the parent of every turn span.
   */
  traces?: 'turn' | 'session';
  /**
   * Base URLs of provider routes, for `server.address` / `server.port` (the log names the route,
   * not the endpoint). Added to the built-in routes' public endpoints (`deepseek`,
   * `deepseek-official`, `openai`, `anthropic`), which they override.
   */
  endpoints?: Readonly<Record<string, string>>;
}

/**
 * The public endpoints of the built-in provider routes, and `deepseek-official`, the route name
 * dsh's logs use for DeepSeek's API. Written out rather than imported from src/llm/select.ts, which
 * would load every provider SDK into `dsh log export`; a test holds the two tables equal.
 */
export const DEFAULT_ENDPOINTS: Readonly<Record<string, string>> = {
  deepseek: 'https://api.deepseek.com',
  'deepseek-official': 'https://api.deepseek.com',
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
};

export const DEFAULT_MAX_CONTENT_LENGTH = 16_384;
