/**
 * startTestEnvironment (envtest's Environment) as a generated project's tests use it: on the embedded authority by
 * default; with USE_EXISTING_CLUSTER=true on the cluster of KUBECONFIG — here another authority standing in for a
 * cluster someone already has, reached only through its kubeconfig — where it installs the CRDs, the manifests and
 * the webhook configurations (names of its own, pointed at a local server with a caBundle), a manager's webhooks
 * answer the API server's calls, and stop() leaves the cluster as it found it: what was there before is neither
 * overwritten nor deleted. An unreachable cluster and an identity without the rights are clear errors.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { startTestEnvironment, useExistingClusterFromEnv } from '../../packages/envtest/src/index.js';
import { KubeApiError, KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';
import { kubeconfigFor } from '../../packages/ctrlmetrics/src/kube/config.js';
import { Manager } from '../../packages/ctrlmetrics/src/index.js';
import { newMemcachedWebhook } from '../../examples/memcached-operator/webhook.js';
import { freePort } from '../helpers/process.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';

const EXAMPLE = join(import.meta.dirname, '..', '..', 'examples', 'memcached-operator', 'config');
const CRDS = join(EXAMPLE, 'crd', 'bases');
const WEBHOOKS = join(EXAMPLE, 'webhook');
const MEMCACHEDS = '/apis/cache.example.com/v1alpha1/namespaces/default/memcacheds';
const CRD = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/memcacheds.cache.example.com';
const COLLECTIONS = [
  '/api/v1/namespaces',
  '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
  '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
  '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
  '/api/v1/namespaces/default/configmaps',
];

/** What the cluster holds in the collections the environment may touch, one `collection/name@resourceVersion` a line. */
async function inventory(admin: KubeClient): Promise<string[]> {
  const out: string[] = [];
  for (const c of COLLECTIONS) {
    const list = await admin.get<{ items: Array<{ metadata: { name: string; resourceVersion: string } }> }>(c);
    for (const o of list.items) out.push(`${c}/${o.metadata.name}@${o.metadata.resourceVersion}`);
  }
  return out.sort();
}

