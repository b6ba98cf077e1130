/**
 * The controller, workqueue and leader-election metric families, named, typed, labelled and bucketed exactly as
 * controller-runtime registers them (so dashboards and alerts written for Go operators work unchanged).
 *
 * All families live in the global global registry (`metrics.registry`). Each controller binds its label children once
 * ({@link controllerMetricsFor}, {@link workqueueMetricsFor}); the hot path then only touches pre-bound children
 * and never hashes label values.
 *
 * `workqueue_depth` carries the `priority` label like controller-runtime v0.21+ (value `""` for our queues, which
 * have no priorities). Prometheus drops empty-valued labels at ingestion, so queries written for older versions
 * (without `priority`) and for newer ones both keep working.
 * @module
 */
import { Counter, Gauge, Histogram, exponentialBuckets } from '../metrics/index.js';

/** controller-runtime's `controller_runtime_reconcile_time_seconds` buckets. */
export const RECONCILE_TIME_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75,
  2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

/** client-go's workqueue latency buckets: `ExponentialBuckets(10e-9, 10, 12)` = 1e-8 … 1e3. */
export const WORKQUEUE_BUCKETS: readonly number[] = exponentialBuckets(10e-9, 10, 12);

/**
 * The series limit of the controller and workqueue families: their labels carry controller and queue names, which
 * users choose (a controller per tenant, a queue named after input) — 10 000 is far above any real manager, and
 * far below a scrape that grew without bound (controller-runtime #3396: 810 000 series of one family).
 */
export const BUILTIN_MAX_SERIES = 10_000;

/** The four values of the `result` label of `controller_runtime_reconcile_total`. */
export const RECONCILE_RESULTS = ['success', 'error', 'requeue', 'requeue_after'] as const;
/** A value of the `result` label of `controller_runtime_reconcile_total`. */
export type ReconcileResultLabel = (typeof RECONCILE_RESULTS)[number];

// ---- controller_runtime_* ----

/** `controller_runtime_reconcile_total` (see the built-in metrics table for its labels and meaning). */
export const reconcileTotal = new Counter({
  name: 'controller_runtime_reconcile_total',
  help: 'Total number of reconciliations per controller',
  labelNames: ['controller', 'result'],
  maxSeries: BUILTIN_MAX_SERIES,
});
/** `controller_runtime_reconcile_errors_total` (see the built-in metrics table for its labels and meaning). */
export const reconcileErrors = new Counter({
  name: 'controller_runtime_reconcile_errors_total',
  help: 'Total number of reconciliation errors per controller',
  labelNames: ['controller'],
  maxSeries: BUILTIN_MAX_SERIES,
});
/** `controller_runtime_terminal_reconcile_errors_total` (see the built-in metrics table for its labels and meaning). */
export const terminalReconcileErrors = new Counter({
  name: 'controller_runtime_terminal_reconcile_errors_total',
  help: 'Total number of terminal reconciliation errors per controller',
  labelNames: ['controller'],
  maxSeries: BUILTIN_MAX_SERIES,
});
/** `controller_runtime_reconcile_panics_total` (see the built-in metrics table for its labels and meaning). */
export const reconcilePanics = new Counter({
  name: 'controller_runtime_reconcile_panics_total',
  help: 'Total number of reconciliation panics per controller',
  labelNames: ['controller'],
  maxSeries: BUILTIN_MAX_SERIES,
});
/** `controller_runtime_reconcile_timeouts_total` (see the built-in metrics table for its labels and meaning). */
export const reconcileTimeouts = new Counter({
  name: 'controller_runtime_reconcile_timeouts_total',
  help: 'Total number of reconciliation timeouts per controller',
  labelNames: ['controller'],
  maxSeries: BUILTIN_MAX_SERIES,
});
/**
 * controller-runtime v0.24's native-histogram settings of `controller_runtime_reconcile_time_seconds`, beside its
 * classic buckets: schema 3 (factor 1.1), at most 100 buckets, reset at most hourly.
 */
export const RECONCILE_TIME_NATIVE = {
  nativeHistogramBucketFactor: 1.1,
  nativeHistogramMaxBucketNumber: 100,
  nativeHistogramMinResetDuration: 60 * 60 * 1000,
} as const;

