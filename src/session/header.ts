/**
 * The session header: storage metadata kept beside the log (line 0 of a JSONL file), never in it.
 */
import { isAbsolute } from 'node:path';
import { SESSION_FORMAT_VERSION, type SessionHeader } from './events.js';
import { SessionError } from './errors.js';
import { PLACEHOLDER, type ValidationOptions } from './validate.js';
import { preview } from './json.js';

const HEADER_KEYS = new Set([
  'version',
  'id',
  'createdAt',
  'cwd',
  'parentSession',
  'seedLength',
  'origin',
  'delegationDepth',
  'agentPreset',
]);

function bad(path: string, why: string): never {
  throw new SessionError('INVALID_HEADER', `session header is invalid at ${path}: ${why}`, { path, rule: 'header' });
}

/**
 * Validate a header object (without the JSONL `type:"session"` tag). Unknown keys are refused so a
 * newer writer's metadata is never silently dropped on rewrite.
 */
export function validateHeader(h: unknown, opts: ValidationOptions = {}): SessionHeader {
  if (typeof h !== 'object' || h === null || Array.isArray(h)) bad('$', 'expected an object');
  const o = h as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!HEADER_KEYS.has(k)) bad(`$.${k}`, `unknown header field "${k}"`);
  const placeholder = (path: string, v: unknown): boolean => {
    if (typeof v === 'string' && PLACEHOLDER.test(v) && opts.onPlaceholder) {
      opts.onPlaceholder({ seq: -1, eventType: 'session', path, token: v });
      return true;
    }
    return false;
  };
  // -0 equals 0 but would be written back as 0: not lossless, refused like anywhere else.
  for (const k of ['version', 'createdAt', 'seedLength', 'delegationDepth'] as const)
    if (Object.is(o[k], -0)) bad(`$.${k}`, '-0 is not lossless JSON (it is written back as 0)');
  if (o.version !== SESSION_FORMAT_VERSION) {
    throw new SessionError(
      'INVALID_HEADER',
      `session format version ${preview(o.version)} is not supported (this build reads version ${SESSION_FORMAT_VERSION})`,
      { path: '$.version', rule: 'format-version' },
    );
  }
  if (typeof o.id !== 'string' || o.id === '') bad('$.id', 'expected a non-empty string');
  placeholder('$.id', o.id);
  if (typeof o.createdAt !== 'number' || !Number.isSafeInteger(o.createdAt) || o.createdAt < 0)
    bad('$.createdAt', 'expected non-negative integer epoch ms');
  if (o.cwd !== undefined) {
    if (typeof o.cwd !== 'string') bad('$.cwd', 'expected a string');
    if (!placeholder('$.cwd', o.cwd) && !isAbsolute(o.cwd)) bad('$.cwd', `must be an absolute path, got ${preview(o.cwd)}`);
  }
  if (o.parentSession !== undefined && (typeof o.parentSession !== 'string' || o.parentSession === ''))
    bad('$.parentSession', 'expected a non-empty string');
  for (const k of ['seedLength', 'delegationDepth'] as const) {
    const v = o[k];
    if (v !== undefined && (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)) bad(`$.${k}`, 'expected a non-negative integer');
  }
  if (o.origin !== undefined && o.origin !== 'subagent') bad('$.origin', `expected "subagent", got ${preview(o.origin)}`);
  if (o.agentPreset !== undefined && typeof o.agentPreset !== 'string') bad('$.agentPreset', 'expected a string');
  return o as unknown as SessionHeader;
}
