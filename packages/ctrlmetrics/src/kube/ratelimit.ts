/** A token bucket, as client-go's client-side rate limiter (QPS with a burst). */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    readonly qps: number,
    readonly burst: number,
    /** Monotonic milliseconds (injectable for tests). */
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = burst;
    this.last = now();
  }

  private refill(): void {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
  }

  /** Takes a token if one is available now. A negative `qps` means no limit (client-go's QPS < 0). */
  tryTake(): boolean {
    if (this.qps < 0) return true;
    this.refill();
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    return false;
  }

  /** Milliseconds until a token will be available (0 if one is). */
  waitMs(): number {
    return this.waitMsFor(1);
  }

  /** Milliseconds until `n` tokens will have been available, if nobody else takes any (0 if they are now). */
  waitMsFor(n: number): number {
    this.refill();
    return this.tokens >= n ? 0 : Math.ceil(((n - this.tokens) / this.qps) * 1000);
  }

  /**
   * Waits for a token, at most `maxWaitMs`. Resolves true when a token was taken, false when the wait would
   * exceed the limit (the caller then fails the request instead of queueing without bound).
   */
  async take(maxWaitMs: number, signal?: AbortSignal): Promise<boolean> {
    for (;;) {
      if (this.tryTake()) return true;
      const wait = this.waitMs();
      if (wait > maxWaitMs || signal?.aborted) return false;
      maxWaitMs -= wait;
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}
