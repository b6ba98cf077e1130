/**
 * The sharder (src/sharding) and two shards, all in this process, on the embedded authority: the sharder writes the
 * ring's MutatingWebhookConfiguration and status, the authority calls its webhook for every new ConfigMap of the
 * ring's namespaces, each object is labelled for one live shard and reconciled by that shard alone; when a shard
 * stops (its Lease released) its objects move to the other and are reconciled there; when one joins, objects are
 * drained from the live shard and handed over; a shard's Lease carries its state label.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Manager, shardingLabels } from '../../packages/ctrlmetrics/src/manager/index.js';
import { Controller } from '../../packages/ctrlmetrics/src/controller/index.js';
import { Sharder } from '../../packages/ctrlmetrics/src/sharding/sharder.js';
import { controllerRingCrd } from '../../packages/ctrlmetrics/src/sharding/controllerring.js';
import { registry } from '../../packages/ctrlmetrics/src/metrics/index.js';
import { Informer } from '../../packages/ctrlmetrics/src/kube/informer.js';
import { installWebhooks, type InstalledWebhooks } from '../../packages/envtest/src/index.js';
import { installCrd, startTestCluster, type TestCluster } from '../helpers/cluster.js';

const NS = 'ring-objects';
const labels = shardingLabels('bench');
const timing = { leaseDurationMs: 3_000, renewDeadlineMs: 1_500, retryPeriodMs: 500 };

let cluster: TestCluster;
let installed: InstalledWebhooks;
const stops: Array<() => Promise<void>> = [];

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 15_000): Promise<T> {
  const end = performance.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (performance.now() > end) assert.fail(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Who reconciles what: every reconcile's start and end per object, and the most at once per object. */
class Referee {
  readonly open = new Map<string, number>();
  maxAtOnce = 0;
  readonly byShard = new Map<string, Set<string>>();
  enter(key: string, shard: string): void {
    const n = (this.open.get(key) ?? 0) + 1;
    this.open.set(key, n);
    this.maxAtOnce = Math.max(this.maxAtOnce, n);
    if (!this.byShard.has(shard)) this.byShard.set(shard, new Set());
    this.byShard.get(shard)!.add(key);
  }
  exit(key: string): void {
    this.open.set(key, this.open.get(key)! - 1);
  }
}
const referee = new Referee();
const shards = new Map<string, () => Promise<void>>();

async function run(mgr: Manager): Promise<() => Promise<void>> {
  const stop = new AbortController();
  const running = mgr.start(stop.signal);
  await Promise.race([mgr.ready(), running]);
  const halt = async () => {
    stop.abort();
    await running.catch(() => undefined);
  };
  stops.push(halt);
  return halt;
}

function shard(name: string): Manager {
  const mgr = new Manager({
    restConfig: cluster.authority.restConfig,
    handleSignals: false,
    metrics: { bindAddress: '0' },
    sharding: { ring: 'bench', shardName: name, leaseNamespace: 'default' },
    ...timing,
  });
  mgr.add(
    new Controller({
      name: `configmaps-${name}`,
      maxConcurrentReconciles: 4,
      watches: [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS }],
      reconciler: async (req) => {
        referee.enter(req.name, name);
        await new Promise((r) => setTimeout(r, 5));
        referee.exit(req.name);
      },
    }),
  );
  return mgr;
}

type Obj = { metadata: { name: string; labels?: Record<string, string> } };
const list = async () =>
  (await cluster.admin.get<{ items: Obj[] }>(`/api/v1/namespaces/${NS}/configmaps`)).items.filter((o) =>
    o.metadata.name.startsWith('obj-'),
  );
const byShard = (items: Obj[]) => {
  const out = new Map<string, string[]>();
  for (const o of items) {
    const s = o.metadata.labels?.[labels.shard] ?? '';
    out.set(s, [...(out.get(s) ?? []), o.metadata.name]);
  }
  return out;
};

