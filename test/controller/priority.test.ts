/**
 * A controller on its default priority queue, against the embedded authority: objects of the initial list wait
 * behind a real change (controller-runtime's LowPriority), a requeue keeps the priority the request came with
 * unless the result sets one, and `usePriorityQueue: false` gives the legacy queue (one `priority=""` depth series).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Controller } from '../../packages/ctrlmetrics/src/controller/controller.js';
import { InformerSet } from '../../packages/ctrlmetrics/src/controller/informers.js';
import { KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { scrapeRegistry } from './helpers/scrape.js';
import { eventually, value } from './helpers/exposition.js';

const NS = 'pq-order';
let cluster: TestCluster;
let client: KubeClient;
let informers: InformerSet;
const stop = new AbortController();
const controllers: Controller[] = [];

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const cm = (name: string, labels: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: NS, labels },
});

before(async () => {
  cluster = await startTestCluster();
  await cluster.admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  for (const name of ['old-1', 'old-2', 'old-3'])
    await cluster.admin.create(`/api/v1/namespaces/${NS}/configmaps`, cm(name, { t: 'order' }));
  client = new KubeClient(cluster.authority.restConfig);
  informers = new InformerSet(client);
});

after(async () => {
  stop.abort();
  for (const c of controllers) await c.stop(5_000);
  await informers?.stop();
  client?.close();
  await cluster?.stop();
});

test('objects of the initial list wait behind a change made meanwhile (LowPriority = -100)', async () => {
  const seen: string[] = [];
  const gate = deferred();
  const firstStarted = deferred();
  const c = new Controller({
    name: 'pq_initial',
    reconciler: async (req) => {
      seen.push(req.name);
      if (seen.length === 1) {
        firstStarted.resolve();
        await gate.promise;
      }
    },
    watches: [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, labelSelector: 't=order' }],
  });
  controllers.push(c);
  await c.start({ client, informers, signal: stop.signal });
  await firstStarted.promise;
  // two initial objects wait at -100; a change now comes in at 0
  await cluster.admin.create(`/api/v1/namespaces/${NS}/configmaps`, cm('new', { t: 'order' }));
  await eventually(() => c.queue.len() === 3, 'the new object queued', 10_000, 20);
  const fams = await scrapeRegistry();
  assert.equal(value(fams, 'workqueue_depth', { name: 'pq_initial', controller: 'pq_initial', priority: '-100' }), 2);
  assert.equal(value(fams, 'workqueue_depth', { name: 'pq_initial', controller: 'pq_initial', priority: '0' }), 1);
  gate.resolve();
  await eventually(() => seen.length === 4, 'all four reconciled', 10_000, 20);
  assert.equal(seen[1], 'new', `the change first, then the rest of the initial list: ${seen.join(', ')}`);
  assert.deepEqual(seen.slice(2).sort(), ['old-1', 'old-2', 'old-3'].filter((n) => n !== seen[0]).sort());
});

test('a requeue keeps the priority the request was handed out with, unless the result sets one', async () => {
  let calls = 0;
  let gate: ReturnType<typeof deferred> | undefined;
  let blocked: ReturnType<typeof deferred> | undefined;
  const c = new Controller({
    name: 'pq_requeue',
    reconciler: async (req) => {
      if (req.name === 'old-2' && gate) {
        blocked!.resolve();
        await gate.promise;
        return undefined;
      }
      if (req.name !== 'old-1') return undefined;
      calls++;
      // 1st (from the initial list, -100): back in 1 h at the same priority; 2nd: back in 1 h at priority 7
      if (calls === 1) return { requeueAfterMs: 3_600_000 };
      if (calls === 2) return { requeueAfterMs: 3_600_000, priority: 7 };
      return undefined;
    },
    watches: [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, labelSelector: 't=order' }],
  });
  controllers.push(c);
  await c.start({ client, informers, signal: stop.signal });
  const requeues = async () =>
    value(await scrapeRegistry(), 'controller_runtime_reconcile_total', {
      controller: 'pq_requeue',
      result: 'requeue_after',
    });
  const depth = async (priority: string) =>
    value(await scrapeRegistry(), 'workqueue_depth', { name: 'pq_requeue', controller: 'pq_requeue', priority });
  /** Holds the only worker on old-2, makes the delayed old-1 ready (a plain add keeps the higher priority), and reads the depth. */
  const readyPriorityOfOld1 = async (): Promise<Record<string, number | undefined>> => {
    gate = deferred();
    blocked = deferred();
    c.queue.add(`${NS}/old-2`, 1000);
    await blocked.promise;
    c.queue.add(`${NS}/old-1`, -1000);
    const d = { '-100': await depth('-100'), '7': await depth('7'), '-1000': await depth('-1000') };
    const g = gate;
    gate = undefined;
    g.resolve();
    return d;
  };
  await eventually(async () => (await requeues()) === 1, 'the first requeue', 10_000, 20);
  assert.deepEqual(
    await readyPriorityOfOld1(),
    { '-100': 1, '7': undefined, '-1000': undefined },
    'kept the priority it was handed out with (-100)',
  );
  await eventually(async () => (await requeues()) === 2, 'the second requeue', 10_000, 20);
  assert.deepEqual(await readyPriorityOfOld1(), { '-100': 0, '7': 1, '-1000': undefined }, "the result's priority");
  await eventually(() => calls === 3, 'the third reconcile', 10_000, 20);
});

test('usePriorityQueue: false gives the legacy client-go queue: one priority="" depth series', async () => {
  const done = deferred();
  let n = 0;
  const c = new Controller({
    name: 'pq_legacy',
    usePriorityQueue: false,
    reconciler: async () => {
      if (++n === 3) done.resolve();
    },
    watches: [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, labelSelector: 't=order' }],
  });
  controllers.push(c);
  await c.start({ client, informers, signal: stop.signal });
  await done.promise;
  const depth = (await scrapeRegistry()).get('workqueue_depth')!.samples.filter((s) => s.labels.name === 'pq_legacy');
  assert.deepEqual(
    depth.map((s) => s.labels.priority),
    [''],
  );
});
