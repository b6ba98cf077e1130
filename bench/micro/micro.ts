/**
 * Micro-benchmarks, run by bench/run.ts in their own process pinned to the server core:
 *  - counter increment and histogram observation through a pre-bound child and through a label lookup, ours and
 *    prom-client 15's, alternated trial by trial;
 *  - one instrumented reconcile through the real Controller (queue add → get → reconcile → done, with every
 *    controller_runtime_* and workqueue_* metric), fed by a stand-in informer set (no API traffic is involved);
 *  - one cached authentication + authorization decision of the real filter's Authenticator against the
 *    authority named in MANAGER_ACCESS_FILE (warmed first, so every measured decision is a cache hit), and one
 *    whole request through the real filter with warm caches (header parsing, decision, header scrub, its promise).
 * Prints one line `MICRO {json}` on stdout. Environment: CTRLMETRICS_LIB_ROOT/EXT, MANAGER_ACCESS_FILE, READER_TOKEN_FILE, QUICK.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as MetricsModule from '../../packages/ctrlmetrics/src/metrics/index.js';
import type * as FiltersModule from '../../packages/ctrlmetrics/src/metrics/filters/index.js';
import type * as ClientModule from '../../packages/ctrlmetrics/src/kube/client.js';
import type * as ControllerModule from '../../packages/ctrlmetrics/src/controller/index.js';
import type { InformerSet } from '../../packages/ctrlmetrics/src/controller/informers.js';
import type { KubeObject, WatchSpec } from '../../packages/ctrlmetrics/src/controller/types.js';

const root = process.env.CTRLMETRICS_LIB_ROOT;
const ext = process.env.CTRLMETRICS_LIB_EXT ?? '.js';
if (!root) throw new Error('CTRLMETRICS_LIB_ROOT is not set (bench/micro/micro.ts is started by bench/run.ts)');
const lib = <T>(rel: string): Promise<T> => import(`${root}${rel}${ext}`) as Promise<T>;
const quick = process.env.QUICK === '1';

const metrics = await lib<typeof MetricsModule>('metrics/index');
const { Authenticator, authFilter } = await lib<typeof FiltersModule>('metrics/filters/index');
const { createLogger } = await lib<typeof import('../../packages/ctrlmetrics/src/util/log.js')>('util/log');
const { KubeClient } = await lib<typeof ClientModule>('kube/client');
const { Controller } = await lib<typeof ControllerModule>('controller/index');
// prom-client from this project's node_modules (the same copy users get)
const promClient = createRequire(`${root}index${ext}`)('prom-client') as typeof import('prom-client');

/** One timed trial: `fn(n)` performs n operations; returns ns per operation. */
function trial(fn: (n: number) => void, n: number): number {
  const t0 = process.hrtime.bigint();
  fn(n);
  return Number(process.hrtime.bigint() - t0) / n;
}

