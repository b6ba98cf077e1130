/**
 * One replica of a leader-elected manager for the failover benchmark (bench/lib/failover.ts): a controller over the
 * labelled ConfigMaps of a namespace, with or without warm-up. Prints JSON lines on stdout, each with the wall
 * clock (`at`, ms) so that the parent can line them up with the moment it killed the other replica:
 * `ready` (its /readyz passes: a warm standby's caches synced), `leading` (a runnable that needs the Lease
 * started), `first-reconcile`, `all-reconciled` (every ConfigMap reconciled once).
 *
 * FAILOVER_CONFIG: { restConfig, namespace, leaseId, labelSelector, expected, warmup }.
 */
import http from 'node:http';
import { Controller, Manager, type RestConfig } from '../../packages/ctrlmetrics/src/index.js';

const cfg = JSON.parse(process.env.FAILOVER_CONFIG ?? '{}') as {
  restConfig: RestConfig;
  namespace: string;
  leaseId: string;
  labelSelector: string;
  expected: number;
  warmup: boolean;
};

const say = (event: string, extra: Record<string, unknown> = {}) =>
  process.stdout.write(`${JSON.stringify({ event, at: Date.now(), ...extra })}\n`);

const mgr = new Manager({
  restConfig: cfg.restConfig,
  metrics: { bindAddress: '0' },
  healthProbeBindAddress: '127.0.0.1:0',
  leaderElection: true,
  leaderElectionID: cfg.leaseId,
  leaderElectionNamespace: cfg.namespace,
  // short enough that a run takes seconds, the same for both variants
  leaseDurationMs: 2_000,
  renewDeadlineMs: 1_500,
  retryPeriodMs: 200,
  enableWarmup: cfg.warmup,
});
let reconciled = 0;
mgr.add(
  new Controller({
    name: 'failover',
    reconciler: async () => {
      reconciled++;
      if (reconciled === 1) say('first-reconcile');
      if (reconciled === cfg.expected) say('all-reconciled');
    },
    watches: [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: cfg.namespace, labelSelector: cfg.labelSelector }],
  }),
);
mgr.add({
  name: 'leading-marker',
  start: () => {
    say('leading');
  },
});

function readyz(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(`${url}/readyz`, { agent: false, timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
  });
}

const running = mgr.start();
void (async () => {
  while (!mgr.healthProbeServer) await new Promise((r) => setTimeout(r, 20));
  while ((await readyz(mgr.healthProbeServer.url)) !== 200) await new Promise((r) => setTimeout(r, 20));
  say('ready');
})();
running.then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
