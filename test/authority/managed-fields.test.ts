// Server-side apply field ownership, following kube-apiserver 1.32 as the shared reference records it
// (../shared/reference/kube-apiserver-rules.md §1): FieldsV1 shapes, conflicts and their messages, forced takeover,
// co-ownership of equal values, removal of fields a manager no longer applies, and Update ownership.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  afterUpdate,
  conflictMessage,
  fieldsOf,
  planApply,
  prunePaths,
  type FieldSet,
  type ManagedFieldsEntry,
} from '../../packages/envtest/src/managed-fields.js';

const T = '2026-01-01T00:00:00Z';
const T2 = '2026-01-02T00:00:00Z';
const apply = (manager: string, fieldsV1: FieldSet): ManagedFieldsEntry => ({
  manager,
  operation: 'Apply',
  apiVersion: 'v1',
  time: T,
  fieldsType: 'FieldsV1',
  fieldsV1,
});
const update = (manager: string, apiVersion: string, fieldsV1: FieldSet): ManagedFieldsEntry => ({
  manager,
  operation: 'Update',
  apiVersion,
  time: T,
  fieldsType: 'FieldsV1',
  fieldsV1,
});
const cm = (data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'c', namespace: 'n' },
  data,
});

describe('server-side apply field sets', () => {
  it('FieldsV1 as kube writes it: f: fields, k: keyed elements with ".", atomic lists, metadata only for labels and friends', () => {
    const set = fieldsOf({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd', namespace: 'n', labels: { app: 'd' }, finalizers: ['x'] },
      spec: { template: { spec: { containers: [{ name: 'c', image: 'x', args: ['--v=1'] }] } } },
    });
    assert.deepEqual(set.toFieldsV1(), {
      'f:metadata': { 'f:finalizers': { 'v:"x"': {} }, 'f:labels': { 'f:app': {} } },
      'f:spec': {
        'f:template': {
          'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:args': {}, 'f:image': {}, 'f:name': {} } } },
        },
      },
    });
    assert.deepEqual(fieldsOf(cm({ a: '1' })).toFieldsV1(), { 'f:data': { 'f:a': {} } });
  });

  it('the status of a kind with a status subresource is not owned by main-resource writes, and only it by /status writes', () => {
    const o = { spec: { replicas: 1 }, status: { ready: 1 } };
    assert.deepEqual(fieldsOf(o, undefined, 'no-status').toFieldsV1(), { 'f:spec': { 'f:replicas': {} } });
    assert.deepEqual(fieldsOf(o, undefined, 'status').toFieldsV1(), { 'f:status': { 'f:ready': {} } });
  });
});

