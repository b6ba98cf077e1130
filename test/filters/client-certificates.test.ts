// Client-certificate authentication over real TLS: with `clientCAFile`, a certificate signed by that CA
// identifies the caller (CN user, O groups) without a TokenReview, then a static rule or RBAC (a SubjectAccessReview)
// decides; one from another CA gets 401; no certificate falls back to the bearer token. Reviews are counted where
// they reach the API server (a counting proxy in front of the authority).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { FaultProxy } from '../helpers/fault-proxy.js';
import { generateCA, issueClientCert, type CertKeyPair } from '../helpers/certs.js';
import { scrape, startSecureEndpoint, type SecureEndpoint } from '../helpers/secure-endpoint.js';

/** GET /metrics presenting `cert` (and a bearer token when given). */
function get(port: number, cert?: CertKeyPair, token?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path: '/metrics',
        rejectUnauthorized: false,
        agent: false,
        timeout: 10_000,
        ...(cert ? { cert: cert.certPem, key: cert.keyPem } : {}),
        headers: token ? { authorization: `Bearer ${token}` } : {},
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

describe('client certificates', () => {
  let cluster: TestCluster;
  let proxy: FaultProxy;
  let ep: SecureEndpoint;
  let dir: string;
  let ca: CertKeyPair;
  let otherCa: CertKeyPair;
  let reader: string;
  const reviews = () => [proxy.count('/tokenreviews'), proxy.count('/subjectaccessreviews')];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'client-certs-'));
    cluster = await startTestCluster();
    proxy = new FaultProxy(cluster.authority.url, cluster.authority.caPem);
    await proxy.start();
    ca = await generateCA('scrapers-ca');
    otherCa = await generateCA('someone-elses-ca');
    writeFileSync(join(dir, 'client-ca.crt'), ca.certPem);
    reader = await cluster.readerToken('monitoring', 'prometheus');
    // a user only RBAC knows: bound to the reader role like any scraper
    await cluster.admin.create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'cert-user-reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'metrics-reader' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'rbac-cert-user' }],
    });
    const cfg = await cluster.managerConfig();
    ep = await startSecureEndpoint(
      { server: proxy.url, ca: proxy.caPem, token: cfg.token },
      {
        metrics: { clientCAFile: join(dir, 'client-ca.crt') },
        filter: { staticAuthorization: [{ user: { groups: ['sidecars'] }, path: '/metrics' }] },
      },
    );
  });
  after(async () => {
    await ep?.stop();
    await proxy?.stop();
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a certificate from the client CA identifies its user: a static rule allows without any review', async () => {
    const sidecar = await issueClientCert(ca, 'sidecar-scraper', ['sidecars']);
    const [t0, s0] = reviews();
    assert.equal(await get(ep.port, sidecar), 200);
    assert.equal(await get(ep.port, sidecar), 200);
    assert.deepEqual(reviews(), [t0, s0], 'neither a TokenReview nor a SubjectAccessReview');
  });

  it('a certificate user no rule names is authorized by RBAC (a SubjectAccessReview), allowed or denied', async () => {
    const bound = await issueClientCert(ca, 'rbac-cert-user', ['ops']);
    const unbound = await issueClientCert(ca, 'nobody-in-particular');
    const [t0, s0] = reviews();
    assert.equal(await get(ep.port, bound), 200);
    assert.equal(await get(ep.port, unbound), 403);
    const [t1, s1] = reviews();
    assert.equal(t1, t0, 'no TokenReview: the certificate authenticated');
    assert.equal(s1, s0 + 2);
  });

  it('a certificate from another CA gets 401, even with a valid token; no certificate falls back to the token', async () => {
    const stranger = await issueClientCert(otherCa, 'sidecar-scraper', ['sidecars']);
    assert.equal(await get(ep.port, stranger), 401);
    assert.equal(await get(ep.port, stranger, reader), 401, 'a refused certificate is not replaced by the token');
    assert.equal(await get(ep.port, undefined, reader), 200);
    assert.equal((await scrape(ep.port, {})).status, 401, 'nothing at all');
  });

  it('a clientCAFile without a certificate in it stops the server from starting', async () => {
    writeFileSync(join(dir, 'empty.crt'), 'not a certificate\n');
    const cfg = await cluster.managerConfig();
    await assert.rejects(
      startSecureEndpoint(
        { server: proxy.url, ca: proxy.caPem, token: cfg.token },
        { metrics: { clientCAFile: join(dir, 'empty.crt') } },
      ),
      /clientCAFile .*empty\.crt: no PEM certificate in it/,
    );
  });
});
