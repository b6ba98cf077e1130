// controller-runtime's controllerutil, meta conditions and predicates, in TypeScript: owner references
// (a second controller owner refused with controller-runtime's message), finalizers, status conditions whose
// lastTransitionTime moves only on a status change, update predicates, createOrUpdate against the real authority,
// and @kubernetes/client-node's model types fitting the helpers (checked by the compiler: tsconfig.check-tests).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { V1ConfigMap, V1Deployment } from '@kubernetes/client-node';
import { startAuthority, type Authority } from '../../packages/envtest/src/index.js';
import {
  KubeClient,
  ObjectClient,
  addFinalizer,
  containsFinalizer,
  createOrUpdate,
  findStatusCondition,
  isBeingDeleted,
  isStatusConditionTrue,
  predicates,
  removeFinalizer,
  setControllerReference,
  setStatusCondition,
  type Condition,
  type KubeObject,
} from '../../packages/ctrlmetrics/src/index.js';
import type { CacheReader } from '../../packages/ctrlmetrics/src/exports/controller.js';
import {
  AlreadyOwnedError,
  hasControllerReference,
  hasOwnerReference,
  isStatusConditionFalse,
  removeOwnerReference,
  removeStatusCondition,
  setOwnerReference,
} from '../../packages/ctrlmetrics/src/exports/controllerutil.js';

const owner = (name: string, uid = `uid-${name}`): KubeObject => ({
  apiVersion: 'cache.example.com/v1alpha1',
  kind: 'Memcached',
  metadata: { name, namespace: 'ns', uid },
});

describe('owner references', () => {
  it('setControllerReference sets controller and blockOwnerDeletion, is idempotent, and refuses a second controller', () => {
    const child: KubeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'ns' } };
    setControllerReference(owner('m1'), child);
    setControllerReference(owner('m1'), child);
    assert.deepEqual(child.metadata?.ownerReferences, [
      {
        apiVersion: 'cache.example.com/v1alpha1',
        kind: 'Memcached',
        name: 'm1',
        uid: 'uid-m1',
        blockOwnerDeletion: true,
        controller: true,
      },
    ]);
    assert.equal(hasControllerReference(child), true);
    assert.equal(hasControllerReference(child, owner('m1')), true);
    assert.equal(hasControllerReference(child, owner('m2')), false);
    assert.throws(
      () => setControllerReference(owner('m2'), child),
      (err: Error) => {
        assert.ok(err instanceof AlreadyOwnedError);
        assert.equal(err.message, 'Object ns/d is already owned by another Memcached controller m1');
        return true;
      },
    );
    // a version change of the owner's API is the same owner (the group identifies it)
    setControllerReference({ ...owner('m1', 'uid-new'), apiVersion: 'cache.example.com/v1' }, child);
    assert.equal(child.metadata?.ownerReferences?.length, 1);
    assert.equal(child.metadata?.ownerReferences?.[0]?.uid, 'uid-new');
  });

  it('scope rules: no cross-namespace owner, no namespaced owner of a cluster-scoped object, and the owner needs a uid', () => {
    assert.throws(
      () => setOwnerReference(owner('m1'), { metadata: { name: 'x', namespace: 'other' } }),
      /^Error: cross-namespace owner references are disallowed, owner's namespace ns, obj's namespace other$/,
    );
    assert.throws(
      () => setOwnerReference(owner('m1'), { metadata: { name: 'x' } }),
      /cluster-scoped resource must not have a namespace-scoped owner, owner's namespace ns/,
    );
    assert.throws(
      () =>
        setOwnerReference(
          { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns' } },
          { metadata: { name: 'x', namespace: 'ns' } },
        ),
      /needs apiVersion, kind, metadata.name and metadata.uid/,
    );
    // a cluster-scoped owner may own namespaced objects
    const ns: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns', uid: 'u-ns' } };
    const obj: KubeObject = { metadata: { name: 'x', namespace: 'ns' } };
    setOwnerReference(ns, obj);
    assert.equal(hasOwnerReference(ns, obj), true);
    assert.equal(hasControllerReference(obj), false, 'setOwnerReference does not make a controller');
    assert.equal(removeOwnerReference(ns, obj), true);
    assert.equal(removeOwnerReference(ns, obj), false);
    assert.deepEqual(obj.metadata?.ownerReferences, []);
  });
});

