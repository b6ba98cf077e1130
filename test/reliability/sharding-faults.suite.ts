/**
 * Sharding under faults (run on the authority by sharding-faults.test.ts, on a real kube-apiserver by
 * test/real-api/sharding.test.ts): the sharder (ctrlmetrics/sharding) in this process, three shards
 * in their own processes (test/reliability/fixtures/shard-process.ts; Lease 4 s, renew deadline 3 s, retry 1 s), a
 * ring of ConfigMaps. A referee reads every reconcile's start and end from the shards' output (epoch times with
 * sub-millisecond precision, so lines of different processes order) and checks that no object is ever reconciled by
 * two shards at once, across:
 *
 * - creating N objects (3,000 on the authority): all assigned within 10 s of the last create, each shard holding
 *   0.7–1.3 × a third (0.5–1.5 for a few hundred);
 * - SIGTERM of a shard: its Lease released, its objects reconciled by the others within 5 s; then it joins again
 *   (2 → 3 shards): at most 45 % of the objects move, all to it, each through a drain, no drain label left;
 * - SIGKILL of a shard: every object of it relabelled within 2 × lease + retry + 2 s, reconciled within 15 s;
 * - SIGSTOP of a shard past twice its lease: after SIGCONT it starts no reconcile and exits non-zero;
 * - the sharder down: creates still succeed (the webhook's failurePolicy Ignore), unassigned; the sharder back, they
 *   are assigned within one sync period + 5 s.
 *
 * After every step each running shard's Lease is named after it, held by it and labelled with the ring.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Manager, shardingLabels } from '../../packages/ctrlmetrics/src/manager/index.js';
import { Sharder } from '../../packages/ctrlmetrics/src/sharding/sharder.js';
import { controllerRingCrd } from '../../packages/ctrlmetrics/src/sharding/controllerring.js';
import type { KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';
import type { RestConfig } from '../../packages/ctrlmetrics/src/kube/config.js';
import { ProcessGroup, ROOT, within, type Proc } from '../helpers/process.js';
import { registry } from '../../packages/ctrlmetrics/src/metrics/index.js';

/** The API server the shards and the sharder share, and where the sharder's webhook server listens. */
export interface ShardingTarget {
  admin: KubeClient;
  restConfig: RestConfig;
  /** The webhook server's address (`host:port`), its certificate directory, and the CA the API server trusts. */
  webhook: { bindAddress: string; certDir: string; caPem: string };
  /** Installs a CRD and waits until it is served. */
  installCrd(crd: Record<string, unknown>): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Registers the sharding fault tests in the calling file: `objects` ConfigMaps in `namespace`, a ring named `ring`.
 */
export function shardingFaultsTest(
  start: () => Promise<ShardingTarget>,
  o: { objects: number; namespace: string; ring: string; skip?: string | false },
): void {
  const N = o.objects;
  const NS = o.namespace;
  const RING = o.ring;
  const LEASE = { leaseDurationMs: 4_000, renewDeadlineMs: 3_000, retryPeriodMs: 1_000 };
  const labels = shardingLabels(RING);

  let cluster: ShardingTarget;
  const procs = new ProcessGroup();
  let stopSharder: (() => Promise<void>) | undefined;

  /** Reconcile intervals per object, from every shard's output; a process that died closes its open ones. */
  class Referee {
    readonly intervals = new Map<string, Array<{ shard: string; start: number; end: number }>>();
    private readonly open = new Map<string, Map<string, number>>();

    watch(shard: string, p: Proc): void {
      let rest = '';
      const open = new Map<string, number>();
      this.open.set(shard + p.pid, open);
      p.child.stdout!.on('data', (d: Buffer) => {
        const lines = (rest + d.toString()).split('\n');
        rest = lines.pop()!;
        for (const line of lines) {
          const m = /^(ENTER|EXIT) (\S+) ([\d.]+)$/.exec(line);
          if (!m) continue;
          if (m[1] === 'ENTER') open.set(m[2], Number(m[3]));
          else this.close(shard, m[2], open.get(m[2]) ?? Number(m[3]), Number(m[3]), open);
        }
      });
    }

    /** Ends the intervals a process left open when it died at `at`. */
    died(shard: string, pid: number, at: number): void {
      const open = this.open.get(shard + pid);
      for (const [key, start] of open ?? []) this.close(shard, key, start, at, open!);
    }

    openFor(shard: string, pid: number): number {
      return this.open.get(shard + pid)?.size ?? 0;
    }

    private close(shard: string, key: string, start: number, end: number, open: Map<string, number>): void {
      open.delete(key);
      const list = this.intervals.get(key) ?? [];
      list.push({ shard, start, end });
      this.intervals.set(key, list);
    }

    reconciledBy(shard: string, key: string, since = 0): boolean {
      return (this.intervals.get(key) ?? []).some((i) => i.shard === shard && i.start >= since);
    }

    /** Objects reconciled by two shards at once. */
    overlaps(): string[] {
      const out: string[] = [];
      for (const [key, list] of this.intervals) {
        const sorted = [...list].sort((a, b) => a.start - b.start);
        for (let i = 1; i < sorted.length; i++)
          if (sorted[i].start < sorted[i - 1].end && sorted[i].shard !== sorted[i - 1].shard)
            out.push(
              `${key}: ${sorted[i - 1].shard} until ${sorted[i - 1].end}, ${sorted[i].shard} from ${sorted[i].start}`,
            );
      }
      return out;
    }
  }
  const referee = new Referee();
  const shards = new Map<string, Proc>();
  const wall = () => performance.timeOrigin + performance.now();
  /** A counter of the ring's ConfigMaps, as the sharder in this process exposes it. */
  const counter = async (family: string) => {
    const text = await (await registry.collect()).text('text');
    const m = new RegExp(`^${family}\\{controllerring="${RING}",group="",resource="configmaps"\\} (\\d+)$`, 'm').exec(
      text,
    );
    return m ? Number(m[1]) : 0;
  };

  async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms: number): Promise<T> {
    const end = performance.now() + ms;
    for (;;) {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
      if (performance.now() > end) assert.fail(`timed out after ${ms} ms waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  async function startShard(name: string): Promise<Proc> {
    const p = procs.start(
      name,
      process.execPath,
      ['--conditions=ctrlmetrics-source', '--import', 'tsx', `${ROOT}test/reliability/fixtures/shard-process.ts`],
      {
        env: {
          ...process.env,
          CTRLMETRICS_LOG_LEVEL: 'warn',
          FIXTURE_CONFIG: JSON.stringify({
            restConfig: cluster.restConfig,
            ring: RING,
            shardName: name,
            leaseNamespace: NS,
            namespace: NS,
            reconcileMs: 20,
            ...LEASE,
          }),
        },
      },
    );
    referee.watch(name, p);
    shards.set(name, p);
    await p.waitForOutput(/^READY$/m, 60_000);
    return p;
  }

  type Meta = { metadata: { name: string; labels?: Record<string, string> } };
  const objects = async () =>
    (await cluster.admin.get<{ items: Meta[] }>(`/api/v1/namespaces/${NS}/configmaps`)).items.filter((o) =>
      o.metadata.name.startsWith('obj-'),
    );
  const ownedBy = (items: Meta[], shard: string) =>
    items.filter((o) => o.metadata.labels?.[labels.shard] === shard).map((o) => o.metadata.name);

  /** Every running shard's Lease: named after it, held by it, labelled with the ring. */
  async function assertLeases(): Promise<void> {
    for (const [name, p] of shards) {
      if (!p.running()) continue;
      const l = await cluster.admin.get<Meta & { spec: { holderIdentity?: string } }>(
        `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/${name}`,
      );
      assert.equal(l.spec.holderIdentity, name, `the Lease ${name} is held by its shard`);
      assert.equal(l.metadata.labels?.[labels.ring], RING);
    }
  }

  const SYNC_PERIOD_MS = 10_000;
  /** The sharder, in this process (its metrics are this process's). */
  async function startSharder(): Promise<void> {
    const mgr = new Manager({
      // a sharder hands over thousands of objects at once: client-go's 20 requests/s would take minutes
      restConfig: { ...cluster.restConfig, qps: 1_000, burst: 1_000 },
      handleSignals: false,
      metrics: { bindAddress: '0' },
      webhook: { bindAddress: cluster.webhook.bindAddress, certDir: cluster.webhook.certDir },
    });
    new Sharder({
      webhook: { url: `https://${cluster.webhook.bindAddress}`, caBundle: cluster.webhook.caPem },
      syncPeriodMs: SYNC_PERIOD_MS,
    }).setupWithManager(mgr);
    const stop = new AbortController();
    const running = mgr.start(stop.signal);
    await Promise.race([mgr.ready(), running]);
    stopSharder = async () => {
      stop.abort();
      await running.catch(() => undefined);
    };
  }

