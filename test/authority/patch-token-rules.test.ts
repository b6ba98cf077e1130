// Small rules where the authority differed from a real kube-apiserver: a strategic merge patch on a
// custom resource (K44), a `$patch: delete` of a list's last entry (K43), a TokenRequest whose body names another
// service account or namespace (K83), and the empty name of a TokenRequest's spec errors (K21). Expected answers
// are the recorded ones in ../shared/reference/kube-apiserver-answers and the rules in kube-apiserver-rules.md §4–5.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startAuthority, type Authority } from '../../packages/envtest/src/index.js';
import { call, type CallOptions } from './https.js';

describe('patch types and TokenRequest rules', () => {
  let a: Authority;
  let admin: (method: string, path: string, o?: CallOptions) => ReturnType<typeof call>;

  before(async () => {
    a = await startAuthority({ listen: '127.0.0.1:0' });
    admin = (method, path, o = {}) => call(a.url, a.caPem, method, path, { token: a.adminToken, ...o });
    assert.equal((await admin('POST', '/api/v1/namespaces', { body: { metadata: { name: 'rules' } } })).status, 201);
    assert.equal(
      (await admin('POST', '/api/v1/namespaces/rules/serviceaccounts', { body: { metadata: { name: 'prom' } } }))
        .status,
      201,
    );
  });
  after(async () => {
    await a?.stop();
  });

  it('a strategic merge patch on a custom resource is 415 with the types custom resources take (K44); merge patch works (K45)', async () => {
    const crd = await admin('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      body: {
        metadata: { name: 'widgets.example.com' },
        spec: {
          group: 'example.com',
          scope: 'Namespaced',
          names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
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
    const path = '/apis/example.com/v1/namespaces/rules/widgets';
    assert.equal(
      (
        await admin('POST', path, {
          body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { a: 1 } },
        })
      ).status,
      201,
    );
    for (const name of ['w', 'missing']) {
      const r = await admin('PATCH', `${path}/${name}`, {
        contentType: 'application/strategic-merge-patch+json',
        body: { spec: { jobLabel: 'x' } },
      });
      assert.equal(r.status, 415, name);
      assert.equal(r.body.reason, 'UnsupportedMediaType');
      assert.equal(
        r.body.message,
        'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
      );
      assert.equal(r.body.details, undefined);
    }
    const merged = await admin('PATCH', `${path}/w`, {
      contentType: 'application/merge-patch+json',
      body: { spec: { jobLabel: 'y' } },
    });
    assert.equal(merged.status, 200, merged.text);
    assert.equal(merged.body.spec.jobLabel, 'y');
  });

  it('$patch: delete of the last env entry leaves no env field (K43)', async () => {
    const d = await admin('POST', '/apis/apps/v1/namespaces/rules/deployments', {
      body: {
        metadata: { name: 'd1' },
        spec: {
          selector: { matchLabels: { app: 'd1' } },
          template: {
            metadata: { labels: { app: 'd1' } },
            spec: { containers: [{ name: 'nginx', image: 'nginx:2', env: [{ name: 'A', value: '1' }] }] },
          },
        },
      },
    });
    assert.equal(d.status, 201, d.text);
    const r = await admin('PATCH', '/apis/apps/v1/namespaces/rules/deployments/d1', {
      contentType: 'application/strategic-merge-patch+json',
      body: {
        spec: { template: { spec: { containers: [{ name: 'nginx', env: [{ name: 'A', $patch: 'delete' }] }] } } },
      },
    });
    assert.equal(r.status, 200, r.text);
    // the recorded answer, as kubectl's jsonpath printed the containers
    assert.deepEqual(r.body.spec.template.spec.containers, [
      {
        image: 'nginx:2',
        imagePullPolicy: 'IfNotPresent',
        name: 'nginx',
        resources: {},
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
      },
    ]);
  });

  it('a TokenRequest naming another service account or namespace in its body is Invalid (K83)', async () => {
    const url = '/api/v1/namespaces/rules/serviceaccounts/prom/token';
    const other = await admin('POST', url, {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', metadata: { name: 'other' }, spec: {} },
    });
    assert.equal(other.status, 422);
    assert.equal(
      other.body.message,
      'TokenRequest.authentication.k8s.io "prom" is invalid: metadata.name: Invalid value: "other": must match the service account name if specified',
    );
    const ns = await admin('POST', url, { body: { metadata: { namespace: 'default' }, spec: {} } });
    assert.equal(ns.status, 422);
    assert.equal(
      ns.body.message,
      'TokenRequest.authentication.k8s.io "prom" is invalid: metadata.namespace: Invalid value: "default": must match the service account namespace if specified',
    );
    // the body's name is checked before the service account exists
    const missing = await admin('POST', '/api/v1/namespaces/rules/serviceaccounts/missing/token', {
      body: { metadata: { name: 'x' }, spec: {} },
    });
    assert.equal(missing.status, 422);
    const same = await admin('POST', url, { body: { metadata: { name: 'prom', namespace: 'rules' }, spec: {} } });
    assert.equal(same.status, 201, same.text);
  });

  it('a too short expiration is reported with an empty name (K21)', async () => {
    const r = await admin('POST', '/api/v1/namespaces/rules/serviceaccounts/prom/token', {
      body: { spec: { expirationSeconds: 60 } },
    });
    assert.equal(r.status, 422);
    assert.equal(
      r.body.message,
      'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes',
    );
  });
});
