/**
 * A bounded LRU of decisions with a TTL per entry, plus merging of concurrent identical look-ups
 * ("singleflight"): while a look-up for a key is in flight, other callers for that key wait for its result
 * instead of calling the API again. Failed look-ups are not cached.
 */
import { LRUCache } from 'lru-cache';

/** Decides how long a value is cached (ms); 0 = do not cache. */
export type TtlFor<V> = (value: V) => number;

export class DecisionCache<V extends {}> {
  private readonly lru: LRUCache<string, V>;
  private readonly inflight = new Map<string, Promise<V>>();

  /** `clock`: the time entries expire by (tests; default `performance.now`). */
  constructor(
    max: number,
    private readonly ttlFor: TtlFor<V>,
    clock?: { now(): number },
  ) {
    // ttlAutopurge off: expired entries are dropped lazily on access or evicted by LRU order
    this.lru = new LRUCache<string, V>({
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
   * `lookup` once for all concurrent callers of this key and returns its promise.
   */
  get(key: string, lookup: () => Promise<V>): V | Promise<V> {
    const hit = this.lru.get(key);
    if (hit !== undefined) return hit;
    const running = this.inflight.get(key);
    if (running) return running;
    const p = lookup().then(
      (value) => {
        this.inflight.delete(key);
        const ttl = this.ttlFor(value);
        if (ttl > 0) this.lru.set(key, value, { ttl });
        return value;
      },
      (err: unknown) => {
        this.inflight.delete(key);
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
