// @ts-check
// The server's JSON API. URLs are relative: the page lives under its token path, and so do they.
/** @import { ApiAnswers, ApiRoute } from './types.js' */

export class ApiError extends Error {
  /**
   * @param {string} code the server's stable error code (or HTTP_<status>)
   * @param {string} message
   */
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/**
 * GET `api/<route>` with the given query parameters (undefined and null ones left out). The answer
 * is typed by its route (`ApiAnswers`, the server's own table of answers): it is the server's
 * JSON, not checked again here.
 * @template {ApiRoute} R
 * @param {R} route
 * @param {Record<string, string | number | boolean | null | undefined>} [params]
 * @returns {Promise<ApiAnswers[R]>}
 */
export async function api(route, params = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) q.set(k, String(v));
  const res = await fetch('api/' + route + (q.size ? '?' + q : ''), { headers: { Accept: 'application/json' } });
  const body = await res.json().catch(() => null);
  if (!res.ok) throw new ApiError(body?.error?.code ?? 'HTTP_' + res.status, body?.error?.message ?? res.statusText);
  return body;
}
