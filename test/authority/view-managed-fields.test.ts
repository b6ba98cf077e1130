/**
 * Field ownership of writes through a view, as kube-apiserver records it: in the version the request used
 * (events.k8s.io/v1 for an Event written there, autoscaling/v1 for an HPA written there) and in that version's
 * fields, whichever version the object is then read in; a later write in the other version takes from each manager
 * the fields it changed as that manager's version shows them.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startAuthority, type Authority } from '../../packages/envtest/src/index.js';
import { KubeClient } from '../../packages/ctrlmetrics/src/index.js';

interface Entry {
  manager: string;
  operation: string;
  apiVersion: string;
  fieldsV1: Record<string, unknown>;
}
type WithFields = { metadata: { managedFields?: Entry[] } };

let authority: Authority;
let client: KubeClient;
before(async () => {
  authority = await startAuthority({ listen: '127.0.0.1:0' });
  client = new KubeClient({ ...authority.restConfig, qps: 1000, burst: 1000 });
});
after(async () => {
  client?.close();
  await authority?.stop();
});

const entries = (o: WithFields) =>
  (o.metadata.managedFields ?? []).map((e) => [e.manager, e.operation, e.apiVersion, Object.keys(e.fieldsV1).sort()]);

test('an Event written through events.k8s.io/v1 is owned in that version, read in either; a core/v1 write takes the fields it changed', async () => {
  const created = await client.create<WithFields & { metadata: { name: string } }>(
    '/apis/events.k8s.io/v1/namespaces/default/events',
    {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'owned' },
      eventTime: '2026-12-07T08:00:00.000000Z',
      reportingController: 'recorder',
      reportingInstance: 'recorder-host',
      action: 'Reconcile',
      reason: 'Synced',
      regarding: { apiVersion: 'v1', kind: 'ConfigMap', name: 'subject', namespace: 'default' },
      note: 'first note',
      type: 'Normal',
    },
    { query: { fieldManager: 'recorder' } },
  );
  const expected = [
    [
      'recorder',
      'Update',
      'events.k8s.io/v1',
      [
        'f:action',
        'f:eventTime',
        'f:note',
        'f:reason',
        'f:regarding',
        'f:reportingController',
        'f:reportingInstance',
        'f:type',
      ],
    ],
  ];
  assert.deepEqual(entries(created), expected);
  // the core/v1 view of the same object names the same entry
  assert.deepEqual(entries(await client.get<WithFields>('/api/v1/namespaces/default/events/owned')), expected);
  // a core/v1 write of the message (the view's note) by another manager
  const patched = await client.mergePatch<WithFields>(
    '/api/v1/namespaces/default/events/owned',
    { message: 'second note' },
    { query: { fieldManager: 'editor' } },
  );
  const byManager = new Map((patched.metadata.managedFields ?? []).map((e) => [e.manager, e]));
  assert.deepEqual(
    [byManager.get('editor')?.apiVersion, Object.keys(byManager.get('editor')!.fieldsV1)],
    ['v1', ['f:message']],
  );
  const recorder = byManager.get('recorder')!;
  assert.equal(recorder.apiVersion, 'events.k8s.io/v1');
  assert.equal('f:note' in recorder.fieldsV1, false, "the changed note is no longer the recorder's");
  assert.ok(
    'f:reason' in recorder.fieldsV1 && 'f:regarding' in recorder.fieldsV1,
    "what the write did not change stays the recorder's",
  );
});

test("an HPA written through autoscaling/v1 is owned in v1's fields, read in v2 too", async () => {
  const created = await client.create<WithFields>(
    '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers',
    {
      apiVersion: 'autoscaling/v1',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'owned' },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        minReplicas: 1,
        maxReplicas: 3,
        targetCPUUtilizationPercentage: 70,
      },
    },
    { query: { fieldManager: 'scaler' } },
  );
  const [entry] = created.metadata.managedFields ?? [];
  assert.deepEqual([entry?.manager, entry?.apiVersion], ['scaler', 'autoscaling/v1']);
  assert.deepEqual(Object.keys(entry.fieldsV1['f:spec'] ?? {}).sort(), [
    'f:maxReplicas',
    'f:minReplicas',
    'f:scaleTargetRef',
    'f:targetCPUUtilizationPercentage',
  ]);
  const v2 = await client.get<WithFields>('/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/owned');
  assert.deepEqual(
    v2.metadata.managedFields?.map((e) => [e.manager, e.apiVersion]),
    [['scaler', 'autoscaling/v1']],
  );
});
