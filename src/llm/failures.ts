/**
 * Provider-neutral mapping from HTTP statuses, error bodies and response headers to `LlmFailure`.
 * Both SDK adapters feed their errors through here, so the same 429 means the same thing whatever
 * the provider, and the retry policy can key on codes alone.
 */
import type { LlmFailure } from '../model/failure.js';
import type { StreamChunk } from '../model/stream.js';

/**
 * Codes this package emits beyond the canonical `LLM_FAILURE_CODES` (the code type is open).
 * `REFUSAL`: the provider's safety system stopped the answer (Anthropic `stop_reason: refusal`).
 * `CONTENT_FILTER`: an OpenAI-compatible `finish_reason: content_filter`.
 * `HTTP_<status>`: a status none of the canonical codes describes (e.g. a 3xx from a proxy).
 */
export const ADAPTER_FAILURE_CODES = ['REFUSAL', 'CONTENT_FILTER'] as const;

export type HeaderSource = Headers | Record<string, string | string[] | undefined> | undefined;

function header(headers: HeaderSource, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const rec = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(rec).find((k) => k.toLowerCase() === name);
  const v = key === undefined ? undefined : rec[key];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * The delay the provider asked for: `retry-after-ms` (OpenAI-style, milliseconds) first, then
 * `retry-after` as delta-seconds or an HTTP date. Negative or unparseable values are ignored.
 */
export function retryAfterMs(headers: HeaderSource, now: number = Date.now()): number | undefined {
  const ms = header(headers, 'retry-after-ms');
  if (ms !== undefined && ms.trim() !== '') {
    const n = Number(ms);
    if (Number.isFinite(n) && n >= 0) return Math.round(n);
  }
  const ra = header(headers, 'retry-after')?.trim();
  if (ra === undefined || ra === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(ra)) return Math.round(Number(ra) * 1000);
  const at = Date.parse(ra);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

export function requestIdFrom(headers: HeaderSource): string | undefined {
  return header(headers, 'x-request-id') ?? header(headers, 'request-id');
}

/** What an error body says, whatever its shape (`{error:{…}}`, `{type:'error',error:{…}}`, flat, text). */
export interface ErrorInfo {
  message?: string;
  code?: string;
  type?: string;
}

export function errorInfo(body: unknown): ErrorInfo {
  if (typeof body === 'string') return body.trim() ? { message: body.trim() } : {};
  if (!body || typeof body !== 'object') return {};
  const rec = body as Record<string, unknown>;
  const inner = rec['error'];
  if (typeof inner === 'string') return { message: inner, ...pickStrings(rec, ['code', 'type']) };
  if (inner && typeof inner === 'object') {
    const nested = errorInfo(inner);
    if (nested.message !== undefined || nested.code !== undefined || nested.type !== undefined) return nested;
  }
  return pickStrings(rec, ['message', 'code', 'type']);
}

function pickStrings(rec: Record<string, unknown>, keys: (keyof ErrorInfo)[]): ErrorInfo {
  const out: ErrorInfo = {};
  for (const k of keys) {
    const v = rec[k];
    if (typeof v === 'string' && v !== '') out[k] = v;
    else if (typeof v === 'number') out[k] = String(v);
  }
  return out;
}

// Wordings seen from DeepSeek/OpenAI/vLLM ("maximum context length is"), Anthropic ("prompt is too
// long", "exceed context limit"), llama.cpp ("exceeds the available context size") and OpenAI codes.
const CONTEXT_OVERFLOW = new RegExp(
  [
    'context[ _-]?length[ _-]?exceeded',
    'maximum context length',
    'context (length|window|size|limit) (is |was )?(exceeded|too)',
    "exceeds? (the )?(available |model'?s? )?context",
    'prompt is too long',
    'too many (input )?tokens',
    'input is too long',
    'exceed_context_size',
    "longer than the model'?s? context",
  ].join('|'),
  'i',
);

export function isContextOverflow(info: ErrorInfo): boolean {
  return [info.message, info.code, info.type].some((s) => s !== undefined && CONTEXT_OVERFLOW.test(s));
}

const QUOTA = /insufficient[ _]?(quota|balance)|credit balance is too low|quota exceeded|exceeded your current quota/i;

function isQuota(info: ErrorInfo): boolean {
  return [info.message, info.code, info.type].some((s) => s !== undefined && QUOTA.test(s));
}

export interface HttpFailureInput {
  provider: string;
  status: number;
  body?: unknown;
  headers?: HeaderSource;
  now?: number;
}

/** An HTTP error response (before any stream data) as an `LlmFailure`. */
export function httpFailure({ provider, status, body, headers, now }: HttpFailureInput): LlmFailure {
  const info = errorInfo(body);
  const failure: LlmFailure = {
    code: httpCode(status, info),
    status,
    message: `${provider} HTTP ${status}: ${info.message ?? info.type ?? info.code ?? 'no error message'}`,
  };
  const delay = retryAfterMs(headers, now);
  if (delay !== undefined) failure.providerRetryAfterMs = delay;
  const requestId = requestIdFrom(headers);
  if (requestId !== undefined) failure.requestId = requestId;
  return failure;
}

function httpCode(status: number, info: ErrorInfo): string {
  if (status === 401 || status === 403) return 'AUTH';
  if (status === 402 || isQuota(info)) return 'QUOTA';
  if (status === 429) return 'RATE_LIMIT';
  if (status === 408) return 'TIMEOUT';
  // 413 is a request the provider will not read at all: the same remedy (shrink it) as overflow.
  if (status === 413 || (status >= 400 && status < 500 && isContextOverflow(info))) return 'CONTEXT_WINDOW_EXCEEDED';
  if (status >= 400 && status < 500) return 'INVALID_REQUEST';
  if (status >= 500) return 'SERVER';
  return `HTTP_${status}`;
}

/**
 * An error the provider reported inside a 200 stream (OpenAI-style `data: {"error":…}`, Anthropic
 * `event: error`). No status exists, so the code comes from the error's type/code/message; an
 * unrecognised one counts as `SERVER` because providers use it for overload and internal faults.
 */
export function streamErrorFailure(provider: string, body: unknown): LlmFailure {
  const info = errorInfo(body);
  const hint = `${info.type ?? ''} ${info.code ?? ''} ${info.message ?? ''}`;
  let code = 'SERVER';
  if (isQuota(info)) code = 'QUOTA';
  else if (/rate[ _]?limit|too many requests/i.test(hint)) code = 'RATE_LIMIT';
  else if (isContextOverflow(info)) code = 'CONTEXT_WINDOW_EXCEEDED';
  else if (/authentication|permission|unauthori[sz]ed|invalid[ _]api[ _]key/i.test(hint)) code = 'AUTH';
  else if (/invalid[ _]request|not[ _]found/i.test(hint)) code = 'INVALID_REQUEST';
  return { code, message: `${provider} stream error: ${info.message ?? info.type ?? info.code ?? 'unspecified'}` };
}

const NETWORK_CODES = /^(UND_ERR|ECONN|EPIPE|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ERR_STREAM_PREMATURE_CLOSE)/;

/** Whether a thrown value is a socket/transport failure (undici wraps them as `TypeError: terminated`/`fetch failed`). */
export function isNetworkError(e: unknown): boolean {
  let cur: unknown = e;
  for (let depth = 0; cur && typeof cur === 'object' && depth < 6; depth++) {
    const err = cur as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown };
    if (typeof err.code === 'string' && NETWORK_CODES.test(err.code)) return true;
    if (err.name === 'SocketError') return true;
    if (err.name === 'TypeError' && (err.message === 'terminated' || err.message === 'fetch failed')) return true;
    cur = err.cause;
  }
  return false;
}

/** Shorter values are never treated as secrets: a value like "1" would match everything. */
export const MIN_SECRET_LENGTH = 8;

export const REDACTED = '[REDACTED]';

/** Credentials written into a URL: user, password, and every query value (long enough to be one). */
export function urlSecrets(url: string | undefined): string[] {
  if (url === undefined) return [];
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return [];
  }
  const decode = (v: string): string => {
    try {
      return decodeURIComponent(v);
    } catch {
      return v;
    }
  };
  return secretValues([u.username, u.password, decode(u.username), decode(u.password), ...u.searchParams.values()]);
}

