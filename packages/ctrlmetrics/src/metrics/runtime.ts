/**
 * Process and Node.js runtime metrics, sampled on each collect: the `process_*` families client_golang's process
 * collector exposes (CPU, memory, start time, file descriptors) and `nodejs_*` families with the names and labels
 * prom-client's default metrics use, so existing Node.js dashboards keep working.
 *
 * Our own instead of prom-client's `collectDefaultMetrics` because that costs ~0.4 ms of CPU per scrape (it lists
 * all active handles and re-reads several /proc files) and names three gauges `*_total`, which promtool flags.
 * Everything here is one `/proc/self/stat` read, one `/proc/self/fd` listing and a few V8 calls.
 */
import { readdirSync, readFileSync } from 'node:fs';
// node:perf_hooks and node:v8 (about 1 MB of RSS between them) load when the monitors start, not at import
import type { IntervalHistogram, PerformanceObserver } from 'node:perf_hooks';
import { Counter } from './counter.js';
import type { Collector, FamilyView, MetricType } from './family.js';
import { Gauge, type GaugeChild } from './gauge.js';
import { Histogram } from './histogram.js';
import type { Metric, SeriesBase } from './metric.js';

/** prom-client's `nodejs_gc_duration_seconds` buckets. */
const GC_BUCKETS = [0.001, 0.01, 0.1, 1, 2, 5];
/**
 * The /proc reads (memory, file descriptors) cost ~200 µs on a small VM; back-to-back scrapes within this many ms
 * reuse them. Prometheus scrapes every 15-60 s, so its values are always fresh.
 */
const PROC_SAMPLE_TTL_MS = 1000;
/** Event-loop delay sampling resolution (ms), as prom-client's default. */
const LOOP_RESOLUTION_MS = 10;