describe('finalizers', () => {
  it('add, contains and remove report whether the object changed', () => {
    const o: KubeObject = { metadata: { name: 'x' } };
    assert.equal(containsFinalizer(o, 'example.com/f'), false);
    assert.equal(addFinalizer(o, 'example.com/f'), true);
    assert.equal(addFinalizer(o, 'example.com/f'), false);
    assert.deepEqual(o.metadata?.finalizers, ['example.com/f']);
    assert.equal(removeFinalizer(o, 'example.com/g'), false);
    assert.equal(removeFinalizer(o, 'example.com/f'), true);
    assert.deepEqual(o.metadata?.finalizers, []);
    assert.equal(isBeingDeleted(o), false);
    assert.equal(isBeingDeleted({ metadata: { deletionTimestamp: '2026-11-27T08:00:00Z' } }), true);
  });
});

describe('status conditions', () => {
  const t0 = Date.parse('2026-11-27T08:00:00.700Z');
  it('lastTransitionTime is set when a condition is new or its status changes, not when only reason or message do', () => {
    const conditions: Condition[] = [];
    assert.equal(
      setStatusCondition(
        conditions,
        { type: 'Available', status: 'False', reason: 'Reconciling', message: 'starting', observedGeneration: 1 },
        t0,
      ),
      true,
    );
    assert.deepEqual(conditions, [
      {
        type: 'Available',
        status: 'False',
        reason: 'Reconciling',
        message: 'starting',
        observedGeneration: 1,
        lastTransitionTime: '2026-11-27T08:00:00Z',
      },
    ]);
    assert.equal(
      setStatusCondition(
        conditions,
        { type: 'Available', status: 'False', reason: 'Reconciling', message: 'starting', observedGeneration: 1 },
        t0 + 5000,
      ),
      false,
    );
    assert.equal(
      setStatusCondition(
        conditions,
        { type: 'Available', status: 'False', reason: 'Waiting', message: 'pods pending', observedGeneration: 2 },
        t0 + 5000,
      ),
      true,
    );
    assert.equal(conditions[0].lastTransitionTime, '2026-11-27T08:00:00Z');
    assert.equal(conditions[0].observedGeneration, 2);
    assert.equal(
      setStatusCondition(
        conditions,
        { type: 'Available', status: 'True', reason: 'Ready', message: 'ok', observedGeneration: 2 },
        t0 + 61_000,
      ),
      true,
    );
    assert.equal(conditions[0].lastTransitionTime, '2026-11-27T08:01:01Z');
    setStatusCondition(
      conditions,
      {
        type: 'Degraded',
        status: 'False',
        reason: 'AsExpected',
        message: '',
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
      t0,
    );
    assert.equal(findStatusCondition(conditions, 'Degraded')?.lastTransitionTime, '2026-01-01T00:00:00Z');
    assert.equal(isStatusConditionTrue(conditions, 'Available'), true);
    assert.equal(isStatusConditionFalse(conditions, 'Degraded'), true);
    assert.equal(isStatusConditionTrue(conditions, 'Missing'), false);
    assert.equal(removeStatusCondition(conditions, 'Degraded'), true);
    assert.equal(removeStatusCondition(conditions, 'Degraded'), false);
    assert.deepEqual(
      conditions.map((c) => c.type),
      ['Available'],
    );
  });
});

describe('predicates', () => {
  const obj = (
    generation: number,
    labels: Record<string, string> = {},
    annotations: Record<string, string> = {},
    rv = '1',
  ): KubeObject => ({
    metadata: { name: 'x', generation, labels, annotations, resourceVersion: rv },
  });
  it('pass adds and deletes; pass updates only when what they watch changed', () => {
    const { generationChanged, labelChanged, annotationChanged, resourceVersionChanged, and, or, not } = predicates;
    for (const p of [generationChanged, labelChanged, annotationChanged, resourceVersionChanged]) {
      assert.equal(p(obj(1), 'add'), true);
      assert.equal(p(obj(1), 'delete'), true);
    }
    assert.equal(generationChanged(obj(2), 'update', obj(1)), true);
    assert.equal(generationChanged(obj(1, { a: 'b' }), 'update', obj(1)), false, 'a metadata-only change');
    assert.equal(
      labelChanged(obj(1, { a: 'b', c: 'd' }), 'update', obj(1, { c: 'd', a: 'b' })),
      false,
      'the same labels in another order',
    );
    assert.equal(labelChanged(obj(1, { a: 'b' }), 'update', obj(1)), true);
    assert.equal(annotationChanged(obj(1, {}, { n: 'v' }), 'update', obj(1)), true);
    assert.equal(annotationChanged(obj(2), 'update', obj(1)), false);
    assert.equal(resourceVersionChanged(obj(1, {}, {}, '5'), 'update', obj(1, {}, {}, '5')), false, 'a resync');
    assert.equal(or(generationChanged, labelChanged)(obj(1, { a: 'b' }), 'update', obj(1)), true);
    assert.equal(and(generationChanged, labelChanged)(obj(1, { a: 'b' }), 'update', obj(1)), false);
    assert.equal(not(generationChanged)(obj(1), 'update', obj(1)), true);
  });
});

describe('typed models fit', () => {
  it("client-node models and users' own interfaces are accepted where the helpers take objects (compile-time)", () => {
    const dep: V1Deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'ns', creationTimestamp: new Date(0) },
    };
    setControllerReference(owner('m1'), dep);
    addFinalizer(dep, 'example.com/f');
    assert.equal(dep.metadata?.ownerReferences?.[0]?.controller, true);
    interface Mine {
      apiVersion: 'example.com/v1';
      kind: 'Mine';
      metadata: { name: string; namespace: string; finalizers?: string[]; uid?: string };
      spec: { replicas: number };
    }
    const mine: Mine = {
      apiVersion: 'example.com/v1',
      kind: 'Mine',
      metadata: { name: 'a', namespace: 'ns', uid: 'u' },
      spec: { replicas: 1 },
    };
    assert.equal(addFinalizer(mine, 'example.com/f'), true);
    setOwnerReference(mine, dep);
    const cache: Pick<CacheReader, 'get'> = { get: () => undefined };
    const cm: V1ConfigMap | undefined = cache.get<V1ConfigMap>('ConfigMap', 'ns', 'x');
    assert.equal(cm, undefined);
  });
});

