/**
 * A cache transform against the authority: objects written by server-side apply carry managedFields on the API
 * server, but an informer with `transforms.stripManagedFields` caches them (listed and watched) and hands them to
 * its handlers without; an update of an object read from that cache leaves the server's managedFields as they were.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../packages/ctrlmetrics/src/index.js';
import { Informer, transforms } from '../../packages/ctrlmetrics/src/exports/cache.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { eventually } from '../helpers/process.js';

const CMS = '/api/v1/namespaces/default/configmaps';
let cluster: TestCluster;

before(async () => {
  cluster = await startTestCluster();
});
after(() => cluster?.stop());

const apply = (name: string, data: Record<string, string>) =>
  cluster.admin.request<KubeObject>('PATCH', `${CMS}/${name}`, {
    query: { fieldManager: 'tester' },
    contentType: 'application/apply-patch+yaml',
    body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data },
  });

test('stripManagedFields: listed and watched objects are cached and handed over without managedFields', async () => {
  const applied = await apply('listed', { a: '1' });
  assert.ok(applied.metadata?.managedFields?.length, 'the API server keeps managedFields');
  const seen: KubeObject[] = [];
  const inf = new Informer<KubeObject>(cluster.admin, { path: CMS, transform: transforms.stripManagedFields });
  inf.addHandler({ onAdd: (o) => void seen.push(o), onUpdate: (_old, o) => void seen.push(o) });
  inf.start();
  try {
    assert.ok(await inf.waitForSync(10_000));
    assert.equal(inf.get('default/listed')?.metadata?.managedFields, undefined, 'listed');
    await apply('watched', { b: '2' });
    const watched = await eventually(() => inf.get('default/watched'), 'the watched ConfigMap', 10_000, 20);
    assert.equal(watched.metadata?.managedFields, undefined, 'watched');
    assert.ok(
      seen.length >= 2 && seen.every((o) => o.metadata?.managedFields === undefined),
      'the handlers get the transformed objects',
    );

    // an update of the cached object (no managedFields in it) leaves the server's entries in place
    const cached = structuredClone(inf.get('default/listed')!);
    const updated = await cluster.admin.replace<KubeObject>(`${CMS}/listed`, {
      ...cached,
      data: { ...(cached.data as Record<string, string>), extra: 'x' },
    });
    const entries = (updated.metadata?.managedFields ?? []) as Array<{ manager: string; operation: string }>;
    assert.ok(
      entries.some((f) => f.manager === 'tester' && f.operation === 'Apply'),
      `the apply entry stays: ${JSON.stringify(entries)}`,
    );
  } finally {
    await inf.stop();
  }
});
