/**
 * A bounded LRU of decisions with a TTL per entry, plus merging of concurrent identical look-ups
 * ("singleflight"): while a look-up for a key is in flight, other callers for that key wait for its result
 * instead of calling the API again. Failed look-ups are not cached.
 *
 * With a stale policy, an entry is kept past its TTL for as long as the policy says (only allows: a deny is never
 * served stale), and served only when the look-up that should replace it fails for a reason the policy accepts
 * (the API cannot be reached); otherwise an expired entry is looked up again as if it were absent.
 */
import { LRUCache } from 'lru-cache';

/** Decides how long a value is cached (ms); 0 = do not cache. */
export type TtlFor<V> = (value: V) => number;

/** When an expired value may still answer. */
export interface StalePolicy<V> {
  /** How long past its TTL `value` may be served (ms; 0: never). */
  staleFor: (value: V) => number;
  /** Whether a failed look-up may be answered with the stale value. */
  usable: (err: unknown) => boolean;
  /** Called each time a stale value answers. */
  onStale?: (value: V, err: unknown) => void;
}

/** Counters of a cache's answers (a miss is any request the cache did not answer fresh; a stale one is a subset). */
export interface CacheCounters {
  hit: { inc(): void };
  miss: { inc(): void };
  stale: { inc(): void };
}

interface Entry<V> {
  value: V;
  /** Clock reading after which the value is stale. */
  freshUntil: number;
  /** Clock reading after which it may not answer at all. */
  expiresAt: number;
}

const SYSTEM_CLOCK = { now: () => performance.now() };

export class DecisionCache<V extends NonNullable<unknown>> {
  private readonly lru: LRUCache<string, Entry<V>>;
  private readonly inflight = new Map<string, Promise<V>>();
  private readonly clock: { now(): number };

  /** `clock`: the time entries expire by (tests; default `performance.now`). */
  constructor(
    max: number,
    private readonly ttlFor: TtlFor<V>,
    clock?: { now(): number },
    private readonly stale?: StalePolicy<V>,
    private readonly counters?: CacheCounters,
  ) {
    this.clock = clock ?? SYSTEM_CLOCK;
    // ttlAutopurge off: expired entries are dropped lazily on access or evicted by LRU order
    this.lru = new LRUCache<string, Entry<V>>({
      max,
      ttl: 1,
      allowStale: false,
      updateAgeOnGet: false,
      // an injected clock is read on every check (lru-cache otherwise reuses a reading for 1 ms of real time)
      ...(clock ? { perf: clock, ttlResolution: 0 } : {}),
    });
  }

  /** Number of cached entries (including expired ones not yet evicted). */
  get size(): number {
    return this.lru.size;
  }

  /** Number of look-ups in flight. */
  get pending(): number {
    return this.inflight.size;
  }

  /**
   * Returns the cached value itself (no promise: a warm request takes no extra turn of the event loop), or runs
   * `lookup` once for all concurrent callers of this key and returns its promise. `lookup` learns whether a stale
   * value stands by (it may then ask the API more briefly).
   */
  get(key: string, lookup: (staleStandsBy: boolean) => Promise<V>): V | Promise<V> {
    // the expiry is checked here too, not only by the LRU: lru-cache never expires an entry set at clock reading 0
    // (a test's clock), and one clock reading per hit is all it costs
    let hit = this.lru.get(key);
    if (hit !== undefined) {
      const now = this.clock.now();
      if (now < hit.freshUntil) {
        this.counters?.hit.inc();
        return hit.value;
      }
      if (now >= hit.expiresAt) hit = undefined;
    }
    this.counters?.miss.inc();
    const running = this.inflight.get(key);
    if (running) return running;
    const p = lookup(hit !== undefined).then(
      (value) => {
        this.inflight.delete(key);
        const ttl = this.ttlFor(value);
        if (ttl > 0) {
          const now = this.clock.now();
          const keep = ttl + (this.stale?.staleFor(value) ?? 0);
          this.lru.set(key, { value, freshUntil: now + ttl, expiresAt: now + keep }, { ttl: keep });
        }
        return value;
      },
      (err: unknown) => {
        this.inflight.delete(key);
        if (hit !== undefined && this.stale?.usable(err)) {
          this.counters?.stale.inc();
          this.stale.onStale?.(hit.value, err);
          return hit.value;
        }
        throw err;
      },
    );
    this.inflight.set(key, p);
    return p;
  }

  clear(): void {
    this.lru.clear();
  }
}
