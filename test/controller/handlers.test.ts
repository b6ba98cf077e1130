/** Watch specs to API paths, and events to reconcile requests (the object itself, its owner, or a mapping). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  collectionPath,
  keyRequest,
  requestKey,
  requestsFor,
  resourceOf,
} from '../../packages/ctrlmetrics/src/controller/handlers.js';
import type { KubeObject } from '../../packages/ctrlmetrics/src/controller/types.js';

test('plural resource names and collection paths follow the API conventions', () => {
  assert.equal(resourceOf({ kind: 'ConfigMap' }), 'configmaps');
  assert.equal(resourceOf({ kind: 'Ingress' }), 'ingresses');
  assert.equal(resourceOf({ kind: 'NetworkPolicy' }), 'networkpolicies');
  assert.equal(resourceOf({ kind: 'Gateway' }), 'gateways', 'a vowel before y keeps the y');
  assert.equal(resourceOf({ kind: 'Endpoints', resource: 'endpoints' }), 'endpoints', 'an explicit resource wins');
  assert.equal(
    collectionPath({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a b' }),
    '/api/v1/namespaces/a%20b/configmaps',
  );
  assert.equal(collectionPath({ apiVersion: 'apps/v1', kind: 'Deployment' }), '/apis/apps/v1/deployments');
  assert.equal(
    collectionPath({ apiVersion: 'v1', kind: 'Namespace', clusterScoped: true, namespace: 'ignored' }),
    '/api/v1/namespaces',
  );
});

const owned = (refs: NonNullable<KubeObject['metadata']>['ownerReferences']): KubeObject => ({
  metadata: { name: 'child', namespace: 'ns', ownerReferences: refs },
});

test('events map to the object itself by default, and to the controlling owner of the right kind on request', () => {
  assert.deepEqual(requestsFor(undefined, { metadata: { name: 'x', namespace: 'ns' } }, 'add'), [
    { namespace: 'ns', name: 'x' },
  ]);
  assert.deepEqual(
    requestsFor('self', { metadata: { name: 'node-1' } }, 'delete'),
    [{ name: 'node-1' }],
    'cluster-scoped',
  );
  assert.deepEqual(requestsFor('self', { metadata: {} }, 'add'), [], 'no name, no request');

  const mode = { ownerKind: 'ConfigMap', ownerApiVersion: 'v1' };
  const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'parent', uid: 'u1' };
  assert.deepEqual(requestsFor(mode, owned([{ ...ref, controller: true }]), 'update'), [
    { namespace: 'ns', name: 'parent' },
  ]);
  assert.deepEqual(
    requestsFor(mode, owned([{ ...ref }]), 'update'),
    [],
    'an owner that is not the controller is ignored',
  );
  assert.deepEqual(
    requestsFor(mode, owned([{ ...ref, kind: 'Secret', controller: true }]), 'update'),
    [],
    'another kind',
  );
  assert.deepEqual(
    requestsFor(mode, owned([{ ...ref, apiVersion: 'example.com/v1', controller: true }]), 'update'),
    [],
    'another group',
  );
  assert.deepEqual(
    requestsFor(
      { ownerKind: 'Deployment', ownerApiVersion: 'apps/v1' },
      owned([{ apiVersion: 'apps/v2', kind: 'Deployment', name: 'd', uid: 'u', controller: true }]),
      'add',
    ),
    [{ namespace: 'ns', name: 'd' }],
    'only the group must match, not the version',
  );
  assert.deepEqual(requestsFor(mode, { metadata: { name: 'orphan', namespace: 'ns' } }, 'add'), []);

  const fan = (obj: KubeObject) => [{ namespace: 'a', name: `${obj.metadata!.name}-1` }, { name: 'cluster-thing' }];
  assert.deepEqual(requestsFor(fan, { metadata: { name: 'x' } }, 'add'), [
    { namespace: 'a', name: 'x-1' },
    { name: 'cluster-thing' },
  ]);
});

test('queue keys round-trip requests, namespaced or not', () => {
  for (const r of [
    { namespace: 'ns', name: 'n' },
    { name: 'cluster-wide' },
    { namespace: 'ns', name: 'with.dots-and-dashes' },
  ]) {
    assert.deepEqual(keyRequest(requestKey(r)), r);
  }
  assert.equal(requestKey({ namespace: 'ns', name: 'n' }), 'ns/n');
});
