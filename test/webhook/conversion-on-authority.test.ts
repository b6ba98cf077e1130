/**
 * Conversion the envtest way, with no cluster: installWebhooks({ conversions }) points a CRD's conversion at a
 * manager serving a ConversionWebhook, and real kubectl then reads and writes through the other version — the
 * authority calls the manager's /convert (counted on the manager's /metrics), a refusing converter's error reaches
 * kubectl, and uninstall puts the CRD back to strategy None.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Manager } from '../../packages/ctrlmetrics/src/index.js';
import { ConversionWebhook } from '../../packages/ctrlmetrics/src/exports/webhook.js';
import { installWebhooks, type InstalledWebhooks } from '../../packages/envtest/src/index.js';
import type { KubeObject } from '../../packages/envtest/src/types.js';
import { installCrd, startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { run } from '../helpers/process.js';
import { httpsGet } from '../controller/helpers/exposition.js';

const GROUP = 'sizes.example.com';
const CRD = `boxes.${GROUP}`;
const stringSpec = (props: Record<string, unknown>) => ({
  openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: props } } },
});

describe(
  'a ConversionWebhook in the manager, called by the authority (installWebhooks conversions)',
  { timeout: 120_000 },
  () => {
    let cluster: TestCluster;
    let installed: InstalledWebhooks;
    let mgr: Manager;
    const stop = new AbortController();
    let running: Promise<void> | undefined;
    const kubectl = (args: string[], input?: string) =>
      run('kubectl', ['--kubeconfig', cluster.kubeconfig, ...args], { timeoutMs: 30_000, input });

    before(async () => {
      cluster = await startTestCluster();
      await installCrd(cluster.admin, {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: CRD },
        spec: {
          group: GROUP,
          names: { kind: 'Box', plural: 'boxes' },
          scope: 'Namespaced',
          versions: [
            // v1alpha1 says "10cm", v1 (the hub, stored) says 100 (millimetres)
            { name: 'v1alpha1', served: true, storage: false, schema: stringSpec({ size: { type: 'string' } }) },
            { name: 'v1', served: true, storage: true, schema: stringSpec({ millimetres: { type: 'integer' } }) },
          ],
        },
      } as KubeObject);
      installed = await installWebhooks(cluster.authority, { manifests: [], conversions: [CRD] });
      mgr = new Manager({
        restConfig: cluster.authority.restConfig,
        handleSignals: false,
        metrics: { bindAddress: '127.0.0.1:0' },
        webhook: { bindAddress: installed.bindAddress, certDir: installed.certDir },
      });
      mgr.add(
        new ConversionWebhook({
          group: GROUP,
          kind: 'Box',
          hub: 'v1',
          spokes: {
            v1alpha1: {
              toHub: (o: { metadata: object; spec: { size: string } }) => {
                const m = /^(\d+)cm$/.exec(o.spec.size);
                if (!m) throw new Error(`size ${JSON.stringify(o.spec.size)} is not in centimetres (10cm)`);
                return { metadata: o.metadata, spec: { millimetres: Number(m[1]) * 10 } };
              },
              fromHub: (h: { metadata: object; spec: { millimetres: number } }) => ({
                metadata: h.metadata,
                spec: { size: `${h.spec.millimetres / 10}cm` },
              }),
            },
          },
        }),
      );
      running = mgr.start(stop.signal);
      await mgr.ready();
    });
    after(async () => {
      stop.abort();
      await running;
      await installed?.uninstall();
      await cluster?.stop();
    });

    test("installWebhooks points the CRD's conversion at the local /convert with its CA", async () => {
      assert.deepEqual(installed.conversions, [CRD]);
      const crd = await cluster.admin.get<KubeObject & { spec: { conversion?: unknown } }>(
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD}`,
      );
      assert.deepEqual(crd.spec.conversion, {
        strategy: 'Webhook',
        webhook: {
          conversionReviewVersions: ['v1', 'v1beta1'],
          clientConfig: {
            url: `https://${installed.bindAddress}/convert`,
            caBundle: Buffer.from(installed.caPem).toString('base64'),
          },
        },
      });
    });

    test('written in v1alpha1, stored and read in v1 through the manager; read back in v1alpha1', async () => {
      const created = await kubectl(
        ['create', '-f', '-'],
        JSON.stringify({
          apiVersion: `${GROUP}/v1alpha1`,
          kind: 'Box',
          metadata: { name: 'small', namespace: 'default' },
          spec: { size: '12cm' },
        }),
      );
      assert.equal(created.code, 0, created.stderr);
      const v1 = await kubectl(['get', `boxes.v1.${GROUP}`, 'small', '-o', 'jsonpath={.spec.millimetres}']);
      assert.equal(v1.stdout, '120');
      const alpha = await kubectl(['get', `boxes.v1alpha1.${GROUP}`, 'small', '-o', 'jsonpath={.spec.size}']);
      assert.equal(alpha.stdout, '12cm');
    });

    test("a size the converter refuses: kubectl prints the conversion webhook's error", async () => {
      const r = await kubectl(
        ['create', '-f', '-'],
        JSON.stringify({
          apiVersion: `${GROUP}/v1alpha1`,
          kind: 'Box',
          metadata: { name: 'vague', namespace: 'default' },
          spec: { size: 'large' },
        }),
      );
      assert.equal(r.code, 1);
      assert.equal(
        r.stderr.trim(),
        `Error from server: error when creating "STDIN": conversion webhook for ${GROUP}/v1alpha1, Kind=Box failed: size "large" is not in centimetres (10cm)`,
      );
    });

    test("the manager's /metrics counts the /convert requests", async () => {
      const text = (await httpsGet(`${mgr.metricsServer!.url}/metrics`)).body;
      const count = Number(
        /^controller_runtime_webhook_requests_total\{code="200",webhook="\/convert"\} (\d+)$/m.exec(text)?.[1],
      );
      assert.ok(count >= 4, text);
    });
  },
);