/** `controller_runtime_reconcile_time_seconds` (see the built-in metrics table for its labels and meaning). */
export const reconcileTime = new Histogram({
  name: 'controller_runtime_reconcile_time_seconds',
  help: 'Length of time per reconciliation per controller',
  labelNames: ['controller'],
  maxSeries: BUILTIN_MAX_SERIES,
  buckets: [...RECONCILE_TIME_BUCKETS],
  ...RECONCILE_TIME_NATIVE,
});
/** `controller_runtime_max_concurrent_reconciles` (see the built-in metrics table for its labels and meaning). */
export const workerCount = new Gauge({
  name: 'controller_runtime_max_concurrent_reconciles',
  help: 'Maximum number of concurrent reconciles per controller',
  labelNames: ['controller'],
  maxSeries: BUILTIN_MAX_SERIES,
});
/** `controller_runtime_active_workers` (see the built-in metrics table for its labels and meaning). */
export const activeWorkers = new Gauge({
  name: 'controller_runtime_active_workers',
  help: 'Number of currently used workers per controller',
  labelNames: ['controller'],
  maxSeries: BUILTIN_MAX_SERIES,
});

// ---- workqueue_* ----

/** `workqueue_depth` (see the built-in metrics table for its labels and meaning). */
export const workqueueDepth = new Gauge({
  name: 'workqueue_depth',
  help: 'Current depth of workqueue by workqueue and priority',
  labelNames: ['name', 'controller', 'priority'],
  maxSeries: BUILTIN_MAX_SERIES,
});
/** `workqueue_adds_total` (see the built-in metrics table for its labels and meaning). */
export const workqueueAdds = new Counter({
  name: 'workqueue_adds_total',
  help: 'Total number of adds handled by workqueue',
  labelNames: ['name', 'controller'],
  maxSeries: BUILTIN_MAX_SERIES,
});
/** `workqueue_queue_duration_seconds` (see the built-in metrics table for its labels and meaning). */
export const workqueueQueueDuration = new Histogram({
  name: 'workqueue_queue_duration_seconds',
  help: 'How long in seconds an item stays in workqueue before being requested',
  labelNames: ['name', 'controller'],
  maxSeries: BUILTIN_MAX_SERIES,
  buckets: [...WORKQUEUE_BUCKETS],
});
/** `workqueue_work_duration_seconds` (see the built-in metrics table for its labels and meaning). */
export const workqueueWorkDuration = new Histogram({
  name: 'workqueue_work_duration_seconds',
  help: 'How long in seconds processing an item from workqueue takes.',
  labelNames: ['name', 'controller'],
  maxSeries: BUILTIN_MAX_SERIES,
  buckets: [...WORKQUEUE_BUCKETS],
});
/** `workqueue_unfinished_work_seconds` (see the built-in metrics table for its labels and meaning). */
export const workqueueUnfinishedWork = new Gauge({
  name: 'workqueue_unfinished_work_seconds',
  help:
    "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. " +
    'Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.',
  labelNames: ['name', 'controller'],
  maxSeries: BUILTIN_MAX_SERIES,
});
/** `workqueue_longest_running_processor_seconds` (see the built-in metrics table for its labels and meaning). */
export const workqueueLongestRunning = new Gauge({
  name: 'workqueue_longest_running_processor_seconds',
  help: 'How many seconds has the longest running processor for workqueue been running.',
  labelNames: ['name', 'controller'],
  maxSeries: BUILTIN_MAX_SERIES,
});
/** `workqueue_retries_total` (see the built-in metrics table for its labels and meaning). */
export const workqueueRetries = new Counter({
  name: 'workqueue_retries_total',
  help:
    'Total number of items added to the workqueue with a non-zero delay ' +
    '(rate-limited requeues, explicit RequeueAfter or AddAfter calls)',
  labelNames: ['name', 'controller'],
  maxSeries: BUILTIN_MAX_SERIES,
});

// ---- leader election ----

/** `leader_election_master_status` (see the built-in metrics table for its labels and meaning). */
export const leaderElectionMasterStatus = new Gauge({
  name: 'leader_election_master_status',
  help:
    'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. ' +
    "'name' is the string used to identify the lease. Please make sure to group by name.",
  labelNames: ['name'],
  maxSeries: BUILTIN_MAX_SERIES,
});

// ---- pre-bound children ----

/** One series of a controller counter, bound to its labels. */
export type CounterChild = ReturnType<Counter['labels']>;
type GaugeChild = ReturnType<Gauge['labels']>;
type HistogramChild = ReturnType<Histogram['labels']>;

