/** The library snippet of the README and the writing-an-operator guide (examples/quickstart.ts), run as a user would against the embedded authority. */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { ProcessGroup } from '../helpers/process.js';
import { eventually, httpsGet, parseExposition, value } from '../controller/helpers/exposition.js';

const procs = new ProcessGroup();
let cluster: TestCluster | undefined;
after(async () => {
  await procs.stopAll();
  await cluster?.stop();
});

test(
  'examples/quickstart.ts: the controller reconciles, the custom and built-in metrics are served behind the filter, SIGTERM stops it',
  { timeout: 90_000 },
  async () => {
    cluster = await startTestCluster();
    const ns = 'quickstart';
    await cluster.admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const cm = (name: string, labels: Record<string, string>) =>
      cluster!.admin.create(`/api/v1/namespaces/${ns}/configmaps`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: ns, labels },
      });
    await cm('owned', { app: 'demo', owner: 'me' });
    await cm('orphan', { app: 'demo' });
    await cm('ignored', { app: 'other', owner: 'me' });

    const op = procs.start(
      'quickstart',
      process.execPath,
      ['--conditions=ctrlmetrics-source', '--import', 'tsx', 'examples/quickstart.ts'],
      {
        env: {
          ...process.env,
          KUBECONFIG: cluster.authority.kubeconfig,
          METRICS_BIND_ADDRESS: '127.0.0.1:0',
          HEALTH_PROBE_BIND_ADDRESS: '127.0.0.1:0',
        },
      },
    );
    const m = await op.waitForOutput(
      /"msg":"Serving metrics server"[^\n]*"url":"(https:\/\/127\.0\.0\.1:\d+)"/,
      45_000,
    );
    const url = `${m[1]}/metrics`;

    assert.equal((await httpsGet(url)).status, 401, 'no token: 401');
    const reader = await cluster.readerToken();
    const families = await eventually(
      async () => {
        const r = await httpsGet(url, reader);
        if (r.status !== 200) return undefined;
        const f = parseExposition(r.body);
        // one ConfigMap with the owner label (goobers +1), one without (terminal error); the third is not selected
        return value(f, 'goobers_total', {}) === 1 &&
          value(f, 'controller_runtime_terminal_reconcile_errors_total', { controller: 'configmap' }) === 1
          ? f
          : undefined;
      },
      'goobers_total = 1 and one terminal error',
      45_000,
      250,
    );
    assert.equal(
      value(families, 'controller_runtime_reconcile_total', { controller: 'configmap', result: 'requeue_after' }),
      1,
    );
    assert.equal(value(families, 'controller_runtime_max_concurrent_reconciles', { controller: 'configmap' }), 2);
    assert.equal(value(families, 'leader_election_master_status', { name: 'my-operator.example.com' }), 1);

    op.child.kill('SIGTERM');
    assert.equal(await op.exited, 0);
  },
);
