// The authority's Kubernetes API over real HTTPS: discovery, object semantics, errors as Status objects with the
// codes and reasons kube-apiserver uses, watches, patches, impersonation and the request bounds.
// Expected messages are kube-apiserver's documented/observable ones, written down here, not taken from this code.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startAuthority, type Authority } from '../../packages/envtest/src/index.js';
import { request } from 'node:https';
import { call, watch, type CallOptions, type Obj } from './https.js';

describe('authority API over HTTPS', () => {
  let a: Authority;
  const as =
    (token: string | undefined) =>
    (method: string, path: string, o: CallOptions = {}) =>
      call(a.url, a.caPem, method, path, { token, ...o });
  let admin: ReturnType<typeof as>;
  const anon = (method: string, path: string, o: CallOptions = {}) => call(a.url, a.caPem, method, path, o);

  const ns = (name: string, labels?: Record<string, string>) =>
    admin('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } } });
  const saToken = async (namespace: string, name: string): Promise<string> => {
    await admin('POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, { body: { metadata: { name } } });
    const r = await admin('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
      body: { spec: {} },
    });
    assert.equal(r.status, 201, r.text);
    return r.body.status.token as string;
  };

  before(async () => {
    a = await startAuthority({ listen: '127.0.0.1:0', maxRequestsInFlight: 400 });
    admin = as(a.adminToken);
    assert.equal((await ns('api')).status, 201);
  });
  after(async () => {
    await a?.stop();
  });

  describe('discovery', () => {
    it('serves /version, /api, /apis and the group versions kubectl needs', async () => {
      const v = await admin('GET', '/version');
      assert.equal(v.status, 200);
      assert.equal(v.body.major, '1');
      const api = await admin('GET', '/api');
      assert.deepEqual(api.body.versions, ['v1']);
      const core = await admin('GET', '/api/v1');
      const names = (core.body.resources as Obj[]).map((r) => r.name);
      for (const r of ['namespaces', 'serviceaccounts', 'serviceaccounts/token', 'services', 'configmaps', 'secrets'])
        assert.ok(names.includes(r), r);
      const groups = (await admin('GET', '/apis')).body.groups.map((g: Obj) => g.name);
      for (const g of [
        'apps',
        'rbac.authorization.k8s.io',
        'networking.k8s.io',
        'apiextensions.k8s.io',
        'authentication.k8s.io',
        'authorization.k8s.io',
      ])
        assert.ok(groups.includes(g), g);
      const rbac = await admin('GET', '/apis/rbac.authorization.k8s.io/v1');
      assert.deepEqual((rbac.body.resources as Obj[]).map((r) => r.name).sort(), [
        'clusterrolebindings',
        'clusterroles',
        'rolebindings',
        'roles',
      ]);
      const authz = await admin('GET', '/apis/authorization.k8s.io/v1');
      assert.ok((authz.body.resources as Obj[]).some((r) => r.name === 'selfsubjectrulesreviews'));
    });

    it('anyone may read /version and /healthz; only authenticated users may read discovery (bootstrap policy)', async () => {
      assert.equal((await anon('GET', '/version')).status, 200);
      assert.equal((await anon('GET', '/healthz')).status, 200);
      const r = await anon('GET', '/api');
      assert.equal(r.status, 403);
      assert.equal(r.body.kind, 'Status');
      assert.equal(r.body.message, 'forbidden: User "system:anonymous" cannot get path "/api"');
    });
  });

  describe('errors are Status objects with kube codes and reasons', () => {
    it('401 Unauthorized for an unknown bearer token', async () => {
      const r = await call(a.url, a.caPem, 'GET', '/api/v1/namespaces', { token: 'not-a-token' });
      assert.equal(r.status, 401);
      assert.deepEqual(
        [r.body.kind, r.body.status, r.body.reason, r.body.code],
        ['Status', 'Failure', 'Unauthorized', 401],
      );
    });

    it('403 Forbidden for an anonymous resource request, with kube message; another scheme than Bearer is anonymous', async () => {
      const basic = await anon('GET', '/api/v1/namespaces', { headers: { Authorization: 'Basic YWRtaW46YWRtaW4=' } });
      assert.equal(basic.status, 403);
      assert.match(basic.body.message, /User "system:anonymous" cannot list/);
      const r = await anon('GET', '/api/v1/namespaces');
      assert.equal(r.status, 403);
      assert.equal(r.body.reason, 'Forbidden');
      assert.equal(
        r.body.message,
        'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope',
      );
    });

    it('404 NotFound for a missing object and for an unknown path', async () => {
      const r = await admin('GET', '/api/v1/namespaces/api/configmaps/nope');
      assert.equal(r.status, 404);
      assert.equal(r.body.reason, 'NotFound');
      assert.equal(r.body.message, 'configmaps "nope" not found');
      assert.deepEqual(r.body.details, { name: 'nope', kind: 'configmaps' });
      const p = await admin('GET', '/apis/no.such.group/v1/things');
      assert.equal(p.status, 404);
      assert.equal(p.body.reason, 'NotFound');
    });

    it('404 for an object in a namespace that does not exist', async () => {
      const r = await admin('POST', '/api/v1/namespaces/ghost/configmaps', { body: { metadata: { name: 'c' } } });
      assert.equal(r.status, 404);
      assert.equal(r.body.message, 'namespaces "ghost" not found');
    });

    it('405 MethodNotAllowed for GET on a review resource and POST to a named object', async () => {
      const r = await admin('GET', '/apis/authentication.k8s.io/v1/tokenreviews');
      assert.equal(r.status, 405);
      assert.equal(r.body.reason, 'MethodNotAllowed');
      const p = await admin('POST', '/api/v1/namespaces/api', { body: {} });
      assert.equal(p.status, 405);
    });

    it('409 AlreadyExists on a second create, 409 Conflict on a stale resourceVersion', async () => {
      const body = { metadata: { name: 'dup' }, data: { a: '1' } };
      assert.equal((await admin('POST', '/api/v1/namespaces/api/configmaps', { body })).status, 201);
      const again = await admin('POST', '/api/v1/namespaces/api/configmaps', { body });
      assert.equal(again.status, 409);
      assert.equal(again.body.reason, 'AlreadyExists');
      assert.equal(again.body.message, 'configmaps "dup" already exists');
      const cur = (await admin('GET', '/api/v1/namespaces/api/configmaps/dup')).body;
      const ok = await admin('PUT', '/api/v1/namespaces/api/configmaps/dup', { body: { ...cur, data: { a: '2' } } });
      assert.equal(ok.status, 200);
      assert.notEqual(ok.body.metadata.resourceVersion, cur.metadata.resourceVersion);
      const stale = await admin('PUT', '/api/v1/namespaces/api/configmaps/dup', { body: { ...cur, data: { a: '3' } } });
      assert.equal(stale.status, 409);
      assert.equal(stale.body.reason, 'Conflict');
      assert.match(
        stale.body.message,
        /^Operation cannot be fulfilled on configmaps "dup": the object has been modified/,
      );
    });

    it('422 Invalid for a name that is not a DNS-1123 label/subdomain', async () => {
      const r = await ns('Not_Valid');
      assert.equal(r.status, 422);
      assert.equal(r.body.reason, 'Invalid');
      assert.match(
        r.body.message,
        /^Namespace "Not_Valid" is invalid: metadata\.name: Invalid value: "Not_Valid": a lowercase RFC 1123 label/,
      );
      assert.equal(r.body.details.causes[0].field, 'metadata.name');
      const cm = await admin('POST', '/api/v1/namespaces/api/configmaps', { body: { metadata: { name: 'UPPER' } } });
      assert.equal(cm.status, 422);
    });

    it('400 BadRequest for an undecodable body and a TokenReview without a token', async () => {
      const r = await admin('POST', '/api/v1/namespaces/api/configmaps', { raw: '{not json' });
      assert.equal(r.status, 400);
      assert.equal(r.body.reason, 'BadRequest');
      const tr = await admin('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: {} },
      });
      assert.equal(tr.status, 400);
      const kind = await admin('POST', '/api/v1/namespaces/api/configmaps', {
        body: { kind: 'Secret', metadata: { name: 'x' } },
      });
      assert.equal(kind.status, 400);
      for (const metadata of [
        { name: 5 },
        { name: 'n', labels: { a: 1 } },
        { name: 'n', annotations: 'x' },
        'not-an-object',
      ]) {
        const r2 = await admin('POST', '/api/v1/namespaces/api/configmaps', { body: { metadata } });
        assert.equal(r2.status, 400, `metadata ${JSON.stringify(metadata)}: ${r2.text}`);
      }
      const patch = await admin('PATCH', '/api/v1/namespaces/api/configmaps/kube-root-ca.crt', {
        body: { metadata: { labels: { a: true } } },
        contentType: 'application/merge-patch+json',
      });
      assert.equal(patch.status, 400);
      const text = await admin('POST', '/api/v1/namespaces/api/configmaps', { raw: '{}', contentType: 'text/plain' });
      assert.equal(text.status, 415);
      assert.equal(text.body.reason, 'UnsupportedMediaType');
      const yaml = await admin('POST', '/api/v1/namespaces/api/configmaps', {
        raw: 'metadata:\n  name: from-yaml\n',
        contentType: 'application/yaml',
      });
      assert.equal(yaml.status, 201, yaml.text);
      const rv = await admin('GET', '/api/v1/namespaces/api/configmaps?watch=1&resourceVersion=abc');
      assert.equal(rv.status, 400);
    });

    it('bounds: a body over 3 MiB is 413, request headers over 16 KiB are 431', async () => {
      const big = await admin('POST', '/api/v1/namespaces/api/configmaps', {
        raw: Buffer.alloc(3 * 1024 * 1024 + 10, 'a'),
      });
      assert.equal(big.status, 413);
      assert.equal(big.body.reason, 'RequestEntityTooLarge');
      const huge = await admin('GET', '/version', { headers: { 'X-Filler': 'x'.repeat(20 * 1024) } });
      assert.equal(huge.status, 431);
    });
  });

  describe('load shedding', () => {
    it('beyond maxRequestsInFlight, requests get 429 TooManyRequests with Retry-After', async () => {
      const small = await startAuthority({ listen: '127.0.0.1:0', maxRequestsInFlight: 1 });
      // one request holds the only slot: its body never completes
      const held = request(
        {
          hostname: '127.0.0.1',
          port: new URL(small.url).port,
          path: '/api/v1/namespaces/default/configmaps',
          method: 'POST',
          ca: small.caPem,
          agent: false,
          headers: {
            Authorization: `Bearer ${small.adminToken}`,
            'Content-Type': 'application/json',
            'Content-Length': '1000',
          },
        },
        () => undefined,
      );
      held.on('error', () => undefined);
      held.write('{"metadata":');
      try {
        let r = await call(small.url, small.caPem, 'GET', '/version', { token: small.adminToken });
        for (let i = 0; i < 50 && r.status !== 429; i++) {
          await new Promise((res) => setTimeout(res, 50));
          r = await call(small.url, small.caPem, 'GET', '/version', { token: small.adminToken });
        }
        assert.equal(r.status, 429);
        assert.equal(r.body.reason, 'TooManyRequests');
        assert.equal(r.headers['retry-after'], '1');
        held.destroy();
        let after = await call(small.url, small.caPem, 'GET', '/version', { token: small.adminToken });
        for (let i = 0; i < 50 && after.status !== 200; i++) {
          await new Promise((res) => setTimeout(res, 50));
          after = await call(small.url, small.caPem, 'GET', '/version', { token: small.adminToken });
        }
        assert.equal(after.status, 200, 'the slot is free again once the held request is gone');
      } finally {
        held.destroy();
        await small.stop();
      }
    });
  });

  describe('objects', () => {
    it('sets uid, resourceVersion, creationTimestamp; generation only changes with the spec', async () => {
      const dep = {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', labels: { app: 'web' } },
        spec: {
          selector: { matchLabels: { app: 'web' } },
          template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx:1' }] } },
        },
      };
      const c = await admin('POST', '/apis/apps/v1/namespaces/api/deployments', { body: dep });
      assert.equal(c.status, 201, c.text);
      const m = c.body.metadata;
      assert.match(m.uid, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      assert.match(m.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.equal(m.generation, 1);
      assert.equal(m.namespace, 'api');
      const labelled = await admin('PATCH', '/apis/apps/v1/namespaces/api/deployments/web', {
        body: { metadata: { labels: { tier: 'front' } } },
        contentType: 'application/merge-patch+json',
      });
      assert.equal(labelled.status, 200);
      assert.equal(labelled.body.metadata.generation, 1, 'a metadata change keeps the generation');
      assert.deepEqual(labelled.body.metadata.labels, { app: 'web', tier: 'front' });
      const image = await admin('PATCH', '/apis/apps/v1/namespaces/api/deployments/web', {
        body: { spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } } } },
        contentType: 'application/strategic-merge-patch+json',
      });
      assert.equal(image.body.metadata.generation, 2);
      assert.equal(image.body.spec.template.spec.containers.length, 1, 'strategic merge by container name');
      assert.equal(image.body.metadata.uid, m.uid);
      const jp = await admin('PATCH', '/apis/apps/v1/namespaces/api/deployments/web', {
        body: [{ op: 'replace', path: '/spec/replicas', value: 3 }],
        contentType: 'application/json-patch+json',
      });
      assert.equal(jp.body.spec.replicas, 3);
      assert.equal(jp.body.metadata.generation, 3);
    });

    it('lists with label selectors', async () => {
      for (const [name, env] of [
        ['l1', 'prod'],
        ['l2', 'dev'],
        ['l3', 'prod'],
      ]) {
        await admin('POST', '/api/v1/namespaces/api/configmaps', {
          body: { metadata: { name, labels: { env: env, sel: 'yes' } } },
        });
      }
      const names = async (sel: string) =>
        (
          (await admin('GET', `/api/v1/namespaces/api/configmaps?labelSelector=${encodeURIComponent(sel)}`)).body
            .items as Obj[]
        ).map((o) => o.metadata.name);
      assert.deepEqual(await names('sel=yes,env=prod'), ['l1', 'l3']);
      assert.deepEqual(await names('sel=yes,env!=prod'), ['l2']);
      assert.deepEqual(await names('env in (dev),sel'), ['l2']);
      const list = await admin('GET', '/api/v1/namespaces/api/configmaps');
      assert.equal(list.body.kind, 'ConfigMapList');
      assert.match(list.body.metadata.resourceVersion, /^\d+$/);
    });

    it('a new namespace gets its default ServiceAccount; deleting it removes its objects', async () => {
      assert.equal((await ns('short-lived')).status, 201);
      assert.equal((await admin('GET', '/api/v1/namespaces/short-lived/serviceaccounts/default')).status, 200);
      await admin('POST', '/api/v1/namespaces/short-lived/configmaps', { body: { metadata: { name: 'c' } } });
      const del = await admin('DELETE', '/api/v1/namespaces/short-lived');
      assert.equal(del.status, 200);
      assert.equal(del.body.kind, 'Namespace');
      assert.equal(del.body.status.phase, 'Terminating');
      assert.ok(del.body.metadata.deletionTimestamp);
      // while terminating: objects still readable, new content refused, a second delete is a conflict
      assert.equal((await admin('GET', '/api/v1/namespaces/short-lived/configmaps/c')).status, 200);
      const refused = await admin('POST', '/api/v1/namespaces/short-lived/configmaps', {
        body: { metadata: { name: 'late' } },
      });
      assert.equal(refused.status, 403);
      assert.equal(
        refused.body.message,
        'unable to create new content in namespace short-lived because it is being terminated',
      );
      assert.equal((await admin('DELETE', '/api/v1/namespaces/short-lived')).status, 409);
      // then the namespace controller's work: contents and namespace are gone (bounded wait)
      for (let i = 0; i < 50 && (await admin('GET', '/api/v1/namespaces/short-lived')).status !== 404; i++)
        await new Promise((r) => setTimeout(r, 100));
      assert.equal((await admin('GET', '/api/v1/namespaces/short-lived')).status, 404);
      assert.equal((await admin('GET', '/api/v1/namespaces/short-lived/configmaps/c')).status, 404);
      const immortal = await admin('DELETE', '/api/v1/namespaces/default');
      assert.equal(immortal.status, 403);
      assert.equal(immortal.body.message, 'namespaces "default" is forbidden: this namespace may not be deleted');
    });

    it('serves custom resources once their CRD exists, and stops when it is deleted', async () => {
      const path = '/apis/monitoring.coreos.com/v1/namespaces/api/servicemonitors';
      assert.equal((await admin('GET', path)).status, 404);
      const crd = await admin('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
        body: {
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'CustomResourceDefinition',
          metadata: { name: 'servicemonitors.monitoring.coreos.com' },
          spec: {
            group: 'monitoring.coreos.com',
            scope: 'Namespaced',
            names: { plural: 'servicemonitors', singular: 'servicemonitor', kind: 'ServiceMonitor' },
            versions: [
              {
                name: 'v1',
                served: true,
                storage: true,
                schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
              },
            ],
          },
        },
      });
      assert.equal(crd.status, 201, crd.text);
      const sm = await admin('POST', path, {
        body: {
          apiVersion: 'monitoring.coreos.com/v1',
          kind: 'ServiceMonitor',
          metadata: { name: 'm' },
          spec: { endpoints: [{ port: 'https' }] },
        },
      });
      assert.equal(sm.status, 201, sm.text);
      assert.equal((await admin('GET', `${path}/m`)).body.spec.endpoints[0].port, 'https');
      assert.equal(
        (
          await admin(
            'DELETE',
            '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/servicemonitors.monitoring.coreos.com',
          )
        ).status,
        200,
      );
      assert.equal((await admin('GET', path)).status, 404);
    });
  });

  describe('watch', () => {
    it('streams ADDED, MODIFIED and DELETED for matching objects from a resourceVersion', async () => {
      const list = await admin('GET', '/api/v1/namespaces/api/secrets?labelSelector=w%3D1');
      const w = await watch(
        a.url,
        a.caPem,
        `/api/v1/namespaces/api/secrets?watch=1&labelSelector=w%3D1&resourceVersion=${list.body.metadata.resourceVersion}`,
        a.adminToken,
      );
      try {
        assert.equal(w.status, 200);
        await admin('POST', '/api/v1/namespaces/api/secrets', { body: { metadata: { name: 'other' } } });
        await admin('POST', '/api/v1/namespaces/api/secrets', {
          body: { metadata: { name: 's', labels: { w: '1' } }, stringData: { k: 'v' } },
        });
        await admin('PATCH', '/api/v1/namespaces/api/secrets/s', {
          body: { metadata: { annotations: { x: 'y' } } },
          contentType: 'application/merge-patch+json',
        });
        await admin('DELETE', '/api/v1/namespaces/api/secrets/s');
        const evs = await w.waitFor(3);
        assert.deepEqual(
          evs.map((e) => `${e.type} ${e.object.metadata.name}`),
          ['ADDED s', 'MODIFIED s', 'DELETED s'],
        );
        assert.equal(evs[1].object.metadata.annotations.x, 'y');
        const rvs = evs.map((e) => Number(e.object.metadata.resourceVersion));
        assert.ok(rvs[0] < rvs[1] && rvs[1] < rvs[2], 'resourceVersions increase');
      } finally {
        w.close();
      }
    });

    it('answers a too-old resourceVersion with an ERROR event carrying 410 Expired', async () => {
      const small = await startAuthority({ listen: '127.0.0.1:0', historyLimit: 5 });
      try {
        for (let i = 0; i < 10; i++) {
          await call(small.url, small.caPem, 'POST', '/api/v1/namespaces/default/configmaps', {
            token: small.adminToken,
            body: { metadata: { name: `c${i}` } },
          });
        }
        const w = await watch(
          small.url,
          small.caPem,
          '/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=2',
          small.adminToken,
        );
        const [ev] = await w.waitFor(1);
        await w.ended;
        assert.equal(ev.type, 'ERROR');
        assert.equal(ev.object.kind, 'Status');
        assert.equal(ev.object.code, 410);
        assert.equal(ev.object.reason, 'Expired');
      } finally {
        await small.stop();
      }
    });

    it('a streaming list (sendInitialEvents=true) sends the current state, then a bookmark marking its end', async () => {
      await admin('POST', '/api/v1/namespaces', { body: { metadata: { name: 'wl' } } });
      const w = await watch(
        a.url,
        a.caPem,
        '/api/v1/namespaces/wl/serviceaccounts?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true',
        a.adminToken,
      );
      try {
        const evs = await w.waitFor(2);
        assert.deepEqual(
          evs.map((e) => e.type),
          ['ADDED', 'BOOKMARK'],
        );
        assert.equal(evs[0].object.metadata.name, 'default');
        assert.equal(evs[1].object.metadata.annotations['k8s.io/initial-events-end'], 'true');
      } finally {
        w.close();
      }
    });

    it('ends a watch after timeoutSeconds', async () => {
      const w = await watch(a.url, a.caPem, '/api/v1/namespaces/api/configmaps?watch=1&timeoutSeconds=1', a.adminToken);
      const t0 = Date.now();
      await Promise.race([
        w.ended,
        new Promise((_, rej) => setTimeout(() => rej(new Error('watch did not end within 5 s')), 5000)),
      ]);
      assert.ok(Date.now() - t0 < 5000);
      assert.ok(
        w.events.every((e) => e.type === 'ADDED'),
        'only the initial state',
      );
    });
  });

  describe('authentication, authorization and impersonation', () => {
    it('a service account is allowed exactly what its RoleBinding grants, in that namespace', async () => {
      await ns('rb-other');
      const token = await saToken('api', 'reader');
      const sa = as(token);
      assert.equal((await sa('GET', '/api/v1/namespaces/api/configmaps')).status, 403);
      const rb = await admin('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/api/rolebindings', {
        body: {
          metadata: { name: 'reader-view' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
          subjects: [{ kind: 'ServiceAccount', name: 'reader' }],
        },
      });
      assert.equal(rb.status, 201, rb.text);
      assert.equal(
        (await sa('GET', '/api/v1/namespaces/api/configmaps')).status,
        200,
        'view is aggregated from system:aggregate-to-view',
      );
      assert.equal((await sa('GET', '/api/v1/namespaces/api/secrets')).status, 403, 'view does not include secrets');
      const other = await sa('GET', '/api/v1/namespaces/rb-other/configmaps');
      assert.equal(other.status, 403);
      assert.equal(
        other.body.message,
        'configmaps is forbidden: User "system:serviceaccount:api:reader" cannot list resource "configmaps" in API group "" in the namespace "rb-other"',
      );
      assert.equal(
        (await sa('POST', '/api/v1/namespaces/api/configmaps', { body: { metadata: { name: 'w' } } })).status,
        403,
      );
    });

    it('impersonating a service account gives it the service-account groups and system:authenticated', async () => {
      const r = await admin('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
        headers: { 'Impersonate-User': 'system:serviceaccount:api:whoever' },
      });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.status.userInfo.username, 'system:serviceaccount:api:whoever');
      assert.deepEqual(r.body.status.userInfo.groups, [
        'system:serviceaccounts',
        'system:serviceaccounts:api',
        'system:authenticated',
      ]);
      const g = await admin('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
        body: {},
        headers: { 'Impersonate-User': 'jane', 'Impersonate-Group': ['devs', 'ops'] },
      });
      assert.deepEqual(g.body.status.userInfo.groups, ['devs', 'ops', 'system:authenticated']);
    });

    it('impersonation needs the impersonate verb: denied with kube message, allowed once granted', async () => {
      const token = await saToken('api', 'impostor');
      const h = { 'Impersonate-User': 'jane' };
      const denied = await call(a.url, a.caPem, 'GET', '/api/v1/namespaces', { token, headers: h });
      assert.equal(denied.status, 403);
      assert.equal(
        denied.body.message,
        'users "jane" is forbidden: User "system:serviceaccount:api:impostor" cannot impersonate resource "users" in API group "" at the cluster scope',
      );
      await admin('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
        body: {
          metadata: { name: 'impersonate-jane' },
          rules: [{ apiGroups: [''], resources: ['users'], verbs: ['impersonate'], resourceNames: ['jane'] }],
        },
      });
      await admin('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
        body: {
          metadata: { name: 'impostor-jane' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'impersonate-jane' },
          subjects: [{ kind: 'ServiceAccount', name: 'impostor', namespace: 'api' }],
        },
      });
      const asJane = await call(a.url, a.caPem, 'GET', '/api/v1/namespaces', { token, headers: h });
      assert.equal(asJane.status, 403, 'jane herself may not list namespaces');
      assert.match(asJane.body.message, /User "jane" cannot list/);
      const bob = await call(a.url, a.caPem, 'GET', '/api/v1/namespaces', {
        token,
        headers: { 'Impersonate-User': 'bob' },
      });
      assert.equal(bob.status, 403);
      assert.match(bob.body.message, /^users "bob" is forbidden/);
    });

    it('aggregated ClusterRoles carry the rules of the roles they select, and pick up new ones (docs: aggregate-to-view)', async () => {
      const view = (await admin('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/view')).body;
      assert.ok((view.rules as Obj[]).some((r) => r.resources?.includes('configmaps') && r.verbs.includes('list')));
      const extra = await admin('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
        body: {
          metadata: { name: 'monitoring-view', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } },
          rules: [
            { apiGroups: ['monitoring.coreos.com'], resources: ['servicemonitors'], verbs: ['get', 'list', 'watch'] },
          ],
        },
      });
      assert.equal(extra.status, 201, extra.text);
      for (const role of ['view', 'edit', 'admin']) {
        const r = (await admin('GET', `/apis/rbac.authorization.k8s.io/v1/clusterroles/${role}`)).body;
        assert.ok(
          (r.rules as Obj[]).some((x) => x.resources?.includes('servicemonitors')),
          `${role} aggregates the new rule`,
        );
      }
      const sar = await admin('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        body: {
          spec: {
            user: 'system:serviceaccount:api:reader',
            resourceAttributes: {
              namespace: 'api',
              verb: 'list',
              group: 'monitoring.coreos.com',
              resource: 'servicemonitors',
            },
          },
        },
      });
      assert.equal(sar.body.status.allowed, true, 'reader is bound to view in namespace api');
      assert.equal(
        sar.body.status.reason,
        'RBAC: allowed by RoleBinding "reader-view/api" of ClusterRole "view" to ServiceAccount "reader/api"',
      );
      assert.equal(
        (await admin('DELETE', '/apis/rbac.authorization.k8s.io/v1/clusterroles/monitoring-view')).status,
        200,
      );
      const after = (await admin('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/view')).body;
      assert.ok(!(after.rules as Obj[]).some((x) => x.resources?.includes('servicemonitors')), 'removed again');
    });

    it('SelfSubjectRulesReview lists the caller rules (kubectl auth can-i --list)', async () => {
      const r = await admin('POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
        body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: 'api' } },
        headers: { 'Impersonate-User': 'system:serviceaccount:api:reader' },
      });
      assert.equal(r.status, 201, r.text);
      const res = r.body.status.resourceRules as Obj[];
      assert.ok(
        res.some((x) => x.resources.includes('configmaps') && x.verbs.includes('list')),
        'view rules via the RoleBinding',
      );
      assert.ok(
        res.some((x) => x.resources.includes('selfsubjectaccessreviews')),
        'system:basic-user',
      );
      assert.ok(
        (r.body.status.nonResourceRules as Obj[]).some((x) => x.nonResourceURLs.includes('/version')),
        'system:public-info-viewer',
      );
      assert.equal(r.body.status.incomplete, false);
    });
  });
});
