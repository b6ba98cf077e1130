/**
 * The manager's webhook server (controller-runtime's second port): started only when a webhook is added, before
 * the caches and on every replica; `/readyz` includes it; its metrics are on the manager's `/metrics`; missing
 * certificate files fail start naming the file; stopped with the manager.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Manager, Webhook } from '../../packages/ctrlmetrics/src/index.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { generateCA, issueServingCert, type CertKeyPair } from '../helpers/certs.js';
import { httpsGet } from '../controller/helpers/exposition.js';
import { admit } from '../helpers/admission.js';

interface Memcached {
  metadata: { name: string };
  spec: { image?: string; size?: number };
}

function readyz(url: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(`${url}/readyz?verbose`, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      })
      .on('error', reject);
  });
}

const memcachedWebhook = () =>
  new Webhook<Memcached>({
    for: { apiVersion: 'cache.example.com/v1alpha1', kind: 'Memcached' },
    defaulter: { default: (m) => void (m.spec.image ??= 'memcached:1.6.26-alpine3.19') },
    validator: { validateCreate: (m) => ((m.spec.size ?? 1) >= 3 ? ['spec.size is at its maximum (3)'] : undefined) },
  });

describe('webhooks in the manager', () => {
  let cluster: TestCluster;
  let dir: string;
  let ca: CertKeyPair;

  before(async () => {
    cluster = await startTestCluster();
    dir = await mkdtemp(join(tmpdir(), 'mgr-webhook-'));
    ca = await generateCA('mgr-webhook-ca');
    const pair = await issueServingCert(ca, ['127.0.0.1']);
    await writeFile(join(dir, 'tls.crt'), pair.certPem);
    await writeFile(join(dir, 'tls.key'), pair.keyPem);
  });
  after(async () => {
    await cluster?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('a webhook added: the server listens, /readyz includes it, admission is answered, its metrics are on /metrics', async () => {
    const mgr = new Manager({
      restConfig: cluster.authority.restConfig,
      handleSignals: false,
      healthProbeBindAddress: '127.0.0.1:0',
      metrics: { bindAddress: '127.0.0.1:0' },
      webhook: { bindAddress: '127.0.0.1:0', certDir: dir },
    });
    mgr.add(memcachedWebhook());
    assert.throws(
      () => mgr.add(memcachedWebhook()),
      /a webhook is already registered at \/mutate-cache-example-com-v1alpha1-memcached and \/validate-cache-example-com-v1alpha1-memcached/,
    );
    const stop = new AbortController();
    const running = mgr.start(stop.signal);
    try {
      await mgr.ready();
      const url = mgr.webhookServer.url;
      assert.match(url, /^https:\/\/127\.0\.0\.1:\d+$/);
      const mutated = await admit(
        url,
        '/mutate-cache-example-com-v1alpha1-memcached',
        { object: { metadata: { name: 'm' }, spec: {} } },
        ca.certPem,
      );
      assert.deepEqual(mutated.patch, [{ op: 'add', path: '/spec/image', value: 'memcached:1.6.26-alpine3.19' }]);
      const warned = await admit(
        url,
        '/validate-cache-example-com-v1alpha1-memcached',
        { object: { metadata: { name: 'm' }, spec: { size: 3 } } },
        ca.certPem,
      );
      assert.deepEqual(warned.warnings, ['spec.size is at its maximum (3)']);
      const ready = await readyz(mgr.healthProbeServer!.url);
      assert.equal(ready.status, 200, ready.text);
      assert.match(ready.text, /^\[\+\]webhook ok$/m);
      const scraped = await httpsGet(`${mgr.metricsServer!.url}/metrics`);
      assert.match(
        scraped.body,
        /^controller_runtime_webhook_requests_total\{code="200",webhook="\/mutate-cache-example-com-v1alpha1-memcached"\} [1-9]/m,
      );
      assert.match(
        scraped.body,
        /^controller_runtime_webhook_requests_in_flight\{webhook="\/validate-cache-example-com-v1alpha1-memcached"\} 0$/m,
      );
    } finally {
      stop.abort();
      await running;
    }
    await assert.rejects(
      admit(mgr.webhookServer.url, '/validate-cache-example-com-v1alpha1-memcached', { object: {} }, ca.certPem),
      'stopped with the manager',
    );
  });

  test('no webhook: no webhook port is opened and no certificate is needed', async () => {
    const mgr = new Manager({
      restConfig: cluster.authority.restConfig,
      handleSignals: false,
      metrics: { bindAddress: '0' },
      webhook: { certDir: join(dir, 'nowhere') },
    });
    const stop = new AbortController();
    const running = mgr.start(stop.signal);
    await mgr.ready();
    assert.equal(mgr.webhookServer.port, 0);
    stop.abort();
    await running;
  });

  test('missing certificate files fail start, naming the file', async () => {
    const mgr = new Manager({
      restConfig: cluster.authority.restConfig,
      handleSignals: false,
      metrics: { bindAddress: '0' },
      webhook: { bindAddress: '127.0.0.1:0', certDir: join(dir, 'nowhere') },
    });
    mgr.add(memcachedWebhook());
    await assert.rejects(
      mgr.start(),
      (err: Error) =>
        err.message.startsWith('failed to start webhook server: ') &&
        err.message.includes(join(dir, 'nowhere', 'tls.crt')),
    );
  });
});