  before(async () => {
    if (o.skip) return;
    cluster = await start();
    await cluster.installCrd(controllerRingCrd());
    await cluster.admin.create('/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: NS, labels: { [`${RING}-sharded`]: 'yes' } },
    });
    await startSharder();
    await cluster.admin.create('/apis/sharding.timebertt.dev/v1alpha1/controllerrings', {
      apiVersion: 'sharding.timebertt.dev/v1alpha1',
      kind: 'ControllerRing',
      metadata: { name: RING },
      spec: {
        resources: [{ group: '', resource: 'configmaps' }],
        namespaceSelector: { matchLabels: { [`${RING}-sharded`]: 'yes' } },
      },
    });
  });

  after(async () => {
    if (o.skip) return;
    for (const p of shards.values()) if (p.running()) process.kill(p.pid, 'SIGCONT');
    await procs.stopAll();
    await stopSharder?.();
    await cluster?.admin.delete(`/apis/sharding.timebertt.dev/v1alpha1/controllerrings/${RING}`).catch(() => undefined);
    await cluster?.stop();
  });

  describe('three shards and a sharder under faults', { timeout: 240_000, skip: o.skip }, () => {
    test(`${N} objects: all assigned within 10 s of the last create, each shard holding about a third`, async (t) => {
      await Promise.all(['shard-0', 'shard-1', 'shard-2'].map(startShard));
      await until(
        'the ring with 3 available shards',
        async () =>
          (
            await cluster.admin.get<{ status?: { availableShards?: number } }>(
              `/apis/sharding.timebertt.dev/v1alpha1/controllerrings/${RING}`,
            )
          ).status?.availableShards === 3 || undefined,
        20_000,
      );
      let next = 0;
      const creator = async () => {
        while (next < N) {
          const i = next++;
          await cluster.admin.create(`/api/v1/namespaces/${NS}/configmaps`, {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: `obj-${i}`, namespace: NS },
          });
        }
      };
      const t0 = performance.now();
      await Promise.all(Array.from({ length: 16 }, creator));
      const lastCreate = performance.now();
      const items = await until(
        'every object assigned',
        async () => {
          const all = await objects();
          return all.length === N && all.every((o) => o.metadata.labels?.[labels.shard]) ? all : undefined;
        },
        10_000,
      );
      t.diagnostic(
        `${N} created in ${(lastCreate - t0).toFixed(0)} ms; all assigned ${(performance.now() - lastCreate).toFixed(0)} ms after the last`,
      );
      // 0.7-1.3 x a third at 3,000 objects; a few hundred random names add their own spread to the ring's
      const [low, high] = N >= 3_000 ? [0.7, 1.3] : [0.5, 1.5];
      for (const s of ['shard-0', 'shard-1', 'shard-2']) {
        const n = ownedBy(items, s).length;
        assert.ok(n >= low * (N / 3) && n <= high * (N / 3), `${s} holds ${n} of ${N}`);
      }
      await until(
        'every object reconciled by its shard',
        () => items.every((o) => referee.reconciledBy(o.metadata.labels![labels.shard], o.metadata.name)) || undefined,
        60_000,
      );
      assert.deepEqual(referee.overlaps().slice(0, 5), []);
      await assertLeases();
    });

    test('SIGTERM: the Lease released, the objects reconciled by the others within 5 s; joining again, it takes under 45 % by drains', async (t) => {
      const leaving = ownedBy(await objects(), 'shard-2');
      const p = shards.get('shard-2')!;
      const t0 = wall();
      process.kill(p.pid, 'SIGTERM');
      assert.equal(await within(p.exited, 20_000, 'shard-2 to stop'), 0);
      const lease = await cluster.admin.get<{ spec: { holderIdentity?: string } }>(
        `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/shard-2`,
      );
      assert.equal(lease.spec.holderIdentity, '', 'released');
      await until(
        "the stopped shard's objects reconciled by the others",
        async () => {
          const all = await objects();
          const where = new Map(all.map((o) => [o.metadata.name, o.metadata.labels?.[labels.shard]]));
          return (
            leaving.every((n) => {
              const s = where.get(n);
              return s && s !== 'shard-2' && referee.reconciledBy(s, n, t0);
            }) || undefined
          );
        },
        10_000,
      );
      const handoverMs = wall() - t0;
      t.diagnostic(`${leaving.length} objects handed over in ${handoverMs.toFixed(0)} ms`);
      assert.ok(handoverMs <= 5_000, `handed over in ${handoverMs.toFixed(0)} ms`);

      // 2 -> 3 shards: the new one takes its share from the live ones, every primary object through a drain
      const everything = async () =>
        new Map(
          (await cluster.admin.get<{ items: Meta[] }>(`/api/v1/namespaces/${NS}/configmaps`)).items.map((o) => [
            o.metadata.name,
            o.metadata.labels?.[labels.shard],
          ]),
        );
      const before = await everything();
      const drainsBefore = await counter('controller_sharding_drains_total');
      const movesBefore = await counter('controller_sharding_movements_total');
      await startShard('shard-2');
      let last = '';
      const after = await until(
        'shard-2 holding its share, no drain label left, the shares holding still',
        async () => {
          const now = await everything();
          const all = await objects();
          const shape = JSON.stringify([...now]);
          const settled =
            ownedBy(all, 'shard-2').length > 0.5 * (N / 3) &&
            all.every((o) => !o.metadata.labels?.[labels.drain]) &&
            shape === last;
          last = shape;
          return settled ? now : undefined;
        },
        30_000,
      );
      const moved = [...after].filter(([name, shard]) => before.get(name) !== shard);
      t.diagnostic(`2 -> 3 shards: ${moved.length} of ${after.size} objects moved`);
      assert.ok(moved.length / after.size <= 0.45, `${moved.length} of ${after.size} moved`);
      for (const [name, shard] of moved) assert.equal(shard, 'shard-2', `${name} moved to ${shard}, not the new shard`);
      assert.equal(
        (await counter('controller_sharding_drains_total')) - drainsBefore,
        moved.length,
        'each through a drain',
      );
      assert.equal(await counter('controller_sharding_movements_total'), movesBefore, 'none moved without its drain');
      assert.deepEqual(referee.overlaps().slice(0, 5), []);
      await assertLeases();
    });

    test('SIGKILL: every object of the dead shard relabelled within 2 x lease + retry + 2 s and reconciled within 15 s', async (t) => {
      const dead = ownedBy(await objects(), 'shard-1');
      const p = shards.get('shard-1')!;
      process.kill(p.pid, 'SIGKILL');
      const killedAt = wall();
      await within(p.exited, 10_000, 'shard-1 to die');
      referee.died('shard-1', p.pid, killedAt);
      const bound = 2 * LEASE.leaseDurationMs + LEASE.retryPeriodMs + 2_000;
      await until(
        "the dead shard's objects relabelled",
        async () => {
          const all = await objects();
          const where = new Map(all.map((o) => [o.metadata.name, o.metadata.labels?.[labels.shard]]));
          return dead.every((n) => where.get(n) && where.get(n) !== 'shard-1') || undefined;
        },
        bound + 1_000,
      );
      const relabelledMs = wall() - killedAt;
      assert.ok(relabelledMs <= bound, `relabelled ${relabelledMs.toFixed(0)} ms after the kill (bound ${bound} ms)`);
      const where = new Map((await objects()).map((o) => [o.metadata.name, o.metadata.labels![labels.shard]]));
      await until(
        'every one reconciled by its new shard',
        () => dead.every((n) => referee.reconciledBy(where.get(n)!, n, killedAt)) || undefined,
        killedAt + 15_000 - wall(),
      );
      t.diagnostic(`${dead.length} objects relabelled ${relabelledMs.toFixed(0)} ms after the kill`);
      assert.deepEqual(referee.overlaps().slice(0, 5), []);
      await assertLeases();
    });

    test('SIGSTOP past twice the lease: its objects move; after SIGCONT it starts nothing and exits non-zero', async (t) => {
      const p = shards.get('shard-0')!;
      const frozen = ownedBy(await objects(), 'shard-0');
      assert.ok(frozen.length > 0);
      // frozen between reconciles, so that nothing of it is running while the others take over
      await until(
        'shard-0 with no reconcile running',
        () => referee.openFor('shard-0', p.pid) === 0 || undefined,
        10_000,
      );
      process.kill(p.pid, 'SIGSTOP');
      const stoppedAt = wall();
      let continuedAt = Infinity;
      try {
        await until(
          "the frozen shard's objects moved to the live one",
          async () => ownedBy(await objects(), 'shard-2').length === N || undefined,
          2 * LEASE.leaseDurationMs + LEASE.retryPeriodMs + 10_000,
        );
        t.diagnostic(`moved ${(wall() - stoppedAt).toFixed(0)} ms after SIGSTOP`);
      } finally {
        continuedAt = wall();
        process.kill(p.pid, 'SIGCONT');
      }
      const code = await within(p.exited, 20_000, 'the frozen shard to exit');
      assert.notEqual(code, 0, 'a shard that lost its Lease exits non-zero');
      assert.match(p.stderr() + p.stdout(), /shard lease lost/);
      const late = [...referee.intervals.values()]
        .flat()
        .filter((i) => i.shard === 'shard-0' && i.start >= continuedAt);
      assert.deepEqual(late, [], 'the frozen shard started a reconcile after it continued');
      assert.deepEqual(referee.overlaps().slice(0, 5), []);
      await assertLeases();
    });

    test('the sharder down: creates still succeed, unassigned; back, it assigns them within one sync period + 5 s', async (t) => {
      await stopSharder!();
      const names = Array.from({ length: 20 }, (_, i) => `late-${i}`);
      for (const name of names)
        await cluster.admin.create(`/api/v1/namespaces/${NS}/configmaps`, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name, namespace: NS },
        });
      const label = async (name: string) =>
        (await cluster.admin.get<Meta>(`/api/v1/namespaces/${NS}/configmaps/${name}`)).metadata.labels?.[labels.shard];
      for (const name of names)
        assert.equal(await label(name), undefined, `${name} created unassigned (failurePolicy Ignore)`);
      await startSharder();
      const back = wall();
      await until(
        'the objects created while the sharder was down assigned',
        async () =>
          (await Promise.all(names.map(label))).every((s) => s !== undefined && shards.get(s)?.running()) || undefined,
        SYNC_PERIOD_MS + 5_000,
      );
      t.diagnostic(`assigned ${(wall() - back).toFixed(0)} ms after the sharder came back`);
    });
  });
}
