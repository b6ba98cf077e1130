/**
 * The real-API suite's own harness (scripts/run-tests.mjs and test/helpers/real-kube.ts) as a user runs it against a
 * cluster they name: `CTRLMETRICS_TEST_KUBECONFIG` pointing at an API server (here the embedded authority, started
 * as `ctrlmetrics authority` would be; between sessions it is run against a real one). Run twice in a row, the suite
 * passes both times and leaves the cluster as it found it: the same namespaces, CRDs, webhook configurations,
 * cluster roles and bindings before and after. Without a cluster, the suite says in one line how to run it.
 *
 * With `CTRLMETRICS_TEST_KUBECONFIG` set (a real cluster, as between sessions) the runs go there instead.
 *
 * The files run here pass on the authority (some others need kube-controller-manager's controllers: a Deployment's
 * pods, the garbage collector) and are quick, and between them create every kind of object the suite makes:
 * namespaces, CRDs (of the run's group and an upstream one), webhook configurations, cluster roles and bindings.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RUN_SCOPED_COLLECTIONS } from '../helpers/real-kube.js';
import { KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';
import { loadRestConfig } from '../../packages/ctrlmetrics/src/kube/config.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { ROOT, run } from '../helpers/process.js';
import { SECOND_NODE_SKIP } from '../helpers/second-node.js';

const FILES = ['crd-versions-live', 'issuer-discovery', 'memcached-webhooks'];

/** What the cluster holds in the collections a run may add to, one `collection/name` a line. */
async function inventory(admin: KubeClient): Promise<string[]> {
  const names: string[] = [];
  for (const collection of RUN_SCOPED_COLLECTIONS) {
    const list = await admin.get<{ items: Array<{ metadata: { name: string } }> }>(collection);
    for (const o of list.items) names.push(`${collection}/${o.metadata.name}`);
  }
  return names.sort();
}

/**
 * The environment of the suite run: this process's, without any real-API setting of the caller's, and without
 * node:test's marker of a child test process (with it, the nested runner would run no file).
 */
function suiteEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of [
    'NODE_TEST_CONTEXT',
    'CTRLMETRICS_TEST_KUBECONFIG',
    'CTRLMETRICS_SHARED_KUBE',
    'CTRLMETRICS_REAL_KUBE_DIR',
    'CTRLMETRICS_TEST_RUN_ID',
    'CTRLMETRICS_TEST_SA_SIGNING_KEY',
  ])
    delete env[k];
  return { ...env, ...extra };
}

// the suite's time goes to kubectl processes, the same on any Node: CI's second Node major skips it
describe(
  'the real-API suite against a cluster named by CTRLMETRICS_TEST_KUBECONFIG',
  { timeout: 600_000, skip: SECOND_NODE_SKIP },
  () => {
    // the cluster the suite runs against: the one the caller names (a real one), else an authority of its own
    const named = process.env.CTRLMETRICS_TEST_KUBECONFIG;
    let cluster: TestCluster | undefined;
    let admin: KubeClient;
    let kubeconfig: string;

    before(async () => {
      if (named) {
        admin = new KubeClient(await loadRestConfig({ kubeconfig: named }));
        kubeconfig = named;
      } else {
        cluster = await startTestCluster();
        admin = cluster.admin;
        kubeconfig = cluster.kubeconfig;
      }
    });
    after(async () => {
      if (named) admin?.close();
      await cluster?.stop();
    });

    test('run twice in a row: it passes both times and leaves nothing behind', async () => {
      const start = await inventory(admin);
      for (const round of [1, 2]) {
        const r = await run(process.execPath, ['scripts/run-tests.mjs', 'real-api', ...FILES], {
          cwd: ROOT,
          env: suiteEnv({ CTRLMETRICS_TEST_KUBECONFIG: kubeconfig }),
          timeoutMs: 280_000,
        });
        const out = `${r.stdout}${r.stderr}`;
        assert.equal(r.code, 0, `run ${round} failed:\n${out.slice(-4000)}`);
        const runId = /^# real-api: run id (r[0-9a-f]{6}), against the cluster of /m.exec(out)?.[1];
        assert.ok(runId, `run ${round} names its run id:\n${out.slice(0, 400)}`);
        assert.match(out, new RegExp(`^ℹ pass [1-9]\\d*$`, 'm'));
        assert.match(out, /^ℹ fail 0$/m);
        assert.deepEqual(await inventory(admin), start, `run ${round} (${runId}) left objects behind`);
      }
    });

    test('without a cluster: one line says how to run it, and the suite is skipped', async () => {
      const r = await run(process.execPath, ['scripts/run-tests.mjs', 'real-api'], {
        cwd: ROOT,
        env: suiteEnv({}),
        timeoutMs: 60_000,
      });
      assert.equal(r.code, 0, r.stderr);
      const lines = r.stdout.trim().split('\n');
      assert.equal(lines.length, 2, r.stdout);
      assert.match(lines[0], /^# suite real-api: \d+ file\(s\)$/);
      assert.equal(
        lines[1],
        '# real-api: skipped, no real cluster: set CTRLMETRICS_TEST_KUBECONFIG=<cluster-admin kubeconfig> (a cluster you have) or CTRLMETRICS_SHARED_KUBE=<dir with start.sh/stop.sh> (a control plane of its own); see docs/guides/testing.md',
      );
    });
  },
);
