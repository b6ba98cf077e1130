/**
 * This project's endpoint as a benchmark server: the real `createMetricsServer` (HTTPS, certificate from CERT_DIR)
 * with the real authentication/authorization filter against the authority named in MANAGER_ACCESS_FILE (absent:
 * no filter, the filter-cost baseline), serving the synthetic registry of the peers built with our own metric
 * classes in the global registry (so the built-in process_/nodejs_ families are served too, as in production).
 *
 * Run by bench/lib/servers.ts as transpiled JavaScript; the library is imported from CTRLMETRICS_LIB_ROOT
 * (dist/src/ or src/). Environment: PORT, K, N, CERT_DIR (cert.pem, key.pem), MANAGER_ACCESS_FILE.
 */
import { readFileSync } from 'node:fs';
import type * as MetricsModule from '../../src/metrics/index.js';
import type * as ServerModule from '../../src/metrics/server/index.js';
import type * as FiltersModule from '../../src/metrics/filters/index.js';
import type * as ClientModule from '../../src/kube/client.js';
import type * as LogModule from '../../src/util/log.js';
import type { RestConfig } from '../../src/kube/config.js';

const root = process.env.CTRLMETRICS_LIB_ROOT;
const ext = process.env.CTRLMETRICS_LIB_EXT ?? '.js';
if (!root) throw new Error('CTRLMETRICS_LIB_ROOT is not set (bench/servers/ours.ts is started by bench/run.ts)');
const lib = <T>(rel: string): Promise<T> => import(`${root}${rel}${ext}`) as Promise<T>;

const metrics = await lib<typeof MetricsModule>('metrics/index');
const { createMetricsServer } = await lib<typeof ServerModule>('metrics/server/index');
const { filters } = await lib<typeof FiltersModule>('metrics/filters/index');
const { KubeClient } = await lib<typeof ClientModule>('kube/client');
const { createLogger } = await lib<typeof LogModule>('util/log');

const port = Number(process.env.PORT);
const K = Number(process.env.K ?? 10);
const N = Number(process.env.N ?? 7);
const certDir = process.env.CERT_DIR;
if (!port || !certDir) throw new Error('PORT and CERT_DIR are required');

/** Go's prometheus.DefBuckets, which are also prom-client's defaults. */
const DEF_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const CODES = ['200', '404', '500'];

for (let v = 0; v < K; v++) {
  const cv = new metrics.Counter({ name: `app_requests_${v}_total`, help: `Synthetic counter vector ${v}.`, labelNames: ['route', 'code'] });
  const hv = new metrics.Histogram({
    name: `app_request_duration_${v}_seconds`,
    help: `Synthetic histogram vector ${v}.`,
    labelNames: ['route', 'code'],
    buckets: DEF_BUCKETS,
  });
  for (let i = 0; i < N; i++) {
    const route = `/api/v1/resource/${i}`;
    const code = CODES[i % 3]!;
    cv.labels(route, code).inc(i + 1);
    const h = hv.labels(route, code);
    for (let j = 0; j < 3; j++) h.observe(((i * 7 + j * 13 + v) % 1000) / 100);
  }
}

const accessFile = process.env.MANAGER_ACCESS_FILE;
let restConfig: RestConfig = { server: 'https://127.0.0.1:1' };
if (accessFile) {
  const access = JSON.parse(readFileSync(accessFile, 'utf8')) as { server: string; caPem: string; token: string };
  restConfig = { server: access.server, ca: access.caPem, token: access.token };
}
const kubeClient = new KubeClient(restConfig);
const server = createMetricsServer(
  {
    bindAddress: `127.0.0.1:${port}`,
    certDir,
    certName: 'cert.pem',
    keyName: 'key.pem',
    ...(accessFile ? { filterProvider: filters.withAuthenticationAndAuthorization } : {}),
  },
  { restConfig, kubeClient, logger: createLogger('bench-metrics') },
);
await server.start();
process.stderr.write(`ours pid=${process.pid} port=${server.port} k=${K} n=${N} filter=${accessFile ? 'on' : 'off'}\n`);

// A clean exit on SIGTERM so that `--cpu-prof` writes its profile.
process.once('SIGTERM', () => {
  const hardStop = setTimeout(() => process.exit(0), 2000);
  hardStop.unref();
  void server.stop().finally(() => {
    kubeClient.close();
    process.exit(0);
  });
});