describe('server-side apply conflicts and ownership', () => {
  const base = { manager: 'other', apiVersion: 'v1', scope: undefined, time: T2 } as const;

  it("a different value of a field another applier owns is a conflict, with kube's message", () => {
    const plan = planApply({
      ...base,
      live: cm({ a: '1' }),
      config: cm({ a: '9' }),
      entries: [apply('kubectl', { 'f:data': { 'f:a': {} } })],
    });
    assert.equal(plan.conflicts.length, 1);
    assert.equal(conflictMessage(plan.conflicts), 'Apply failed with 1 conflict: conflict with "kubectl": .data.a');
    // forced: the field moves, and a manager left with nothing is dropped
    assert.deepEqual(plan.entries, [{ ...apply('other', { 'f:data': { 'f:a': {} } }), time: T2 }]);
  });

  it('an updater is named with its apiVersion; several conflicts are grouped per manager', () => {
    const live = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      spec: { replicas: 1, paused: false, minReadySeconds: 0 },
    };
    const entries = [
      update('kubectl-client-side-apply', 'apps/v1', { 'f:spec': { 'f:replicas': {} } }),
      update('kube-controller-manager', 'apps/v1', { 'f:spec': { 'f:paused': {}, 'f:minReadySeconds': {} } }),
    ];
    const one = planApply({
      ...base,
      apiVersion: 'apps/v1',
      live,
      config: { ...live, spec: { replicas: 3 } },
      entries,
    });
    assert.equal(
      conflictMessage(one.conflicts),
      'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas',
    );
    const three = planApply({
      ...base,
      apiVersion: 'apps/v1',
      live,
      config: { ...live, spec: { replicas: 3, paused: true, minReadySeconds: 5 } },
      entries,
    });
    assert.equal(
      conflictMessage(three.conflicts),
      'Apply failed with 3 conflicts: conflicts with "kube-controller-manager" using apps/v1:\n- .spec.paused\n- .spec.minReadySeconds\nconflicts with "kubectl-client-side-apply" using apps/v1:\n- .spec.replicas',
    );
  });

  it('an equal value is no conflict: the field becomes co-owned', () => {
    const plan = planApply({
      ...base,
      live: cm({ a: '1' }),
      config: cm({ a: '1' }),
      entries: [apply('kubectl', { 'f:data': { 'f:a': {} } })],
    });
    assert.deepEqual(plan.conflicts, []);
    assert.deepEqual(
      plan.entries.map((e) => [e.manager, e.fieldsV1]),
      [
        ['kubectl', { 'f:data': { 'f:a': {} } }],
        ['other', { 'f:data': { 'f:a': {} } }],
      ],
    );
  });

  it('keyed list elements conflict by their key path', () => {
    const pod = (image: string) => ({ spec: { containers: [{ name: 'nginx', image }] } });
    const plan = planApply({
      ...base,
      live: pod('a'),
      config: pod('b'),
      entries: [apply('x', fieldsOf(pod('a')).toFieldsV1())],
    });
    assert.equal(
      conflictMessage(plan.conflicts),
      'Apply failed with 1 conflict: conflict with "x": .spec.containers[name="nginx"].image',
    );
  });

  it('prunes what the manager applied before and applies no more, unless someone else owns it', () => {
    const live = {
      data: { a: '1', b: '2', c: '3' },
      spec: {
        containers: [
          { name: 'x', image: 'i' },
          { name: 'y', image: 'j', imagePullPolicy: 'IfNotPresent' },
        ],
      },
    };
    const before = {
      data: { a: '1', b: '2', c: '3' },
      spec: {
        containers: [
          { name: 'x', image: 'i' },
          { name: 'y', image: 'j' },
        ],
      },
    };
    const plan = planApply({
      ...base,
      live,
      config: { data: { a: '1' }, spec: { containers: [{ name: 'x', image: 'i' }] } },
      entries: [
        apply('other', fieldsOf(before).toFieldsV1()),
        update('kubectl-edit', 'v1', { 'f:data': { 'f:c': {} } }),
      ],
    });
    const obj = structuredClone(live);
    prunePaths(obj, plan.prune);
    // the element goes whole, with the field the server defaulted in it
    assert.deepEqual(obj, { data: { a: '1', c: '3' }, spec: { containers: [{ name: 'x', image: 'i' }] } });
  });

  it('a map the manager applied before stays while another manager owns something in it', () => {
    const live = { metadata: { annotations: { mine: '1', theirs: '2' } }, data: { a: '1' } };
    const plan = planApply({
      ...base,
      live,
      config: { data: { a: '1' } },
      entries: [
        apply('other', { 'f:metadata': { 'f:annotations': { '.': {}, 'f:mine': {} } }, 'f:data': { 'f:a': {} } }),
        apply('x', { 'f:metadata': { 'f:annotations': { 'f:theirs': {} } } }),
      ],
    });
    const obj = structuredClone(live);
    prunePaths(obj, plan.prune);
    assert.deepEqual(obj, { metadata: { annotations: { theirs: '2' } }, data: { a: '1' } });
  });

  it('an update takes what it adds or changes from every other manager; what it removes leaves every set', () => {
    const entries = [apply('kubectl', { 'f:data': { 'f:a': {}, 'f:b': {} } })];
    const next = afterUpdate({
      old: cm({ a: '1', b: '2' }),
      next: cm({ a: '5', c: '3' }),
      entries,
      manager: 'kubectl-edit',
      apiVersion: 'v1',
      scope: undefined,
      time: T2,
    });
    assert.deepEqual(next, [{ ...update('kubectl-edit', 'v1', { 'f:data': { 'f:a': {}, 'f:c': {} } }), time: T2 }]);
    // an update that changes nothing takes nothing and keeps the entries as they were
    const mine = [apply('kubectl', { 'f:data': { 'f:a': {} } })];
    assert.deepEqual(
      afterUpdate({
        old: cm({ a: '1' }),
        next: cm({ a: '1' }),
        entries: mine,
        manager: 'kubectl-edit',
        apiVersion: 'v1',
        scope: undefined,
        time: T2,
      }),
      mine,
    );
  });

  it('a create owns the maps it adds as such (".") but not the structs of the built-in kinds; custom resources have no structs', () => {
    const create = (next: Record<string, unknown>, structs?: (p: string[]) => boolean) =>
      afterUpdate({
        old: undefined,
        next,
        entries: [],
        manager: 'kubectl-create',
        apiVersion: 'v1',
        scope: undefined,
        time: T2,
        ...(structs ? { structs } : {}),
      })[0].fieldsV1;
    // as `kubectl create configmap` and `kubectl create deployment` are recorded by kube
    assert.deepEqual(create(cm({ a: '1' })), { 'f:data': { '.': {}, 'f:a': {} } });
    const deploy = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd', labels: { app: 'd' } },
      spec: {
        replicas: 1,
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
        template: {
          metadata: { labels: { app: 'd' } },
          spec: { containers: [{ name: 'nginx', image: 'nginx', resources: {} }] },
        },
      },
    };
    assert.deepEqual(create(deploy), {
      'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
      'f:spec': {
        'f:replicas': {},
        'f:strategy': { 'f:rollingUpdate': { '.': {}, 'f:maxSurge': {}, 'f:maxUnavailable': {} }, 'f:type': {} },
        'f:template': {
          'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
          'f:spec': {
            'f:containers': { 'k:{"name":"nginx"}': { '.': {}, 'f:image': {}, 'f:name': {}, 'f:resources': {} } },
          },
        },
      },
    });
    assert.deepEqual(
      create({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1 } }, () => false),
      { 'f:spec': { '.': {}, 'f:size': {} } },
    );
  });

  it("kube's order: Apply entries first, then by time", () => {
    const next = afterUpdate({
      old: cm({ x: '1', y: '1' }),
      next: cm({ x: '1', y: '1', z: '1' }),
      entries: [update('a', 'v1', { 'f:data': { 'f:y': {} } }), apply('b', { 'f:data': { 'f:x': {} } })],
      manager: 'c',
      apiVersion: 'v1',
      scope: undefined,
      time: T2,
    });
    assert.deepEqual(
      next.map((e) => `${e.operation} ${e.manager}`),
      ['Apply b', 'Update a', 'Update c'],
    );
  });
});
