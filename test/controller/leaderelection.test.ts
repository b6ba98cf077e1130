/**
 * The lease elector (src/manager/leaderelection.ts) against the embedded authority, some calls through a
 * delaying proxy: renewal rounds bounded by the renew deadline from their first attempt, lease transitions on
 * takeover, release only when asked, fencing by our own monotonic clock, and the timing rules.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';
import { LeaderElector, Manager, ManagerError } from '../../packages/ctrlmetrics/src/manager/index.js';
import { leaderElectionNamespace } from '../../packages/ctrlmetrics/src/manager/manager.js';
import { Controller } from '../../packages/ctrlmetrics/src/controller/index.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { FaultProxy } from '../helpers/fault-proxy.js';
import { errorLines } from '../helpers/log-capture.js';

let cluster: TestCluster;
let proxy: FaultProxy;
let direct: KubeClient;
let viaProxy: KubeClient;
let seq = 0;

before(async () => {
  cluster = await startTestCluster();
  proxy = new FaultProxy(cluster.authority.url, cluster.authority.caPem);
  await proxy.start();
  direct = new KubeClient(cluster.authority.restConfig);
  viaProxy = new KubeClient({ ...cluster.authority.restConfig, server: proxy.url, ca: proxy.caPem });
});

after(async () => {
  direct?.close();
  viaProxy?.close();
  await proxy?.stop();
  await cluster?.stop();
});

const lease = (id: string) =>
  direct.get<{ spec: { holderIdentity?: string; leaseTransitions?: number; leaseDurationSeconds?: number } }>(
    `/apis/coordination.k8s.io/v1/namespaces/default/leases/${id}`,
  );
const timing = { leaseDurationMs: 3_000, renewDeadlineMs: 1_500, retryPeriodMs: 500 };

describe('LeaderElector', () => {
  test('a round whose GET and PUT are slow is abandoned at the renew deadline from its first attempt', async () => {
    const id = `slow-${++seq}`;
    const e = new LeaderElector(viaProxy, { id, namespace: 'default', identity: 'a', ...timing });
    const stop = new AbortController();
    try {
      assert.equal(await e.acquire(stop.signal), true);
      const loop = e.renewLoop(stop.signal);
      await new Promise((r) => setTimeout(r, 700)); // a successful round or two
      proxy.setFault({ kind: 'slow', delayMs: 5_000 });
      const t0 = performance.now();
      const lost = await loop;
      const ms = performance.now() - t0;
      assert.match(String(lost?.message), /leader election lost/);
      // the next round starts within one retry period; it must end 1 500 ms after its first attempt
      assert.ok(ms >= 1_400 && ms <= 1_500 + 500 + 400, `lost after ${ms.toFixed(0)} ms`);
      assert.equal(e.isLeader, false);
      assert.equal(e.mayLead(), false);
    } finally {
      proxy.setFault({ kind: 'pass' });
      stop.abort();
    }
  });

  test('taking over an expired lease, and a released one, each add a transition; release only with releaseOnCancel', async () => {
    const id = `takeover-${++seq}`;
    const a = new LeaderElector(direct, { id, namespace: 'default', identity: 'a', ...timing });
    const stopA = new AbortController();
    assert.equal(await a.acquire(stopA.signal), true);
    assert.equal((await lease(id)).spec.leaseTransitions, 0, 'created with 0');
    stopA.abort();
    await a.release(); // releaseOnCancel is off by default: nothing is written
    assert.equal((await lease(id)).spec.holderIdentity, 'a');

    const b = new LeaderElector(direct, { id, namespace: 'default', identity: 'b', ...timing, releaseOnCancel: true });
    const stopB = new AbortController();
    const t0 = performance.now();
    assert.equal(await b.acquire(stopB.signal), true);
    assert.ok(performance.now() - t0 >= 2_900, "b waited a full lease duration from first seeing a's record");
    assert.deepEqual(
      { holder: (await lease(id)).spec.holderIdentity, transitions: (await lease(id)).spec.leaseTransitions },
      { holder: 'b', transitions: 1 },
    );
    stopB.abort();
    await b.release();
    const released = (await lease(id)).spec;
    assert.deepEqual(
      [released.holderIdentity, released.leaseDurationSeconds, released.leaseTransitions],
      ['', 1, 1],
      'released: empty holder, 1 s, transitions kept',
    );

    const c = new LeaderElector(direct, { id, namespace: 'default', identity: 'c', ...timing });
    const t1 = performance.now();
    assert.equal(await c.acquire(new AbortController().signal), true);
    assert.ok(performance.now() - t1 < 1_000, 'a released lease is taken at once');
    assert.equal((await lease(id)).spec.leaseTransitions, 2);
  });

  test('fencing: mayLead turns false once our lease may have expired by our own clock, renewals or not', async () => {
    let now = 0;
    const id = `fence-${++seq}`;
    const e = new LeaderElector(direct, { id, namespace: 'default', identity: 'f', ...timing, now: () => now });
    assert.equal(e.mayLead(), false, 'not before acquiring');
    assert.equal(await e.acquire(new AbortController().signal), true);
    assert.equal(e.mayLead(), true);
    now = 2_999;
    assert.equal(e.mayLead(), true);
    now = 3_000; // as after a freeze: the lease duration has passed since our last write started
    assert.equal(e.mayLead(), false);
  });

  test('timing rules as client-go: lease > renew deadline > 1.2 × retry, all positive', () => {
    const make = (t: { leaseDurationMs?: number; renewDeadlineMs?: number; retryPeriodMs?: number }) => () =>
      new LeaderElector(direct, { id: 'x', namespace: 'default', ...t });
    assert.throws(
      make({ leaseDurationMs: 10_000, renewDeadlineMs: 10_000 }),
      /lease duration \(10000 ms\) must be greater than the renew deadline/,
    );
    assert.throws(make({ renewDeadlineMs: 2_400, retryPeriodMs: 2_000 }), /1\.2 × the retry period/);
    assert.throws(make({ retryPeriodMs: 0 }), /greater than 0/);
    assert.doesNotThrow(make({}));
  });
});

describe("the manager's shutdown with leader election", () => {
  test('with releaseOnCancel, a slow reconcile in flight keeps the lease renewed; it is released only after the reconcile returned, and the other replica takes it at once', async () => {
    const ns = 'release-order';
    await direct.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const mgr = new Manager({
      restConfig: cluster.authority.restConfig,
      handleSignals: false,
      metrics: { bindAddress: '0' },
      leaderElection: true,
      leaderElectionID: 'release-lock',
      leaderElectionNamespace: ns,
      leaderElectionReleaseOnCancel: true,
      ...timing,
    });
    let reconcileStarted = false;
    let reconcileReturnedAt = Infinity;
    mgr.add(
      new Controller({
        name: 'slow-release',
        reconciler: async () => {
          reconcileStarted = true;
          await new Promise((r) => setTimeout(r, 4_000)); // longer than the 3 s lease
          reconcileReturnedAt = performance.now();
        },
        watches: [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, labelSelector: 'slow=yes' }],
      }),
    );
    const stop = new AbortController();
    const running = mgr.start(stop.signal);
    await Promise.race([mgr.ready(), running]);
    await direct.create(`/api/v1/namespaces/${ns}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 's', namespace: ns, labels: { slow: 'yes' } },
    });
    while (!reconcileStarted) await new Promise((r) => setTimeout(r, 20));
    const transitionsBefore = (
      await direct.get<{ spec: { leaseTransitions: number } }>(
        `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/release-lock`,
      )
    ).spec.leaseTransitions;
    stop.abort(); // shutdown begins with the reconcile in flight
    const other = new LeaderElector(direct, { id: 'release-lock', namespace: ns, identity: 'other', ...timing });
    const otherStop = new AbortController();
    const acquiring = other.acquire(otherStop.signal).then((ok) => (ok ? performance.now() : -1));
    try {
      const acquiredAt = await acquiring;
      await running;
      assert.ok(
        acquiredAt > reconcileReturnedAt,
        `the other replica led ${(reconcileReturnedAt - acquiredAt).toFixed(0)} ms before the reconcile returned`,
      );
      assert.ok(
        acquiredAt - reconcileReturnedAt < 2_500,
        `taken ${(acquiredAt - reconcileReturnedAt).toFixed(0)} ms after the release: at its next try, not after a lease duration`,
      );
      const l = await direct.get<{ spec: { holderIdentity: string; leaseTransitions: number } }>(
        `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/release-lock`,
      );
      assert.equal(l.spec.holderIdentity, 'other');
      assert.equal(l.spec.leaseTransitions, transitionsBefore + 1);
    } finally {
      otherStop.abort();
      stop.abort();
      await running.catch(() => undefined);
    }
  });
});

describe('the Lease namespace, as controller-runtime decides it', () => {
  const REFUSED =
    /unable to find leader election namespace: not running in-cluster, please specify LeaderElectionNamespace/;

  test("the option; else the pod's service-account namespace file; else refused with controller-runtime's message", async () => {
    const { mkdtemp, rm, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    // eslint-disable-next-line @typescript-eslint/unbound-method -- node:path's functions do not use `this`
    const { join } = await import('node:path');
    const dir = await mkdtemp(join(tmpdir(), 'lease-ns-'));
    try {
      const file = join(dir, 'namespace');
      await writeFile(file, 'from-pod\n');
      assert.equal(await leaderElectionNamespace('given', file), 'given');
      assert.equal(await leaderElectionNamespace(undefined, file), 'from-pod');
      await assert.rejects(
        leaderElectionNamespace(undefined, join(dir, 'absent')),
        (err: Error) => err instanceof ManagerError && REFUSED.test(err.message),
      );
      await writeFile(file, '\n');
      await assert.rejects(leaderElectionNamespace(undefined, file), REFUSED, 'an empty file is no namespace');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('outside a pod without the namespace, start() rejects before anything listens or any Lease call', async () => {
    const before = proxy.count('/leases');
    const mgr = new Manager({
      restConfig: { ...cluster.authority.restConfig, server: proxy.url, ca: proxy.caPem },
      handleSignals: false,
      healthProbeBindAddress: '127.0.0.1:0',
      metrics: { bindAddress: '127.0.0.1:0' },
      leaderElection: true,
      leaderElectionID: 'no-namespace',
    });
    await assert.rejects(mgr.start(), REFUSED);
    await assert.rejects(mgr.ready(), REFUSED);
    assert.equal(mgr.metricsServer, undefined, 'the metrics server was never started');
    assert.equal(proxy.count('/leases'), before);
  });
});

describe('failed Lease calls are logged as client-go logs them', () => {
  /** A client acting as a service account whose Role in `ns` has these rules (by default: ConfigMaps, no Leases). */
  async function withoutLeaseRights(
    ns: string,
    rules: unknown[] = [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }],
  ): Promise<KubeClient> {
    const token = await cluster.serviceAccountToken(ns, 'manager');
    await direct.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'no-leases', namespace: ns },
      rules,
    });
    await direct.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'no-leases', namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'no-leases' },
      subjects: [{ kind: 'ServiceAccount', name: 'manager', namespace: ns }],
    });
    return new KubeClient({ server: cluster.url, ca: cluster.caPem, token });
  }

  test('a 403 on the Lease read is an error line naming the lease, the service account and the reason; an identical one is repeated at most once per retry period', async () => {
    const ns = 'le-forbidden';
    const client = await withoutLeaseRights(ns);
    const { lines, logger } = errorLines();
    let now = 0;
    const e = new LeaderElector(client, {
      id: 'locked-out',
      namespace: ns,
      identity: 'x',
      leaseDurationMs: 3_000,
      renewDeadlineMs: 1_500,
      retryPeriodMs: 100,
      logger,
      now: () => now,
    });
    const stop = new AbortController();
    const acquiring = e.acquire(stop.signal);
    try {
      // several attempts within one retry period of the (frozen) clock: one line
      await new Promise((r) => setTimeout(r, 700));
      assert.equal(lines.length, 1, JSON.stringify(lines));
      assert.equal(
        lines[0].msg,
        `error retrieving resource lock ${ns}/locked-out: leases.coordination.k8s.io "locked-out" is forbidden: User "system:serviceaccount:${ns}:manager" cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "${ns}"`,
      );
      assert.deepEqual(lines[0].fields, { lease: `${ns}/locked-out`, reason: 'Forbidden', code: 403 });
      // a retry period later the same error is logged again
      now += 100;
      const deadline = Date.now() + 3_000;
      while (lines.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.equal(lines.length, 2);
      assert.equal(lines[1].msg, lines[0].msg);
    } finally {
      stop.abort();
      assert.equal(await acquiring, false);
      client.close();
    }
  });

  test('a Lease that may be read but not created: "error initially creating leader election record" with the API\'s message', async () => {
    const ns = 'le-no-create';
    const client = await withoutLeaseRights(ns, [
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get'] },
    ]);
    const { lines, logger } = errorLines();
    const e = new LeaderElector(client, {
      id: 'cannot-create',
      namespace: ns,
      identity: 'x',
      leaseDurationMs: 3_000,
      renewDeadlineMs: 1_500,
      retryPeriodMs: 100,
      logger,
    });
    const stop = new AbortController();
    const acquiring = e.acquire(stop.signal);
    try {
      const deadline = Date.now() + 3_000;
      while (lines.length < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.equal(
        lines[0]?.msg,
        `error initially creating leader election record: leases.coordination.k8s.io is forbidden: User "system:serviceaccount:${ns}:manager" cannot create resource "leases" in API group "coordination.k8s.io" in the namespace "${ns}"`,
      );
      assert.deepEqual(lines[0].fields, { lease: `${ns}/cannot-create`, reason: 'Forbidden', code: 403 });
    } finally {
      stop.abort();
      assert.equal(await acquiring, false);
      client.close();
    }
  });
});
