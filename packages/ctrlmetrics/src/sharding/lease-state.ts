/**
 * A shard's state as the sharder reads it from the shard's Lease (timebertt/kubernetes-controller-sharding's state
 * machine and timings). expiry = renewTime + leaseDuration (a missing field: expiry now, duration 15 s).
 *
 * | state     | when                                            | the sharder                                 |
 * |-----------|-------------------------------------------------|---------------------------------------------|
 * | ready     | held by the shard, not expired                  | looks again at expiry                       |
 * | expired   | expired less than one duration ago              | looks again at expiry + duration            |
 * | uncertain | expired at least one duration ago               | takes the Lease over (twice the duration)   |
 * | dead      | not held by the shard (released or taken over)  | moves its objects; looks again at orphaning |
 * | orphaned  | dead for a minute past its expiry               | deletes the Lease                           |
 *
 * ready, expired and uncertain shards are available: their objects stay. So a crashed shard's objects move once
 * the takeover succeeds, about twice its lease duration after its last renewal; a released Lease is dead at once.
 */

/** The identity a sharder writes into a Lease it takes over. */
export const TAKEOVER_HOLDER = 'shardlease-controller';
/** How long a dead shard's Lease stays before it is deleted. */
export const LEASE_TTL_MS = 60_000;
const DEFAULT_DURATION_MS = 15_000;

/** A state of a shard's Lease. */
export type ShardState = 'ready' | 'expired' | 'uncertain' | 'dead' | 'orphaned';

/** The fields of a Lease the state machine reads. */
export interface ShardLease {
  metadata: { name: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> };
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

/** A Lease's state at `now`, and when it changes next (ms from now; undefined: it does not by itself). */
export interface LeaseReading {
  state: ShardState;
  /** The shard's objects stay assigned to it. */
  available: boolean;
  nextChangeMs: number | undefined;
}

/** Reads the state of `lease` at `now` (epoch ms). */
export function readLease(lease: ShardLease, now: number): LeaseReading {
  const spec = lease.spec ?? {};
  const durationMs = spec.leaseDurationSeconds ? spec.leaseDurationSeconds * 1000 : DEFAULT_DURATION_MS;
  const renewed = spec.renewTime ? Date.parse(spec.renewTime) : NaN;
  const expiry = Number.isNaN(renewed) ? now : renewed + durationMs;
  if (spec.holderIdentity !== lease.metadata.name) {
    const orphanAt = expiry + LEASE_TTL_MS;
    return now >= orphanAt
      ? { state: 'orphaned', available: false, nextChangeMs: undefined }
      : { state: 'dead', available: false, nextChangeMs: orphanAt - now };
  }
  if (now < expiry) return { state: 'ready', available: true, nextChangeMs: expiry - now };
  if (now < expiry + durationMs) return { state: 'expired', available: true, nextChangeMs: expiry + durationMs - now };
  return { state: 'uncertain', available: true, nextChangeMs: 0 };
}

/**
 * The Lease as the sharder writes it when it takes an uncertain shard's Lease over: held by the sharder, for twice
 * the shard's duration, one transition more. Written with the read resourceVersion, so a shard that renewed
 * meanwhile wins.
 */
export function takenOver(lease: ShardLease, now: number): ShardLease {
  const spec = lease.spec ?? {};
  const stamp = new Date(now).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
  return {
    ...lease,
    spec: {
      ...spec,
      holderIdentity: TAKEOVER_HOLDER,
      leaseDurationSeconds: 2 * (spec.leaseDurationSeconds || DEFAULT_DURATION_MS / 1000),
      acquireTime: stamp,
      renewTime: stamp,
      leaseTransitions: (spec.leaseTransitions ?? 0) + 1,
    },
  };
}
