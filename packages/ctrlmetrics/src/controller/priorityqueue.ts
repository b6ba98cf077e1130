/**
 * controller-runtime v0.24's priority queue, the default queue of a controller (`usePriorityQueue`):
 * - items are de-duplicated; a re-add keeps the higher priority and the earlier ready time; raising the priority
 *   moves the item to the end of that priority's line, a lower one is ignored; a plain add of a delayed item makes
 *   it ready at once;
 * - ready items are handed out by priority (highest first), then in the order they became ready;
 * - an item handed out stays locked until `done`: a re-add meanwhile waits, ready, until then;
 * - `workqueue_depth{priority}` and `workqueue_adds_total` count an item when it becomes ready (a delayed item is
 *   not in the depth); `workqueue_retries_total` counts every add with a delay > 0, de-duplicated or not;
 * - per-item exponential backoff only (5 ms·2ⁿ up to 1000 s), no overall token bucket;
 * - `shutDown` drops what is queued: `get` answers `shutdown` at once, later adds are ignored.
 */
import { ItemExponentialFailureRateLimiter, type RateLimiter } from './ratelimiter.js';
import {
  noopWorkqueueMetrics,
  reportUnfinishedWork,
  workqueueDepth,
  workqueueMetricsFor,
  type WorkqueueMetrics,
} from './metrics.js';
import { after, systemTimerClock, type TimerClock } from '../util/timers.js';

/** controller-runtime's `handler.LowPriority`: objects of the initial list and resync updates. */
export const LOW_PRIORITY = -100;

/** Distinct `priority` label values per queue before they are reported as `exceeded_cardinality_limit`. */
const MAX_PRIORITY_LABELS = 25;

const NS_PER_S = 1e9;

/** What {@link PriorityQueue.get} hands out. */
export type PriorityGet<T> =
  { item: T; priority: number; shutdown: false } | { item: undefined; priority: undefined; shutdown: true };

/** Options of a {@link PriorityQueue}. */
export interface PriorityQueueOptions<T> {
  /** Queue name: the `name` and `controller` labels of its metrics. */
  name: string;
  /** Rate limiter (default: per-item exponential, 5 ms → 1000 s). */
  rateLimiter?: RateLimiter<T>;
  /** Report `workqueue_*` metrics (default true). */
  metrics?: boolean;
  /** Refresh period of the unfinished/longest-running gauges in ms (default 500). */
  unfinishedWorkUpdatePeriodMs?: number;
  /** Clock of the delays (tests). */
  clock?: TimerClock;
}

interface Entry {
  priority: number;
  /** Pending delay; undefined once ready. */
  timer?: { readyAt: number; cancel: () => void };
  /** When it became ready (ns), for the queue duration. */
  readyAtNs?: bigint;
}

/** controller-runtime v0.24's priority queue: de-duplicating, delaying, rate-limited; items come out by priority, then in the order they became ready. */
export class PriorityQueue<T = string> {
  readonly name: string;
  private readonly limiter: RateLimiter<T>;
  private readonly m: WorkqueueMetrics;
  private readonly withMetrics: boolean;
  private readonly clock: TimerClock;
  private readonly entries = new Map<T, Entry>();
  /** Ready items per priority, each in the order it became ready (a Set keeps insertion order). */
  private readonly ready = new Map<number, Set<T>>();
  private readyCount = 0;
  /** Handed out and not yet done, with the start (ns). */
  private readonly locked = new Map<T, bigint>();
  private readonly getters: Array<(r: PriorityGet<T>) => void> = [];
  /** The depth child per priority, bound once (a label look-up per add and get is measurable on the reconcile path). */
  private readonly depthChildren = new Map<number, WorkqueueMetrics['depth']>();
  private readonly depthLabels = new Set<string>();
  /** The priorities that have ready items, highest first; rebuilt only when a line appears or empties. */
  private priorities: number[] = [];
  private shuttingDown = false;
  private readonly gaugeTimer: NodeJS.Timeout | undefined;

  constructor(opts: PriorityQueueOptions<T>) {
    this.name = opts.name;
    this.limiter = opts.rateLimiter ?? new ItemExponentialFailureRateLimiter<T>(5, 1_000_000);
    this.clock = opts.clock ?? systemTimerClock;
    this.withMetrics = opts.metrics ?? true;
    this.m = this.withMetrics ? workqueueMetricsFor(opts.name, false) : noopWorkqueueMetrics();
    if (this.withMetrics) {
      this.gaugeTimer = setInterval(() => this.updateUnfinishedWork(), opts.unfinishedWorkUpdatePeriodMs ?? 500);
      this.gaugeTimer.unref();
    }
  }

  /** Ready items (handed out ones not counted; delayed ones not counted). */
  len(): number {
    return this.readyCount;
  }

