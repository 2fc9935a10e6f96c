/**
 * Request bodies: JSON objects checked field by field, each refusal naming its JSON path, so a
 * client learns exactly what was wrong (`$.text: expected a non-empty string`).
 */
import type { IncomingMessage } from 'node:http';
import type { ContentBlock } from '../model/message.js';
import { badChars } from './api.js';
import { ServeError } from './errors.js';

export const MAX_BODY_BYTES = 1 << 20;

/** The body parsed as a JSON object (an empty body is `{}`). */
export async function readJsonBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    // Past the limit the rest is read and dropped (up to 16 times the limit), so the client gets
    // the 413 instead of a reset connection.
    if (size > 16 * limit) break;
    if (size <= limit) chunks.push(c as Buffer);
  }
  if (size > limit) throw new ServeError('BODY_TOO_LARGE', `the request body is over ${limit} bytes`);
  if (size === 0) return {};
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json')
    throw new ServeError(
      'UNSUPPORTED_MEDIA_TYPE',
      `send the body as application/json (got ${type ? JSON.stringify(type) : 'no content-type'})`,
    );
  let v: unknown;
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new ServeError('BAD_REQUEST', `the body is not JSON: ${(e as Error).message}`, { path: '$' });
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new ServeError('BAD_REQUEST', 'the body must be a JSON object', { path: '$' });
  return v as Record<string, unknown>;
}

/** Refuse fields the route does not know (a typo must not be silently ignored). */
export function onlyFields(body: Record<string, unknown>, allowed: readonly string[]): void {
  for (const k of Object.keys(body)) {
    if (!allowed.includes(k))
      throw new ServeError('BAD_REQUEST', `unknown field (expected ${allowed.length ? allowed.join(', ') : 'none'})`, { path: `$.${k}` });
  }
}

export function optionalString(
  body: Record<string, unknown>,
  key: string,
  opts: { max?: number; pattern?: RegExp; hint?: string; allowNul?: boolean } = {},
): string | undefined {
  const v = body[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.length === 0) throw new ServeError('BAD_REQUEST', 'expected a non-empty string', { path: `$.${key}` });
  const bad = badChars(v, opts.allowNul === true);
  if (bad !== undefined) throw new ServeError('BAD_REQUEST', `the string ${bad}`, { path: `$.${key}` });
  if (opts.max !== undefined && v.length > opts.max)
    throw new ServeError('BAD_REQUEST', `longer than ${opts.max} characters`, { path: `$.${key}` });
  if (opts.pattern && !opts.pattern.test(v))
    throw new ServeError('BAD_REQUEST', opts.hint ?? `does not match ${String(opts.pattern)}`, { path: `$.${key}` });
  return v;
}

export function requiredString(body: Record<string, unknown>, key: string, opts: { allowNul?: boolean } = {}): string {
  const v = optionalString(body, key, opts);
  if (v === undefined) throw new ServeError('BAD_REQUEST', 'required: a non-empty string', { path: `$.${key}` });
  return v;
}

/** A message's content: `text` (a string) becomes one text block. */
export function messageContent(body: Record<string, unknown>): ContentBlock[] {
  // A message may hold a NUL (it is stored as JSON, escaped); a lone surrogate it may not.
  return [{ type: 'text', text: requiredString(body, 'text', { allowNul: true }) }];
}

/** A non-negative integer query parameter (`from`, `limit`), or its default. */
export function intParam(params: URLSearchParams, name: string, dflt: number, max = Number.MAX_SAFE_INTEGER): number {
  const v = params.get(name);
  if (v === null) return dflt;
  if (!/^\d{1,15}$/.test(v) || Number(v) > max)
    throw new ServeError('BAD_REQUEST', `expected an integer from 0 to ${max}`, { path: `?${name}` });
  return Number(v);
}
