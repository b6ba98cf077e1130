/**
 * A shard's side of controller sharding, in the protocol of timebertt/kubernetes-controller-sharding (its label keys
 * by default, so a ctrlmetrics shard works under that project's sharder and the other way round): a sharder assigns
 * every object of a ring's kinds to one live shard by a label; each shard caches only what is labelled for it, and
 * before each reconcile of its primary kind checks that the object is still its own. When the sharder wants to move
 * an object away it first asks the shard to let go (the drain label); the shard acknowledges by removing both labels,
 * and the sharder's webhook assigns the object again in that same write.
 */
import type { KubeClient } from '../kube/client.js';
import { Gauge } from '../metrics/index.js';
import { KubeApiError } from '../kube/client.js';
import type { KubeObject } from './types.js';

/** The label prefix of timebertt/kubernetes-controller-sharding. */
export const DEFAULT_SHARDING_LABEL_PREFIX = 'alpha.sharding.timebertt.dev';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Why `name` cannot name a shard (its Lease's name and a label value), or undefined when it can. */
export function invalidShardName(name: string): string | undefined {
  if (name.length === 0) return 'it is empty';
  if (name.length > 63) return `it is ${name.length} characters long, and a label value holds at most 63`;
  if (!DNS1123_LABEL.test(name))
    return 'it is not a DNS-1123 label (lower-case letters, digits and "-", starting and ending with a letter or digit)';
  return undefined;
}

/** Why `ring` cannot name a ring (it is the name part of the shard and drain label keys), or undefined. */
export function invalidRingName(ring: string): string | undefined {
  if (ring.length === 0) return 'it is empty';
  if (ring.length > 63)
    return `it is ${ring.length} characters long, and the name part of a label key holds at most 63`;
  if (!DNS1123_SUBDOMAIN.test(ring))
    return 'it is not a DNS-1123 subdomain (lower-case letters, digits, "-" and ".", starting and ending with a letter or digit)';
  return undefined;
}

/** The label keys of one ring. */
export interface ShardingLabels {
  /** On the shard's Lease: the ring it belongs to (`alpha.sharding.timebertt.dev/controllerring`). */
  ring: string;
  /** On the Lease, kept by the sharder: the shard's state (`alpha.sharding.timebertt.dev/state`). */
  state: string;
  /** On every object of the ring's kinds: the shard it is assigned to (`shard.alpha.sharding.timebertt.dev/<ring>`). */
  shard: string;
  /** On an object the sharder wants to move: present until the shard lets go (`drain.alpha.sharding.timebertt.dev/<ring>`). */
  drain: string;
}

/** The label keys of `ring` under `prefix` (default timebertt/kubernetes-controller-sharding's). */
export function shardingLabels(ring: string, prefix = DEFAULT_SHARDING_LABEL_PREFIX): ShardingLabels {
  return {
    ring: `${prefix}/controllerring`,
    state: `${prefix}/state`,
    shard: `shard.${prefix}/${ring}`,
    drain: `drain.${prefix}/${ring}`,
  };
}

/** What the gate decided about one request of a controller's primary kind. */
export type ShardDecision =
  /** gone from this shard's cache: deleted, or moved away (the user's reconciler must not see it as a deletion) */
  | 'gone'
  /** labelled for another shard (a requeue that fired after the object moved) */
  | 'elsewhere'
  /** the sharder asked this shard to let go: acknowledged, not reconciled */
  | 'drained'
  /** this shard's own: reconcile */
  | 'own';

/** The ownership gate a sharded manager puts before each reconcile of a controller's primary kind. */
export class ShardGate {
  readonly labels: ShardingLabels;

  constructor(
    readonly ring: string,
    /** This shard's name. */
    readonly shard: string,
    private readonly client: KubeClient,
    labelPrefix?: string,
  ) {
    this.labels = shardingLabels(ring, labelPrefix);
  }

  /** The label selector of what this shard caches of the ring's kinds. */
  get selector(): string {
    return `${this.labels.shard}=${this.shard}`;
  }

  /** Whether the sharder asked to move `obj` away. */
  isDrained(obj: KubeObject | undefined): boolean {
    return obj?.metadata?.labels?.[this.labels.drain] !== undefined;
  }

  /** Whether `obj` is labelled for this shard. */
  isOwn(obj: KubeObject | undefined): boolean {
    return obj?.metadata?.labels?.[this.labels.shard] === this.shard;
  }

  /**
   * The predicate of the primary kind's events: a drain request always reaches the gate (to be acknowledged);
   * otherwise only an object of this shard's, as the user's predicate says.
   */
  admits(obj: KubeObject, userPredicate: () => boolean): boolean {
    return this.isDrained(obj) || (this.isOwn(obj) && userPredicate());
  }

  /**
   * Decides about the object the cache holds under the request's key (`cached`), acknowledging a drain: both labels
   * removed in one merge patch that holds only if the object is still the version read (else the API answers 409
   * and the request is retried). `path` is the object's API path.
   */
  async decide(cached: KubeObject | undefined, path: string): Promise<ShardDecision> {
    if (!cached) return 'gone';
    if (!this.isOwn(cached)) return 'elsewhere';
    if (!this.isDrained(cached)) return 'own';
    try {
      await this.client.mergePatch(path, {
        metadata: {
          resourceVersion: cached.metadata?.resourceVersion,
          labels: { [this.labels.shard]: null, [this.labels.drain]: null },
        },
      });
    } catch (err) {
      if (err instanceof KubeApiError && err.status === 404) return 'gone';
      throw err;
    }
    return 'drained';
  }
}

/** One count of {@link reportCachedObjects}: the objects of a collection a shard caches. */
export interface CachedObjects {
  ring: string;
  shard: string;
  group: string;
  resource: string;
  count: number;
}

const cachedSources = new Set<() => CachedObjects[]>();
let cachedGauge: Gauge | undefined;

/**
 * Reports, in `ctrlmetrics_sharding_cached_objects`, how many objects of the ring's kinds a shard caches (read from
 * `source` at each scrape): a shard's share, which the sum over the shards equals the ring's objects. Returns what
 * stops the reporting (the manager, when it stops).
 */
export function reportCachedObjects(source: () => CachedObjects[]): () => void {
  if (!cachedGauge) {
    const gauge = new Gauge({
      name: 'ctrlmetrics_sharding_cached_objects',
      help: "Objects of the ring's kinds in a shard's cache (those labelled for the shard)",
      labelNames: ['controllerring', 'shard', 'group', 'resource'],
      maxSeries: 10_000,
      collect: () => {
        gauge.reset();
        for (const s of cachedSources)
          for (const c of s()) gauge.labels(c.ring, c.shard, c.group, c.resource).set(c.count);
      },
    });
    cachedGauge = gauge;
  }
  cachedSources.add(source);
  return () => cachedSources.delete(source);
}
