/**
 * A sharded manager (`sharding: { ring, shardName }`) against the embedded authority, with the test playing the
 * sharder's part by writing the labels itself: the shard's own Lease (named after it, held by it, labelled with the
 * ring after every renew, a label someone else keeps on it left alone, released on stop); its cache of the primary
 * kind holds only what is labelled for it; an object moved to another shard is never handed to the reconciler (not
 * even as a deletion); a drain request is acknowledged (both labels removed) without a reconcile; and the options
 * a shard cannot run with are refused with the reason.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';
import { Manager, ManagerError, shardingLabels } from '../../packages/ctrlmetrics/src/manager/index.js';
import { Controller } from '../../packages/ctrlmetrics/src/controller/index.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';

let cluster: TestCluster;
let direct: KubeClient;

before(async () => {
  cluster = await startTestCluster();
  direct = new KubeClient(cluster.authority.restConfig);
});

after(async () => {
  direct?.close();
  await cluster?.stop();
});

const timing = { leaseDurationMs: 3_000, renewDeadlineMs: 1_500, retryPeriodMs: 500 };
const labels = shardingLabels('bench');

interface Lease {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { holderIdentity?: string; renewTime?: string };
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 10_000): Promise<T> {
  const end = performance.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (performance.now() > end) assert.fail(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function namespace(ns: string): Promise<void> {
  await direct.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
}

/** A sharded manager with one ConfigMap controller in `ns` that records what it reconciles and what its cache holds. */
function shardManager(ns: string, shardName: string) {
  const reconciled: string[] = [];
  const cached: string[][] = [];
  const mgr = new Manager({
    restConfig: cluster.authority.restConfig,
    handleSignals: false,
    metrics: { bindAddress: '0' },
    sharding: { ring: 'bench', shardName, leaseNamespace: ns },
    ...timing,
  });
  mgr.add(
    new Controller({
      name: `shard-${ns}`,
      reconciler: (req, ctx) => {
        reconciled.push(req.name);
        cached.push(
          ctx.cache
            .list<{ metadata: { name: string } }>({ apiVersion: 'v1', kind: 'ConfigMap' }, { namespace: ns })
            .map((o) => o.metadata.name)
            .sort(),
        );
        return Promise.resolve();
      },
      watches: [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns }],
    }),
  );
  return { mgr, reconciled, cached };
}

const cmPath = (ns: string, name = '') => `/api/v1/namespaces/${ns}/configmaps${name ? `/${name}` : ''}`;

async function configMap(ns: string, name: string, shard?: string): Promise<void> {
  await direct.create(cmPath(ns), {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: ns, ...(shard ? { labels: { [labels.shard]: shard } } : {}) },
  });
}

