/** A token bucket, as client-go's client-side rate limiter (QPS with a burst). */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    readonly qps: number,
    readonly burst: number,
  ) {
    this.tokens = burst;
    this.last = performance.now();
  }

  private refill(): void {
    const now = performance.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
  }

  /** Takes a token if one is available now. */
  tryTake(): boolean {
    this.refill();
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    return false;
  }

  /** Milliseconds until a token will be available (0 if one is). */
  waitMs(): number {
    this.refill();
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) / this.qps) * 1000);
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
