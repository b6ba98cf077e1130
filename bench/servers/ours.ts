/**
 * This project's endpoint as a benchmark server: the real `createMetricsServer` (HTTPS, certificate from CERT_DIR)
 * with the real authentication/authorization filter against the authority named in the kubeconfig MANAGER_KUBECONFIG, serving
 * the synthetic registry of the peers built with our own metric classes in the global registry (so the built-in
 * process_/nodejs_ families are served too, as in production).
 *
 * The same process also serves the same registry without the filter on NOFILTER_PORT (the filter-cost baseline)
 * and on CONTROL_PORT (a second unfiltered listener: an A/B between it and the baseline shows the noise floor).
 * The listeners share the process, its compiled code and heap, so an A/B between them measures the filter and
 * nothing else; two processes differ by more than 5% from JIT and memory layout alone.
 *
 * The filter is also timed where it runs: from the filtered listener's request entering the filter to the filter
 * calling the /metrics handler (the whole synchronous warm-cache path: header parsing, HMAC, both cache look-ups,
 * scrubbing the header). The total per event-loop-delay window is reported with the window (see eld-probe.ts).
 *
 * Run by bench/lib/servers.ts as transpiled JavaScript; the library is imported from CTRLMETRICS_LIB_ROOT
 * (dist/src/ or src/). Environment: PORT, NOFILTER_PORT, CONTROL_PORT, K, N, CERT_DIR (cert.pem, key.pem),
 * MANAGER_KUBECONFIG.
 */
import type * as MetricsModule from '../../packages/ctrlmetrics/src/metrics/index.js';
import type * as ServerModule from '../../packages/ctrlmetrics/src/metrics/server/index.js';
import type * as FiltersModule from '../../packages/ctrlmetrics/src/metrics/filters/index.js';
import type * as ClientModule from '../../packages/ctrlmetrics/src/kube/client.js';
import type * as LogModule from '../../packages/ctrlmetrics/src/util/log.js';
import type * as ConfigModule from '../../packages/ctrlmetrics/src/kube/config.js';
import type { RestConfig } from '../../packages/ctrlmetrics/src/kube/config.js';
import type { FilterProvider, Handler } from '../../packages/ctrlmetrics/src/metrics/server/types.js';

const root = process.env.CTRLMETRICS_LIB_ROOT;
const ext = process.env.CTRLMETRICS_LIB_EXT ?? '.js';
if (!root) throw new Error('CTRLMETRICS_LIB_ROOT is not set (bench/servers/ours.ts is started by bench/run.ts)');
const lib = <T>(rel: string): Promise<T> => import(`${root}${rel}${ext}`) as Promise<T>;

const metrics = await lib<typeof MetricsModule>('metrics/index');
const { createMetricsServer } = await lib<typeof ServerModule>('metrics/server/index');
const { filters } = await lib<typeof FiltersModule>('metrics/filters/index');
const { KubeClient } = await lib<typeof ClientModule>('kube/client');
const { createLogger } = await lib<typeof LogModule>('util/log');
const { loadRestConfig } = await lib<typeof ConfigModule>('kube/config');

const port = Number(process.env.PORT);
const unfilteredPorts = [process.env.NOFILTER_PORT, process.env.CONTROL_PORT]
  .filter((p): p is string => !!p)
  .map(Number);
const K = Number(process.env.K ?? 10);
const N = Number(process.env.N ?? 7);
const certDir = process.env.CERT_DIR;
if (!port || !certDir) throw new Error('PORT and CERT_DIR are required');

/** Go's prometheus.DefBuckets, which are also prom-client's defaults. */
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

// loaded as a manager loads it (the memory figures count the manager's real API config loading)
const kubeconfig = process.env.MANAGER_KUBECONFIG;
const restConfig: RestConfig = kubeconfig ? await loadRestConfig({ kubeconfig }) : { server: 'https://127.0.0.1:1' };
/**
 * Time spent inside the filter before it hands a request to the handler, over the current window. The mean also
 * counts garbage collections that happen to start inside the filter (mostly the render's garbage), the median not.
 */
const MAX_FILTER_SAMPLES = 200_000;
const filterTime = { requests: 0, totalNs: 0, maxNs: 0, samples: new Float64Array(MAX_FILTER_SAMPLES) };
(globalThis as Record<symbol, unknown>)[Symbol.for('ctrlmetrics.bench.window-extras')] = {
  start() {
    filterTime.requests = 0;
    filterTime.totalNs = 0;
    filterTime.maxNs = 0;
  },
  stop() {
    const n = filterTime.requests;
    const sorted = filterTime.samples.slice(0, Math.min(n, MAX_FILTER_SAMPLES)).sort();
    return {
      filterRequests: n,
      filterMeanUs: n ? filterTime.totalNs / n / 1000 : null,
      filterMedianUs: sorted.length ? sorted[sorted.length >> 1] / 1000 : null,
      filterMaxUs: filterTime.maxNs / 1000,
    };
  },
};

/** The real filter, with a clock around its part of each request that it passes on synchronously (warm caches). */
const timedFilter: FilterProvider = async (config, client) => {
  const filter = await filters.withAuthenticationAndAuthorization(config, client);
  return (log, handler) => {
    let entered: bigint | undefined;
    const inner = filter(log, (req, res) => {
      if (entered !== undefined) {
        const ns = Number(process.hrtime.bigint() - entered);
        if (filterTime.requests < MAX_FILTER_SAMPLES) filterTime.samples[filterTime.requests] = ns;
        filterTime.requests++;
        filterTime.totalNs += ns;
        if (ns > filterTime.maxNs) filterTime.maxNs = ns;
        entered = undefined;
      }
      return handler(req, res);
    });
    const timed: Handler = (req, res) => {
      entered = process.hrtime.bigint();
      try {
        return inner(req, res);
      } finally {
        // a request that waits for a review (cold cache) is not timed: the clock covers only the synchronous path
        entered = undefined;
      }
    };
    return timed;
  };
};

const kubeClient = new KubeClient(restConfig);
const deps = { restConfig, kubeClient, logger: createLogger('bench-metrics') };
const tls = { certDir, certName: 'cert.pem', keyName: 'key.pem' };
const servers = [
  createMetricsServer(
    { bindAddress: `127.0.0.1:${port}`, ...tls, ...(kubeconfig ? { filterProvider: timedFilter } : {}) },
    deps,
  ),
  ...unfilteredPorts.map((p) => createMetricsServer({ bindAddress: `127.0.0.1:${p}`, ...tls }, deps)),
];
for (const s of servers) await s.start();
process.stderr.write(
  `ours pid=${process.pid} ports=${servers.map((s) => s.port).join(',')} k=${K} n=${N} filter=${kubeconfig ? 'on' : 'off'}\n`,
);

// A clean exit on SIGTERM so that `--cpu-prof` writes its profile.
process.once('SIGTERM', () => {
  const hardStop = setTimeout(() => process.exit(0), 2000);
  hardStop.unref();
  void Promise.all(servers.map((s) => s.stop())).finally(() => {
    kubeClient.close();
    process.exit(0);
  });
});
