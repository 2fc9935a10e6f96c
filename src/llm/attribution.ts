/**
 * Who is calling. Providers ask harnesses to identify themselves (dsh makes a `User-Agent`
 * mandatory), and DeepSeek correlates requests of one session through its harness headers.
 */
import { readFileSync } from 'node:fs';
import type { GenerateRequest } from '../model/request.js';

/**
 * The package version, read at runtime from the nearest `package.json` named `dsh` above this
 * module: src/ (tests), dist/ (installed) and dist-bench/src/ (benchmarks) sit at different depths.
 */
function packageVersion(): string {
  for (let up = '../../'; up.length <= 12; up += '../') {
    try {
      const m = JSON.parse(readFileSync(new URL(`${up}package.json`, import.meta.url), 'utf8')) as { name?: unknown; version?: unknown };
      if (m.name === 'dsh' && typeof m.version === 'string') return m.version;
    } catch {
      // not here; look one level higher
    }
  }
  return '0.0.0';
}

export const DSH_VERSION = packageVersion();
export const USER_AGENT = `dsh/${DSH_VERSION}`;

/** Headers the real dsh sends to DeepSeek for session correlation and compaction accounting. */
export function deepseekHarnessHeaders(request: GenerateRequest, userId?: string): Record<string, string> {
  const headers: Record<string, string> = {};
  if (userId) headers['x-deepseek-harness-user-id'] = userId;
  if (request.sessionId) headers['x-deepseek-harness-session-id'] = request.sessionId;
  if (request.purpose === 'compaction') headers['x-deepseek-harness-compact'] = '1';
  return headers;
}
