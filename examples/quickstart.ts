/**
 * The library snippet of the README, runnable: one manager, one controller, one custom metric, the secure endpoint.
 *
 *   npm run build
 *   node packages/cli/dist/cli.js authority --state-dir /tmp/qs --kubeconfig-out /tmp/qs/kubeconfig &   # or a real cluster
 *   KUBECONFIG=/tmp/qs/kubeconfig node dist/examples/quickstart.js
 *
 * METRICS_BIND_ADDRESS / HEALTH_PROBE_BIND_ADDRESS override the addresses (the tests use `127.0.0.1:0`).
 */
import { Manager, Controller, TerminalError, filters, metrics } from 'ctrlmetrics';

// A custom metric: declared at module level, registered once, recorded from anywhere.
const goobers = new metrics.Counter({ name: 'goobers_total', help: 'Number of goobers processed', registers: [] });
metrics.mustRegister(goobers); // throws DuplicateMetricError on a second registration, as Go's MustRegister

const mgr = new Manager({
  healthProbeBindAddress: process.env.HEALTH_PROBE_BIND_ADDRESS ?? ':8081',
  leaderElection: true,
  leaderElectionID: 'my-operator.example.com',
  leaderElectionNamespace: 'default', // where the Lease lives; in a pod it defaults to the pod's namespace
  metrics: {
    bindAddress: process.env.METRICS_BIND_ADDRESS ?? ':8443', // "0" disables the endpoint
    filterProvider: filters.withAuthenticationAndAuthorization, // TokenReview + SubjectAccessReview
  },
});

mgr.add(
  new Controller({
    name: 'configmap',
    maxConcurrentReconciles: 2,
    watches: [{ apiVersion: 'v1', kind: 'ConfigMap', labelSelector: 'app=demo' }],
    reconciler: async (req, ctx) => {
      const cm = ctx.cache.get('ConfigMap', req.namespace, req.name);
      if (!cm) return; // deleted: nothing to do
      if (!cm.metadata?.labels?.owner) throw new TerminalError('no owner label'); // counted, not retried
      goobers.inc();
      return { requeueAfterMs: 60_000 };
    },
  }),
);

await mgr.start(); // runs until SIGTERM/SIGINT; rejects with ManagerError if it cannot bind or reach the API
