/**
 * Fencing: two managers in their own processes on one API server, leader election on (lease 2 s,
 * renew deadline 1.5 s, retry 0.5 s). The leader is frozen with SIGSTOP past its lease; the other takes over and
 * reconciles a change that the frozen one's watch also buffered. Continued with SIGCONT, the old leader must start
 * no reconcile and exit non-zero ("leader election lost").
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';
import type { RestConfig } from '../../packages/ctrlmetrics/src/kube/config.js';
import { ProcessGroup, ROOT, within, type Proc } from '../helpers/process.js';
import { LogCapture } from '../helpers/log-capture.js';

/** The API server the managers share: a cluster-admin client and RestConfig, and how to let go of it. */
export interface FencingTarget {
  admin: KubeClient;
  restConfig: RestConfig;
  stop(): Promise<void>;
}

/**
 * Registers the fencing test in the calling file. Run in test/reliability/leader-fencing.test.ts (the authority)
 * and test/real-api/leader-election.test.ts (a real kube-apiserver).
 */
export function leaderFencingTest(
  start: () => Promise<FencingTarget>,
  o: { namespace?: string; skip?: string | false } = {},
): void {
  const NS = o.namespace ?? 'fencing';
  const logs = new LogCapture();
  const procs = new ProcessGroup();
  let cluster: FencingTarget;

  before(async () => {
    if (o.skip) return;
    cluster = await start();
    await cluster.admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  });

  after(async () => {
    await procs.stopAll();
    await cluster?.stop();
    logs.restore();
    assert.deepEqual(logs.leaks().slice(0, 3), [], 'a secret reached a log line');
  });

  async function startManager(name: string): Promise<Proc> {
    // the admin identity: the managers need leases and a watch on ConfigMaps, not only the metrics reviews
    const restConfig = cluster.restConfig;
    if (restConfig.token) logs.secret(restConfig.token);
    return procs.start(
      name,
      process.execPath,
      ['--conditions=ctrlmetrics-source', '--import', 'tsx', `${ROOT}test/reliability/fixtures/manager-process.ts`],
      {
        env: {
          ...process.env,
          CTRLMETRICS_LOG_LEVEL: 'info',
          FIXTURE_CONFIG: JSON.stringify({
            restConfig,
            leaderElection: {
              id: 'fencing-lock',
              namespace: NS,
              leaseDurationMs: 2_000,
              renewDeadlineMs: 1_500,
              retryPeriodMs: 500,
            },
            reconcile: { namespace: NS, labelSelector: 'fencing=on' },
          }),
        },
      },
    );
  }

  const configMap = (name: string, v: string) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: NS, labels: { fencing: 'on' } },
    data: { v },
  });

  test(
    'a leader frozen past its lease starts no reconcile after it continues, and exits non-zero; the other took over',
    { timeout: 90_000, skip: o.skip },
    async (t) => {
      const a = await startManager('manager-a');
      await a.waitForOutput(/^READY \d+$/m, 60_000);
      const b = await startManager('manager-b');
      await b.waitForOutput(/attempting to acquire leader lease/, 60_000);
      assert.doesNotMatch(b.stdout(), /READY/, 'b waits while a leads');

      await cluster.admin.create(`/api/v1/namespaces/${NS}/configmaps`, configMap('one', '1'));
      await a.waitForOutput(new RegExp(`RECONCILE ${NS}/one`), 20_000);

      process.kill(a.pid, 'SIGSTOP');
      const frozenAt = Date.now();
      try {
        await b.waitForOutput(/^READY \d+$/m, 30_000);
        const takeoverMs = Date.now() - frozenAt;
        // a change both watches see: b reconciles it, a has it buffered
        await cluster.admin.create(`/api/v1/namespaces/${NS}/configmaps`, configMap('two', '2'));
        await b.waitForOutput(new RegExp(`RECONCILE ${NS}/two`), 20_000);
        const lease = await cluster.admin.get<{ spec: { holderIdentity: string; leaseTransitions: number } }>(
          `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/fencing-lock`,
        );
        assert.equal(lease.spec.leaseTransitions, 1, 'one takeover');
        const before = a.stdout().length;
        process.kill(a.pid, 'SIGCONT');
        const code = await within(a.exited, 20_000, 'the old leader to exit');
        const afterContinue = a.stdout().slice(before);
        t.diagnostic(
          `b took over ${takeoverMs} ms after a froze; a exited with ${code}; a after continuing: ${JSON.stringify(afterContinue.slice(0, 200))}`,
        );
        assert.doesNotMatch(afterContinue, /RECONCILE/, 'the old leader reconciled after continuing');
        assert.notEqual(code, 0, 'the old leader must exit non-zero');
        assert.match(a.stderr() + a.stdout(), /leader election lost/);
        assert.ok(b.running(), 'the new leader keeps running');
      } finally {
        try {
          process.kill(a.pid, 'SIGCONT');
        } catch {
          // already gone
        }
      }
    },
  );
}
