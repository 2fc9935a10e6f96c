/**
 * The dsh SDK protocol's wire layer: newline-delimited JSON-RPC 2.0 (one compact JSON object per
 * `\n`-terminated line, both ways), the method and notification names, and the error codes.
 *
 * The methods and notifications are dsh's SDK protocol (facts from its public protocol types):
 * `initialize` `{cwd, provider, model, maxTokens?}` → `{serverInfo}`; `session/prompt`
 * `{sessionId, contentBlocks}` → `{messageId}` (the prompt is queued; the turn's progress comes as
 * notifications); `shutdown` → `{}`; notifications `session.event` `{sessionId, event}` (every
 * event the session log commits, as it commits) and `session.status` `{sessionId, status:
 * 'running' | 'idle'}`. dsh has no way to stop a turn or let a session go; this server adds
 * `session/cancel` and `session/close`.
 *
 * Every refusal is a JSON-RPC error with a stable numeric `code` and, in `data.code`, a stable
 * name; a bad line never ends the server.
 */
import { CodedError } from '../model/coded-error.js';

export const SDK_METHODS = ['initialize', 'session/prompt', 'session/cancel', 'session/close', 'shutdown'] as const;
export type SdkMethod = (typeof SDK_METHODS)[number];

/** Error names and their JSON-RPC codes (the -327xx/-326xx ones are JSON-RPC 2.0's own). */
export const SDK_ERROR_CODES = {
  /** The line is not JSON. */
  PARSE_ERROR: -32700,
  /** JSON, but not a JSON-RPC 2.0 request (no `jsonrpc: "2.0"`, a bad `id` or `method`). */
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  /** `params` is missing a field or has one of the wrong type (`data.path` names it). */
  INVALID_PARAMS: -32602,
  /** A fault of the server itself (a bug); the message says what failed. */
  INTERNAL_ERROR: -32603,
  /** A session method before `initialize`. */
  NOT_INITIALIZED: -32001,
  /** `initialize` a second time (the handshake is once per process). */
  ALREADY_INITIALIZED: -32002,
  /** `session/prompt` while the session's turn is running (one prompt in flight per session). */
  SESSION_BUSY: -32003,
  /** `session/cancel` or `session/close` of a session this server does not have open. */
  SESSION_NOT_FOUND: -32004,
  /** The session could not be opened or its agent started (store, config, model key); `data.cause` has the cause's code. */
  SESSION_START_FAILED: -32005,
  /** A request after `shutdown` began. */
  SHUTTING_DOWN: -32006,
  /** `initialize` could not set up the model or the store (a missing key, a bad config); `data.cause` has the cause's code. */
  INITIALIZE_FAILED: -32007,
} as const;

export type SdkErrorName = keyof typeof SDK_ERROR_CODES;

export type JsonRpcId = string | number | null;

/** A refusal to put on the wire: its name picks the code; `data` adds detail (a JSON path, a cause). */
export class SdkError extends CodedError<SdkErrorName> {
  readonly data: Record<string, unknown>;
  constructor(code: SdkErrorName, message: string, data: Record<string, unknown> = {}) {
    super(code, message);
    this.name = 'SdkError';
    this.data = data;
  }
}

export interface RpcRequest {
  id: JsonRpcId;
  /** False for a notification from the client (no `id`): it gets no response. */
  answered: boolean;
  method: string;
  params: unknown;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * One line as a request, or the error to answer it with (and the id to answer, when the line
 * had a usable one).
 */
export function parseLine(line: string): RpcRequest | { error: SdkError; id: JsonRpcId } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (e) {
    return { id: null, error: new SdkError('PARSE_ERROR', `not JSON: ${(e as Error).message}`) };
  }
  if (!isRecord(value)) return { id: null, error: new SdkError('INVALID_REQUEST', 'a request is a JSON object', { path: '$' }) };
  const rawId = value.id;
  const idOk = rawId === undefined || rawId === null || typeof rawId === 'string' || (typeof rawId === 'number' && Number.isFinite(rawId));
  const id: JsonRpcId = idOk && rawId !== undefined ? (rawId as JsonRpcId) : null;
  if (!idOk) return { id: null, error: new SdkError('INVALID_REQUEST', 'id must be a string, a number or null', { path: '$.id' }) };
  if (value.jsonrpc !== '2.0') return { id, error: new SdkError('INVALID_REQUEST', 'jsonrpc must be "2.0"', { path: '$.jsonrpc' }) };
  if (typeof value.method !== 'string' || value.method === '')
    return { id, error: new SdkError('INVALID_REQUEST', 'method must be a non-empty string', { path: '$.method' }) };
  if (value.params !== undefined && !isRecord(value.params) && !Array.isArray(value.params))
    return { id, error: new SdkError('INVALID_REQUEST', 'params must be an object or an array', { path: '$.params' }) };
  return { id, answered: 'id' in value, method: value.method, params: value.params };
}

