/**
 * The example's Memcached webhooks tested the envtest way, with no cluster: installWebhooks() makes the serving
 * certificate and installs the example's config/webhook manifests on the authority pointed at a local manager, and
 * real kubectl then sees the authority call them: the default image stored, an untagged image refused with the
 * webhook's message, the warning printed; a stopped webhook server refusing writes under Fail and letting them
 * through under Ignore; a webhook that never answers timing out.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { Manager } from '../../packages/ctrlmetrics/src/index.js';
import type { KubeObject } from '../../packages/envtest/src/types.js';

/** The fields of a webhook configuration these tests read and change. */
interface WebhookConfiguration extends KubeObject {
  webhooks: Array<{ clientConfig: Record<string, unknown>; timeoutSeconds?: number; failurePolicy?: string }>;
}
import { installWebhooks, type InstalledWebhooks } from '../../packages/envtest/src/index.js';
import { DEFAULT_IMAGE, newMemcachedWebhook } from '../../examples/memcached-operator/webhook.js';
import { installCrd, startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { run } from '../helpers/process.js';

const EXAMPLE = join(import.meta.dirname, '../../examples/memcached-operator/config');
const NS = 'default';
const VWC = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/validating-webhook-configuration';
const MWC = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/mutating-webhook-configuration';

describe('the Memcached webhooks on the authority (installWebhooks)', { timeout: 120_000 }, () => {
  let cluster: TestCluster;
  let installed: InstalledWebhooks;
  let mgr: Manager;
  const stop = new AbortController();
  let running: Promise<void> | undefined;
  const kubectl = (args: string[], input?: string) =>
    run('kubectl', ['--kubeconfig', cluster.kubeconfig, ...args], { timeoutMs: 30_000, input });
  const memcached = (name: string, spec: string) =>
    `apiVersion: cache.example.com/v1alpha1\nkind: Memcached\nmetadata: {name: ${name}, namespace: ${NS}}\nspec: ${spec}\n`;

  before(async () => {
    cluster = await startTestCluster();
    await installCrd(
      cluster.admin,
      parseYaml(readFileSync(join(EXAMPLE, 'crd/bases/cache.example.com_memcacheds.yaml'), 'utf8')) as KubeObject,
    );
    installed = await installWebhooks(cluster.authority, { manifests: [join(EXAMPLE, 'webhook')] });
    mgr = new Manager({
      restConfig: cluster.authority.restConfig,
      handleSignals: false,
      metrics: { bindAddress: '127.0.0.1:0' },
      webhook: { bindAddress: installed.bindAddress, certDir: installed.certDir },
    });
    mgr.add(newMemcachedWebhook());
    running = mgr.start(stop.signal);
    await mgr.ready();
  });
  after(async () => {
    stop.abort();
    await running;
    await installed?.uninstall();
    await cluster?.stop();
  });

  test('installWebhooks points the service references at the local server, with its CA, and writes its certificate', async () => {
    assert.deepEqual(installed.configurations, [
      'MutatingWebhookConfiguration/mutating-webhook-configuration',
      'ValidatingWebhookConfiguration/validating-webhook-configuration',
    ]);
    const v = await cluster.admin.get<WebhookConfiguration>(VWC);
    assert.deepEqual(v.webhooks[0].clientConfig, {
      url: `https://${installed.bindAddress}/validate-cache-example-com-v1alpha1-memcached`,
      caBundle: Buffer.from(installed.caPem).toString('base64'),
    });
    assert.match(readFileSync(join(installed.certDir, 'tls.crt'), 'utf8'), /^-----BEGIN CERTIFICATE-----/);
  });

  test('a Memcached without spec.image is stored with the default', async () => {
    const r = await kubectl(['create', '-f', '-'], memcached('defaulted', '{size: 1}'));
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'memcached.cache.example.com/defaulted created\n');
    const image = await kubectl(['get', 'memcached', 'defaulted', '-n', NS, '-o', 'jsonpath={.spec.image}']);
    assert.equal(image.stdout, DEFAULT_IMAGE);
  });

  test("an image without a tag is refused with the webhook's message, and nothing is stored", async () => {
    const r = await kubectl(['create', '-f', '-'], memcached('untagged', '{image: memcached}'));
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr.trim(),
      'The Memcached "untagged" is invalid: spec.image: Invalid value: "memcached": must name a tag (memcached:1.6) or a digest (memcached@sha256:…)',
    );
    await assert.rejects(
      cluster.admin.create(
        `/apis/cache.example.com/v1alpha1/namespaces/${NS}/memcacheds`,
        parseYaml(memcached('untagged', '{image: memcached}')),
      ),
      (err: Error & { status?: number }) => {
        assert.equal(err.status, 422);
        assert.equal(
          err.message,
          'admission webhook "vmemcached-v1alpha1.kb.io" denied the request: Memcached.cache.example.com "untagged" is invalid: spec.image: Invalid value: "memcached": must name a tag (memcached:1.6) or a digest (memcached@sha256:…)',
        );
        return true;
      },
    );
    const gone = await kubectl(['get', 'memcached', 'untagged', '-n', NS]);
    assert.equal(gone.code, 1);
  });

  test('the warning is printed by kubectl', async () => {
    const r = await kubectl(['create', '-f', '-'], memcached('biggest', '{size: 3, image: "memcached:1.6"}'));
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, 'Warning: spec.size is at its maximum (3): the Memcached cannot grow further\n');
  });

  test('a webhook that never answers: the write fails at timeoutSeconds', async () => {
    // accepts connections and the TLS hello, never answers
    const held = new Set<Socket>();
    const silent: Server = createServer((s) => {
      held.add(s);
      s.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    try {
      const v = await cluster.admin.get<WebhookConfiguration>(VWC);
      v.webhooks[0].clientConfig.url = `https://127.0.0.1:${port}/validate-cache-example-com-v1alpha1-memcached`;
      v.webhooks[0].timeoutSeconds = 1;
      await cluster.admin.replace(VWC, v);
      const r = await kubectl(['create', '-f', '-'], memcached('timed-out', '{image: "memcached:1.6"}'));
      assert.equal(r.code, 1);
      assert.equal(
        r.stderr.trim(),
        `Error from server (InternalError): error when creating "STDIN": Internal error occurred: failed calling webhook "vmemcached-v1alpha1.kb.io": failed to call webhook: Post "https://127.0.0.1:${port}/validate-cache-example-com-v1alpha1-memcached?timeout=1s": context deadline exceeded`,
      );
    } finally {
      for (const s of held) s.destroy();
      silent.close();
      // back to the manager's server
      await installWebhooks(cluster.authority, {
        manifests: [join(EXAMPLE, 'webhook')],
        port: installed.port,
        certDir: installed.certDir,
      }).then(() => undefined);
    }
  });

  test('a stopped webhook server: Fail refuses writes, Ignore lets them through', async () => {
    stop.abort();
    await running;
    running = undefined;
    const r = await kubectl(['create', '-f', '-'], memcached('refused', '{image: "memcached:1.6"}'));
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr.trim(),
      `Error from server (InternalError): error when creating "STDIN": Internal error occurred: failed calling webhook "mmemcached-v1alpha1.kb.io": failed to call webhook: Post "https://${installed.bindAddress}/mutate-cache-example-com-v1alpha1-memcached?timeout=10s": dial tcp ${installed.bindAddress}: connect: connection refused`,
    );
    for (const path of [MWC, VWC]) {
      const c = await cluster.admin.get<WebhookConfiguration>(path);
      c.webhooks[0].failurePolicy = 'Ignore';
      await cluster.admin.replace(path, c);
    }
    const through = await kubectl(['create', '-f', '-'], memcached('through', '{image: memcached}'));
    assert.equal(through.code, 0, through.stderr);
    const image = await kubectl(['get', 'memcached', 'through', '-n', NS, '-o', 'jsonpath={.spec.image}']);
    assert.equal(image.stdout, 'memcached', 'stored without the validation the webhook would have done');
    // no defaulting either: the CRD's schema, checked after mutating admission, wants the image
    const undefaulted = await kubectl(['create', '-f', '-'], memcached('undefaulted', '{size: 1}'));
    assert.equal(undefaulted.code, 1);
    assert.equal(undefaulted.stderr.trim(), 'The Memcached "undefaulted" is invalid: spec.image: Required value');
  });
});
