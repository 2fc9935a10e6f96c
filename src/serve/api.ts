/**
 * The service's routes as data: method, path template, what each takes and returns. The router
 * matches requests against this table and the OpenAPI document (openapi.ts) is generated from it,
 * so the document cannot describe a route the server does not have, or miss one it has.
 */

/** A JSON Schema (the subset the document uses). */
export type Schema = Readonly<Record<string, unknown>>;

export type OperationId =
  | 'getOpenApi'
  | 'listSessions'
  | 'createSession'
  | 'getSession'
  | 'prompt'
  | 'steer'
  | 'inject'
  | 'cancel'
  | 'getEvents'
  | 'streamEvents';

export interface RouteSpec {
  method: 'GET' | 'POST';
  /** OpenAPI path template: `{id}` is one path segment (percent-decoded). */
  path: string;
  operationId: OperationId;
  summary: string;
  /** False only for the document itself. */
  auth: boolean;
  query?: readonly { name: string; description: string }[];
  headers?: readonly { name: string; description: string }[];
  body?: Schema;
  /** Status → description and JSON schema (or `sse` for an event stream). */
  responses: Readonly<Record<number, { description: string; schema?: Schema; sse?: true }>>;
}

const str = { type: 'string' } as const;
const int = { type: 'integer', minimum: 0 } as const;
const textBody: Schema = {
  type: 'object',
  required: ['text'],
  additionalProperties: false,
  properties: { text: { ...str, minLength: 1, description: 'the message text' } },
};
const queued: Schema = {
  type: 'object',
  required: ['inputId', 'sessionId', 'kind'],
  properties: { inputId: int, sessionId: str, kind: { enum: ['prompt', 'steer', 'inject', 'cancel'] } },
};
const holder: Schema = { type: 'object', properties: { pid: int, host: str, since: int, role: str, expiresAt: int } };
const summary: Schema = {
  type: 'object',
  required: ['id', 'createdAt', 'modifiedMs'],
  properties: { id: str, cwd: str, createdAt: int, modifiedMs: int, parentSession: str, lockedBy: holder },
};
const event: Schema = {
  type: 'object',
  required: ['type', 'seq', 'time', 'data'],
  description: 'a session event exactly as stored (docs/architecture.md, the event vocabulary)',
};
const ERR = { $ref: '#/components/schemas/Error' } as const;
const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  description:
    'a retry with the same key (1 to 200 visible ASCII characters) gets the first answer and does nothing again ' +
    '(kept 24 h, across restarts)',
} as const;
const idPath = '/v1/sessions/{id}';

function input(kind: 'prompt' | 'steer' | 'inject' | 'cancel', summaryText: string): RouteSpec {
  return {
    method: 'POST',
    path: `${idPath}/${kind}`,
    operationId: kind,
    summary: summaryText,
    auth: true,
    headers: [IDEMPOTENCY_KEY],
    ...(kind === 'cancel' ? {} : { body: textBody }),
    responses: {
      202: { description: 'queued; a worker holding (or taking) the session applies it, once', schema: queued },
      404: { description: 'no such session', schema: ERR },
    },
  };
}

export const ROUTES: readonly RouteSpec[] = [
  {
    method: 'GET',
    path: '/openapi.json',
    operationId: 'getOpenApi',
    summary: 'this document',
    auth: false,
    responses: { 200: { description: 'the OpenAPI 3.1 document' } },
  },
  {
    method: 'GET',
    path: '/v1/sessions',
    operationId: 'listSessions',
    summary: 'every stored session, newest first',
    auth: true,
    responses: {
      200: {
        description: 'the sessions',
        schema: { type: 'object', required: ['sessions'], properties: { sessions: { type: 'array', items: summary } } },
      },
    },
  },
  {
    method: 'POST',
    path: '/v1/sessions',
    operationId: 'createSession',
    summary: "create a session for a workspace (a directory on the workers' hosts), optionally with its first prompt",
    auth: true,
    headers: [IDEMPOTENCY_KEY],
    body: {
      type: 'object',
      required: ['cwd'],
      additionalProperties: false,
      properties: {
        cwd: { ...str, description: 'absolute path of the workspace' },
        id: { ...str, description: 'the session id (default: a new UUID)' },
        prompt: { ...str, minLength: 1, description: 'queued as the first prompt' },
      },
    },
    responses: {
      201: { description: 'created', schema: { type: 'object', required: ['id'], properties: { id: str, inputId: int } } },
      409: { description: 'the id is taken', schema: ERR },
    },
  },
  {
    method: 'GET',
    path: idPath,
    operationId: 'getSession',
    summary: 'a session: its header, who holds it, its queued input',
    auth: true,
    responses: {
      200: {
        description: 'the session',
        schema: {
          type: 'object',
          required: ['id', 'header', 'queued'],
          properties: { id: str, header: { type: 'object' }, lockedBy: holder, queued: { type: 'array', items: queued } },
        },
      },
      404: { description: 'no such session', schema: ERR },
    },
  },
  input('prompt', 'queue a prompt: a new turn (or the next one, if a turn runs)'),
  input('steer', 'queue steering: a message the running turn sees at its next step'),
  input('inject', 'queue context: a message that enters the history beside the next prompt, without starting a turn'),
  input('cancel', 'queue a cancel of the running turn'),
  {
    method: 'GET',
    path: `${idPath}/events`,
    operationId: 'getEvents',
    summary: 'stored events from seq `from` on, as JSON',
    auth: true,
    query: [
      { name: 'from', description: 'first seq (default 0)' },
      { name: 'limit', description: 'at most this many events (default 1000, at most 10000)' },
    ],
    responses: {
      200: {
        description: 'the events in seq order; `next` is the seq to ask for next',
        schema: { type: 'object', required: ['events', 'next'], properties: { events: { type: 'array', items: event }, next: int } },
      },
      404: { description: 'no such session', schema: ERR },
    },
  },
  {
    method: 'GET',
    path: `${idPath}/events/stream`,
    operationId: 'streamEvents',
    summary: 'the events as Server-Sent Events, live: each event once, in seq order, `id:` = its seq',
    auth: true,
    query: [{ name: 'from', description: 'first seq (default 0; `Last-Event-ID` wins)' }],
    headers: [{ name: 'Last-Event-ID', description: 'resume after this seq (what the previous stream delivered last)' }],
    responses: {
      200: { description: 'text/event-stream: `id: <seq>`, `event: <type>`, `data: <the event JSON>`', sse: true },
      404: { description: 'no such session', schema: ERR },
      503: { description: 'too many streams open (TOO_MANY_STREAMS, `--max-streams`): retry after Retry-After seconds', schema: ERR },
    },
  },
];

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Why a client's string cannot be stored or used as a name, or undefined: a lone surrogate (no
 * UTF-8 form; the database would refuse it or a driver would replace it), and unless `nul` is
 * allowed a NUL (PostgreSQL text cannot hold one; a path or an id with one is no path or id).
 */
