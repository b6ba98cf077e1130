/**
 * The cluster's service-account signing keys (src/metrics/filters/issuer-keys.ts), read from the embedded
 * authority's `/openid/v1/jwks` through a counting proxy: which tokens verify, what a failed read does, and how
 * often the keys are read again. Forged tokens are made with jose, independently of the code under test.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { CompactSign } from 'jose';
import { KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';
import { IssuerKeys } from '../../packages/ctrlmetrics/src/metrics/filters/issuer-keys.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { FaultProxy } from '../helpers/fault-proxy.js';
import { createLogger } from '../../packages/ctrlmetrics/src/util/log.js';
import { LogCapture } from '../helpers/log-capture.js';

const logs = new LogCapture();

let cluster: TestCluster;
let proxy: FaultProxy;
let client: KubeClient;

before(async () => {
  cluster = await startTestCluster();
  proxy = new FaultProxy(cluster.authority.url, cluster.authority.caPem);
  await proxy.start();
  const cfg = await cluster.managerConfig();
  client = new KubeClient({ ...cfg, server: proxy.url, ca: proxy.caPem });
});

after(async () => {
  client?.close();
  await proxy?.stop();
  await cluster?.stop();
  logs.restore();
});

const jwksReads = () => proxy.count('/openid/v1/jwks');
const decode = (s: string) => JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as Record<string, unknown>;

describe('IssuerKeys', () => {
  test('a token the cluster issued verifies; garbage, tampered, foreign-key and unsigned tokens do not', async () => {
    const keys = new IssuerKeys(client);
    await keys.load();
    assert.equal(keys.ready, true);
    const real = await cluster.readerToken();
    assert.equal(await keys.signedByCluster(real), true);

    const [h, p, sig] = real.split('.') as [string, string, string];
    const claims = decode(p);
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...claims, sub: 'system:serviceaccount:kube-system:admin' })).toString('base64url')}.${sig}`;
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const foreign = await new CompactSign(Buffer.from(JSON.stringify(claims)))
      .setProtectedHeader({ alg: 'ES256', kid: decode(h).kid as string })
      .sign(privateKey);
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', kid: decode(h).kid })).toString('base64url')}.${p}.`;
    const hs256 = `${Buffer.from(JSON.stringify({ alg: 'HS256', kid: decode(h).kid })).toString('base64url')}.${p}.${sig}`;
    for (const [name, token] of Object.entries({
      garbage: 'not-a-jwt',
      dots: 'a.b.c',
      tampered,
      foreign,
      unsigned,
      hs256,
      empty: '',
    })) {
      assert.equal(await keys.signedByCluster(token), false, name);
    }
  });

  test('keys that cannot be read: nothing verifies, one log line with the hint, and the next read (not sooner than allowed) recovers', async () => {
    let t = 0;
    const lines = () => logs.lines.filter((l) => l.includes('"logger":"issuer-keys-under-test"'));
    const keys = new IssuerKeys(
      client,
      { refreshMs: 60_000, minIntervalMs: 1_000 },
      () => t,
      createLogger('issuer-keys-under-test'),
    );
    proxy.setFault({ kind: 'status', status: 403 });
    try {
      await keys.load();
      await keys.load();
      assert.equal(keys.ready, false);
      const real = await cluster.readerToken();
      proxy.setFault({ kind: 'pass' });
      const before = jwksReads();
      assert.equal(await keys.signedByCluster(real), false, 'no keys yet');
      assert.equal(jwksReads(), before, 'no read within minIntervalMs of the failed one');
      assert.equal(lines().length, 1, `one line for the same problem: ${lines().join(' | ')}`);
      assert.match(lines()[0], /Cannot read the service-account issuer keys.*system:service-account-issuer-discovery/);
      t = 1_000;
      assert.equal(await keys.signedByCluster(real), false, 'this call only starts the read');
      await keys.idle();
      assert.equal(jwksReads(), before + 1);
      assert.equal(keys.ready, true);
      assert.equal(await keys.signedByCluster(real), true);
      assert.match(lines().at(-1)!, /"msg":"Read the service-account issuer keys"/);
    } finally {
      proxy.setFault({ kind: 'pass' });
    }
  });

  test('unknown key ids cause at most one read per minIntervalMs; a failed refresh keeps the keys it had', async () => {
    let t = 0;
    const keys = new IssuerKeys(client, { refreshMs: 60_000, minIntervalMs: 30_000 }, () => t);
    await keys.load();
    const real = await cluster.readerToken();
    const [, p, sig] = real.split('.') as [string, string, string];
    const before = jwksReads();
    t = 30_000;
    for (let i = 0; i < 50; i++) {
      const forged = `${Buffer.from(JSON.stringify({ alg: 'ES256', kid: `rotated-${i}` })).toString('base64url')}.${p}.${sig}`;
      assert.equal(await keys.signedByCluster(forged), false);
    }
    await keys.idle();
    assert.equal(jwksReads() - before, 1, 'one read for 50 unknown key ids');
    proxy.setFault({ kind: 'status', status: 500 });
    try {
      t = 120_000;
      await keys.load();
      assert.equal(await keys.signedByCluster(real), true, 'the keys read before still verify');
    } finally {
      proxy.setFault({ kind: 'pass' });
    }
  });
});
