/**
 * The object-based client, the REST mapper and the API error helpers against an API server over HTTPS: paths come
 * from discovery, status writes go to the status subresource, server-side apply conflicts and force, deletion with
 * finalizers, and the apierrors-style predicates on real answers. Run against the embedded authority
 * (test/kube/object-client.test.ts) and a real kube-apiserver (test/real-api/object-client.test.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import {
  KubeClient,
  ObjectClient,
  isNotFound,
  isConflict,
  isAlreadyExists,
  ignoreNotFound,
  createOrUpdate,
  KubeApiError,
  type KubeObject,
} from '../../packages/ctrlmetrics/src/index.js';
import { RESTMapper, NoKindMatchError, isInvalid, isForbidden } from '../../packages/ctrlmetrics/src/exports/client.js';
import { waitForCrd } from '../helpers/cluster.js';

const CRD = join(import.meta.dirname, '..', 'authority', 'fixtures', 'memcached-crd.yaml');

interface Memcached extends KubeObject {
  spec: { image: string; size?: number };
  status?: { replicas?: number; conditions?: unknown[] };
}

/** Where the suite runs: a cluster-admin client, and how to let go of the server. */
export interface ObjectClientTarget {
  admin: KubeClient;
  stop(): Promise<void>;
}

/**
 * Registers the suite. `group` is the Memcached CRD's API group and `namespace` the namespace it works in: on a
 * server other suites share, names of the suite's own. `servesEviction`: the server has pods/eviction (a real one;
 * the authority does not serve it, as it runs no disruption controller).
 */
