/**
 * Workqueue rate limiters, with client-go's semantics: `when(item)` says how long to wait before the item may be
 * processed again, `forget(item)` clears its failure history, `numRequeues(item)` counts its failures.
 */

/** Decides how long a re-queued item waits. */
export interface RateLimiter<T = string> {
  /** The delay in ms before `item` may be processed again (called once per rate-limited re-queue). */
  when(item: T): number;
  /** Stops tracking `item` (after a success). */
  forget(item: T): void;
  /** How many times `item` has been rate-limited since it was last forgotten. */
  numRequeues(item: T): number;
}

/** Per-item exponential backoff: `baseMs × 2^failures`, capped at `maxMs` (client-go: 5 ms → 1000 s). */
export class ItemExponentialFailureRateLimiter<T = string> implements RateLimiter<T> {
  private readonly failures = new Map<T, number>();

  constructor(
    readonly baseMs = 5,
    readonly maxMs = 1_000_000,
  ) {}

  when(item: T): number {
    const n = this.failures.get(item) ?? 0;
    this.failures.set(item, n + 1);
    const delay = this.baseMs * 2 ** n;
    return Number.isFinite(delay) && delay < this.maxMs ? delay : this.maxMs;
  }

  forget(item: T): void {
    this.failures.delete(item);
  }

  numRequeues(item: T): number {
    return this.failures.get(item) ?? 0;
  }
}

/**
 * An overall token bucket (`qps`, `burst`) shared by all items, with reservation semantics like Go's
 * `rate.Limiter.Reserve()`: every call takes a token now or reserves a future one and returns the wait.
 */
export class BucketRateLimiter<T = string> implements RateLimiter<T> {
  private tokens: number;
  private last: number;

  constructor(
    readonly qps = 10,
    readonly burst = 100,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = burst;
    this.last = now();
  }

  when(): number {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.qps);
    this.last = t;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }

  forget(): void {}

  numRequeues(): number {
    return 0;
  }
}

/** The longest delay of several limiters (client-go's `MaxOfRateLimiter`). */
export class MaxOfRateLimiter<T = string> implements RateLimiter<T> {
  private readonly limiters: RateLimiter<T>[];

  constructor(...limiters: RateLimiter<T>[]) {
    this.limiters = limiters;
  }

  when(item: T): number {
    let max = 0;
    for (const l of this.limiters) max = Math.max(max, l.when(item));
    return max;
  }

  forget(item: T): void {
    for (const l of this.limiters) l.forget(item);
  }

  numRequeues(item: T): number {
    let max = 0;
    for (const l of this.limiters) max = Math.max(max, l.numRequeues(item));
    return max;
  }
}

/** Options of {@link defaultControllerRateLimiter}; the defaults are controller-runtime's. */
export interface DefaultRateLimiterOptions {
  /** First per-item backoff (default 5 ms). */
  baseDelayMs?: number;
  /** Longest per-item backoff (default 1000 s). */
  maxDelayMs?: number;
  /** Overall re-queue rate (default 10 per second). */
  qps?: number;
  /** Overall burst (default 100). */
  burst?: number;
}

/** controller-runtime's default: max(per-item exponential 5 ms → 1000 s, overall bucket 10 qps / burst 100). */
export function defaultControllerRateLimiter<T = string>(opts: DefaultRateLimiterOptions = {}): RateLimiter<T> {
  return new MaxOfRateLimiter<T>(
    new ItemExponentialFailureRateLimiter<T>(opts.baseDelayMs ?? 5, opts.maxDelayMs ?? 1_000_000),
    new BucketRateLimiter<T>(opts.qps ?? 10, opts.burst ?? 100),
  );
}