before(async () => {
  cluster = await startTestCluster();
  await installCrd(cluster.admin, controllerRingCrd());
  await cluster.admin.create('/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: NS, labels: { sharded: 'yes' } },
  });
  installed = await installWebhooks(cluster.authority, { manifests: [] });
  const mgr = new Manager({
    restConfig: cluster.authority.restConfig,
    handleSignals: false,
    metrics: { bindAddress: '0' },
    webhook: { bindAddress: installed.bindAddress, certDir: installed.certDir },
  });
  new Sharder({
    webhook: { url: `https://${installed.bindAddress}`, caBundle: installed.caPem },
    syncPeriodMs: 5_000,
  }).setupWithManager(mgr);
  await run(mgr);
  await cluster.admin.create('/apis/sharding.timebertt.dev/v1alpha1/controllerrings', {
    apiVersion: 'sharding.timebertt.dev/v1alpha1',
    kind: 'ControllerRing',
    metadata: { name: 'bench' },
    spec: {
      resources: [{ group: '', resource: 'configmaps' }],
      namespaceSelector: { matchLabels: { sharded: 'yes' } },
    },
  });
});

after(async () => {
  for (const s of stops.reverse()) await s();
  await installed?.uninstall();
  await cluster?.stop();
});

describe('the sharder with two shards, then one, then two', { timeout: 120_000 }, () => {
  test('every new object is labelled for a live shard and reconciled by it alone', async () => {
    shards.set('shard-a', await run(shard('shard-a')));
    shards.set('shard-b', await run(shard('shard-b')));
    const ring = await until('the ring ready with 2 shards', async () => {
      const r = await cluster.admin.get<{ status?: { availableShards?: number; shards?: number } }>(
        '/apis/sharding.timebertt.dev/v1alpha1/controllerrings/bench',
      );
      return r.status?.availableShards === 2 ? r : undefined;
    });
    assert.equal(ring.status?.shards, 2);
    const mwc = await cluster.admin.get<{ webhooks: Array<Record<string, any>> }>(
      '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/controllerring-bench',
    );
    assert.equal(mwc.webhooks[0].failurePolicy, 'Ignore');
    assert.equal(mwc.webhooks[0].timeoutSeconds, 5);
    assert.deepEqual(mwc.webhooks[0].objectSelector, {
      matchExpressions: [{ key: labels.shard, operator: 'DoesNotExist' }],
    });

    for (let i = 0; i < 60; i++)
      await cluster.admin.create(`/api/v1/namespaces/${NS}/configmaps`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `obj-${i}`, namespace: NS },
      });
    const assigned = byShard(await list());
    assert.deepEqual([...assigned.keys()].sort(), ['shard-a', 'shard-b'], 'labelled at creation, by the webhook');
    for (const [s, names] of assigned) assert.ok(names.length >= 15, `${s} holds ${names.length} of 60`);
    await until(
      'every object reconciled',
      () => [...assigned].every(([s, names]) => names.every((n) => referee.byShard.get(s)?.has(n))) || undefined,
    );
    for (const [s, names] of assigned) {
      const other = s === 'shard-a' ? 'shard-b' : 'shard-a';
      for (const n of names) assert.ok(!referee.byShard.get(other)?.has(n), `${n} of ${s} reconciled by ${other}`);
    }
    assert.equal(referee.maxAtOnce, 1);
    const lease = await cluster.admin.get<Obj>('/apis/coordination.k8s.io/v1/namespaces/default/leases/shard-a');
    await until('the state label on the Lease', async () => {
      const l = await cluster.admin.get<Obj>('/apis/coordination.k8s.io/v1/namespaces/default/leases/shard-a');
      return l.metadata.labels?.[labels.state] === 'ready' || undefined;
    });
    assert.equal(lease.metadata.labels?.[labels.ring], 'bench');
    // every ConfigMap of the namespace labelled (kube-root-ca.crt by the rebalancer's pass); each create assigned once
    const all = (await cluster.admin.get<{ items: Obj[] }>(`/api/v1/namespaces/${NS}/configmaps`)).items;
    assert.ok(all.every((o) => o.metadata.labels?.[labels.shard]));
    // each shard's cache holds exactly its share: the objects labelled for it
    const share = (name: string) => all.filter((o) => o.metadata.labels?.[labels.shard] === name).length;
    await until("the shards' cached objects reported", async () => {
      const t = await (await registry.collect()).text('text');
      return (
        ['shard-a', 'shard-b'].every((name) =>
          new RegExp(
            `^ctrlmetrics_sharding_cached_objects\\{controllerring="bench",group="",resource="configmaps",shard="${name}"\\} ${share(name)}$`,
            'm',
          ).test(t),
        ) || undefined
      );
    });
    assert.equal(share('shard-a') + share('shard-b'), all.length);
    const text = await (await registry.collect()).text('text');
    assert.match(
      text,
      new RegExp(
        '^controller_sharding_assignments_total\\{controllerring="bench",group="",resource="configmaps"\\} 60$',
        'm',
      ),
    );
  });

  test('a shard that stops releases its Lease: its objects move to the other and are reconciled there', async () => {
    const before = byShard(await list());
    const leaving = before.get('shard-b')!;
    const t0 = performance.now();
    await shards.get('shard-b')!();
    await until('every object of the stopped shard relabelled', async () => {
      const now = byShard(await list());
      return now.get('shard-a')?.length === 60 || undefined;
    });
    await until(
      'every moved object reconciled by the shard that has it now',
      () => leaving.every((n) => referee.byShard.get('shard-a')?.has(n)) || undefined,
    );
    const ms = performance.now() - t0;
    assert.ok(ms < 5_000, `handed over in ${ms.toFixed(0)} ms`);
    assert.equal(referee.maxAtOnce, 1);
  });

  test('a shard that joins gets its share by drains: the live shard lets go of each object before it moves', async () => {
    const counter = async (name: string) => {
      const text = await (await registry.collect()).text('text');
      const m = new RegExp(`^${name}\\{controllerring="bench",group="",resource="configmaps"\\} (\\d+)$`, 'm').exec(
        text,
      );
      return m ? Number(m[1]) : 0;
    };
    const drainsBefore = await counter('controller_sharding_drains_total');
    const movesBefore = await counter('controller_sharding_movements_total');
    for (const s of referee.byShard.values()) s.clear();
    shards.set('shard-c', await run(shard('shard-c')));
    // handed over once no drain is pending and the shares hold still
    let last = '';
    const after = await until('the new shard holding its share, settled', async () => {
      const items = await list();
      const now = byShard(items);
      const shape = JSON.stringify([...now].sort());
      const settled =
        (now.get('shard-c')?.length ?? 0) > 0 &&
        items.every((o) => !o.metadata.labels?.[labels.drain]) &&
        shape === last;
      last = shape;
      if (!settled) await new Promise((r) => setTimeout(r, 400));
      return settled ? now : undefined;
    });
    const moved = after.get('shard-c')!;
    assert.ok(moved.length >= 15 && moved.length <= 45, `${moved.length} of 60 moved to the new shard`);
    await until(
      'no drain label left',
      async () => (await list()).every((o) => !o.metadata.labels?.[labels.drain]) || undefined,
    );
    await until(
      'each moved object reconciled by the new shard',
      () => moved.every((n) => referee.byShard.get('shard-c')?.has(n)) || undefined,
    );
    for (const n of moved)
      assert.ok(!referee.byShard.get('shard-a')?.has(n), `${n} reconciled by the old shard after it let go`);
    assert.equal(
      (await counter('controller_sharding_drains_total')) - drainsBefore,
      moved.length,
      'each went through a drain',
    );
    assert.equal(
      await counter('controller_sharding_movements_total'),
      movesBefore,
      'no main object moved without its drain',
    );
    assert.equal(referee.maxAtOnce, 1);
  });
});

