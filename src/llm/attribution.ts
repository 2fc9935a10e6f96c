/**
 * Who is calling. Providers ask harnesses to identify themselves (dsh makes a `User-Agent`
 * mandatory), and DeepSeek correlates requests of one session through its harness headers.
 */
import { createRequire } from 'node:module';
import type { GenerateRequest } from '../model/request.js';

// Read at runtime so src/ (tests) and dist/ (installed) both find the package manifest two levels up.
const manifest = createRequire(import.meta.url)('../../package.json') as { version?: unknown };

export const DSH_VERSION = typeof manifest.version === 'string' ? manifest.version : '0.0.0';
export const USER_AGENT = `dsh/${DSH_VERSION}`;

/** Headers the real dsh sends to DeepSeek for session correlation and compaction accounting. */
export function deepseekHarnessHeaders(request: GenerateRequest, userId?: string): Record<string, string> {
  const headers: Record<string, string> = {};
  if (userId) headers['x-deepseek-harness-user-id'] = userId;
  if (request.sessionId) headers['x-deepseek-harness-session-id'] = request.sessionId;
  if (request.purpose === 'compaction') headers['x-deepseek-harness-compact'] = '1';
  return headers;
}