export function badChars(v: string, nul: boolean): string | undefined {
  if (LONE_SURROGATE.test(v)) return 'holds a lone UTF-16 surrogate (not Unicode text)';
  if (!nul && v.includes('\u0000')) return 'holds a NUL character';
  return undefined;
}

export type Responses = RouteSpec['responses'];

/**
 * Every status a route can answer: its own (`responses`) and those that follow from what it
 * takes, as the server produces them: 401 and 503 where the token and the database are involved,
 * 400 for a bad path parameter, query parameter or header, 400/413/415 for a body, 404 for a Host
 * that is not loopback (and an unknown session), 405 for another method on its path. The document
 * lists exactly these (test/serve/serve.test.ts drives each one).
 */
export function responsesOf(r: RouteSpec): Responses {
  const reasons = new Map<number, string[]>();
  const add = (status: number, why: string): void => {
    const list = reasons.get(status) ?? [];
    if (!list.includes(why)) list.push(why);
    reasons.set(status, list);
  };
  for (const [status, res] of Object.entries(r.responses)) add(Number(status), res.description);
  if (r.auth) {
    add(401, 'missing or wrong bearer token (WWW-Authenticate: Bearer)');
    add(503, 'the database cannot be reached or failed (CONNECT_FAILED, DATABASE_ERROR): retry later');
  }
  if (r.path.includes('{')) add(400, 'a path parameter that is no id (bad percent-encoding, a NUL, a lone surrogate); the path is `{id}`');
  for (const q of r.query ?? []) add(400, `a bad ?${q.name}`);
  for (const h of r.headers ?? []) add(400, `a bad ${h.name} header`);
  if (r.method === 'POST') {
    add(400, 'a body that is not a JSON object, or a field that is missing, unknown or wrong (the path names it)');
    add(413, 'a body over 1 MiB (BODY_TOO_LARGE)');
    add(415, 'a body not sent as application/json (UNSUPPORTED_MEDIA_TYPE)');
    add(422, 'an Idempotency-Key already used for another request (IDEMPOTENCY_KEY_REUSED)');
  }
  add(404, 'a Host header that names no loopback address (`unknown host`)');
  add(405, 'another method on this path (METHOD_NOT_ALLOWED; Allow lists those it has)');
  const out: Record<number, Responses[number]> = {};
  for (const [status, why] of [...reasons].sort((a, b) => a[0] - b[0])) {
    const own = r.responses[status];
    out[status] = own ? { ...own, description: why.join('; ') } : { description: why.join('; '), schema: ERR };
  }
  return out;
}

/** A request's route: the spec and its path parameters, or why none. */
export type Match =
  /** `invalid`: a path parameter that is not a well-formed percent-encoded UTF-8 string (a 400 once authorised). */
  | { kind: 'route'; spec: RouteSpec; params: Record<string, string>; invalid?: string }
  | { kind: 'method'; allowed: string[] }
  | { kind: 'none' };

function templateRegex(path: string): RegExp {
  const src = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, '(?<$1>[^/]+)');
  return new RegExp(`^${src}$`);
}

const compiled = ROUTES.map((spec) => ({ spec, re: templateRegex(spec.path) }));

export function matchRoute(method: string, pathname: string): Match {
  const allowed: string[] = [];
  for (const { spec, re } of compiled) {
    const m = re.exec(pathname);
    if (!m) continue;
    if (spec.method !== method && !(method === 'HEAD' && spec.method === 'GET')) {
      allowed.push(spec.method);
      continue;
    }
    const params: Record<string, string> = {};
    for (const [k, v] of Object.entries(m.groups ?? {})) {
      try {
        params[k] = decodeURIComponent(v);
      } catch {
        // Bad percent-encoding, or bytes that are no UTF-8 (a lone surrogate's %ED%A0%80).
        return { kind: 'route', spec, params, invalid: k };
      }
      if (badChars(params[k]!, false) !== undefined) return { kind: 'route', spec, params, invalid: k };
    }
    return { kind: 'route', spec, params };
  }
  return allowed.length ? { kind: 'method', allowed } : { kind: 'none' };
}
