/**
 * A watch stopped before its request was sent — stop() called at once, while the client still reads its
 * credentials, as when an informer that just synced is stopped — ends at once instead of running until the
 * server's timeout. Against the embedded authority.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';

let cluster: TestCluster;
let client: KubeClient;
before(async () => {
  cluster = await startTestCluster();
  client = new KubeClient(cluster.authority.restConfig);
});
after(async () => {
  client?.close();
  await cluster?.stop();
});

test('a watch stopped at once ends at once, not at its 300 s timeout', async () => {
  const events: unknown[] = [];
  const handle = client.watch('/api/v1/namespaces/default/configmaps', { timeoutSeconds: 300 }, (ev) =>
    events.push(ev),
  );
  handle.stop();
  const ended = await Promise.race([
    handle.done.then(() => 'ended'),
    new Promise((r) => setTimeout(r, 5_000, 'still running')).then((v) => v),
  ]);
  assert.equal(ended, 'ended');
  assert.deepEqual(events, []);
});

test('a watch stopped once it is open ends at once too', async () => {
  const events: string[] = [];
  const handle = client.watch<{ metadata: { name: string } }>(
    '/api/v1/namespaces/default/configmaps',
    { timeoutSeconds: 300 },
    (ev) => {
      if (ev.object?.metadata?.name === 'seen') events.push(ev.type);
    },
  );
  await client.create('/api/v1/namespaces/default/configmaps', {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'seen' },
  });
  for (let i = 0; i < 200 && events.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
  assert.deepEqual(events, ['ADDED']);
  handle.stop();
  const ended = await Promise.race([
    handle.done.then(() => 'ended'),
    new Promise((r) => setTimeout(r, 5_000, 'still running')).then((v) => v),
  ]);
  assert.equal(ended, 'ended');
});
