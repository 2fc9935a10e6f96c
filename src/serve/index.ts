/**
 * `dsh serve` (docs/scale.md): an HTTP API over the PostgreSQL store, described by an OpenAPI
 * document generated from its route table.
 */
export { startServe, type Serve, type ServeOptions } from './server.js';
export { ServeError, type ServeErrorCode } from './errors.js';
export { ROUTES, type RouteSpec, type OperationId } from './api.js';
export { openApiDocument } from './openapi.js';