/** GC kinds by perf_hooks' constant, as the label's values. */
function gcKinds(constants: typeof import('node:perf_hooks').constants): Record<number, string> {
  return {
    [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
    [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
    [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
  };
}

function readProcStat(): { vsize: number } | undefined {
  try {
    const s = readFileSync('/proc/self/stat', 'latin1');
    // fields after the parenthesised command name (which may hold spaces): state is field 3, vsize field 23
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { vsize: Number(f[20]) };
  } catch {
    return undefined;
  }
}

function openFds(): number | undefined {
  try {
    // minus the descriptor readdir itself holds open
    return readdirSync('/proc/self/fd').length - 1;
  } catch {
    return undefined;
  }
}

function maxFds(): number | undefined {
  try {
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'latin1'));
    return m && m[1] !== 'unlimited' ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

const ns = (v: number) => v / 1e9;

/** The runtime families as one collector. */
export class RuntimeCollector implements Collector {
  private readonly none = { registers: [] as [] };
  private readonly cpuUser = new Counter({
    name: 'process_cpu_user_seconds_total',
    help: 'Total user CPU time spent in seconds.',
    ...this.none,
  });
  private readonly cpuSystem = new Counter({
    name: 'process_cpu_system_seconds_total',
    help: 'Total system CPU time spent in seconds.',
    ...this.none,
  });
  private readonly cpu = new Counter({
    name: 'process_cpu_seconds_total',
    help: 'Total user and system CPU time spent in seconds.',
    ...this.none,
  });
  private readonly startTime = new Gauge({
    name: 'process_start_time_seconds',
    help: 'Start time of the process since unix epoch in seconds.',
    ...this.none,
  });
  private readonly rss = new Gauge({
    name: 'process_resident_memory_bytes',
    help: 'Resident memory size in bytes.',
    ...this.none,
  });
  private readonly vsize = new Gauge({
    name: 'process_virtual_memory_bytes',
    help: 'Virtual memory size in bytes.',
    ...this.none,
  });
  private readonly fds = new Gauge({
    name: 'process_open_fds',
    help: 'Number of open file descriptors.',
    ...this.none,
  });
  private readonly fdLimit = new Gauge({
    name: 'process_max_fds',
    help: 'Maximum number of open file descriptors.',
    ...this.none,
  });
  private readonly lag = new Gauge({
    name: 'nodejs_eventloop_lag_seconds',
    help: 'Lag of event loop in seconds.',
    ...this.none,
  });
  private readonly lagStats = {
    min: new Gauge({
      name: 'nodejs_eventloop_lag_min_seconds',
      help: 'The minimum recorded event loop delay.',
      ...this.none,
    }),
    max: new Gauge({
      name: 'nodejs_eventloop_lag_max_seconds',
      help: 'The maximum recorded event loop delay.',
      ...this.none,
    }),
    mean: new Gauge({
      name: 'nodejs_eventloop_lag_mean_seconds',
      help: 'The mean of the recorded event loop delays.',
      ...this.none,
    }),
    stddev: new Gauge({
      name: 'nodejs_eventloop_lag_stddev_seconds',
      help: 'The standard deviation of the recorded event loop delays.',
      ...this.none,
    }),
    p50: new Gauge({
      name: 'nodejs_eventloop_lag_p50_seconds',
      help: 'The 50th percentile of the recorded event loop delays.',
      ...this.none,
    }),
    p90: new Gauge({
      name: 'nodejs_eventloop_lag_p90_seconds',
      help: 'The 90th percentile of the recorded event loop delays.',
      ...this.none,
    }),
    p99: new Gauge({
      name: 'nodejs_eventloop_lag_p99_seconds',
      help: 'The 99th percentile of the recorded event loop delays.',
      ...this.none,
    }),
  };
  private readonly resourceSeries = new Map<string, GaugeChild>();
  private readonly resources = new Gauge({
    name: 'nodejs_active_resources',
    help: 'Number of active resources that are currently keeping the event loop alive, grouped by async resource type.',
    labelNames: ['type'],
    ...this.none,
  });
  private readonly heapTotal = new Gauge({
    name: 'nodejs_heap_size_total_bytes',
    help: 'Process heap size from Node.js in bytes.',
    ...this.none,
  });
  private readonly heapUsed = new Gauge({
    name: 'nodejs_heap_size_used_bytes',
    help: 'Process heap size used from Node.js in bytes.',
    ...this.none,
  });
  private readonly external = new Gauge({
    name: 'nodejs_external_memory_bytes',
    help: 'Node.js external memory size in bytes.',
    ...this.none,
  });
  private readonly spaceTotal = new Gauge({
    name: 'nodejs_heap_space_size_total_bytes',
    help: 'Process heap space size total from Node.js in bytes.',
    labelNames: ['space'],
    ...this.none,
  });
  private readonly spaceUsed = new Gauge({
    name: 'nodejs_heap_space_size_used_bytes',
    help: 'Process heap space size used from Node.js in bytes.',
    labelNames: ['space'],
    ...this.none,
  });
  private readonly spaceAvailable = new Gauge({
    name: 'nodejs_heap_space_size_available_bytes',
    help: 'Process heap space size available from Node.js in bytes.',
    labelNames: ['space'],
    ...this.none,
  });
  private readonly version = new Gauge({
    name: 'nodejs_version_info',
    help: 'Node.js version info.',
    labelNames: ['version', 'major', 'minor', 'patch'],
    ...this.none,
  });
  private readonly gc = new Histogram({
    name: 'nodejs_gc_duration_seconds',
    help: 'Garbage collection duration by kind, one of major, minor, incremental or weakcb.',
    labelNames: ['kind'],
    buckets: GC_BUCKETS,
    ...this.none,
  });

  private readonly metrics: Array<Metric<SeriesBase>>;
  /** The event-loop delay and GC monitors, once started. */
  private monitors: { loop: IntervalHistogram; gc: PerformanceObserver } | undefined;
  private readonly limit = maxFds();
  private hasProc = true;
  private procSampledAt = -Infinity;

  constructor() {
    this.metrics = [
      this.cpuUser,
      this.cpuSystem,
      this.cpu,
      this.startTime,
      this.rss,
      this.vsize,
      this.fds,
      this.fdLimit,
      this.lag,
      ...Object.values(this.lagStats),
      this.resources,
      this.heapTotal,
      this.heapUsed,
      this.external,
      this.spaceTotal,
      this.spaceUsed,
      this.spaceAvailable,
      this.version,
      this.gc,
    ];
    this.startTime.set(Math.round(Date.now() / 1000 - process.uptime()));
    const [major, minor, patch] = process.versions.node.split('.');
    this.version.labels(process.version, major ?? '', minor ?? '', patch ?? '').set(1);
  }

  /**
   * Starts the event-loop delay and GC monitors (idempotent): the manager does as it starts, a first collect
   * otherwise. Importing the library starts nothing and loads neither node:perf_hooks nor node:v8.
   */
  start(): void {
    if (this.monitors) return;
    const { constants, monitorEventLoopDelay, PerformanceObserver } = process.getBuiltinModule('node:perf_hooks');
    const kinds = gcKinds(constants);
    const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
    loop.enable();
    const gcChildren = new Map<number, ReturnType<Histogram['labels']>>();
    const gc = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0;
        let child = gcChildren.get(kind);
        if (!child) gcChildren.set(kind, (child = this.gc.labels(kinds[kind] ?? 'unknown')));
        child.observe(e.duration / 1000);
      }
    });
    gc.observe({ entryTypes: ['gc'] });
    this.monitors = { loop, gc };
  }

  familyNames(): readonly string[] {
    return this.metrics.map((m) => m.name);
  }

  familyTypes(): readonly MetricType[] {
    return this.metrics.map((m) => m.type);
  }

  /** Stops the event-loop and GC monitors (tests; the global collector lives as long as the process). */
  close(): void {
    this.monitors?.loop.disable();
    this.monitors?.gc.disconnect();
    this.monitors = undefined;
  }

  private sample(): void {
    this.start();
    const cpu = process.cpuUsage();
    this.cpuUser.labels().value = cpu.user / 1e6;
    this.cpuSystem.labels().value = cpu.system / 1e6;
    this.cpu.labels().value = (cpu.user + cpu.system) / 1e6;
    const now = performance.now();
    if (now - this.procSampledAt >= PROC_SAMPLE_TTL_MS) {
      this.procSampledAt = now;
      this.sampleProc();
    }
    if (this.limit !== undefined) this.fdLimit.set(this.limit);
    this.sampleLoop();
    this.sampleHeap();
  }

  private sampleProc(): void {
    this.rss.set(process.memoryUsage.rss());
    if (this.hasProc) {
      const stat = readProcStat();
      const fds = openFds();
      if (stat === undefined || fds === undefined) this.hasProc = false;
      else {
        this.vsize.set(stat.vsize);
        this.fds.set(fds);
      }
    }
  }

  private sampleLoop(): void {
    const h = this.monitors!.loop;
    if (h.count > 0) {
      this.lagStats.min.set(ns(h.min));
      this.lagStats.max.set(ns(h.max));
      this.lagStats.mean.set(ns(h.mean));
      this.lagStats.stddev.set(ns(h.stddev));
      this.lagStats.p50.set(ns(h.percentile(50)));
      this.lagStats.p90.set(ns(h.percentile(90)));
      this.lagStats.p99.set(ns(h.percentile(99)));
    }
    h.reset();
    // the delay until the loop gets to a setImmediate queued now, reported on the next collect
    const queued = performance.now();
    setImmediate(() => this.lag.set((performance.now() - queued) / 1000)).unref();

    // a type seen once stays, at 0 when none is active (Node has a few dozen resource types): resetting the gauge
    // would change its series on most scrapes, and with them the family's cached view (Metric.view)
    const counts = new Map<string, number>();
    for (const t of process.getActiveResourcesInfo()) counts.set(t, (counts.get(t) ?? 0) + 1);
    for (const [t, child] of this.resourceSeries) if (!counts.has(t)) child.set(0);
    for (const [t, n] of counts) {
      let child = this.resourceSeries.get(t);
      if (!child) this.resourceSeries.set(t, (child = this.resources.labels(t)));
      child.set(n);
    }
  }

  private sampleHeap(): void {
    const v8 = process.getBuiltinModule('node:v8');
    const heap = v8.getHeapStatistics();
    this.heapTotal.set(heap.total_heap_size);
    this.heapUsed.set(heap.used_heap_size);
    this.external.set(heap.external_memory);
    for (const s of v8.getHeapSpaceStatistics()) {
      const space = s.space_name.replace(/_space$/, '');
      this.spaceTotal.labels(space).set(s.space_size);
      this.spaceUsed.labels(space).set(s.space_used_size);
      this.spaceAvailable.labels(space).set(s.space_available_size);
    }
  }

  collect(): FamilyView[] {
    this.sample();
    const out: FamilyView[] = [];
    for (const m of this.metrics) {
      if (!this.hasProc && (m === (this.vsize as unknown) || m === (this.fds as unknown))) continue;
      if (this.limit === undefined && m === (this.fdLimit as unknown)) continue;
      out.push(m.view());
    }
    return out;
  }
}
