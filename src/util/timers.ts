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
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The process's monotonic clock and Node's timers (unref'd: a pending delay never keeps the process alive). */
export const systemTimerClock: TimerClock = {
  now: () => performance.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** Calls `fn` once `ms` have passed on `clock` (however long `ms` is); returns a function that cancels it. */
export function after(ms: number, fn: () => void, clock: TimerClock = systemTimerClock): () => void {
  const due = clock.now() + Math.max(0, ms);
  let handle: unknown;
  let cancelled = false;
  const arm = () => {
    if (cancelled) return;
    const left = due - clock.now();
    if (left <= 0) {
      fn();
      return;
    }
    handle = clock.setTimeout(arm, Math.min(Math.ceil(left), MAX_TIMER_MS));
  };
  arm();
  return () => {
    cancelled = true;
    clock.clearTimeout(handle);
  };
}