/** The values long enough to count as secrets, once each. */
export function secretValues(values: readonly (string | undefined)[]): string[] {
  return [...new Set(values.filter((v): v is string => v !== undefined && v.length >= MIN_SECRET_LENGTH))];
}

/** What one adapter sends that a gateway could echo back: its key, its configured header values, its URL's credentials. */
export function adapterSecrets(o: {
  apiKey?: string | undefined;
  headers?: Record<string, string> | undefined;
  baseUrl?: string | undefined;
}): string[] {
  return secretValues([o.apiKey, ...Object.values(o.headers ?? {}), ...urlSecrets(o.baseUrl)]);
}

/** `text` with every secret replaced by `[REDACTED]` (longest first, so a secret holding another goes whole). */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of [...secrets].sort((a, b) => b.length - a.length)) {
    if (s.length >= MIN_SECRET_LENGTH && out.includes(s)) out = out.split(s).join(REDACTED);
  }
  return out;
}

/**
 * `value` with every string in it (at any depth of arrays and plain objects) redacted; the same
 * reference when nothing changed. For error records bound for the log: whatever field of an error
 * quotes a secret (message, request id, a tool's code or meta), it is taken out.
 */
export function redactJson<T>(value: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return redactSecrets(v, secrets);
    if (Array.isArray(v)) {
      const out = v.map(walk);
      return out.some((x, i) => x !== v[i]) ? out : v;
    }
    if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
      let changed = false;
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) {
        const y = walk(x);
        if (y !== x) changed = true;
        out[k] = y;
      }
      return changed ? out : v;
    }
    return v;
  };
  return walk(value) as T;
}

/**
 * A finish chunk with the secrets taken out of its failure. Some gateways quote the request in an
 * error body (the Authorization header, any configured header, the URL: "Incorrect API key
 * provided: sk-…"); the failure is printed and logged, and a secret must never be. Other chunks
 * pass as they are.
 */
export function withoutSecrets(chunk: StreamChunk, secrets: readonly string[]): StreamChunk {
  if (chunk.type !== 'finish' || secrets.length === 0) return chunk;
  const r = chunk.reason;
  if ((r.kind !== 'error' && r.kind !== 'aborted') || !r.failure) return chunk;
  const failure = redactJson(r.failure, secrets);
  return failure === r.failure ? chunk : { ...chunk, reason: { ...r, failure } };
}

/** `withoutSecrets` for one key (kept for callers of the first version). */
export function withoutKey(chunk: StreamChunk, key: string | undefined): StreamChunk {
  return withoutSecrets(chunk, secretValues([key]));
}
