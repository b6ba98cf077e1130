/**
 * One manager for the sharding benchmark (bench/lib/sharding.ts), in its own process: a shard of a ring (or, with
 * `shardName` absent, a plain manager caching every object) with one controller over the ConfigMaps of a namespace.
 * In `loop` mode every reconcile asks to run again at once (`requeueAfterMs: 1`), so the queue never runs dry and the
 * rate of reconciles is the shard's throughput: `latency` reconciles wait 20 ms, `cpu` reconciles keep the core
 * busy for 2 ms. In `idle` mode reconciles do nothing (for the memory cells).
 *
 * Prints JSON lines on stdout: `ready`, then every 500 ms `count` (`n`: reconciles so far, `keys`: objects reconciled
 * at least once, `at`: wall ms). On stdin, `heap\n` answers `heap` (`heapUsed` after a full GC, bytes) and
 * `queue\n` answers `queue` (the p99 of `workqueue_queue_duration_seconds` since the last `queue`, as Prometheus's
 * histogram_quantile reads it: linear within its decade-wide buckets).
 *
 * SHARD_CONFIG: { restConfig, namespace, ring, shardName?, leaseNamespace, mode: 'latency' | 'cpu' | 'idle' }.
 */
import { createInterface } from 'node:readline';
import { Controller, Manager, type RestConfig } from '../../packages/ctrlmetrics/src/index.js';
import { registry } from '../../packages/ctrlmetrics/src/metrics/index.js';

const cfg = JSON.parse(process.env.SHARD_CONFIG ?? '{}') as {
  restConfig: RestConfig;
  namespace: string;
  ring: string;
  shardName?: string;
  leaseNamespace: string;
  mode: 'latency' | 'cpu' | 'idle';
};

const say = (event: string, extra: Record<string, unknown> = {}) =>
  process.stdout.write(`${JSON.stringify({ event, at: Date.now(), ...extra })}\n`);

const mgr = new Manager({
  restConfig: cfg.restConfig,
  metrics: { bindAddress: '0' },
  ...(cfg.shardName
    ? { sharding: { ring: cfg.ring, shardName: cfg.shardName, leaseNamespace: cfg.leaseNamespace } }
    : {}),
});
let reconciled = 0;
const keys = new Set<string>();

mgr.add(
  new Controller({
    name: 'shard',
    watches: [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: cfg.namespace }],
    reconciler: async (req) => {
      reconciled++;
      keys.add(req.name);
      if (cfg.mode === 'idle') return;
      if (cfg.mode === 'latency') await new Promise((r) => setTimeout(r, 20));
      else {
        const until = performance.now() + 2;
        while (performance.now() < until);
      }
      return { requeueAfterMs: 1 };
    },
  }),
);

/** Cumulative bucket counts of the queue-duration histogram (`le` → count). */
async function queueBuckets(): Promise<Map<number, number>> {
  const text = await (await registry.collect()).text('text');
  const out = new Map<number, number>();
  for (const m of text.matchAll(/^workqueue_queue_duration_seconds_bucket\{[^}]*le="([^"]+)"[^}]*\} (\d+)$/gm))
    out.set(m[1] === '+Inf' ? Infinity : Number(m[1]), Number(m[2]));
  return out;
}
let lastBuckets = new Map<number, number>();

/** Prometheus's histogram_quantile: linear within the bucket the rank falls in (cumulative `[le, count]`, sorted). */
function quantile(q: number, buckets: ReadonlyArray<readonly [number, number]>): number | null {
  const total = buckets.at(-1)?.[1] ?? 0;
  if (!total) return null;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const [le, count] of buckets) {
    if (count >= rank) {
      if (le === Infinity) return lower;
      return lower + ((le - lower) * (rank - below)) / Math.max(1, count - below);
    }
    lower = le;
    below = count;
  }
  return lower;
}

const running = mgr.start();
void mgr.ready().then(async () => {
  lastBuckets = await queueBuckets();
  say('ready');
  setInterval(() => say('count', { n: reconciled, keys: keys.size }), 500).unref();
});

createInterface({ input: process.stdin }).on('line', (line) => {
  void (async () => {
    if (line === 'heap') {
      for (let i = 0; i < 3; i++) (globalThis as { gc?: () => void }).gc?.();
      say('heap', { heapUsed: process.memoryUsage().heapUsed, rss: process.memoryUsage().rss });
    } else if (line === 'queue') {
      // histogram_quantile(0.99, …) over the buckets' increase since the last `queue`, as Prometheus computes it
      const now = await queueBuckets();
      const deltas = [...now]
        .map(([le, n]) => [le, n - (lastBuckets.get(le) ?? 0)] as const)
        .sort((a, b) => a[0] - b[0]);
      lastBuckets = now;
      say('queue', { p99Seconds: quantile(0.99, deltas), samples: deltas.at(-1)?.[1] ?? 0 });
    }
  })();
});

running.then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