/** The children of one controller, bound once. */
export interface ControllerMetrics {
  readonly total: Readonly<Record<ReconcileResultLabel, CounterChild>>;
  readonly errors: CounterChild;
  readonly terminalErrors: CounterChild;
  readonly panics: CounterChild;
  readonly timeouts: CounterChild;
  readonly maxConcurrent: GaugeChild;
  readonly activeWorkers: GaugeChild;
  /** Bound on the first observation, so the family appears after the first reconcile as in controller-runtime. */
  observeReconcileTime(seconds: number): void;
}

/**
 * Binds (and zero-initialises, as controller-runtime does at controller start) the children of one controller:
 * the four `result` series, errors, terminal errors, panics, timeouts, `active_workers` = 0, `max_concurrent_reconciles`.
 */
export function controllerMetricsFor(controller: string, maxConcurrentReconciles: number): ControllerMetrics {
  const total = {
    success: reconcileTotal.labels(controller, 'success'),
    error: reconcileTotal.labels(controller, 'error'),
    requeue: reconcileTotal.labels(controller, 'requeue'),
    requeue_after: reconcileTotal.labels(controller, 'requeue_after'),
  };
  for (const c of Object.values(total)) c.inc(0);
  const errors = reconcileErrors.labels(controller);
  const terminalErrors = terminalReconcileErrors.labels(controller);
  const panics = reconcilePanics.labels(controller);
  const timeouts = reconcileTimeouts.labels(controller);
  errors.inc(0);
  terminalErrors.inc(0);
  panics.inc(0);
  timeouts.inc(0);
  const active = activeWorkers.labels(controller);
  active.set(0);
  const maxConcurrent = workerCount.labels(controller);
  maxConcurrent.set(maxConcurrentReconciles);
  let time: HistogramChild | undefined;
  return {
    total,
    errors,
    terminalErrors,
    panics,
    timeouts,
    maxConcurrent,
    activeWorkers: active,
    observeReconcileTime(seconds: number) {
      (time ??= reconcileTime.labels(controller)).observe(seconds);
    },
  };
}

/** The children of one workqueue (name = controller name), bound once; all series exist from queue creation. */
export interface WorkqueueMetrics {
  readonly depth: GaugeChild;
  readonly adds: CounterChild;
  readonly queueDuration: HistogramChild;
  readonly workDuration: HistogramChild;
  readonly unfinishedWork: GaugeChild;
  readonly longestRunning: GaugeChild;
  readonly retries: CounterChild;
}

/**
 * Binds the workqueue children of queue `name` (label `controller` = `name`, as controller-runtime does). `depth`
 * is the `priority=""` series of a legacy queue; a priority queue (`legacyDepth` false) binds its depth per
 * priority itself, and has no `""` series.
 */
export function workqueueMetricsFor(name: string, legacyDepth = true): WorkqueueMetrics {
  const m: WorkqueueMetrics = {
    depth: legacyDepth ? workqueueDepth.labels(name, name, '') : noopWorkqueueMetrics().depth,
    adds: workqueueAdds.labels(name, name),
    queueDuration: workqueueQueueDuration.labels(name, name),
    workDuration: workqueueWorkDuration.labels(name, name),
    unfinishedWork: workqueueUnfinishedWork.labels(name, name),
    longestRunning: workqueueLongestRunning.labels(name, name),
    retries: workqueueRetries.labels(name, name),
  };
  m.depth.set(0);
  m.adds.inc(0);
  m.unfinishedWork.set(0);
  m.longestRunning.set(0);
  m.retries.inc(0);
  return m;
}

/**
 * Sets `workqueue_unfinished_work_seconds` (the sum of the ages of the items being processed) and
 * `workqueue_longest_running_processor_seconds` (the largest), from their start times (ns).
 */
export function reportUnfinishedWork(starts: Iterable<bigint>, m: WorkqueueMetrics): void {
  const now = process.hrtime.bigint();
  let total = 0;
  let longest = 0;
  for (const started of starts) {
    const s = Number(now - started) / 1e9;
    total += s;
    if (s > longest) longest = s;
  }
  m.unfinishedWork.set(total);
  m.longestRunning.set(longest);
}

/** Workqueue metrics that go nowhere (queues created outside a controller with `metrics: false`). */
export function noopWorkqueueMetrics(): WorkqueueMetrics {
  const c = { inc: () => undefined } as unknown as CounterChild;
  const g = { set: () => undefined, inc: () => undefined, dec: () => undefined } as unknown as GaugeChild;
  const h = { observe: () => undefined, startTimer: () => () => 0 } as unknown as HistogramChild;
  return { depth: g, adds: c, queueDuration: h, workDuration: h, unfinishedWork: g, longestRunning: g, retries: c };
}
