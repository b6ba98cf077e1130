/**
 * The sharder of a ring of shards (timebertt/kubernetes-controller-sharding's protocol and API): it assigns every
 * object of the ring's kinds to one live shard by a label, through a mutating webhook, and hands objects over when
 * shards come and go. A shard is a manager with `sharding: { ring }` (`ctrlmetrics/manager`); `ctrlmetrics sharder`
 * runs this sharder.
 *
 * ```ts
 * import { Manager } from 'ctrlmetrics/manager';
 * import { Sharder } from 'ctrlmetrics/sharding';
 * const mgr = new Manager({ leaderElection: true, leaderElectionID: 'sharder' });
 * new Sharder({ webhook: { service: { namespace: 'sharding-system', name: 'sharder' }, caBundle } }).setupWithManager(mgr);
 * ```
 * @module ctrlmetrics/sharding
 */
export { Sharder, webhookConfigurationName } from '../sharding/sharder.js';
export type { SharderOptions, SharderWebhookClientConfig } from '../sharding/sharder.js';
export {
  controllerRingCrd,
  CONTROLLER_RING_API_VERSION,
  DEFAULT_NAMESPACE_SELECTOR,
} from '../sharding/controllerring.js';
export type { ControllerRing, RingMainResource, RingResource, LabelSelector } from '../sharding/controllerring.js';
export { HashRing, TOKENS_PER_SHARD } from '../sharding/hash-ring.js';
export { readLease, takenOver, TAKEOVER_HOLDER, LEASE_TTL_MS } from '../sharding/lease-state.js';
export type { ShardState, ShardLease, LeaseReading } from '../sharding/lease-state.js';
export { webhookPath } from '../sharding/webhook.js';
export { shardingLabels, DEFAULT_SHARDING_LABEL_PREFIX } from '../controller/sharding.js';
export type { ShardingLabels } from '../controller/sharding.js';
