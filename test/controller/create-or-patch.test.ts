/**
 * createOrPatch (controller-runtime's CreateOrPatch) against the embedded authority: created, unchanged, updated
 * through a merge patch that keeps a concurrent writer's change (where createOrUpdate's update is refused with 409),
 * and the status through its subresource (updatedStatusOnly, updatedStatus); and the merge patch it sends (RFC 7386).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  createOrPatch,
  createOrUpdate,
  KubeClient,
  ObjectClient,
  isConflict,
} from '../../packages/ctrlmetrics/src/index.js';
import { RESTMapper } from '../../packages/ctrlmetrics/src/exports/client.js';
import { mergePatch } from '../../packages/ctrlmetrics/src/controller/controllerutil.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';

let cluster: TestCluster;
let objects: ObjectClient;
before(async () => {
  cluster = await startTestCluster();
  const client = new KubeClient(cluster.authority.restConfig);
  objects = new ObjectClient(client, new RESTMapper(client));
  await cluster.admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'cop' } });
});
after(async () => {
  await cluster?.stop();
});

interface ConfigMap {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; resourceVersion?: string };
  data?: Record<string, string>;
}

test('a ConfigMap: created, unchanged, then updated by a merge patch that keeps what another writer changed meanwhile', async () => {
  const cm = (): ConfigMap => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'settings', namespace: 'cop' },
  });
  const created = await createOrPatch(objects, cm(), (o) => void (o.data = { ...o.data, mine: '1' }));
  assert.equal(created.operation, 'created');
  assert.equal(
    (await createOrPatch(objects, cm(), (o) => void (o.data = { ...o.data, mine: '1' }))).operation,
    'unchanged',
  );
  // another writer changes another key while mutate runs: the patch names only what mutate changed
  const path = '/api/v1/namespaces/cop/configmaps/settings';
  const concurrent = async (o: ConfigMap) => {
    await cluster.admin.mergePatch(path, { data: { theirs: 'x' } });
    o.data = { ...o.data, mine: '2' };
  };
  const patched = await createOrPatch(objects, cm(), concurrent);
  assert.equal(patched.operation, 'updated');
  assert.deepEqual((await cluster.admin.get<ConfigMap>(path)).data, { mine: '2', theirs: 'x' });
  // the same with createOrUpdate: its update carries the stale resourceVersion, and is refused
  await assert.rejects(
    createOrUpdate(objects, cm(), async (o) => {
      await cluster.admin.mergePatch(path, { data: { theirs: 'y' } });
      o.data = { ...o.data, mine: '3' };
    }),
    (err: unknown) => isConflict(err),
  );
});

test('a Deployment: the status goes through its subresource — updatedStatusOnly, updatedStatus, updated', async () => {
  const deployment = () =>
    ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'cop' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] },
        },
      },
    }) as {
      apiVersion: string;
      kind: string;
      metadata: { name: string; namespace: string };
      spec: { replicas: number };
      status?: { replicas?: number; readyReplicas?: number };
    };
  assert.equal((await createOrPatch(objects, deployment(), () => undefined)).operation, 'created');
  const statusOnly = await createOrPatch(
    objects,
    deployment(),
    (d) => void (d.status = { ...d.status, replicas: 1, readyReplicas: 1 }),
  );
  assert.equal(statusOnly.operation, 'updatedStatusOnly');
  assert.equal(statusOnly.object.status?.readyReplicas, 1);
  const both = await createOrPatch(objects, deployment(), (d) => {
    d.spec.replicas = 2;
    d.status = { ...d.status, replicas: 2 };
  });
  assert.equal(both.operation, 'updatedStatus');
  const read = await cluster.admin.get<{
    spec: { replicas: number };
    status: { replicas: number; readyReplicas: number };
  }>('/apis/apps/v1/namespaces/cop/deployments/web');
  assert.deepEqual([read.spec.replicas, read.status.replicas, read.status.readyReplicas], [2, 2, 1]);
  assert.equal((await createOrPatch(objects, deployment(), (d) => void (d.spec.replicas = 3))).operation, 'updated');
  assert.equal((await createOrPatch(objects, deployment(), (d) => void (d.spec.replicas = 3))).operation, 'unchanged');
});

test('the merge patch (RFC 7386): changed and added fields, removed ones as null, nested objects, arrays whole', () => {
  assert.deepEqual(
    mergePatch(
      { a: 1, b: { c: 2, d: 3 }, e: [1, 2], f: 'gone', g: { h: 1 } },
      { a: 1, b: { c: 2, d: 4, x: true }, e: [1], g: { h: 1 }, i: null },
    ),
    { f: null, b: { d: 4, x: true }, e: [1], i: null },
  );
  assert.deepEqual(mergePatch({ a: { b: 1 } }, { a: 'scalar now' }), { a: 'scalar now' });
  assert.deepEqual(mergePatch({ a: 1 }, { a: 1 }), {});
});
