/**
 * A clock for tests (a `TimerClock` of src/util/timers.ts): time moves only when the test advances it, and its
 * timers behave as Node's do — at least 1 ms, and a delay above 2^31−1 ms fires after 1 ms.
 */
import { MAX_TIMER_MS, type TimerClock } from '../../packages/ctrlmetrics/src/util/timers.js';

const flush = () => new Promise<void>((r) => setImmediate(r));

export class ManualClock implements TimerClock {
  private t = 0;
  private seq = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + (ms > MAX_TIMER_MS ? 1 : Math.max(1, ms)), fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** Moves time forward, firing due timers in time order and letting promise callbacks run after each. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      const due = [...this.timers.entries()]
        .filter(([, x]) => x.at <= end)
        .sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.t = due[1].at;
      due[1].fn();
      await flush();
    }
    this.t = end;
    await flush();
  }
}
