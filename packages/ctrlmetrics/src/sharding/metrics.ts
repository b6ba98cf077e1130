/**
 * The sharder's metric families, named and labelled as timebertt/kubernetes-controller-sharding's (its dashboards
 * work unchanged): what it assigned, drained and moved, how often it built a ring, and each ring's and shard's state
 * as it last read them. Every sharder replica exports the state gauges; deduplicate with `max without (instance, pod)`.
 */
import { Counter, Gauge } from '../metrics/index.js';

/** Rings and shards are few; a label fed by a runaway list of Leases stops here. */
const MAX_SERIES = 10_000;
const byResource = ['controllerring', 'group', 'resource'] as const;

export const assignments = new Counter({
  name: 'controller_sharding_assignments_total',
  help: 'Total number of shard assignments by the sharder webhook handler (dry-run requests not counted)',
  labelNames: byResource,
  maxSeries: MAX_SERIES,
});
export const movements = new Counter({
  name: 'controller_sharding_movements_total',
  help: 'Total number of shard movements triggered by the sharder controller',
  labelNames: byResource,
  maxSeries: MAX_SERIES,
});
export const drains = new Counter({
  name: 'controller_sharding_drains_total',
  help: 'Total number of shard drains triggered by the sharder controller',
  labelNames: byResource,
  maxSeries: MAX_SERIES,
});
export const ringCalculations = new Counter({
  name: 'controller_sharding_ring_calculations_total',
  help: 'Total number of shard ring calculations',
  labelNames: ['controllerring'],
  maxSeries: MAX_SERIES,
});
export const metadataGeneration = new Gauge({
  name: 'controller_sharding_controllerring_metadata_generation',
  help: 'The generation of a ControllerRing',
  labelNames: ['controllerring'],
  maxSeries: MAX_SERIES,
});
export const observedGeneration = new Gauge({
  name: 'controller_sharding_controllerring_observed_generation',
  help: 'The latest generation observed by the ControllerRing controller',
  labelNames: ['controllerring'],
  maxSeries: MAX_SERIES,
});
export const statusShards = new Gauge({
  name: 'controller_sharding_controllerring_status_shards',
  help: 'The ControllerRing status.shards field',
  labelNames: ['controllerring'],
  maxSeries: MAX_SERIES,
});
export const statusAvailableShards = new Gauge({
  name: 'controller_sharding_controllerring_status_available_shards',
  help: 'The ControllerRing status.availableShards field',
  labelNames: ['controllerring'],
  maxSeries: MAX_SERIES,
});
export const shardInfo = new Gauge({
  name: 'controller_sharding_shard_info',
  help: 'Information about a shard',
  labelNames: ['namespace', 'shard', 'controllerring'],
  maxSeries: MAX_SERIES,
});
export const shardState = new Gauge({
  name: 'controller_sharding_shard_state',
  help: "The shard's current state observed by the shardlease controller",
  labelNames: ['namespace', 'shard', 'controllerring', 'state'],
  maxSeries: MAX_SERIES,
});