export function response(id: JsonRpcId, result: unknown): Record<string, unknown> {
  return { jsonrpc: '2.0', id, result };
}

export function errorResponse(id: JsonRpcId, e: SdkError): Record<string, unknown> {
  return { jsonrpc: '2.0', id, error: { code: SDK_ERROR_CODES[e.code], message: e.message, data: { code: e.code, ...e.data } } };
}

export function notification(method: string, params: unknown): Record<string, unknown> {
  return { jsonrpc: '2.0', method, params };
}

// ---------------------------------------------------------------------------------------------
// Params

export interface InitializeParams {
  /** The workspace every session of this server records in its header (absolute). */
  cwd: string;
  /** Provider route and model every session runs on (dsh's names are accepted: `deepseek-official`). */
  provider: string;
  model: string;
  /** Cap on output tokens per model call. */
  maxTokens?: number;
}

export interface PromptParams {
  sessionId: string;
  /** The user message's content, as it is (text blocks). */
  contentBlocks: PromptBlock[];
}

export type PromptBlock = { type: 'text'; text: string };

function params(p: unknown): Record<string, unknown> {
  if (p === undefined) return {};
  if (!isRecord(p)) throw new SdkError('INVALID_PARAMS', 'params must be an object', { path: '$.params' });
  return p;
}

function str(p: Record<string, unknown>, key: string): string {
  const v = p[key];
  if (typeof v !== 'string' || v === '')
    throw new SdkError('INVALID_PARAMS', `${key} must be a non-empty string`, { path: `$.params.${key}` });
  return v;
}

export function initializeParams(raw: unknown): InitializeParams {
  const p = params(raw);
  const out: InitializeParams = { cwd: str(p, 'cwd'), provider: str(p, 'provider'), model: str(p, 'model') };
  if (p.maxTokens !== undefined) {
    if (typeof p.maxTokens !== 'number' || !Number.isSafeInteger(p.maxTokens) || p.maxTokens < 1)
      throw new SdkError('INVALID_PARAMS', 'maxTokens must be a positive integer', { path: '$.params.maxTokens' });
    out.maxTokens = p.maxTokens;
  }
  return out;
}

/** Session ids name a log file: no separators, no dot names, no control characters. */
const SESSION_ID = /^(?!\.{1,2}$)[A-Za-z0-9._-]{1,128}$/;

export function sessionIdParam(raw: unknown): string {
  const id = str(params(raw), 'sessionId');
  if (!SESSION_ID.test(id))
    throw new SdkError('INVALID_PARAMS', 'sessionId must be 1-128 of A-Z a-z 0-9 . _ - (it names the session log)', {
      path: '$.params.sessionId',
    });
  return id;
}

function block(b: unknown, path: string): PromptBlock {
  if (!isRecord(b)) throw new SdkError('INVALID_PARAMS', 'a content block is an object', { path });
  if (b.type === 'text') {
    if (typeof b.text !== 'string') throw new SdkError('INVALID_PARAMS', 'a text block has a string text', { path: `${path}.text` });
    return { type: 'text', text: b.text };
  }
  throw new SdkError(
    'INVALID_PARAMS',
    `unknown content block type ${JSON.stringify(b.type) ?? 'undefined'} (text; images are not taken over this protocol yet)`,
    { path: `${path}.type` },
  );
}

export function promptParams(raw: unknown): PromptParams {
  const sessionId = sessionIdParam(raw);
  const blocks = params(raw).contentBlocks;
  if (!Array.isArray(blocks) || blocks.length === 0)
    throw new SdkError('INVALID_PARAMS', 'contentBlocks must be a non-empty array', { path: '$.params.contentBlocks' });
  return { sessionId, contentBlocks: blocks.map((b, i) => block(b, `$.params.contentBlocks[${i}]`)) };
}
