// Long-lived service-account tokens in Secrets of type kubernetes.io/service-account-token, as the Kubernetes
// documentation describes them ("Manually create a long-lived API token for a ServiceAccount"): the token controller
// fills in token, ca.crt and namespace; the token authenticates as the service account while the Secret holds it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startAuthority, type Authority } from '../../packages/envtest/src/index.js';
import { call } from './https.js';

describe('legacy service-account token Secrets', () => {
  let a: Authority;
  const admin = (m: string, p: string, body?: unknown) => call(a.url, a.caPem, m, p, { token: a.adminToken, body });
  const secret = (name: string, sa?: string) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/service-account-token',
    metadata: { name, annotations: sa ? { 'kubernetes.io/service-account.name': sa } : {} },
  });
  const review = (token: string) =>
    admin('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token },
    });

  before(async () => {
    a = await startAuthority({ listen: '127.0.0.1:0' });
    await admin('POST', '/api/v1/namespaces', { metadata: { name: 'mon' } });
    await admin('POST', '/api/v1/namespaces/mon/serviceaccounts', { metadata: { name: 'prometheus' } });
  });
  after(async () => {
    await a?.stop();
  });

  it('fills in token, ca.crt, namespace and the service account uid', async () => {
    const r = await admin('POST', '/api/v1/namespaces/mon/secrets', secret('prometheus-token', 'prometheus'));
    assert.equal(r.status, 201, r.text);
    const sa = (await admin('GET', '/api/v1/namespaces/mon/serviceaccounts/prometheus')).body;
    const got = (await admin('GET', '/api/v1/namespaces/mon/secrets/prometheus-token')).body;
    assert.equal(got.metadata.annotations['kubernetes.io/service-account.uid'], sa.metadata.uid);
    assert.equal(Buffer.from(got.data['ca.crt'], 'base64').toString(), a.caPem);
    assert.equal(Buffer.from(got.data.namespace, 'base64').toString(), 'mon');
    const token = Buffer.from(got.data.token, 'base64').toString();
    assert.equal(token.split('.').length, 3);
  });

  it('the token authenticates as the service account, with no expiry, until the Secret is deleted', async () => {
    const got = (await admin('GET', '/api/v1/namespaces/mon/secrets/prometheus-token')).body;
    const token = Buffer.from(got.data.token, 'base64').toString();
    const tr = await review(token);
    assert.equal(tr.body.status.authenticated, true, tr.text);
    assert.equal(tr.body.status.user.username, 'system:serviceaccount:mon:prometheus');
    assert.deepEqual(tr.body.status.user.groups, [
      'system:serviceaccounts',
      'system:serviceaccounts:mon',
      'system:authenticated',
    ]);
    const who = await call(a.url, a.caPem, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      token,
      body: {},
    });
    assert.equal(who.body.status.userInfo.username, 'system:serviceaccount:mon:prometheus');
    assert.equal((await admin('DELETE', '/api/v1/namespaces/mon/secrets/prometheus-token')).status, 200);
    assert.equal((await review(token)).body.status.authenticated, undefined, 'deleting the Secret revokes the token');
    assert.equal((await call(a.url, a.caPem, 'GET', '/version', { token })).status, 401);
  });

  it('requires the service-account name annotation (422)', async () => {
    const r = await admin('POST', '/api/v1/namespaces/mon/secrets', secret('no-sa'));
    assert.equal(r.status, 422);
    assert.match(r.body.message, /metadata\.annotations\[kubernetes\.io\/service-account\.name\]: Required value/);
  });
});
