/**
 * The HTTP server core shared by the manager's servers (controller-runtime's `internal/httpserver`): limits, the
 * connection guard, TLS serving options, graceful close.
 */
export { HttpServer, ListenError, DEFAULT_LIMITS } from './server.js';
export type { HttpServerOptions, ServerLimits, ServerRequest, ServerResponseOf } from './server.js';
export { resolveServingTls } from './tls.js';
export type { ServingTls, ServingTlsOptions, TlsConfig } from './tls.js';