describe('a sharded manager', () => {
  test("holds its own Lease: named after the shard, held by it, the ring's label kept on every renew, released on stop", async () => {
    const ns = 'shard-lease';
    await namespace(ns);
    const { mgr } = shardManager(ns, 'shard-a');
    const stop = new AbortController();
    const running = mgr.start(stop.signal);
    try {
      await Promise.race([mgr.ready(), running]);
      const path = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/shard-a`;
      const first = await direct.get<Lease>(path);
      assert.equal(first.spec.holderIdentity, 'shard-a');
      assert.equal(first.metadata.labels?.[labels.ring], 'bench');
      // the sharder keeps a state label on the Lease: a renew must not drop it, nor the ring's
      await direct.mergePatch(path, { metadata: { labels: { [labels.state]: 'ready' } } });
      const renewed = await until('a renew after the state label was set', async () => {
        const l = await direct.get<Lease>(path);
        return l.spec.renewTime !== first.spec.renewTime && l.metadata.labels?.[labels.state] ? l : undefined;
      });
      assert.equal(renewed.metadata.labels?.[labels.ring], 'bench');
      assert.equal(renewed.metadata.labels?.[labels.state], 'ready');
      assert.equal(renewed.spec.holderIdentity, 'shard-a');
      stop.abort();
      await running;
      const released = await direct.get<Lease>(path);
      assert.equal(released.spec.holderIdentity, '', 'released on stop, so the sharder moves its objects at once');
      assert.equal(released.metadata.labels?.[labels.ring], 'bench');
    } finally {
      stop.abort();
      await running.catch(() => undefined);
    }
  });

  test('caches and reconciles only its own objects; a moved one is never reconciled; a drain is acknowledged, not reconciled', async () => {
    const ns = 'shard-gate';
    await namespace(ns);
    await configMap(ns, 'mine', 'shard-a');
    await configMap(ns, 'theirs', 'shard-b');
    await configMap(ns, 'unassigned');
    const { mgr, reconciled, cached } = shardManager(ns, 'shard-a');
    const stop = new AbortController();
    const running = mgr.start(stop.signal);
    try {
      await Promise.race([mgr.ready(), running]);
      await until('the reconcile of its object', () => reconciled.includes('mine') || undefined);
      assert.deepEqual(cached.at(-1), ['mine'], 'the cache holds only what is labelled for this shard');

      // assigned to this shard later: reconciled
      await direct.mergePatch(cmPath(ns, 'theirs'), { metadata: { labels: { [labels.shard]: 'shard-a' } } });
      await until('the reconcile of an object assigned to it', () => reconciled.includes('theirs') || undefined);

      // moved away: it leaves the cache, and the reconciler never hears of it (not as a deletion either)
      const before = reconciled.length;
      await direct.mergePatch(cmPath(ns, 'theirs'), { metadata: { labels: { [labels.shard]: 'shard-b' } } });
      // a change of its own object after the move, which the shard reconciles: the move's event was handled before it
      await direct.mergePatch(cmPath(ns, 'mine'), { data: { after: 'move' } });
      await until('the reconcile of the change after the move', () => reconciled.length > before || undefined);
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(reconciled.slice(before), ['mine'], 'nothing about the moved object reached the reconciler');
      assert.deepEqual(cached.at(-1), ['mine']);

      // the sharder asks to move its object away: both labels are removed, nothing is reconciled
      const count = reconciled.length;
      await direct.mergePatch(cmPath(ns, 'mine'), { metadata: { labels: { [labels.drain]: 'true' } } });
      const drained = await until('the drain acknowledged', async () => {
        const o = await direct.get<{ metadata: { labels?: Record<string, string> } }>(cmPath(ns, 'mine'));
        return o.metadata.labels?.[labels.shard] === undefined ? o : undefined;
      });
      assert.equal(
        drained.metadata.labels?.[labels.drain],
        undefined,
        'the drain label is removed with the shard label',
      );
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(reconciled.length, count, 'a drained object is acknowledged, not reconciled');
    } finally {
      stop.abort();
      await running.catch(() => undefined);
    }
  });

  test('options a shard cannot run with are refused with the reason', async () => {
    const restConfig = cluster.authority.restConfig;
    assert.throws(
      () => new Manager({ restConfig, sharding: { ring: 'bench' }, leaderElection: true, leaderElectionID: 'x' }),
      (e: unknown) => e instanceof ManagerError && /sharding and leaderElection cannot both be on/.test(e.message),
    );
    assert.throws(
      () => new Manager({ restConfig, sharding: { ring: 'Bench_Ring' } }),
      /sharding\.ring "Bench_Ring" cannot name a ring: it is not a DNS-1123 subdomain/,
    );
    for (const [name, why] of [
      ['Shard_A', /"Shard_A" cannot name a shard: it is not a DNS-1123 label/],
      ['s'.repeat(64), /cannot name a shard: it is 64 characters long, and a label value holds at most 63/],
    ] as const) {
      const mgr = new Manager({
        restConfig,
        handleSignals: false,
        metrics: { bindAddress: '0' },
        sharding: { ring: 'bench', shardName: name, leaseNamespace: 'default' },
      });
      await assert.rejects(mgr.start(), why);
    }
    // the default name is POD_NAME's
    const saved = process.env.POD_NAME;
    process.env.POD_NAME = 'Not.A.Label';
    try {
      const mgr = new Manager({
        restConfig,
        handleSignals: false,
        metrics: { bindAddress: '0' },
        sharding: { ring: 'bench', leaseNamespace: 'default' },
      });
      await assert.rejects(mgr.start(), /"Not\.A\.Label" \(POD_NAME\) cannot name a shard/);
    } finally {
      if (saved === undefined) delete process.env.POD_NAME;
      else process.env.POD_NAME = saved;
    }
  });
});
