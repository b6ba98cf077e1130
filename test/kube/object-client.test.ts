// The object-based client, the REST mapper and the API error helpers against the embedded authority
// (the suite is test/kube/object-client.suite.ts; test/real-api/object-client.test.ts runs it on a real API server).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startAuthority } from '../../packages/envtest/src/index.js';
import { KubeApiError, KubeClient, ObjectClient } from '../../packages/ctrlmetrics/src/index.js';
import { FaultProxy } from '../helpers/fault-proxy.js';
import { objectClientSuite } from './object-client.suite.js';

objectClientSuite('ObjectClient and RESTMapper on the authority', async () => {
  const a = await startAuthority({ listen: '127.0.0.1:0' });
  const admin = new KubeClient({ ...a.restConfig, qps: 1000, burst: 1000 });
  return {
    admin,
    async stop() {
      admin.close();
      await a.stop();
    },
  };
});

// The pager's fallback needs a continue token that expires midway, which no server can be asked for: a proxy
// answers 410 Gone to every request carrying a token, as an API server does once it compacted past it.
test("listAll: a continue token that expires midway (410) is answered by one full list, as client-go's pager does", async () => {
  const a = await startAuthority({ listen: '127.0.0.1:0' });
  const proxy = new FaultProxy(a.url, a.caPem);
  await proxy.start();
  const client = new KubeClient({ ...a.restConfig, server: proxy.url, ca: proxy.caPem, qps: 1000, burst: 1000 });
  try {
    const objects = new ObjectClient(client);
    for (let i = 0; i < 5; i++)
      await objects.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `page-${i}`, namespace: 'default', labels: { paged: 'gone' } },
      });
    proxy.setFault({ kind: 'status', status: 410 }, 'continue=');
    const all = await objects.listAll(
      { apiVersion: 'v1', kind: 'ConfigMap' },
      { namespace: 'default', labelSelector: 'paged=gone', pageSize: 2 },
    );
    assert.deepEqual(
      all.map((o) => o.metadata?.name),
      ['page-0', 'page-1', 'page-2', 'page-3', 'page-4'],
    );
    assert.ok(all.every((o) => o.kind === 'ConfigMap' && o.apiVersion === 'v1'));
    const lists = proxy.requests.filter((r) => r.startsWith('GET /api/v1/namespaces/default/configmaps?'));
    assert.equal(lists.length, 3, lists.join('\n'));
    assert.match(lists[0], /limit=2/);
    assert.match(lists[1], /continue=/);
    assert.doesNotMatch(lists[2], /limit=|continue=/, 'the full list asks for no page');
    // a 410 on the first page is not a token that expired: it is the caller's
    proxy.setFault({ kind: 'status', status: 410 }, 'labelSelector=paged%3Dgone');
    await assert.rejects(
      objects.listAll(
        { apiVersion: 'v1', kind: 'ConfigMap' },
        { namespace: 'default', labelSelector: 'paged=gone', pageSize: 2 },
      ),
      (e: unknown) => e instanceof KubeApiError && e.status === 410,
    );
  } finally {
    client.close();
    await proxy.stop();
    await a.stop();
  }
});
