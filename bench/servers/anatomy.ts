/**
 * The memory anatomy of our endpoint at 10k lines, the child of bench/memory-anatomy.ts: builds the
 * bench's ours server step by step (library modules, the K×N synthetic registry, the API config from a kubeconfig
 * file, the server with the real filter) and reports the process's memory after each step on stdout as
 * `STEP {json}` lines. Then it idles (`IDLE_S` seconds, one reading a second), says `READY {"port":…}` and waits for
 * the driver's load; on SIGUSR2 it reads once more, forces a full GC (started with `--expose-gc`), summarises the
 * live JS heap from a heap snapshot (`HEAP {json}`), and exits.
 *
 * Environment: CTRLMETRICS_LIB_ROOT/EXT (see bench/lib/servers.ts), K, N, CERT_DIR, MANAGER_KUBECONFIG, IDLE_S.
 */
import { readFileSync } from 'node:fs';
import { getHeapSnapshot } from 'node:v8';
import type * as MetricsModule from '../../packages/ctrlmetrics/src/metrics/index.js';
import type * as ServerModule from '../../packages/ctrlmetrics/src/metrics/server/index.js';
import type * as FiltersModule from '../../packages/ctrlmetrics/src/metrics/filters/index.js';
import type * as ClientModule from '../../packages/ctrlmetrics/src/kube/client.js';
import type * as LogModule from '../../packages/ctrlmetrics/src/util/log.js';
import type * as ConfigModule from '../../packages/ctrlmetrics/src/kube/config.js';

const root = process.env.CTRLMETRICS_LIB_ROOT;
const ext = process.env.CTRLMETRICS_LIB_EXT ?? '.js';
if (!root)
  throw new Error('CTRLMETRICS_LIB_ROOT is not set (bench/servers/anatomy.ts is started by bench/memory-anatomy.ts)');
const lib = <T>(rel: string): Promise<T> => import(`${root}${rel}${ext}`) as Promise<T>;

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

function reading(step: string): Record<string, unknown> {
  const rollup = readFileSync('/proc/self/smaps_rollup', 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(rollup)?.[1] ?? 0);
  const m = process.memoryUsage();
  const mb = (b: number) => Math.round((b / 1048576) * 10) / 10;
  const rss = kb('Rss') / 1024;
  const anon = kb('Anonymous') / 1024;
  return {
    step,
    rssMb: mb(rss * 1048576),
    anonMb: mb(anon * 1048576),
    fileMb: mb((rss - anon) * 1048576),
    heapTotalMb: mb(m.heapTotal),
    heapUsedMb: mb(m.heapUsed),
    externalMb: mb(m.external),
    arrayBuffersMb: mb(m.arrayBuffers),
  };
}

async function step(name: string): Promise<void> {
  await settle(800);
  process.stdout.write(`STEP ${JSON.stringify(reading(name))}\n`);
}

await step('bare node');
const metrics = await lib<typeof MetricsModule>('metrics/index');
const { createMetricsServer } = await lib<typeof ServerModule>('metrics/server/index');
const { filters } = await lib<typeof FiltersModule>('metrics/filters/index');
const { KubeClient } = await lib<typeof ClientModule>('kube/client');
const { createLogger } = await lib<typeof LogModule>('util/log');
const { loadRestConfig } = await lib<typeof ConfigModule>('kube/config');
await step('library imported');

const K = Number(process.env.K ?? 10);
const N = Number(process.env.N ?? 73);
// the same synthetic registry as bench/servers/ours.ts and the peers
const DEF_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const CODES = ['200', '404', '500'];
for (let v = 0; v < K; v++) {
  const cv = new metrics.Counter({
    name: `app_requests_${v}_total`,
    help: `Synthetic counter vector ${v}.`,
    labelNames: ['route', 'code'],
  });
  const hv = new metrics.Histogram({
    name: `app_request_duration_${v}_seconds`,
    help: `Synthetic histogram vector ${v}.`,
    labelNames: ['route', 'code'],
    buckets: DEF_BUCKETS,
  });
  for (let i = 0; i < N; i++) {
    const route = `/api/v1/resource/${i}`;
    const code = CODES[i % 3];
    cv.labels(route, code).inc(i + 1);
    const h = hv.labels(route, code);
    for (let j = 0; j < 3; j++) h.observe(((i * 7 + j * 13 + v) % 1000) / 100);
  }
}
await step(`registry filled (K=${K}, N=${N})`);

const kubeconfig = process.env.MANAGER_KUBECONFIG;
if (!kubeconfig) throw new Error('MANAGER_KUBECONFIG is required');
const restConfig = await loadRestConfig({ kubeconfig });
await step('API config read (kubeconfig file)');

const kubeClient = new KubeClient(restConfig);
const server = createMetricsServer(
  {
    bindAddress: '127.0.0.1:0',
    certDir: process.env.CERT_DIR,
    certName: 'cert.pem',
    keyName: 'key.pem',
    filterProvider: filters.withAuthenticationAndAuthorization,
  },
  { restConfig, kubeClient, logger: createLogger('anatomy') },
);
await server.start();
await step('server started with the filter');

const idleS = Number(process.env.IDLE_S ?? 15);
for (let s = 1; s <= idleS; s++) {
  await settle(1000);
  process.stdout.write(`IDLE ${JSON.stringify({ s, ...reading(`idle ${s} s`) })}\n`);
}
process.stdout.write(`READY ${JSON.stringify({ port: server.port })}\n`);

/** Live JS heap by kind, from a heap snapshot taken after a full GC: where the retained bytes are. */
async function heapSummary(): Promise<Record<string, unknown>> {
  const parts: Buffer[] = [];
  for await (const c of getHeapSnapshot()) parts.push(c as Buffer);
  // imported here so that the start-up readings above do not include it
  const { summarizeHeapSnapshot } = await import('../lib/heap-snapshot.js');
  const sum = summarizeHeapSnapshot(Buffer.concat(parts));
  const top = [...sum.kinds.values()]
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, 12)
    .map((k) => ({ kind: k.kind, kb: Math.round(k.bytes / 1024) }));
  return { totalMb: Math.round(sum.totalMb * 100) / 100, top };
}

process.once('SIGUSR2', () => {
  void (async () => {
    process.stdout.write(`STEP ${JSON.stringify(reading('after the load'))}\n`);
    (globalThis as { gc?: () => void }).gc?.();
    await settle(200);
    process.stdout.write(`STEP ${JSON.stringify(reading('after the load + full GC'))}\n`);
    process.stdout.write(`HEAP ${JSON.stringify(await heapSummary())}\n`);
    await server.stop();
    kubeClient.close();
    process.exit(0);
  })();
});
