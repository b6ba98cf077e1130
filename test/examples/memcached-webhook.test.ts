/**
 * The example operator's webhooks (examples/memcached-operator/webhook.ts) in a running manager, over HTTPS as
 * kube-apiserver calls them: the default image filled in, an untagged image refused naming spec.image, a warning at
 * the maximum size; and the webhook metrics on the manager's /metrics. (test/real-api/memcached-webhooks.test.ts
 * has a real kube-apiserver call them.)
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Manager } from '../../packages/ctrlmetrics/src/index.js';
import { DEFAULT_IMAGE, namesTagOrDigest, newMemcachedWebhook } from '../../examples/memcached-operator/webhook.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { generateCA, issueServingCert, type CertKeyPair } from '../helpers/certs.js';
import { admit } from '../helpers/admission.js';
import { httpsGet } from '../controller/helpers/exposition.js';

const MUTATE = '/mutate-cache-example-com-v1alpha1-memcached';
const VALIDATE = '/validate-cache-example-com-v1alpha1-memcached';
const memcached = (spec: Record<string, unknown>) => ({
  apiVersion: 'cache.example.com/v1alpha1',
  kind: 'Memcached',
  metadata: { name: 'm1', namespace: 'default' },
  spec,
});

describe('the example Memcached webhooks', () => {
  let cluster: TestCluster;
  let dir: string;
  let ca: CertKeyPair;
  let mgr: Manager;
  const stop = new AbortController();
  let running: Promise<void>;

  before(async () => {
    cluster = await startTestCluster();
    dir = await mkdtemp(join(tmpdir(), 'example-webhook-'));
    ca = await generateCA('example-webhook-ca');
    const pair = await issueServingCert(ca, ['127.0.0.1']);
    await writeFile(join(dir, 'tls.crt'), pair.certPem);
    await writeFile(join(dir, 'tls.key'), pair.keyPem);
    mgr = new Manager({
      restConfig: cluster.authority.restConfig,
      handleSignals: false,
      metrics: { bindAddress: '127.0.0.1:0' },
      webhook: { bindAddress: '127.0.0.1:0', certDir: dir },
    });
    mgr.add(newMemcachedWebhook());
    running = mgr.start(stop.signal);
    await mgr.ready();
  });
  after(async () => {
    stop.abort();
    await running;
    await cluster?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('image references: a tag or a digest, a registry port is not a tag', () => {
    for (const ok of [
      'memcached:1.6',
      'docker.io/library/memcached:1.6.26-alpine3.19',
      'registry:5000/memcached:1',
      'memcached@sha256:0123abcd',
    ])
      assert.equal(namesTagOrDigest(ok), true, ok);
    for (const no of ['memcached', 'registry:5000/memcached', 'docker.io/library/memcached'])
      assert.equal(namesTagOrDigest(no), false, no);
  });

  test('the defaulter fills spec.image when absent, and leaves a given one alone', async () => {
    const filled = await admit(mgr.webhookServer.url, MUTATE, { object: memcached({ size: 1 }) }, ca.certPem);
    assert.deepEqual(
      [filled.allowed, filled.patch],
      [true, [{ op: 'add', path: '/spec/image', value: DEFAULT_IMAGE }]],
    );
    const empty = await admit(mgr.webhookServer.url, MUTATE, { object: memcached({ image: '' }) }, ca.certPem);
    assert.deepEqual(empty.patch, [{ op: 'replace', path: '/spec/image', value: DEFAULT_IMAGE }]);
    const given = await admit(
      mgr.webhookServer.url,
      MUTATE,
      { object: memcached({ image: 'memcached:1.6' }) },
      ca.certPem,
    );
    assert.deepEqual([given.allowed, given.patch], [true, undefined]);
  });

  test('the validator refuses an untagged image with 422 naming spec.image, and warns at the maximum size', async () => {
    const refused = await admit(
      mgr.webhookServer.url,
      VALIDATE,
      { object: memcached({ image: 'memcached' }) },
      ca.certPem,
    );
    assert.equal(refused.allowed, false);
    assert.equal(refused.status.code, 422);
    assert.equal(
      refused.status.message,
      'Memcached.cache.example.com "m1" is invalid: spec.image: Invalid value: "memcached": must name a tag (memcached:1.6) or a digest (memcached@sha256:…)',
    );
    const onUpdate = await admit(
      mgr.webhookServer.url,
      VALIDATE,
      {
        operation: 'UPDATE',
        oldObject: memcached({ image: 'memcached:1.6' }),
        object: memcached({ image: 'memcached' }),
      },
      ca.certPem,
    );
    assert.equal(onUpdate.status.code, 422, 'updates are checked too');
    const warned = await admit(
      mgr.webhookServer.url,
      VALIDATE,
      { object: memcached({ image: 'memcached:1.6', size: 3 }) },
      ca.certPem,
    );
    assert.deepEqual(
      [warned.allowed, warned.warnings],
      [true, ['spec.size is at its maximum (3): the Memcached cannot grow further']],
    );
  });

  test("the manager's /metrics has the webhook families for both paths", async () => {
    const { body } = await httpsGet(`${mgr.metricsServer!.url}/metrics`);
    for (const path of [MUTATE, VALIDATE]) {
      assert.match(
        body,
        new RegExp(`^controller_runtime_webhook_requests_total\\{code="200",webhook="${path}"\\} [1-9]`, 'm'),
      );
      assert.match(
        body,
        new RegExp(
          `^controller_runtime_webhook_latency_seconds_bucket\\{webhook="${path}",le="9\\.999999999999999e-06"\\} \\d+$`,
          'm',
        ),
      );
    }
    assert.match(body, /^controller_runtime_webhook_panics_total 0$/m);
  });
});