describe('startTestEnvironment', () => {
  let tmp: string;
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'test-environment-'));
  });
  after(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  test('USE_EXISTING_CLUSTER is read as envtest reads it (Go booleans); anything else is an error', () => {
    assert.equal(useExistingClusterFromEnv({}), false);
    assert.equal(useExistingClusterFromEnv({ USE_EXISTING_CLUSTER: 'true' }), true);
    assert.equal(useExistingClusterFromEnv({ USE_EXISTING_CLUSTER: '1' }), true);
    assert.equal(useExistingClusterFromEnv({ USE_EXISTING_CLUSTER: 'False' }), false);
    assert.throws(
      () => useExistingClusterFromEnv({ USE_EXISTING_CLUSTER: 'yes' }),
      /^Error: USE_EXISTING_CLUSTER=yes: use true or false$/,
    );
  });

  test('by default, the embedded authority with the CRDs and the webhooks installed', async () => {
    const env = await startTestEnvironment({
      crdDirectoryPaths: [CRDS],
      webhookInstallOptions: { manifests: [WEBHOOKS] },
      useExistingCluster: false,
    });
    try {
      assert.equal(env.existingCluster, false);
      assert.ok(env.authority);
      const client = new KubeClient(env.restConfig);
      try {
        await client.get(CRD);
        const hooks = await client.get<{ items: Array<{ metadata: { name: string } }> }>(
          '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
        );
        assert.deepEqual(
          hooks.items.map((h) => h.metadata.name),
          ['mutating-webhook-configuration'],
        );
      } finally {
        client.close();
      }
    } finally {
      await env.stop();
    }
  });

  describe('USE_EXISTING_CLUSTER=true, on a cluster reached through its kubeconfig', () => {
    let cluster: TestCluster;
    let previous: string | undefined;
    before(async () => {
      cluster = await startTestCluster();
      previous = process.env.KUBECONFIG;
      process.env.KUBECONFIG = cluster.kubeconfig;
    });
    after(async () => {
      if (previous === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = previous;
      await cluster?.stop();
    });

    test("installs, serves the API server's webhook calls, and leaves the cluster as it found it", async () => {
      // what the cluster holds already: a configuration of the same name as the project's (another's), a ConfigMap
      // of the name the manifests create
      await cluster.admin.create('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: 'validating-webhook-configuration' },
        webhooks: [],
      });
      await cluster.admin.create('/api/v1/namespaces/default/configmaps', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'kept' },
        data: { owner: 'someone else' },
      });
      const manifests = join(tmp, 'manifests.yaml');
      await writeFile(
        manifests,
        toYaml({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kept' }, data: { owner: 'the test' } }) +
          '---\n' +
          toYaml({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'made' }, data: { owner: 'the test' } }),
      );
      const before = await inventory(cluster.admin);

      process.env.USE_EXISTING_CLUSTER = 'true';
      let env;
      try {
        env = await startTestEnvironment({
          crdDirectoryPaths: [CRDS],
          apply: [manifests],
          webhookInstallOptions: { manifests: [WEBHOOKS] },
        });
      } finally {
        delete process.env.USE_EXISTING_CLUSTER;
      }
      const mgr = new Manager({
        restConfig: env.restConfig,
        handleSignals: false,
        metrics: { bindAddress: '0' },
        healthProbeBindAddress: '0',
        webhook: { bindAddress: env.webhooks!.bindAddress, certDir: env.webhooks!.certDir },
      });
      mgr.add(newMemcachedWebhook());
      const stop = new AbortController();
      const running = mgr.start(stop.signal);
      try {
        assert.equal(env.existingCluster, true);
        assert.equal(env.authority, undefined);
        assert.equal(env.kubeconfig, cluster.kubeconfig);
        await mgr.ready();
        // the API server calls the local webhook server: defaulted, and a denial in the webhook's words
        const stored = await cluster.admin.create<{ spec: { image?: string } }>(MEMCACHEDS, {
          apiVersion: 'cache.example.com/v1alpha1',
          kind: 'Memcached',
          metadata: { name: 'm1' },
          spec: { size: 1 },
        });
        assert.match(stored.spec.image ?? '', /^memcached:/);
        await assert.rejects(
          cluster.admin.create(MEMCACHEDS, {
            apiVersion: 'cache.example.com/v1alpha1',
            kind: 'Memcached',
            metadata: { name: 'm2' },
            spec: { image: 'memcached' },
          }),
          /denied the request/,
        );
        // its configurations carry names of their own; the other one's is untouched
        const validating = await cluster.admin.get<{
          items: Array<{ metadata: { name: string }; webhooks?: unknown[] }>;
        }>('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations');
        const names = validating.items.map((v) => v.metadata.name).sort();
        assert.equal(names.length, 2);
        assert.equal(names[1], 'validating-webhook-configuration');
        assert.match(names[0], /^envtest-[0-9a-f]{6}-validating-webhook-configuration$/);
        assert.deepEqual(
          validating.items.find((v) => v.metadata.name === 'validating-webhook-configuration')?.webhooks ?? [],
          [],
        );
        assert.equal(
          (await cluster.admin.get<{ data: { owner: string } }>('/api/v1/namespaces/default/configmaps/kept')).data
            .owner,
          'someone else',
        );
        assert.equal(
          (await cluster.admin.get<{ data: { owner: string } }>('/api/v1/namespaces/default/configmaps/made')).data
            .owner,
          'the test',
        );
      } finally {
        stop.abort();
        await running;
        await env.stop();
      }
      assert.deepEqual(
        await inventory(cluster.admin),
        before,
        'the cluster as it was: the CRD (with its objects), the made ConfigMap and the configurations gone, nothing else changed',
      );
    });

    test('a CRD the cluster had is updated and kept, with its objects', async () => {
      // as if installed before the tests (by a deploy, or kubectl apply -k config/crd)
      await cluster.admin.create(
        '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
        parseYaml(readFileSync(join(CRDS, 'cache.example.com_memcacheds.yaml'), 'utf8')),
      );
      await cluster.admin.create(MEMCACHEDS, {
        apiVersion: 'cache.example.com/v1alpha1',
        kind: 'Memcached',
        metadata: { name: 'theirs' },
        spec: { size: 1, image: 'memcached:1.6' },
      });
      const env = await startTestEnvironment({ crdDirectoryPaths: [CRDS], useExistingCluster: true });
      await env.stop();
      await cluster.admin.get(CRD);
      await cluster.admin.get(`${MEMCACHEDS}/theirs`);
      await cluster.admin.delete(CRD);
    });

    test('an unreachable cluster and an identity without the rights are clear errors', async () => {
      const port = await freePort();
      const unreachable = join(tmp, 'unreachable.kubeconfig');
      await writeFile(
        unreachable,
        toYaml(kubeconfigFor({ server: `https://127.0.0.1:${port}`, caPem: cluster.caPem, token: 'x' })),
      );
      await assert.rejects(
        startTestEnvironment({
          crdDirectoryPaths: [CRDS],
          useExistingCluster: true,
          kubeconfig: unreachable,
          timeoutMs: 3_000,
        }),
        (err: Error) => {
          assert.match(
            err.message,
            new RegExp(
              `^USE_EXISTING_CLUSTER=true: cannot reach the cluster at https://127\\.0\\.0\\.1:${port} \\(kubeconfig ${unreachable.replace(/[.]/g, '\\.')}\\): .+; check that it runs and that KUBECONFIG names it$`,
            ),
          );
          return true;
        },
      );

      const token = await cluster.serviceAccountToken('default', 'no-rights');
      const weak = join(tmp, 'weak.kubeconfig');
      await writeFile(weak, toYaml(kubeconfigFor({ server: cluster.url, caPem: cluster.caPem, token })));
      await assert.rejects(
        startTestEnvironment({
          crdDirectoryPaths: [CRDS],
          webhookInstallOptions: { manifests: [WEBHOOKS] },
          useExistingCluster: true,
          kubeconfig: weak,
        }),
        (err: Error) => {
          assert.match(
            err.message,
            /^USE_EXISTING_CLUSTER=true: the identity of kubeconfig .*weak\.kubeconfig may not create customresourcedefinitions\.apiextensions\.k8s\.io, delete customresourcedefinitions\.apiextensions\.k8s\.io, create mutatingwebhookconfigurations\.admissionregistration\.k8s\.io, .*: use a kubeconfig with those rights \(cluster-admin on a test cluster\)$/,
          );
          return true;
        },
      );
      // refused before anything was installed
      await assert.rejects(cluster.admin.get(CRD), (err: unknown) => err instanceof KubeApiError && err.status === 404);
    });
  });
});