function medianOf(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Runs the cases alternately: one warm-up round, then `trials` rounds; median ns/op per case. */
function alternate(cases: Record<string, (n: number) => void>, n: number, trials: number): Record<string, number> {
  const names = Object.keys(cases);
  const samples: Record<string, number[]> = Object.fromEntries(names.map((k) => [k, []]));
  for (const k of names) trial(cases[k], n);
  for (let t = 0; t < trials; t++) {
    const order = t % 2 ? [...names].reverse() : names;
    for (const k of order) samples[k].push(trial(cases[k], n));
  }
  return Object.fromEntries(names.map((k) => [k, medianOf(samples[k])]));
}

const OPS = quick ? 200_000 : 1_000_000;
const TRIALS = quick ? 3 : 7;
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const ROUTE = '/api/v1/resource/1';
const CODE = '200';
const ROUTES = Array.from({ length: 100 }, (_, i) => `/api/v1/resource/${i}`);
const CODES = ['200', '404', '500'];

// ---- metric updates ----
const oc = new metrics.Counter({
  name: 'bench_ours_total',
  help: 'bench',
  labelNames: ['route', 'code'],
  registers: [],
});
const oh = new metrics.Histogram({
  name: 'bench_ours_seconds',
  help: 'bench',
  labelNames: ['route', 'code'],
  buckets: BUCKETS,
  registers: [],
});
const pc = new promClient.Counter({
  name: 'bench_pc_total',
  help: 'bench',
  labelNames: ['route', 'code'],
  registers: [],
});
const ph = new promClient.Histogram({
  name: 'bench_pc_seconds',
  help: 'bench',
  labelNames: ['route', 'code'],
  buckets: BUCKETS,
  registers: [],
});
for (const r of ROUTES)
  for (const c of CODES) {
    oc.labels(r, c).inc(0);
    oh.labels(r, c).observe(0.1);
    pc.labels(r, c).inc(0);
    ph.labels(r, c).observe(0.1);
  }
// controller-runtime's reconcile-time settings: classic buckets plus native ones (schema 3, 100 buckets, hourly reset)
const onh = new metrics.Histogram({
  name: 'bench_ours_native_seconds',
  help: 'bench',
  labelNames: ['route', 'code'],
  buckets: BUCKETS,
  nativeHistogramBucketFactor: 1.1,
  nativeHistogramMaxBucketNumber: 100,
  nativeHistogramMinResetDuration: 3_600_000,
  registers: [],
});
const onhChild = onh.labels(ROUTE, CODE);
const ocChild = oc.labels(ROUTE, CODE);
const ohChild = oh.labels(ROUTE, CODE);
const pcChild = pc.labels(ROUTE, CODE);
const phChild = ph.labels(ROUTE, CODE);
const value = (i: number) => (i % 1000) / 100;

const updates = alternate(
  {
    'ours counter pre-bound child inc': (n) => {
      for (let i = 0; i < n; i++) ocChild.inc();
    },
    'prom-client counter pre-bound child inc': (n) => {
      for (let i = 0; i < n; i++) pcChild.inc();
    },
    'ours counter labels(route, code).inc()': (n) => {
      for (let i = 0; i < n; i++) oc.labels(ROUTE, CODE).inc();
    },
    'prom-client counter inc({route, code})': (n) => {
      for (let i = 0; i < n; i++) pc.inc({ route: ROUTE, code: CODE });
    },
    'ours counter labels() cycling 300 series': (n) => {
      for (let i = 0; i < n; i++) oc.labels(ROUTES[i % 100], CODES[i % 3]).inc();
    },
    'prom-client counter inc(labels) cycling 300 series': (n) => {
      for (let i = 0; i < n; i++) pc.inc({ route: ROUTES[i % 100], code: CODES[i % 3] });
    },
    'ours histogram pre-bound child observe': (n) => {
      for (let i = 0; i < n; i++) ohChild.observe(value(i));
    },
    'prom-client histogram pre-bound child observe': (n) => {
      for (let i = 0; i < n; i++) phChild.observe(value(i));
    },
    'ours histogram pre-bound child observe, with native buckets': (n) => {
      for (let i = 0; i < n; i++) onhChild.observe(value(i));
    },
    'ours histogram labels(route, code).observe()': (n) => {
      for (let i = 0; i < n; i++) oh.labels(ROUTE, CODE).observe(value(i));
    },
    'prom-client histogram observe({route, code}, v)': (n) => {
      for (let i = 0; i < n; i++) ph.observe({ route: ROUTE, code: CODE }, value(i));
    },
  },
  OPS,
  TRIALS,
);

// ---- one instrumented reconcile through the real Controller ----
async function reconcileCost(): Promise<{ usPerReconcile: number; reconciles: number }> {
  const handlers: Array<{ onAdd?: (o: KubeObject) => void }> = [];
  const informer = {
    addHandler(h: { onAdd?: (o: KubeObject) => void }) {
      handlers.push(h);
      return () => undefined;
    },
    waitForSync: async () => true,
    get: () => undefined,
    list: () => [],
  };
  // the watch's kind resolved as discovery would, without an API server
  const resolve = async (spec: WatchSpec) => ({ ...spec, resource: 'configmaps', clusterScoped: false });
  const informers = { informerFor: () => informer, cacheFor: () => informer, resolve } as unknown as InformerSet;
  let done = 0;
  let target = 0;
  let wake: (() => void) | undefined;
  const controller = new Controller({
    name: 'bench-reconcile',
    watches: [{ kind: 'ConfigMap', apiVersion: 'v1' }],
    reconciler: async () => {
      if (++done >= target) wake?.();
      return {};
    },
  });
  const abort = new AbortController();
  const client = new KubeClient({ server: 'https://127.0.0.1:1' });
  await controller.start({ client, informers, signal: abort.signal });
  const batch = 1000;
  const rounds = quick ? 5 : 50;
  const keys = Array.from({ length: batch }, (_, i) => `bench/object-${i}`);
  const runRound = async () => {
    target = done + batch;
    const finished = new Promise<void>((r) => (wake = r));
    for (const k of keys) controller.queue.add(k);
    await finished;
  };
  for (let i = 0; i < 3; i++) await runRound(); // warm-up
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) await runRound();
  const ns = Number(process.hrtime.bigint() - t0);
  await controller.stop(5000);
  abort.abort();
  client.close();
  return { usPerReconcile: ns / 1000 / (rounds * batch), reconciles: rounds * batch };
}
const reconcile = await reconcileCost();

