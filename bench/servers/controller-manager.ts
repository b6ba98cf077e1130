/**
 * The manager of the controller benchmark (bench/lib/controller.ts): one controller over the ConfigMaps of a
 * namespace, `workers` at once, no client rate limit. Each reconcile reads its ConfigMap from the cache
 * (`ctx.client.get`) and, when it is labelled `bench=1` and has no annotation `bench/seen`, sets it with a JSON merge
 * patch — one write per object, as the anchor's controller-runtime peer does. Prints JSON lines on stdout:
 * `first-reconcile` (the caches synced: RSS then) and `all-annotated` (every object patched), each with this
 * process's CPU time (all threads, ms) and RSS (MB), and the reconciles so far.
 *
 * Run as transpiled JavaScript; the library is imported from CTRLMETRICS_LIB_ROOT (dist by default).
 * CONTROLLER_CONFIG: { restConfig, namespace, expected, workers }.
 */
import { readFileSync } from 'node:fs';
import type * as Lib from '../../packages/ctrlmetrics/src/index.js';

const root = process.env.CTRLMETRICS_LIB_ROOT;
const ext = process.env.CTRLMETRICS_LIB_EXT ?? '.js';
if (!root)
  throw new Error(
    'CTRLMETRICS_LIB_ROOT is not set (bench/servers/controller-manager.ts is started by bench/lib/controller.ts)',
  );
const { Controller, Manager, ignoreNotFound } = (await import(`${root}index${ext}`)) as typeof Lib;

const cfg = JSON.parse(process.env.CONTROLLER_CONFIG ?? '{}') as {
  restConfig: Lib.RestConfig;
  namespace: string;
  expected: number;
  workers: number;
};

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
/**
 * The main thread's CPU alone (the JavaScript; the process's other threads are V8's GC helpers and libuv's pool):
 * utime + stime of its /proc task, in USER_HZ ticks (100 per second on Linux).
 */
const mainCpuMs = () => {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};
let reconciles = 0;
let annotated = 0;
const say = (event: string) =>
  process.stdout.write(
    `${JSON.stringify({ event, at: Date.now(), cpuMs: cpuMs(), mainCpuMs: mainCpuMs(), systemCpuMs: process.cpuUsage().system / 1000, rssMb: process.memoryUsage.rss() / 2 ** 20, reconciles })}\n`,
  );

const mgr = new Manager({
  restConfig: { ...cfg.restConfig, qps: -1 },
  metrics: { bindAddress: '0' },
  healthProbeBindAddress: '0',
  handleSignals: true,
});
mgr.add(
  new Controller({
    name: 'bench-annotate',
    maxConcurrentReconciles: cfg.workers,
    watches: [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: cfg.namespace }],
    reconciler: async (req, ctx) => {
      if (++reconciles === 1) say('first-reconcile');
      const cm = await ctx.client
        .get('v1', 'ConfigMap', { namespace: req.namespace, name: req.name })
        .catch(ignoreNotFound);
      if (!cm || cm.metadata?.labels?.['bench'] !== '1' || cm.metadata.annotations?.['bench/seen'] !== undefined)
        return;
      await ctx.client.patch(cm, { metadata: { annotations: { 'bench/seen': '1' } } });
      if (++annotated === cfg.expected) say('all-annotated');
    },
  }),
);
mgr.start().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
