/** The controller manager: metrics server, health probes, leader election, controllers. */
export { Manager, ManagerError } from './manager.js';
export type { ManagerOptions, ManagerCacheOptions, ShardingOptions } from './manager.js';
export { ShardGate, shardingLabels, DEFAULT_SHARDING_LABEL_PREFIX } from '../controller/sharding.js';
export type { ShardingLabels } from '../controller/sharding.js';
export type { Runnable } from './runnable-group.js';
export { HealthProbeServer } from './health.js';
export { ProfilingServer, MAX_PROFILE_SECONDS } from './profiling.js';
export type { HealthCheck, CheckSet } from './health.js';
export { LeaderElector } from './leaderelection.js';
export type { LeaderElectionOptions } from './leaderelection.js';
export { parseBindAddress } from '../util/bind-address.js';