// ---- one cached authentication + authorization decision ----
async function decisionCost(): Promise<
  { usPerDecision: number; usPerFilteredRequest: number; decisions: number } | { skipped: string }
> {
  const accessFile = process.env.MANAGER_ACCESS_FILE;
  const tokenFile = process.env.READER_TOKEN_FILE;
  if (!accessFile || !tokenFile) return { skipped: 'no authority access given' };
  const access = JSON.parse(readFileSync(accessFile, 'utf8')) as { server: string; caPem: string; token: string };
  const token = readFileSync(tokenFile, 'utf8').trim();
  const client = new KubeClient({ server: access.server, ca: access.caPem, token: access.token });
  const auth = new Authenticator(client);
  const warm = async () => {
    const a = await auth.authenticate(token);
    if (!a.authenticated) throw new Error('reader token not authenticated');
    const d = await auth.authorize(a.user, '/metrics', 'get');
    if (!d.allowed) throw new Error('reader not allowed to get /metrics');
  };
  await warm(); // fills the caches: from here on every decision is a hit, answered without a promise
  const decide = () => {
    const a = auth.authenticate(token);
    if (a instanceof Promise || !a.authenticated) throw new Error('the warm authentication cache missed');
    const d = auth.authorize(a.user, '/metrics', 'get');
    if (d instanceof Promise || !d.allowed) throw new Error('the warm authorization cache missed');
  };
  for (let i = 0; i < 1000; i++) decide();
  const n = quick ? 20_000 : 200_000;
  const samples: number[] = [];
  for (let t = 0; t < (quick ? 3 : 5); t++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) decide();
    samples.push(Number(process.hrtime.bigint() - t0) / 1000 / n);
  }

  // the whole filter on a request-shaped object (the fields it reads), with a handler that does nothing; the
  // filter scrubs the credential before the handler runs, so it is put back after each request
  let handled = 0;
  const filtered = authFilter(auth)(createLogger('bench-micro'), () => {
    handled++;
  });
  const authorization = `Bearer ${token}`;
  const req = {
    method: 'GET',
    url: '/metrics',
    headers: { accept: 'text/plain', authorization },
    rawHeaders: ['Accept', 'text/plain', 'Authorization', authorization],
  };
  const res = {};
  const request = async () => {
    await filtered(req as never, res as never);
    req.headers.authorization = authorization;
    req.rawHeaders[3] = authorization;
  };
  for (let i = 0; i < 1000; i++) await request();
  const requestSamples: number[] = [];
  for (let t = 0; t < (quick ? 3 : 5); t++) {
    const before = handled;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await request();
    requestSamples.push(Number(process.hrtime.bigint() - t0) / 1000 / n);
    if (handled - before !== n) throw new Error('the filter did not pass every warm request to the handler');
  }
  client.close();
  return { usPerDecision: medianOf(samples), usPerFilteredRequest: medianOf(requestSamples), decisions: n };
}
const decision = await decisionCost();

process.stdout.write(
  `MICRO ${JSON.stringify({ opsPerTrial: OPS, trials: TRIALS, nsPerOp: updates, reconcile, decision })}\n`,
);
process.exit(0);
