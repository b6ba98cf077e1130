/**
 * Delays of any length. Node's timers take at most 2^31−1 ms (24.8 days); a longer delay fires after 1 ms (with a
 * TimeoutOverflowWarning), so a 30-day requeue would run a reconciler in a tight loop. {@link after} arms the timer
 * in steps of at most that much and checks the clock each time it fires, so it never runs early however long the
 * delay.
 */

/** The longest delay Node's `setTimeout` honours. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Time and timers, injectable for tests. */
export interface TimerClock {
  /** Monotonic milliseconds. */
  now(): number;
  /** `keepAlive`: the pending timer keeps the process running (Node's default); otherwise it is unref'd. */
  setTimeout(fn: () => void, ms: number, keepAlive?: boolean): unknown;
  /** Cancels a timer `setTimeout` returned. */
  clearTimeout(handle: unknown): void;
}

/** The process's monotonic clock and Node's timers. */
export const systemTimerClock: TimerClock = {
  now: () => performance.now(),
  setTimeout(fn, ms, keepAlive = false) {
    const t = setTimeout(fn, ms);
    if (!keepAlive) t.unref();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/**
 * Calls `fn` once `ms` have passed on `clock` (however long `ms` is; never synchronously, even for 0); returns a
 * function that cancels it. The pending delay does not keep the process running unless `keepAlive`.
 */
export function after(ms: number, fn: () => void, clock: TimerClock = systemTimerClock, keepAlive = false): () => void {
  const due = clock.now() + Math.max(0, ms);
  let handle: unknown;
  let cancelled = false;
  const arm = () => {
    handle = clock.setTimeout(check, Math.min(Math.max(0, Math.ceil(due - clock.now())), MAX_TIMER_MS), keepAlive);
  };
  const check = () => {
    if (cancelled) return;
    if (due - clock.now() <= 0) fn();
    else arm();
  };
  arm();
  return () => {
    cancelled = true;
    clock.clearTimeout(handle);
  };
}
