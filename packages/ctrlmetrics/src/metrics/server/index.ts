/** The metrics server (controller-runtime's `pkg/metrics/server`): HTTPS `/metrics` behind a filter. */
export { createMetricsServer, DEFAULT_BIND_ADDRESS } from './server.js';
export { metricsHandler, acceptsGzip } from './scrape.js';
export type {
  Filter,
  FilterProvider,
  Handler,
  MetricsOptions,
  MetricsServer,
  MetricsServerDeps,
  MetricsSource,
  TlsConfig,
} from './types.js';