  /** Items waiting for their delay. */
  waitingLen(): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.timer) n++;
    return n;
  }

  /** The number of items handed out and not yet done. */
  processingLen(): number {
    return this.locked.size;
  }

  /** True once `shutDown` was called. */
  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Queues `item` now with `priority` (default 0). */
  add(item: T, priority = 0): void {
    this.addWith(item, priority, 0);
  }

  /** Queues `item` after `delayMs` (at once when ≤ 0). */
  addAfter(item: T, delayMs: number, priority = 0): void {
    this.addWith(item, priority, delayMs);
  }

  /** Queues `item` after the rate limiter's backoff for it (which counts a failure). */
  addRateLimited(item: T, priority = 0): void {
    this.addWith(item, priority, this.limiter.when(item));
  }

  /** Resets an item's backoff. */
  forget(item: T): void {
    this.limiter.forget(item);
  }

  /** How often an item was requeued with backoff since it was last forgotten. */
  numRequeues(item: T): number {
    return this.limiter.numRequeues(item);
  }

  private addWith(item: T, priority: number, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs > 0) this.m.retries.inc();
    const e = this.entries.get(item);
    if (!e) {
      const entry: Entry = { priority };
      this.entries.set(item, entry);
      if (delayMs > 0) this.delay(item, entry, delayMs);
      else this.makeReady(item, entry);
      return;
    }
    const raised = priority > e.priority;
    if (raised) {
      if (!e.timer) this.removeReady(item, e.priority, false);
      e.priority = priority;
      if (!e.timer) this.insertReady(item, e.priority);
    }
    if (!e.timer) return; // already ready: the earlier ready time wins
    if (delayMs <= 0) {
      e.timer.cancel();
      e.timer = undefined;
      this.makeReady(item, e);
    } else if (this.clock.now() + delayMs < e.timer.readyAt) {
      e.timer.cancel();
      this.delay(item, e, delayMs);
    }
  }

  private delay(item: T, e: Entry, delayMs: number): void {
    const cancel = after(
      delayMs,
      () => {
        if (this.entries.get(item) !== e || !e.timer) return;
        e.timer = undefined;
        this.makeReady(item, e);
      },
      this.clock,
    );
    e.timer = { readyAt: this.clock.now() + delayMs, cancel };
  }

  /** The item becomes ready: counted in depth and adds, and handed to a waiting getter if it is not locked. */
  private makeReady(item: T, e: Entry): void {
    e.readyAtNs = process.hrtime.bigint();
    this.m.adds.inc();
    this.insertReady(item, e.priority);
    this.serve();
  }

  private insertReady(item: T, priority: number): void {
    let line = this.ready.get(priority);
    if (!line) {
      this.ready.set(priority, (line = new Set()));
      this.priorities = [...this.ready.keys()].sort((a, b) => b - a);
    }
    line.add(item);
    this.readyCount++;
    this.depth(priority).inc();
  }

  private removeReady(item: T, priority: number, observe: boolean): void {
    const line = this.ready.get(priority);
    if (!line?.delete(item)) return;
    if (line.size === 0) {
      this.ready.delete(priority);
      this.priorities = this.priorities.filter((p) => p !== priority);
    }
    this.readyCount--;
    this.depth(priority).dec();
    if (observe) {
      const e = this.entries.get(item);
      if (e?.readyAtNs !== undefined)
        this.m.queueDuration.observe(Number(process.hrtime.bigint() - e.readyAtNs) / NS_PER_S);
    }
  }

  /** The depth child for a priority (`exceeded_cardinality_limit` past 25 distinct values, as controller-runtime). */
  private depth(priority: number): WorkqueueMetrics['depth'] {
    if (!this.withMetrics) return this.m.depth;
    const bound = this.depthChildren.get(priority);
    if (bound) return bound;
    let label = String(priority);
    if (!this.depthLabels.has(label)) {
      if (this.depthLabels.size >= MAX_PRIORITY_LABELS) label = 'exceeded_cardinality_limit';
      else this.depthLabels.add(label);
    }
    const child = workqueueDepth.labels(this.name, this.name, label);
    if (this.depthChildren.size < 64) this.depthChildren.set(priority, child);
    return child;
  }

  /** The next ready, unlocked item: highest priority first, then the order it became ready. */
  private next(): { item: T; priority: number } | undefined {
    for (const p of this.priorities) {
      for (const item of this.ready.get(p)!) if (!this.locked.has(item)) return { item, priority: p };
    }
    return undefined;
  }

  private serve(): void {
    while (this.getters.length > 0) {
      const n = this.next();
      if (!n) return;
      this.getters.shift()!(this.take(n.item, n.priority));
    }
  }

  private take(item: T, priority: number): PriorityGet<T> {
    this.removeReady(item, priority, true);
    this.entries.delete(item);
    this.locked.set(item, process.hrtime.bigint());
    return { item, priority, shutdown: false };
  }

  /** Hands out the next item (waiting while none is ready); `shutdown` once the queue is shut down. */
  get(): Promise<PriorityGet<T>> {
    if (this.shuttingDown) return Promise.resolve({ item: undefined, priority: undefined, shutdown: true });
    const n = this.next();
    if (n) return Promise.resolve(this.take(n.item, n.priority));
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** Unlocks `item`; a ready entry added meanwhile can then be handed out. */
  done(item: T): void {
    const started = this.locked.get(item);
    if (started === undefined) return;
    this.locked.delete(item);
    this.m.workDuration.observe(Number(process.hrtime.bigint() - started) / NS_PER_S);
    if (!this.shuttingDown) this.serve();
  }

  /** Closes the queue: getters get `shutdown`, queued and delayed items are dropped, later adds ignored. */
  shutDown(): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    for (const [item, e] of this.entries) {
      if (e.timer) e.timer.cancel();
      else this.removeReady(item, e.priority, false);
    }
    this.entries.clear();
    for (const g of this.getters.splice(0)) g({ item: undefined, priority: undefined, shutdown: true });
    if (this.gaugeTimer) clearInterval(this.gaugeTimer);
    this.updateUnfinishedWork();
  }

  /** controller-runtime's priority queue: the same as {@link shutDown} (nothing queued is drained). */
  shutDownWithDrain(): Promise<boolean> {
    this.shutDown();
    return Promise.resolve(true);
  }

  /** Refreshes `workqueue_unfinished_work_seconds` and `workqueue_longest_running_processor_seconds`. */
  updateUnfinishedWork(): void {
    reportUnfinishedWork(this.locked.values(), this.m);
  }
}
