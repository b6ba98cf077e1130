/**
 * A rate-limited, de-duplicating, delaying work queue with client-go's semantics:
 * - an item waiting in the queue is held once, however often it is added;
 * - an item added while a worker is processing it is queued again when the worker calls {@link Workqueue.done};
 * - {@link Workqueue.addAfter} holds an item back for a delay (the earliest pending delay wins);
 * - {@link Workqueue.addRateLimited} delays by the rate limiter's backoff, {@link Workqueue.forget} resets it;
 * - shutdown stops accepting items; {@link Workqueue.shutDownWithDrain} also waits until every item handed out is done.
 *
 * It reports the `workqueue_*` metrics; unfinished-work and longest-running gauges are refreshed every 500 ms.
 */
import { defaultControllerRateLimiter, type RateLimiter } from './ratelimiter.js';
import { noopWorkqueueMetrics, reportUnfinishedWork, workqueueMetricsFor, type WorkqueueMetrics } from './metrics.js';
import { after, systemTimerClock, type TimerClock } from '../util/timers.js';

/** What {@link Workqueue.get} returns: an item, or `shutdown: true` when the queue is shut down and empty. */
export type QueueGet<T> = { item: T; shutdown: false } | { item: undefined; shutdown: true };

/** Options of a {@link Workqueue}. */
export interface WorkqueueOptions<T> {
  /** Queue name: the `name` and `controller` labels of its metrics. */
  name: string;
  /** Rate limiter (default controller-runtime's: 5 ms → 1000 s per item, 10 qps / burst 100 overall). */
  rateLimiter?: RateLimiter<T>;
  /** Report `workqueue_*` metrics (default true). */
  metrics?: boolean;
  /** Refresh period of the unfinished/longest-running gauges in ms (default 500). */
  unfinishedWorkUpdatePeriodMs?: number;
  /** Clock of {@link Workqueue.addAfter}'s delays (tests). */
  clock?: TimerClock;
}

const NS_PER_S = 1e9;

/** A rate-limited, de-duplicating, delaying work queue. */
export class Workqueue<T = string> {
  readonly name: string;
  private readonly limiter: RateLimiter<T>;
  private readonly m: WorkqueueMetrics;
  /** Items ready to be handed out, in order; `head` avoids O(n) shifts. */
  private queue: T[] = [];
  private head = 0;
  /** Items that must be processed (waiting in `queue`, or re-added while processing). */
  private readonly dirty = new Set<T>();
  /** Items handed out and not yet done, with their start time (ns, for work duration). */
  private readonly processing = new Map<T, bigint>();
  /** When each waiting item was added (ns, for queue duration). */
  private readonly addedAt = new Map<T, bigint>();
  /** Items held back by addAfter: ready time (ms, performance clock) and timer. */
  private readonly waiting = new Map<T, { readyAt: number; cancel: () => void }>();
  private readonly clock: TimerClock;
  private readonly getters: Array<(r: QueueGet<T>) => void> = [];
  private drainWaiters: Array<() => void> = [];
  private shuttingDown = false;
  private draining = false;
  private readonly gaugeTimer: NodeJS.Timeout | undefined;

  constructor(opts: WorkqueueOptions<T>) {
    this.name = opts.name;
    this.limiter = opts.rateLimiter ?? defaultControllerRateLimiter<T>();
    this.clock = opts.clock ?? systemTimerClock;
    const withMetrics = opts.metrics ?? true;
    this.m = withMetrics ? workqueueMetricsFor(opts.name) : noopWorkqueueMetrics();
    if (withMetrics) {
      this.gaugeTimer = setInterval(() => this.updateUnfinishedWork(), opts.unfinishedWorkUpdatePeriodMs ?? 500);
      this.gaugeTimer.unref();
    }
  }

  /** Items waiting to be handed out (not counting delayed ones). */
  len(): number {
    return this.queue.length - this.head;
  }

  /** Items held back by {@link addAfter} / {@link addRateLimited}. */
  waitingLen(): number {
    return this.waiting.size;
  }

  /** Items handed out and not yet done. */
  processingLen(): number {
    return this.processing.size;
  }

  /** True once `shutDown` was called. */
  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /**
   * Queues `item` unless it is already waiting; ignored after shutdown. As client-go's queue, an add counts in
   * `workqueue_depth` and starts the queue-duration clock at once, even while the item is being processed (it is
   * then handed out again after `done`).
   */
  add(item: T): void {
    if (this.shuttingDown || this.dirty.has(item)) return;
    this.m.adds.inc();
    this.m.depth.inc();
    if (!this.addedAt.has(item)) this.addedAt.set(item, process.hrtime.bigint());
    this.dirty.add(item);
    if (this.processing.has(item)) return; // re-queued by done()
    this.push(item);
  }

