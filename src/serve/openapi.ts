/** The OpenAPI 3.1 document of `dsh serve`, generated from the route table (api.ts). */
import { responsesOf, ROUTES, type RouteSpec } from './api.js';

function operation(r: RouteSpec): Record<string, unknown> {
  const params: unknown[] = [];
  for (const m of r.path.matchAll(/\{(\w+)\}/g)) params.push({ name: m[1], in: 'path', required: true, schema: { type: 'string' } });
  for (const q of r.query ?? [])
    params.push({ name: q.name, in: 'query', required: false, description: q.description, schema: { type: 'integer', minimum: 0 } });
  for (const h of r.headers ?? [])
    params.push({ name: h.name, in: 'header', required: false, description: h.description, schema: { type: 'string' } });
  const responses: Record<string, unknown> = {};
  for (const [status, res] of Object.entries(responsesOf(r))) {
    const content = res.sse
      ? { 'text/event-stream': { schema: { type: 'string' } } }
      : res.schema
        ? { 'application/json': { schema: res.schema } }
        : status === '200'
          ? { 'application/json': {} }
          : undefined;
    responses[status] = { description: res.description, ...(content ? { content } : {}) };
  }
  return {
    operationId: r.operationId,
    summary: r.summary,
    ...(params.length ? { parameters: params } : {}),
    ...(r.body ? { requestBody: { required: true, content: { 'application/json': { schema: r.body } } } } : {}),
    responses,
    security: r.auth ? [{ bearer: [] }] : [],
  };
}

export function openApiDocument(version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of ROUTES) (paths[r.path] ??= {})[r.method.toLowerCase()] = operation(r);
  return {
    openapi: '3.1.0',
    info: {
      title: 'dsh serve',
      version,
      description:
        'Sessions in the PostgreSQL store: create them, queue input for the workers that run them, read and follow their events ' +
        '(docs/scale.md).',
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'the token dsh serve printed (or DSH_SERVE_TOKEN)' } },
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: {
                code: { type: 'string' },
                message: { type: 'string' },
                path: { type: 'string', description: 'the JSON path (or ?query parameter) at fault' },
              },
            },
          },
        },
      },
    },
  };
}
