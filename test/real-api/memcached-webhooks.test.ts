/**
 * The example's Memcached webhooks (examples/memcached-operator/webhook.ts) called by a real kube-apiserver: the
 * manager serves them on 127.0.0.1 with a certificate of a test CA; a MutatingWebhookConfiguration and a
 * ValidatingWebhookConfiguration point at them with `clientConfig.url` and that CA as `caBundle`. kubectl then
 * sees the default applied, the denial (with the invalid field), and the warning; the manager's /metrics counts
 * the calls the API server made.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync, readdirSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { Manager, type KubeObject } from '../../packages/ctrlmetrics/src/index.js';
import { newMemcachedWebhook, DEFAULT_IMAGE } from '../../examples/memcached-operator/webhook.js';
import { generateCA, issueServingCert } from '../helpers/certs.js';
import { run } from '../helpers/process.js';
import { httpsGet } from '../controller/helpers/exposition.js';
import { installRunCrd, runName, startRealKube, webhooksUnreachable, type RealKube } from '../helpers/real-kube.js';

// their webhooks run on this machine: the API server must reach its 127.0.0.1
const WEBHOOK_SKIP = await webhooksUnreachable();

const CRDS = join(import.meta.dirname, '../../examples/memcached-operator/config/crd/bases');
const NS = runName('real-memcached-webhooks');
const MUTATING = runName('memcached-mutating-webhook-configuration');
const VALIDATING = runName('memcached-validating-webhook-configuration');
const MUTATE = '/mutate-cache-example-com-v1alpha1-memcached';
const VALIDATE = '/validate-cache-example-com-v1alpha1-memcached';

describe('the Memcached webhooks, called by a real kube-apiserver', { skip: WEBHOOK_SKIP, timeout: 120_000 }, () => {
  let kube: RealKube;
  let dir: string;
  let mgr: Manager;
  const stop = new AbortController();
  let running: Promise<void> | undefined;
  const kubectl = (args: string[], input?: string) =>
    run('kubectl', ['--kubeconfig', kube.kubeconfig, ...args], { timeoutMs: 30_000, input });

  before(async () => {
    kube = await startRealKube();
    for (const f of readdirSync(CRDS))
      await installRunCrd(kube, parseYaml(readFileSync(join(CRDS, f), 'utf8')) as KubeObject);
    await kube.admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    dir = await mkdtemp(join(tmpdir(), 'memcached-webhooks-'));
    const ca = await generateCA('memcached-webhook-ca');
    const pair = await issueServingCert(ca, ['127.0.0.1']);
    await writeFile(join(dir, 'tls.crt'), pair.certPem);
    await writeFile(join(dir, 'tls.key'), pair.keyPem);
    mgr = new Manager({
      restConfig: kube.adminConfig,
      handleSignals: false,
      metrics: { bindAddress: '127.0.0.1:0' },
      webhook: { bindAddress: '127.0.0.1:0', certDir: dir },
    });
    mgr.add(newMemcachedWebhook());
    running = mgr.start(stop.signal);
    await mgr.ready();
    const url = mgr.webhookServer.url;
    const caBundle = Buffer.from(ca.certPem).toString('base64');
    const rules = [
      {
        apiGroups: ['cache.example.com'],
        apiVersions: ['v1alpha1'],
        operations: ['CREATE', 'UPDATE'],
        resources: ['memcacheds'],
      },
    ];
    const hook = (name: string, path: string) => ({
      name,
      clientConfig: { url: `${url}${path}`, caBundle },
      rules,
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      failurePolicy: 'Fail',
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } },
    });
    await kube.admin.create('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: MUTATING },
      webhooks: [hook('mmemcached-v1alpha1.kb.io', MUTATE)],
    });
    await kube.admin.create('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: VALIDATING },
      webhooks: [hook('vmemcached-v1alpha1.kb.io', VALIDATE)],
    });
  });

  after(async () => {
    // the configurations first: a later suite on this control plane must not call a webhook that is gone
    for (const kind of [`mutatingwebhookconfigurations/${MUTATING}`, `validatingwebhookconfigurations/${VALIDATING}`]) {
      await kube?.admin.delete(`/apis/admissionregistration.k8s.io/v1/${kind}`).catch(() => undefined);
    }
    stop.abort();
    await running;
    await kube?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const memcached = (name: string, spec: string) =>
    `apiVersion: cache.example.com/v1alpha1\nkind: Memcached\nmetadata: {name: ${name}, namespace: ${NS}}\nspec: ${spec}\n`;

  test('kubectl sees the default applied: a Memcached without spec.image gets the default image', async () => {
    const created = await kubectl(['create', '-f', '-'], memcached('defaulted', '{size: 2}'));
    assert.equal(created.code, 0, created.stderr);
    const image = await kubectl(['get', 'memcached', 'defaulted', '-n', NS, '-o', 'jsonpath={.spec.image}']);
    assert.equal(image.stdout, DEFAULT_IMAGE);
  });

  test('kubectl sees the denial: an image without a tag, naming spec.image (422 with its cause)', async () => {
    const r = await kubectl(['create', '-f', '-'], memcached('untagged', '{image: memcached}'));
    assert.equal(r.code, 1);
    // kubectl words an Invalid status from its causes
    assert.equal(
      r.stderr.trim(),
      'The Memcached "untagged" is invalid: spec.image: Invalid value: "memcached": must name a tag (memcached:1.6) or a digest (memcached@sha256:…)',
    );
    // the API server's own message names the webhook
    await assert.rejects(
      kube.admin.create(
        `/apis/cache.example.com/v1alpha1/namespaces/${NS}/memcacheds`,
        parseYaml(memcached('untagged', '{image: memcached}')),
      ),
      (err: Error & { status?: number; reason?: string }) => {
        assert.equal(err.status, 422);
        assert.equal(err.reason, 'Invalid');
        assert.equal(
          err.message,
          'admission webhook "vmemcached-v1alpha1.kb.io" denied the request: Memcached.cache.example.com "untagged" is invalid: spec.image: Invalid value: "memcached": must name a tag (memcached:1.6) or a digest (memcached@sha256:…)',
        );
        return true;
      },
    );
    const gone = await kubectl(['get', 'memcached', 'untagged', '-n', NS]);
    assert.notEqual(gone.code, 0, 'nothing was stored');
  });

  test('kubectl sees the warning: spec.size at its maximum', async () => {
    const r = await kubectl(['create', '-f', '-'], memcached('biggest', '{size: 3, image: "memcached:1.6"}'));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^Warning: spec\.size is at its maximum \(3\): the Memcached cannot grow further$/m);
  });

  test("the manager's /metrics counts the API server's calls per path", async () => {
    const scraped = await httpsGet(`${mgr.metricsServer!.url}/metrics`);
    for (const path of [MUTATE, VALIDATE]) {
      const m = new RegExp(
        `^controller_runtime_webhook_requests_total\\{code="200",webhook="${path}"\\} (\\d+)$`,
        'm',
      ).exec(scraped.body);
      assert.ok(m && Number(m[1]) >= 2, `${path}: ${m?.[1]}`);
    }
  });
});