export function objectClientSuite(
  name: string,
  start: () => Promise<ObjectClientTarget>,
  o: { group?: string; namespace?: string; servesEviction?: boolean } = {},
): void {
  const group = o.group ?? 'cache.example.com';
  const ns = o.namespace ?? 'oc';
  const MEMCACHED = { apiVersion: `${group}/v1alpha1`, kind: 'Memcached' };
  describe(name, () => {
    let target: ObjectClientTarget;
    let admin: KubeClient;
    let objects: ObjectClient;
    let clock = 0;

    before(async () => {
      target = await start();
      admin = target.admin;
      objects = new ObjectClient(admin, new RESTMapper(admin, { now: () => clock }));
      await admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    });
    after(async () => {
      await target?.stop();
    });

    it('maps built-in kinds from discovery, and finds a CRD installed after a miss once the refresh interval has passed', async () => {
      assert.deepEqual(await objects.mapper.mappingFor('apps/v1', 'Deployment'), {
        group: 'apps',
        version: 'v1',
        resource: 'deployments',
        kind: 'Deployment',
        namespaced: true,
      });
      assert.deepEqual(await objects.mapper.mappingFor('v1', 'Namespace'), {
        group: '',
        version: 'v1',
        resource: 'namespaces',
        kind: 'Namespace',
        namespaced: false,
      });
      assert.equal(
        await objects.objectPath(
          { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' },
          { namespace: 'ignored', name: 'view' },
        ),
        '/apis/rbac.authorization.k8s.io/v1/clusterroles/view',
      );
      await assert.rejects(objects.mapper.mappingFor(MEMCACHED.apiVersion, MEMCACHED.kind), (err: Error) => {
        assert.ok(err instanceof NoKindMatchError);
        assert.equal(
          err.message,
          `no matches for kind "Memcached" in version "${group}/v1alpha1": if it is a custom resource, install its CRD first`,
        );
        return true;
      });
      await assert.rejects(objects.mapper.mappingFor('v1', 'Gadget'), /no matches for kind "Gadget" in version "v1"/);
      let crdName = '';
      for (const doc of readFileSync(CRD, 'utf8').replaceAll('cache.example.com', group).split(/^---$/m)) {
        const crd = parseYaml(doc) as KubeObject | null;
        if (crd)
          crdName = (await admin.create<KubeObject>('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd))
            .metadata!.name!;
      }
      await waitForCrd(admin, crdName);
      // within the refresh interval the miss is remembered (no discovery call per lookup)...
      await assert.rejects(objects.mapper.mappingFor(MEMCACHED.apiVersion, MEMCACHED.kind), NoKindMatchError);
      clock += 1000;
      // ...after it, the group version is fetched again
      assert.equal((await objects.mapper.mappingFor(MEMCACHED.apiVersion, MEMCACHED.kind)).resource, 'memcacheds');
    });

    it('create, get, list, update, patch and delete by object; the error helpers read the real answers', async () => {
      const m: Memcached = {
        ...MEMCACHED,
        metadata: { name: 'm1', namespace: ns, labels: { app: 'cache' } },
        spec: { image: 'memcached:1.6' },
      };
      const created = await objects.create(m);
      assert.equal(created.metadata?.generation, 1);
      assert.equal(created.spec.size, 1, 'the schema default is filled in');
      await assert.rejects(objects.create(m), (err) => isAlreadyExists(err) && !isConflict(err) && !isNotFound(err));

      const got = await objects.get<Memcached>(MEMCACHED, { namespace: ns, name: 'm1' });
      assert.equal(got.metadata?.uid, created.metadata?.uid);
      const listed = await objects.list<Memcached>(MEMCACHED, { namespace: ns, labelSelector: 'app=cache' });
      assert.deepEqual(
        listed.map((o) => [o.apiVersion, o.kind, o.metadata?.name]),
        [[MEMCACHED.apiVersion, 'Memcached', 'm1']],
      );

      const updated = await objects.update({ ...got, spec: { ...got.spec, size: 2 } });
      assert.equal(updated.metadata?.generation, 2);
      // the same resourceVersion again is stale now
      await assert.rejects(objects.update({ ...got, spec: { ...got.spec, size: 3 } }), (err) => isConflict(err));
      await assert.rejects(objects.update({ ...updated, spec: { ...updated.spec, size: 7 } }), (err) => {
        assert.ok(isInvalid(err));
        assert.match(
          (err as KubeApiError).message,
          /spec\.size: Invalid value: 7: spec\.size in body should be less than or equal to 3/,
        );
        return true;
      });
      const patched = await objects.patch<Memcached>(updated, { metadata: { labels: { tier: 'cache' } } });
      assert.deepEqual(patched.metadata?.labels, { app: 'cache', tier: 'cache' });
      const jsonPatched = await objects.patch<Memcached>(updated, [{ op: 'replace', path: '/spec/size', value: 3 }], {
        type: 'json',
      });
      assert.equal(jsonPatched.spec.size, 3);

      assert.equal(await objects.get(MEMCACHED, { namespace: ns, name: 'nope' }).catch(ignoreNotFound), undefined);
      await assert.rejects(objects.get(MEMCACHED, { name: 'm1' }), /Memcached m1: a namespace is required/);
      await objects.delete(patched);
      await assert.rejects(objects.get(MEMCACHED, { namespace: ns, name: 'm1' }), (err) => isNotFound(err));
      // a transport failure is none of them
      const down = new KubeApiError(0, 'ECONNREFUSED', 'connect ECONNREFUSED');
      assert.equal(isNotFound(down) || isConflict(down) || isForbidden(down), false);
      // an answer without a known reason is judged by its code, as apierrors does
      assert.equal(isNotFound(new KubeApiError(404, 'Unknown', 'the API answered 404')), true);
    });

    it('answers objects in the key order of Go encoding, and createOrUpdate sees a map assigned in another order as unchanged', async () => {
      // a built-in kind: kind, apiVersion, metadata first; map fields' keys sorted whatever order they were written in
      const cm = await objects.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'ordered', namespace: ns, labels: { z: '1', a: '2' } },
        data: { b: '2', a: '1', c: '3' },
      });
      assert.deepEqual(Object.keys(cm).slice(0, 3), ['kind', 'apiVersion', 'metadata']);
      assert.deepEqual(Object.keys(cm.metadata).slice(0, 3), ['name', 'namespace', 'uid']);
      assert.deepEqual(Object.keys(cm.metadata.labels), ['a', 'z']);
      assert.deepEqual(Object.keys((cm as KubeObject & { data: object }).data), ['a', 'b', 'c']);
      // a custom resource is a map at every depth: every key sorted
      const m = await objects.create<Memcached>({
        ...MEMCACHED,
        metadata: { namespace: ns, name: 'ordered' },
        spec: { size: 1, image: 'memcached:1.6' },
      });
      assert.deepEqual(Object.keys(m).slice(0, 3), ['apiVersion', 'kind', 'metadata']);
      assert.deepEqual(Object.keys(m.spec), [...Object.keys(m.spec)].sort());
      await objects.delete(m);

      const desired = () =>
        ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'reconciled', namespace: ns } }) as KubeObject & {
          data?: Record<string, string>;
        };
      const mutate = (o: KubeObject & { data?: Record<string, string> }) => {
        o.data = { zone: 'b', app: 'a' };
      };
      assert.equal((await createOrUpdate(objects, desired(), mutate)).operation, 'created');
      assert.equal(
        (await createOrUpdate(objects, desired(), mutate)).operation,
        'unchanged',
        'the same data in another key order is no change',
      );
      const changed = await createOrUpdate(objects, desired(), (o) => {
        o.data = { zone: 'c', app: 'a' };
      });
      assert.equal(changed.operation, 'updated');
    });

    it('status() writes only the status subresource', async () => {
      const m = await objects.create<Memcached>({
        ...MEMCACHED,
        metadata: { name: 'st', namespace: ns },
        spec: { image: 'memcached:1.6' },
      });
      const withStatus = await objects
        .status()
        .update<Memcached>({ ...m, spec: { image: 'ignored:0' }, status: { replicas: 1 } });
      assert.deepEqual(withStatus.status, { replicas: 1 });
      assert.equal(withStatus.spec.image, 'memcached:1.6', 'a status write does not change the spec');
      assert.equal(withStatus.metadata?.generation, 1);
      const patched = await objects.status().patch<Memcached>(m, { status: { replicas: 2 } });
      assert.deepEqual(patched.status, { replicas: 2 });
      // an update of the main resource leaves the status as it is
      const main = await objects.update<Memcached>({ ...patched, status: { replicas: 9 } });
      assert.deepEqual(main.status, { replicas: 2 });
      const applied = await objects
        .status()
        .apply<Memcached>(
          { ...MEMCACHED, metadata: { name: 'st', namespace: ns }, status: { replicas: 3 } } as Memcached,
          { fieldManager: 'status-writer', force: true },
        );
      assert.deepEqual(applied.status, { replicas: 3 });
    });

    it('apply: creates, owns its fields, conflicts with another manager unless forced', async () => {
      const config = (image: string): Memcached => ({
        ...MEMCACHED,
        metadata: { name: 'ap', namespace: ns },
        spec: { image },
      });
      const first = await objects.apply(config('memcached:1.6'), { fieldManager: 'operator-a' });
      assert.equal(first.spec.image, 'memcached:1.6');
      assert.ok(
        (first.metadata?.managedFields as Array<{ manager: string; operation: string }>).some(
          (e) => e.manager === 'operator-a' && e.operation === 'Apply',
        ),
      );
      await assert.rejects(objects.apply(config('memcached:1.7'), { fieldManager: 'operator-b' }), (err) => {
        assert.ok(isConflict(err));
        assert.match((err as Error).message, /Apply failed with 1 conflict: conflict with "operator-a": \.spec\.image/);
        return true;
      });
      const forced = await objects.apply(config('memcached:1.7'), { fieldManager: 'operator-b', force: true });
      assert.equal(forced.spec.image, 'memcached:1.7');
      // an object as read (with managedFields) can be applied back: the client leaves managedFields out
      assert.equal((await objects.apply(forced, { fieldManager: 'operator-b' })).spec.image, 'memcached:1.7');
      await assert.rejects(objects.apply(config('x'), { fieldManager: '' }), /apply needs a fieldManager/);
    });

    it("client-wide write defaults (withDefaults): the field owner of every write and apply, Strict field validation; a call's options win", async () => {
      const owned = objects.withDefaults({ fieldOwner: 'defaults-operator', fieldValidation: 'Strict' });
      const managers = (o: object) =>
        ((o as { metadata?: { managedFields?: Array<{ manager: string }> } }).metadata?.managedFields ?? []).map(
          (e) => e.manager,
        );
      const cm = await owned.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'defaults', namespace: ns },
        data: { a: '1' },
      });
      assert.deepEqual(managers(cm), ['defaults-operator']);
      const patched = await owned.patch(cm, { data: { b: '2' } }, { fieldManager: 'one-call' });
      assert.deepEqual(managers(patched).sort(), ['defaults-operator', 'one-call']);
      // an apply needs no fieldManager of its own now
      const applied = await owned.apply(
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'defaults-applied', namespace: ns },
          data: { c: '3' },
        },
        {},
      );
      assert.deepEqual(managers(applied), ['defaults-operator']);
      // Strict: a field the schema does not know is refused (the same write without the default passes)
      const unknown = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'strict', namespace: ns },
        data: {},
        spec: { nope: true },
      };
      await assert.rejects(owned.create(unknown), (err: Error) =>
        /strict decoding error: unknown field "spec"/.test(err.message),
      );
      const lenient = await owned.create(unknown, { fieldValidation: 'Ignore' });
      assert.equal(lenient.metadata?.name, 'strict');
    });

    it('listPage reads a list in pages (limit, continue); listAll pages through all of it', async () => {
      for (let i = 0; i < 5; i++)
        await objects.create({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `page-${i}`, namespace: ns, labels: { paged: 'yes' } },
        });
      const CONFIG_MAP = { apiVersion: 'v1', kind: 'ConfigMap' };
      const first = await objects.listPage(CONFIG_MAP, { namespace: ns, labelSelector: 'paged=yes', limit: 2 });
      // no remainingItemCount: kube-apiserver gives it only for lists without a selector
      assert.deepEqual([first.items.length, typeof first.continue, first.remainingItemCount], [2, 'string', undefined]);
      assert.equal(first.items[0].kind, 'ConfigMap');
      const second = await objects.listPage(CONFIG_MAP, {
        namespace: ns,
        labelSelector: 'paged=yes',
        limit: 2,
        continue: first.continue,
      });
      assert.equal(second.items.length, 2);
      const all = await objects.listAll(CONFIG_MAP, { namespace: ns, labelSelector: 'paged=yes', pageSize: 2 });
      assert.deepEqual(
        all.map((o) => o.metadata?.name),
        ['page-0', 'page-1', 'page-2', 'page-3', 'page-4'],
      );
      const last = await objects.listPage(CONFIG_MAP, { namespace: ns, labelSelector: 'paged=yes', limit: 10 });
      assert.deepEqual([last.items.length, last.continue], [5, undefined]);
    });

    it("subresources read and created: a Deployment's scale, a ServiceAccount's token", async () => {
      const deployment = await objects.create({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'scaled', namespace: ns },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'scaled' } },
          template: {
            metadata: { labels: { app: 'scaled' } },
            spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] },
          },
        },
      });
      const scale = await objects.subResource('scale').get<{ kind: string; spec: { replicas: number } }>(deployment);
      assert.deepEqual([scale.kind, scale.spec.replicas], ['Scale', 2]);
      const sa = await objects.create({
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'token-holder', namespace: ns },
      });
      const request = await objects
        .subResource('token')
        .create<{ kind: string; status: { token: string; expirationTimestamp: string } }>(sa, {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: { audiences: ['https://kubernetes.default.svc.cluster.local'], expirationSeconds: 600 },
        });
      assert.equal(request.kind, 'TokenRequest');
      assert.match(request.status.token, /^[\w-]+\.[\w-]+\.[\w-]+$/, 'a JWT');
      assert.ok(Date.parse(request.status.expirationTimestamp) > Date.now());
    });

    it(
      "a Pod's eviction is created through subResource('eviction'): the pod is deleted",
      {
        skip: o.servesEviction
          ? false
          : "this server does not serve pods/eviction (the authority lists it with the subresources that stand for a controller's work: docs/guides/testing.md)",
      },
      async () => {
        const pod = await objects.create({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'evicted', namespace: ns },
          spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] },
        });
        await objects
          .subResource('eviction')
          .create(pod, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'evicted', namespace: ns } });
        let gone = false;
        for (let i = 0; i < 100 && !gone; i++) {
          const now = await objects.get('v1', 'Pod', { namespace: ns, name: 'evicted' }).catch(ignoreNotFound);
          gone = !now || now.metadata?.deletionTimestamp !== undefined;
          if (!gone) await new Promise((r) => setTimeout(r, 100));
        }
        assert.ok(gone, 'the evicted pod is deleted (or being deleted)');
      },
    );

    it('deleteAllOf deletes what the selector matches in one request; a namespaced kind needs its namespace', async () => {
      for (const [name, tier] of [
        ['da-1', 'cache'],
        ['da-2', 'cache'],
        ['da-3', 'cache'],
        ['da-keep', 'web'],
      ]) {
        await objects.create({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: name, namespace: ns, labels: { 'delete-all': tier } },
        });
      }
      const CONFIG_MAP = { apiVersion: 'v1', kind: 'ConfigMap' };
      await objects.deleteAllOf(CONFIG_MAP, { namespace: ns, labelSelector: 'delete-all=cache', dryRun: true });
      assert.equal(
        (await objects.list(CONFIG_MAP, { namespace: ns, labelSelector: 'delete-all' })).length,
        4,
        'a dry run deletes nothing',
      );
      await objects.deleteAllOf(CONFIG_MAP, { namespace: ns, labelSelector: 'delete-all=cache' });
      const left = await objects.list(CONFIG_MAP, { namespace: ns, labelSelector: 'delete-all' });
      assert.deepEqual(
        left.map((o) => o.metadata?.name),
        ['da-keep'],
      );
      await assert.rejects(
        objects.deleteAllOf(CONFIG_MAP, { labelSelector: 'delete-all' }),
        /deleteAllOf ConfigMap needs a namespace/,
      );
    });

    it('delete of an object with finalizers leaves it deleting until update removes them', async () => {
      const cm = await objects.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'fin', namespace: ns, finalizers: ['example.com/cleanup'] },
      });
      await objects.delete(cm, { propagationPolicy: 'Background' });
      const deleting = await objects.get({ apiVersion: 'v1', kind: 'ConfigMap' }, { namespace: ns, name: 'fin' });
      assert.ok(deleting.metadata?.deletionTimestamp);
      await objects.update({
        ...deleting,
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { ...deleting.metadata, finalizers: [] },
      });
      assert.equal(
        await objects
          .get({ apiVersion: 'v1', kind: 'ConfigMap' }, { namespace: ns, name: 'fin' })
          .catch(ignoreNotFound),
        undefined,
      );
      await assert.rejects(objects.delete(cm, { preconditions: { uid: 'other' } }), (err) => isNotFound(err));
    });
  });
}
