/**
 * Leader election as a user first runs it on a real cluster: the project `ctrlmetrics init` makes, applied with
 * `kubectl apply -k config/default`, and a manager run outside a pod with the manager service account's token and
 * leader election on. Without a Lease namespace it refuses to start with controller-runtime's message; with the
 * project's namespace it acquires the Lease under the scaffold's leader-election Role; in a namespace that Role does
 * not reach, the API's 403 is logged at error level within one retry period, naming the service account.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Manager } from '../../packages/ctrlmetrics/src/index.js';
import type { RestConfig } from '../../packages/ctrlmetrics/src/kube/config.js';
import type { Logger } from '../../packages/ctrlmetrics/src/util/log.js';
import { run, runCli } from '../helpers/process.js';
import { REAL_KUBE_SKIP, runName, startRealKube, type RealKube } from '../helpers/real-kube.js';
import { errorLines } from '../helpers/log-capture.js';

const PROJECT = runName('rle');
const NS = `${PROJECT}-system`;
const SA = `${PROJECT}-controller-manager`;
const LEASE_ID = `${PROJECT}-lock.my.domain`;
const TIMING = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 1_000 };

describe(
  'leader election of a scaffolded project on a real cluster',
  { skip: REAL_KUBE_SKIP, timeout: 120_000 },
  () => {
    let kube: RealKube;
    let tmp: string;
    let manager: RestConfig;

    before(async () => {
      tmp = await mkdtemp(join(tmpdir(), 'ctrlmetrics-real-le-'));
      kube = await startRealKube();
      const proj = join(tmp, 'proj');
      const init = await runCli(['init', '--project-name', PROJECT, '--dir', proj]);
      assert.equal(init.code, 0, init.stderr);
      const applied = await run(
        'kubectl',
        ['--kubeconfig', kube.kubeconfig, 'apply', '-k', join(proj, 'config/default')],
        { timeoutMs: 60_000 },
      );
      assert.equal(applied.code, 0, `kubectl apply -k: ${applied.stderr}`);
      manager = { server: kube.url, ca: kube.caPem, token: await kube.serviceAccountToken(NS, SA) };
    });

    after(async () => {
      await kube?.stop();
      if (tmp) await rm(tmp, { recursive: true, force: true });
    });

    const newManager = (extra: { leaderElectionNamespace?: string; logger?: Logger }) =>
      new Manager({
        restConfig: manager,
        handleSignals: false,
        metrics: { bindAddress: '0' },
        leaderElection: true,
        leaderElectionID: LEASE_ID,
        ...TIMING,
        ...extra,
      });

    test("outside a pod without a Lease namespace: start() refuses with controller-runtime's message", async () => {
      await assert.rejects(
        newManager({}).start(),
        /unable to find leader election namespace: not running in-cluster, please specify LeaderElectionNamespace/,
      );
      await assert.rejects(
        kube.admin.get(`/apis/coordination.k8s.io/v1/namespaces/default/leases/${LEASE_ID}`),
        /not found/,
      );
    });

    test("with the project's namespace: the scaffold's leader-election Role lets the service account take the Lease", async () => {
      const { lines, logger } = errorLines();
      const mgr = newManager({ leaderElectionNamespace: NS, logger });
      const stop = new AbortController();
      const running = mgr.start(stop.signal);
      try {
        await Promise.race([mgr.ready(), running]);
        const lease = await kube.admin.get<{ spec: { holderIdentity: string } }>(
          `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/${LEASE_ID}`,
        );
        assert.ok(lease.spec.holderIdentity, 'a holder');
        assert.deepEqual(lines, []);
      } finally {
        stop.abort();
        await running;
      }
    });

    test('in a namespace the Role does not reach: the 403 is an error line within one retry period, naming the service account', async () => {
      const { lines, logger } = errorLines();
      const mgr = newManager({ leaderElectionNamespace: 'default', logger });
      const stop = new AbortController();
      const running = mgr.start(stop.signal);
      const started = Date.now();
      try {
        while (lines.length === 0 && Date.now() - started < 10_000) await new Promise((r) => setTimeout(r, 50));
        const waited = Date.now() - started;
        assert.ok(waited < TIMING.retryPeriodMs * 2.2 + 1_000, `the first error line came ${waited} ms after start`);
        assert.equal(
          lines[0]?.msg,
          `error retrieving resource lock default/${LEASE_ID}: leases.coordination.k8s.io "${LEASE_ID}" is forbidden: User "system:serviceaccount:${NS}:${SA}" cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "default"`,
        );
        assert.deepEqual(lines[0].fields, { lease: `default/${LEASE_ID}`, reason: 'Forbidden', code: 403 });
      } finally {
        stop.abort();
        await running;
      }
    });
  },
);
