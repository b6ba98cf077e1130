/**
 * The metrics server (controller-runtime's `pkg/metrics/server`): `/metrics` over HTTPS on 8443, behind a filter.
 * @module ctrlmetrics/metrics/server
 */
export { createMetricsServer, DEFAULT_BIND_ADDRESS } from '../../metrics/server/server.js';
export type {
  Filter,
  FilterProvider,
  Handler,
  MetricsOptions,
  MetricsServer,
  MetricsServerDeps,
  MetricsSource,
  TlsConfig,
} from '../../metrics/server/types.js';