describe('a ring with controlled kinds', { timeout: 120_000 }, () => {
  const OWNERS = 'ring-owners';
  const owners = shardingLabels('owners');
  type Labelled = { metadata: { name: string; resourceVersion: string; labels?: Record<string, string> } };

  /** A shard of ring "owners": ConfigMaps and the Secrets they control, one reconcile at a time, 100 ms each. */
  function ownerShard(name: string): Manager {
    const mgr = new Manager({
      restConfig: cluster.authority.restConfig,
      handleSignals: false,
      metrics: { bindAddress: '0' },
      sharding: { ring: 'owners', shardName: name, leaseNamespace: OWNERS },
      ...timing,
    });
    mgr.add(
      new Controller({
        name: `owners-${name}`,
        watches: [
          { apiVersion: 'v1', kind: 'ConfigMap', namespace: OWNERS },
          { apiVersion: 'v1', kind: 'Secret', namespace: OWNERS, enqueue: { ownerKind: 'ConfigMap' } },
        ],
        reconciler: () => new Promise((r) => setTimeout(r, 100)),
      }),
    );
    return mgr;
  }

  test("a child moves only after its owner's drain is acknowledged, never before (TKCS #639)", async () => {
    await cluster.admin.create('/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: OWNERS, labels: { owners: 'yes' } },
    });
    await cluster.admin.create('/apis/sharding.timebertt.dev/v1alpha1/controllerrings', {
      apiVersion: 'sharding.timebertt.dev/v1alpha1',
      kind: 'ControllerRing',
      metadata: { name: 'owners' },
      spec: {
        resources: [{ group: '', resource: 'configmaps', controlledResources: [{ group: '', resource: 'secrets' }] }],
        namespaceSelector: { matchLabels: { owners: 'yes' } },
      },
    });
    await run(ownerShard('first'));
    await until('the ring with its shard', async () => {
      const r = await cluster.admin.get<{ status?: { availableShards?: number } }>(
        '/apis/sharding.timebertt.dev/v1alpha1/controllerrings/owners',
      );
      return r.status?.availableShards === 1 || undefined;
    });
    for (let i = 0; i < 30; i++) {
      const owner = await cluster.admin.create<{ metadata: { uid: string } }>(
        `/api/v1/namespaces/${OWNERS}/configmaps`,
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `owner-${i}`, namespace: OWNERS },
        },
      );
      await cluster.admin.create(`/api/v1/namespaces/${OWNERS}/secrets`, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: `child-${i}`,
          namespace: OWNERS,
          ownerReferences: [
            { apiVersion: 'v1', kind: 'ConfigMap', name: `owner-${i}`, uid: owner.metadata.uid, controller: true },
          ],
        },
      });
    }
    const child = async (i: number) =>
      (await cluster.admin.get<Labelled>(`/api/v1/namespaces/${OWNERS}/secrets/child-${i}`)).metadata.labels?.[
        owners.shard
      ];
    for (let i = 0; i < 30; i++) assert.equal(await child(i), 'first', 'a child assigned with its owner');

    // every label change, with the write's resourceVersion (one sequence for every kind on this API server)
    const changes: Array<{ kind: string; name: string; shard?: string; rv: number }> = [];
    const informers = (['configmaps', 'secrets'] as const).map((resource) => {
      const inf = new Informer<Labelled>(cluster.admin, { path: `/api/v1/namespaces/${OWNERS}/${resource}` });
      inf.addHandler({
        onUpdate: (old, now) => {
          const shard = now.metadata.labels?.[owners.shard];
          if (old.metadata.labels?.[owners.shard] !== shard)
            changes.push({ kind: resource, name: now.metadata.name, shard, rv: Number(now.metadata.resourceVersion) });
        },
      });
      inf.start();
      return inf;
    });
    try {
      await until('the watches listing', () => informers.every((i) => i.synced) || undefined);
      // the first shard busy (each owner reconciled again, 100 ms apiece): its acknowledgements come late
      for (let i = 0; i < 30; i++)
        await cluster.admin.mergePatch(`/api/v1/namespaces/${OWNERS}/configmaps/owner-${i}`, { data: { busy: 'yes' } });
      await run(ownerShard('second'));
      await until(
        'every child with its owner, no drain pending',
        async () => {
          const cms = (await cluster.admin.get<{ items: Labelled[] }>(`/api/v1/namespaces/${OWNERS}/configmaps`)).items;
          const shardOf = new Map(cms.map((c) => [c.metadata.name, c.metadata.labels?.[owners.shard]]));
          if (cms.some((c) => c.metadata.labels?.[owners.drain])) return undefined;
          if (![...shardOf.values()].includes('second')) return undefined;
          for (let i = 0; i < 30; i++) if ((await child(i)) !== shardOf.get(`owner-${i}`)) return undefined;
          return true;
        },
        30_000,
      );
    } finally {
      await Promise.all(informers.map((i) => i.stop()));
    }
    const movedChildren = changes.filter((c) => c.kind === 'secrets' && c.shard === 'second');
    assert.ok(movedChildren.length > 0, 'some children moved to the new shard');
    for (const c of movedChildren) {
      const owner = c.name.replace('child-', 'owner-');
      // the owner's acknowledgement: its first write without the first shard's label
      const released = changes.find((x) => x.kind === 'configmaps' && x.name === owner && x.shard !== 'first');
      assert.ok(released, `${owner} left the first shard`);
      assert.ok(
        c.rv > released.rv,
        `${c.name} moved (rv ${c.rv}) before ${owner}'s drain was acknowledged (rv ${released.rv})`,
      );
    }
  });
});