describe('createOrUpdate on the authority', () => {
  let a: Authority;
  let client: KubeClient;
  before(async () => {
    a = await startAuthority({ listen: '127.0.0.1:0' });
    client = new KubeClient({ ...a.restConfig, qps: 1000, burst: 1000 });
  });
  after(async () => {
    client?.close();
    await a?.stop();
  });

  it('creates when missing, updates when the mutation changed something, and reports unchanged otherwise', async () => {
    const objects = new ObjectClient(client);
    const desired = (): V1ConfigMap => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cou', namespace: 'default' },
    });
    const mutate = (v: string) => (cm: V1ConfigMap) => {
      cm.data = { ...(cm.data ?? {}), key: v };
    };
    const created = await createOrUpdate(objects, desired(), mutate('1'));
    assert.equal(created.operation, 'created');
    assert.deepEqual(created.object.data, { key: '1' });
    assert.equal((await createOrUpdate(objects, desired(), mutate('1'))).operation, 'unchanged');
    const updated = await createOrUpdate(objects, desired(), mutate('2'));
    assert.equal(updated.operation, 'updated');
    assert.deepEqual(
      (await objects.get<V1ConfigMap>({ apiVersion: 'v1', kind: 'ConfigMap' }, { namespace: 'default', name: 'cou' }))
        .data,
      { key: '2' },
    );
    await assert.rejects(
      createOrUpdate(objects, desired(), (cm) => {
        cm.metadata!.name = 'other';
      }),
      /MutateFn cannot mutate object name and\/or object namespace/,
    );
  });
});
