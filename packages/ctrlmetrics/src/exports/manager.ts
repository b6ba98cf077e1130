/**
 * The controller manager (controller-runtime's `pkg/manager`): it runs the controllers, the shared cache, the
 * metrics server, the health probes, the webhook server and leader election, and stops them in order.
 *
 * ```ts
 * import { Manager } from 'ctrlmetrics/manager';
 * const mgr = new Manager({ metrics: { bindAddress: ':8443', secureServing: true } });
 * ```
 * @module ctrlmetrics/manager
 */
export { Manager, ManagerError } from '../manager/manager.js';
export type { ManagerOptions, ManagerCacheOptions, ShardingOptions } from '../manager/manager.js';
export { shardingLabels, DEFAULT_SHARDING_LABEL_PREFIX } from '../controller/sharding.js';
export type { ShardingLabels } from '../controller/sharding.js';
export type { Runnable } from '../manager/runnable-group.js';
export { HealthProbeServer } from '../manager/health.js';
export type { HealthCheck, CheckSet } from '../manager/health.js';
export { ProfilingServer } from '../manager/profiling.js';
