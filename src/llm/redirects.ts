/**
 * How a provider SDK's request leaves the process (the watchdog's `fetch`, src/llm/watchdog.ts).
 *
 * - **First under `redirect: 'error'`.** Under any other mode the Fetch standard, and so Node's
 *   `fetch` (undici), sends a clone of the request whose body is a tee of the original: a long
 *   session's history (14 MB in the bench) was copied once more per model call.
 * - **A redirect is followed here, hop by hop, within the request's origin only.** On a hop to
 *   another origin undici drops `Authorization` and cookies, but sends every other header on:
 *   Anthropic's `x-api-key`, a gateway's `api-key`, any header from the config. A redirect to
 *   another scheme, host or port therefore ends the call with the provider's own 3xx status
 *   (`HTTP_<status>`), with a message that names where it pointed; the request never goes there.
 *
 * A request that names its own redirect mode goes out as it is. One whose body cannot be sent
 * twice (a stream) goes out once, and a redirect is its answer (refused for another origin).
 */

/** undici's own limit. */
const MAX_REDIRECTS = 20;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Dropped with the body when a redirect turns the request into a GET (the Fetch standard's list). */
const BODY_HEADERS = ['content-encoding', 'content-language', 'content-location', 'content-type'];

type FetchInput = Parameters<typeof fetch>[0];

export async function sendRequest(base: typeof fetch, input: FetchInput, init: RequestInit | undefined): Promise<Response> {
  if (init?.redirect !== undefined) return base(input, init);
  if (!resendable(input, init?.body)) return sendOnce(base, input, init);
  try {
    return await base(input, { ...init, redirect: 'error' });
  } catch (e) {
    if (!refusedRedirect(e)) throw e;
    return followSameOrigin(base, String(input), init ?? {});
  }
}

/**
 * A request that cannot be sent twice (a streamed body, or a `Request`): sent once under
 * `redirect: 'manual'`, so a redirect is its answer, refused when it points to another origin.
 */
async function sendOnce(base: typeof fetch, input: FetchInput, init: RequestInit | undefined): Promise<Response> {
  const res = await base(input, { ...init, redirect: 'manual' });
  const location = REDIRECT_STATUSES.has(res.status) ? res.headers.get('location') : null;
  if (location === null) return res;
  const from = new URL(input instanceof Request ? input.url : String(input));
  let next: URL;
  try {
    next = new URL(location, from);
  } catch {
    return res;
  }
  return next.origin === from.origin ? res : refused(res, from.origin, next);
}

/** Send `init` to `url` under `redirect: 'manual'`, following redirects that stay in its origin. */
async function followSameOrigin(base: typeof fetch, url: string, init: RequestInit): Promise<Response> {
  const origin = new URL(url).origin;
  let at = url;
  let req: RequestInit = { ...init, redirect: 'manual' };
  for (let hop = 0; ; hop++) {
    const res = await base(at, req);
    const location = REDIRECT_STATUSES.has(res.status) ? res.headers.get('location') : null;
    if (location === null) return res;
    let next: URL;
    try {
      next = new URL(location, at);
    } catch {
      return res;
    }
    if (next.origin !== origin) return refused(res, origin, next);
    if (hop === MAX_REDIRECTS) {
      await res.body?.cancel();
      throw new TypeError('fetch failed', { cause: new Error('redirect count exceeded') });
    }
    await res.body?.cancel();
    const method = (req.method ?? 'GET').toUpperCase();
    if (
      ((res.status === 301 || res.status === 302) && method === 'POST') ||
      (res.status === 303 && method !== 'GET' && method !== 'HEAD')
    ) {
      const headers = new Headers(req.headers);
      for (const h of BODY_HEADERS) headers.delete(h);
      req = { ...req, method: 'GET', body: null, headers };
    }
    at = next.href;
  }
}

/** The provider's redirect as the answer, its body a JSON error (the SDKs put its message in theirs). */
async function refused(res: Response, origin: string, next: URL): Promise<Response> {
  await res.body?.cancel();
  const message =
    `the provider redirected the request to ${next.origin}, another origin than ${origin}; dsh does not follow it, ` +
    'so the request and its credentials go nowhere else (set the base URL to where the provider now answers)';
  const headers = new Headers(res.headers);
  headers.set('content-type', 'application/json');
  headers.delete('content-length');
  headers.delete('content-encoding');
  return new Response(JSON.stringify({ error: { message, type: 'redirect_refused' } }), {
    status: res.status,
    statusText: res.statusText,
    headers,
  });
}

/** Can the request be sent twice? A URL (not a `Request`, which carries its own body and mode) and a body held whole. */
function resendable(input: FetchInput, body: RequestInit['body']): boolean {
  if (typeof input !== 'string' && !(input instanceof URL)) return false;
  return body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array || body instanceof URLSearchParams;
}

/** undici's failure for a redirect under `redirect: 'error'`: a TypeError whose cause names it. */
function refusedRedirect(e: unknown): boolean {
  const cause = e instanceof TypeError ? (e as { cause?: unknown }).cause : undefined;
  return cause instanceof Error && cause.message === 'unexpected redirect';
}
