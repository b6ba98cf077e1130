/**
 * `node --import tsx bench/render-garbage.ts [TREE_DIR] [--collect-only]`: the JS heap one scrape's collect + render
 * allocates, by allocation site. Loads TREE_DIR/dist (default: this checkout; run `npm run build`
 * first), fills the global registry with the bench's 10k-line registry (10 counter and 10 histogram vectors of 67
 * series, beside the built-in families), warms up with 300 scrapes, then samples every allocation of 300 more —
 * including the objects garbage-collected since — with V8's sampling heap profiler, and prints the KB per scrape,
 * total and for the top 20 sites. The render is OpenMetrics into pooled blocks when the tree has them (as the
 * /metrics handler does), else the tree's own chunks.
 */
import { existsSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { resolve } from 'node:path';

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

type MetricsModule = typeof import('../packages/ctrlmetrics/src/metrics/index.js');
/** The built runtime of a checkout: packages/ctrlmetrics/dist, or dist/ of a checkout from before the packages. */
const libIndex = (dir: string) =>
  [`${dir}/packages/ctrlmetrics/dist/src/index.js`, `${dir}/dist/src/index.js`].find((f) => existsSync(f)) ??
  `${dir}/packages/ctrlmetrics/dist/src/index.js`;
const dir = resolve(process.argv.slice(2).find((a) => !a.startsWith('--')) ?? '.');
const collectOnly = process.argv.includes('--collect-only');
const { metrics } = (await import(libIndex(dir))) as { metrics: MetricsModule };
const { Counter, Histogram, registry } = metrics;
for (let v = 0; v < 10; v++) {
  const c = new Counter({ name: `app_requests_${v}_total`, help: 'x', labelNames: ['route', 'code'] });
  const h = new Histogram({ name: `app_request_duration_${v}_seconds`, help: 'x', labelNames: ['route', 'code'] });
  for (let i = 0; i < 67; i++) {
    c.labels(`/api/v1/resource/${i}`, String(200 + (i % 3))).inc(i);
    h.labels(`/api/v1/resource/${i}`, String(200 + (i % 3))).observe(i / 67 + 0.0001);
  }
}
const pool = metrics.BlockPool ? new metrics.BlockPool() : undefined;

async function scrape(): Promise<void> {
  const snap = await registry.collect();
  if (collectOnly) return;
  const lease = pool?.lease();
  for await (const chunk of snap.chunks('openmetrics', 'underscores', lease)) void chunk;
  lease?.release();
}

for (let i = 0; i < 300; i++) await scrape();
const session = new Session();
session.connect();
await session.post('HeapProfiler.startSampling', {
  samplingInterval: 256,
  includeObjectsCollectedByMinorGC: true,
  includeObjectsCollectedByMajorGC: true,
});
const N = 300;
for (let i = 0; i < N; i++) await scrape();
const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as { profile: { head: ProfileNode } };
const bySite = new Map<string, number>();
const walk = (n: ProfileNode): void => {
  const site = `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber + 1}`;
  bySite.set(site, (bySite.get(site) ?? 0) + n.selfSize);
  for (const c of n.children) walk(c);
};
walk(profile.head);
const kb = (b: number) => (b / N / 1024).toFixed(1);
const total = [...bySite.values()].reduce((a, b) => a + b, 0);
console.log(
  `${dir}: ${kb(total)} KB allocated per ${collectOnly ? 'collect' : 'collect + OpenMetrics render'} (10k lines, the global registry)`,
);
for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 20))
  console.log(`${kb(bytes).padStart(8)}  ${site}`);
