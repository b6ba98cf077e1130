// TokenRequest → TokenReview round trips against the running authority over HTTPS, and RBAC on the authority's own
// API: the manager's service account may create TokenReviews/SubjectAccessReviews only once it is bound.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';

type Obj = Record<string, any>;

describe('authority: tokens and reviews', () => {
  let cluster: TestCluster;
  before(async () => {
    cluster = await startTestCluster();
  });
  after(async () => {
    await cluster?.stop();
  });

  const review = (token: string, audiences?: string[]) =>
    cluster.admin.create<Obj>('/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: audiences ? { token, audiences } : { token },
    });

  it('issues a JWT with the service-account claims', async () => {
    await cluster.serviceAccountToken('claims', 'sa1');
    const tr = await cluster.admin.create<Obj>('/api/v1/namespaces/claims/serviceaccounts/sa1/token', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 1200, audiences: ['aud-a'] },
    });
    assert.equal(tr.kind, 'TokenRequest');
    const sa = await cluster.admin.get<Obj>('/api/v1/namespaces/claims/serviceaccounts/sa1');
    const [h, p] = tr.status.token.split('.');
    const header = JSON.parse(Buffer.from(h, 'base64url').toString());
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    assert.equal(header.alg, 'ES256');
    assert.equal(claims.sub, 'system:serviceaccount:claims:sa1');
    assert.deepEqual(claims.aud, ['aud-a']);
    assert.equal(claims.exp - claims.iat, 1200);
    assert.equal(claims.nbf, claims.iat);
    assert.equal(typeof claims.iss, 'string');
    assert.deepEqual(claims['kubernetes.io'], {
      namespace: 'claims',
      serviceaccount: { name: 'sa1', uid: sa.metadata.uid },
    });
    assert.equal(Date.parse(tr.status.expirationTimestamp) / 1000, claims.exp);
  });

  it('rejects expirationSeconds below 600 with 422 Invalid', async () => {
    await cluster.serviceAccountToken('claims', 'sa1');
    const r = await cluster.admin.raw<Obj>('POST', '/api/v1/namespaces/claims/serviceaccounts/sa1/token', {
      body: { spec: { expirationSeconds: 599 } },
    });
    assert.equal(r.status, 422);
    assert.equal(r.body.reason, 'Invalid');
    const missing = await cluster.admin.raw<Obj>('POST', '/api/v1/namespaces/claims/serviceaccounts/nobody/token', {
      body: { spec: {} },
    });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.message, 'serviceaccounts "nobody" not found');
  });

  it('reviews a valid token: user, uid, groups, default audience', async () => {
    const token = await cluster.serviceAccountToken('team-a', 'scraper');
    const sa = await cluster.admin.get<Obj>('/api/v1/namespaces/team-a/serviceaccounts/scraper');
    const r = await review(token);
    assert.equal(r.status.authenticated, true);
    assert.equal(r.status.user.username, 'system:serviceaccount:team-a:scraper');
    assert.equal(r.status.user.uid, sa.metadata.uid);
    assert.deepEqual(r.status.user.groups, [
      'system:serviceaccounts',
      'system:serviceaccounts:team-a',
      'system:authenticated',
    ]);
    assert.equal(r.status.error, undefined);
  });

  it('rejects a wrong audience, and accepts the right one', async () => {
    const token = await cluster.serviceAccountToken('team-a', 'aud', { audiences: ['metrics'] });
    const wrong = await review(token, ['other']);
    assert.equal(wrong.status.authenticated, undefined);
    assert.match(wrong.status.error, /audiences/);
    const apiDefault = await review(token);
    assert.notEqual(apiDefault.status.authenticated, true, 'a token for "metrics" is not valid for the API audience');
    const right = await review(token, ['metrics', 'x']);
    assert.equal(right.status.authenticated, true);
    assert.deepEqual(right.status.audiences, ['metrics']);
  });

  it('rejects a token once its service account is deleted, and after re-creation (new uid)', async () => {
    const token = await cluster.serviceAccountToken('team-b', 'ephemeral');
    assert.equal((await review(token)).status.authenticated, true);
    await cluster.admin.delete('/api/v1/namespaces/team-b/serviceaccounts/ephemeral');
    const gone = await review(token);
    assert.notEqual(gone.status.authenticated, true);
    assert.match(gone.status.error, /deleted/);
    const fresh = await cluster.serviceAccountToken('team-b', 'ephemeral');
    const stale = await review(token);
    assert.notEqual(stale.status.authenticated, true);
    assert.match(stale.status.error, /UID/);
    assert.equal((await review(fresh)).status.authenticated, true);
  });

  it('a token bound to a Secret is valid only while that Secret exists; Pods are not found, other kinds refused', async () => {
    await cluster.serviceAccountToken('bound', 'app');
    const secret = await cluster.admin.create<Obj>('/api/v1/namespaces/bound/secrets', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'anchor' },
    });
    const tr = await cluster.admin.create<Obj>('/api/v1/namespaces/bound/serviceaccounts/app/token', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Secret', name: 'anchor' } },
    });
    const claims = JSON.parse(Buffer.from(tr.status.token.split('.')[1], 'base64url').toString());
    assert.deepEqual(claims['kubernetes.io'].secret, { name: 'anchor', uid: secret.metadata.uid });
    assert.equal((await review(tr.status.token)).status.authenticated, true);
    await cluster.admin.delete('/api/v1/namespaces/bound/secrets/anchor');
    const after = await review(tr.status.token);
    assert.equal(after.status.authenticated, undefined);
    assert.match(after.status.error, /secret bound\/anchor has been deleted/);
    const pod = await cluster.admin.raw<Obj>('POST', '/api/v1/namespaces/bound/serviceaccounts/app/token', {
      body: { spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'p' } } },
    });
    assert.equal(pod.status, 404);
    const cm = await cluster.admin.raw<Obj>('POST', '/api/v1/namespaces/bound/serviceaccounts/app/token', {
      body: { spec: { boundObjectRef: { apiVersion: 'v1', kind: 'ConfigMap', name: 'c' } } },
    });
    assert.equal(cm.status, 400);
  });

  it('rejects garbage and tampered tokens', async () => {
    const garbage = await review('not-a-token');
    assert.notEqual(garbage.status.authenticated, true);
    assert.ok(garbage.status.error);
    const token = await cluster.serviceAccountToken('team-a', 'scraper');
    const [h, p, s] = token.split('.');
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    claims.sub = 'system:serviceaccount:kube-system:admin';
    const tampered = `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`;
    assert.notEqual((await review(tampered)).status.authenticated, true);
  });

  it('rejects an expired token (the authority clock moved past exp + 60 s of leeway)', async () => {
    let offset = 0;
    const clocked = await startTestCluster({ clock: () => Date.now() + offset });
    try {
      const token = await clocked.serviceAccountToken('ns', 'short', { expirationSeconds: 600 });
      const ask = () => clocked.admin.create<Obj>('/apis/authentication.k8s.io/v1/tokenreviews', { spec: { token } });
      assert.equal((await ask()).status.authenticated, true);
      offset = 630_000; // within kube's 60 s leeway
      assert.equal((await ask()).status.authenticated, true);
      offset = 700_000;
      const r = await ask();
      assert.notEqual(r.status.authenticated, true);
      assert.match(r.status.error, /expired/);
    } finally {
      await clocked.stop();
    }
  });

  it('an empty token is a 400 BadRequest', async () => {
    const r = await cluster.admin.raw<Obj>('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      body: { spec: { token: '' } },
    });
    assert.equal(r.status, 400);
    assert.equal(r.body.kind, 'Status');
  });

  it('the manager SA is denied TokenReview/SAR creation until bound to metrics-auth-role', async () => {
    const token = await cluster.serviceAccountToken('mgr-ns', 'manager');
    const asMgr = cluster.admin.withToken(token);
    try {
      const denied = await asMgr.raw<Obj>('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
        body: { spec: { token } },
      });
      assert.equal(denied.status, 403);
      assert.equal(denied.body.reason, 'Forbidden');
      assert.equal(
        denied.body.message,
        'tokenreviews.authentication.k8s.io is forbidden: User "system:serviceaccount:mgr-ns:manager" cannot create resource "tokenreviews" in API group "authentication.k8s.io" at the cluster scope',
      );
      const cfg = await cluster.managerConfig('mgr-ns', 'manager');
      const mgr = new KubeClient(cfg);
      try {
        const ok = await mgr.create<Obj>('/apis/authentication.k8s.io/v1/tokenreviews', { spec: { token } });
        assert.equal(ok.status.authenticated, true);
        const sar = await mgr.create<Obj>('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
          spec: {
            user: 'system:serviceaccount:mgr-ns:manager',
            groups: ['system:authenticated'],
            nonResourceAttributes: { path: '/metrics', verb: 'get' },
          },
        });
        assert.equal(sar.status.allowed, false);
        // the manager may not read secrets
        const secrets = await mgr.raw<Obj>('GET', '/api/v1/namespaces/default/secrets');
        assert.equal(secrets.status, 403);
      } finally {
        mgr.close();
      }
    } finally {
      asMgr.close();
    }
  });

  it('a reader bound to metrics-reader is allowed GET /metrics by SubjectAccessReview', async () => {
    const cfg = await cluster.managerConfig();
    const readerToken = await cluster.readerToken();
    const mgr = new KubeClient(cfg);
    try {
      const tr = await mgr.create<Obj>('/apis/authentication.k8s.io/v1/tokenreviews', { spec: { token: readerToken } });
      assert.equal(tr.status.authenticated, true);
      const u = tr.status.user;
      const ask = (path: string, verb: string) =>
        mgr.create<Obj>('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
          spec: { user: u.username, uid: u.uid, groups: u.groups, nonResourceAttributes: { path, verb } },
        });
      const allowed = await ask('/metrics', 'get');
      assert.equal(allowed.status.allowed, true);
      assert.match(allowed.status.reason, /metrics-reader/);
      assert.equal((await ask('/metrics', 'post')).status.allowed, false);
      assert.equal((await ask('/debug', 'get')).status.allowed, false);
    } finally {
      mgr.close();
    }
  });

  it('unauthenticated and bad-token requests: 401 for a bad token, 403 for anonymous resource access', async () => {
    const bad = cluster.admin.withToken('nope');
    const anon = new KubeClient({ server: cluster.authority.url, ca: cluster.authority.caPem });
    try {
      const r = await bad.raw<Obj>('GET', '/api/v1/namespaces');
      assert.equal(r.status, 401);
      assert.equal(r.body.reason, 'Unauthorized');
      const a = await anon.raw<Obj>('GET', '/api/v1/namespaces');
      assert.equal(a.status, 403);
      assert.match(a.body.message, /User "system:anonymous" cannot list resource "namespaces"/);
      const v = await anon.raw<Obj>('GET', '/version');
      assert.equal(v.status, 200, 'system:public-info-viewer lets anyone read /version');
    } finally {
      bad.close();
      anon.close();
    }
  });
});