  /**
   * Queues `item` after `delayMs` (at once when ≤ 0; any length, also beyond Node's 24.8-day timer limit). If it
   * is already held back, the earlier time wins.
   */
  addAfter(item: T, delayMs: number): void {
    if (this.shuttingDown) return;
    // client-go counts a retry for every AddAfter, a delay ≤ 0 included
    this.m.retries.inc();
    if (!(delayMs > 0)) {
      this.add(item);
      return;
    }
    const readyAt = this.clock.now() + delayMs;
    const prev = this.waiting.get(item);
    if (prev) {
      if (prev.readyAt <= readyAt) return;
      prev.cancel();
    }
    const cancel = after(
      delayMs,
      () => {
        this.waiting.delete(item);
        this.add(item);
      },
      this.clock,
    );
    this.waiting.set(item, { readyAt, cancel });
  }

  /** Queues `item` after the rate limiter's backoff for it. */
  addRateLimited(item: T): void {
    this.addAfter(item, this.limiter.when(item));
  }

  /** Resets the rate limiter's backoff for `item`. */
  forget(item: T): void {
    this.limiter.forget(item);
  }

  /** How often `item` has been rate-limited since it was last forgotten. */
  numRequeues(item: T): number {
    return this.limiter.numRequeues(item);
  }

  /**
   * Hands out the next item, waiting while the queue is empty. After a shutdown the items already queued are still
   * handed out (client-go), then it resolves `{shutdown: true}`. Every item handed out must be given back with
   * {@link done}.
   */
  get(): Promise<QueueGet<T>> {
    if (this.len() > 0) return Promise.resolve(this.pop());
    if (this.shuttingDown) return Promise.resolve({ item: undefined, shutdown: true });
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** Marks `item` processed; if it was added meanwhile it is queued again. */
  done(item: T): void {
    const started = this.processing.get(item);
    if (started === undefined) return;
    this.m.workDuration.observe(Number(process.hrtime.bigint() - started) / NS_PER_S);
    this.processing.delete(item);
    // re-added while processed: queued again (after a shutdown too, as client-go's Done)
    if (this.dirty.has(item)) this.push(item);
    if (this.processing.size === 0 && this.shuttingDown) this.finishDrain();
  }

  /**
   * Stops accepting items and drops the delayed ones; the items already queued are still handed out (client-go),
   * then getters get `shutdown: true`.
   */
  shutDown(): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    this.stopTimers();
    // waiting getters exist only while the queue is empty
    for (const g of this.getters.splice(0)) g({ item: undefined, shutdown: true });
    if (this.processing.size === 0) this.finishDrain();
  }

  /**
   * Stops accepting items, keeps handing out the ones already queued, and resolves once every item handed out is
   * done (true), or after `timeoutMs` (false).
   */
  shutDownWithDrain(timeoutMs = 30_000): Promise<boolean> {
    if (!this.shuttingDown) {
      this.draining = true;
      this.shuttingDown = true;
      this.stopTimers();
      if (this.len() === 0) for (const g of this.getters.splice(0)) g({ item: undefined, shutdown: true });
    }
    if (this.processing.size === 0 && this.len() === 0) {
      this.finishDrain();
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const cancel = after(timeoutMs, () => resolve(false), this.clock, true);
      this.drainWaiters.push(() => {
        cancel();
        resolve(true);
      });
    });
  }

  /** Puts `item` in line (its depth and queue time were counted when it was added). */
  private push(item: T): void {
    const g = this.getters.shift();
    if (g) {
      this.queue.push(item);
      g(this.pop());
      return;
    }
    this.queue.push(item);
  }

  private pop(): QueueGet<T> {
    const item = this.queue[this.head];
    this.queue[this.head] = undefined as T;
    this.head++;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    const now = process.hrtime.bigint();
    this.m.depth.dec();
    const added = this.addedAt.get(item);
    if (added !== undefined) {
      this.m.queueDuration.observe(Number(now - added) / NS_PER_S);
      this.addedAt.delete(item);
    }
    this.processing.set(item, now);
    this.dirty.delete(item);
    if (this.shuttingDown && this.len() === 0) {
      // the last queued item is out: idle getters will never get another one
      for (const g of this.getters.splice(0)) g({ item: undefined, shutdown: true });
    }
    return { item, shutdown: false };
  }

  private stopTimers(): void {
    for (const w of this.waiting.values()) w.cancel();
    this.waiting.clear();
    if (this.gaugeTimer) clearInterval(this.gaugeTimer);
    this.updateUnfinishedWork();
  }

  private finishDrain(): void {
    if (this.len() > 0 && this.draining) return;
    for (const w of this.drainWaiters.splice(0)) w();
    this.updateUnfinishedWork();
  }

  /** Refreshes `workqueue_unfinished_work_seconds` and `workqueue_longest_running_processor_seconds`. */
  updateUnfinishedWork(): void {
    reportUnfinishedWork(this.processing.values(), this.m);
  }
}
