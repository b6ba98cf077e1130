/**
 * A CRD with several versions, side by side on a real kube-apiserver and the authority (kubectl's output compared):
 * the conversion settings defaulted and validated with kube's messages, a deprecated version's warning on every
 * request to it, and — with strategy None — an object written in one version read in the other, with the
 * apiVersion rewritten and nothing else changed, and `status.storedVersions` kept.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestCluster, waitForCrd, type ApiCluster, type TestCluster } from '../helpers/cluster.js';
import { run } from '../helpers/process.js';
import { REAL_KUBE_SKIP, runGroup, startRealKube, type RealKube } from '../helpers/real-kube.js';

type Any = any;

const GROUP = runGroup('versions.example.com');
const schema = {
  openAPIV3Schema: {
    type: 'object',
    properties: { spec: { type: 'object', properties: { size: { type: 'string' } } } },
  },
};
const crd = (plural: string, kind: string, spec: Record<string, unknown> = {}, versions?: (vs: Any[]) => void) => {
  const vs: Any[] = [
    { name: 'v1alpha1', served: true, storage: false, schema },
    { name: 'v1', served: true, storage: true, schema },
  ];
  versions?.(vs);
  return JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: { group: GROUP, names: { kind, plural }, scope: 'Namespaced', versions: vs, ...spec },
  });
};
const service = { service: { namespace: 'default', name: 'conv', path: '/convert' } };

describe(
  'CRDs with several versions: a real kube-apiserver and the authority answer alike',
  { skip: REAL_KUBE_SKIP, timeout: 180_000 },
  () => {
    let kube: RealKube;
    let authority: TestCluster;
    const kubectl = (c: ApiCluster, args: string[], input?: string) =>
      run('kubectl', ['--kubeconfig', c.kubeconfig, ...args], { timeoutMs: 30_000, input }).then(
        (r) => `${r.stdout}${r.stderr}[rc=${r.code}]`,
      );
    const both = (args: string[], input?: string) => Promise.all([kube, authority].map((c) => kubectl(c, args, input)));

    before(async () => {
      [kube, authority] = await Promise.all([startRealKube(), startTestCluster()]);
    });
    after(async () => {
      for (const name of ['widgets', 'gadgets'])
        await kube?.admin
          .delete(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}.${GROUP}`)
          .catch(() => undefined);
      await Promise.all([kube?.stop(), authority?.stop()]);
    });

    const invalid: Array<[string, string]> = [
      ['Webhook without a webhook', crd('widgets', 'Widget', { conversion: { strategy: 'Webhook' } })],
      [
        'None with a webhook',
        crd('widgets', 'Widget', {
          conversion: { strategy: 'None', webhook: { clientConfig: service, conversionReviewVersions: ['v1'] } },
        }),
      ],
      [
        'no review versions',
        crd('widgets', 'Widget', { conversion: { strategy: 'Webhook', webhook: { clientConfig: service } } }),
      ],
      [
        'unknown review versions',
        crd('widgets', 'Widget', {
          conversion: { strategy: 'Webhook', webhook: { clientConfig: service, conversionReviewVersions: ['v2'] } },
        }),
      ],
      [
        'url and service',
        crd('widgets', 'Widget', {
          conversion: {
            strategy: 'Webhook',
            webhook: {
              clientConfig: { url: 'https://conv.example.com/convert', ...service },
              conversionReviewVersions: ['v1'],
            },
          },
        }),
      ],
      [
        'neither url nor service',
        crd('widgets', 'Widget', {
          conversion: { strategy: 'Webhook', webhook: { clientConfig: {}, conversionReviewVersions: ['v1'] } },
        }),
      ],
      [
        'an http url',
        crd('widgets', 'Widget', {
          conversion: {
            strategy: 'Webhook',
            webhook: { clientConfig: { url: 'http://conv.example.com/convert' }, conversionReviewVersions: ['v1'] },
          },
        }),
      ],
      [
        'a bad port',
        crd('widgets', 'Widget', {
          conversion: {
            strategy: 'Webhook',
            webhook: {
              clientConfig: { service: { ...service.service, port: 70000 } },
              conversionReviewVersions: ['v1'],
            },
          },
        }),
      ],
      ['an unknown strategy', crd('widgets', 'Widget', { conversion: { strategy: 'Bogus' } })],
      [
        'preserveUnknownFields with a webhook',
        crd('widgets', 'Widget', {
          preserveUnknownFields: true,
          conversion: { strategy: 'Webhook', webhook: { clientConfig: service, conversionReviewVersions: ['v1'] } },
        }),
      ],
      [
        'a deprecation warning on a version not deprecated',
        crd('widgets', 'Widget', {}, (vs) => (vs[0].deprecationWarning = 'use v1')),
      ],
    ];
    for (const [what, input] of invalid) {
      test(`refused alike: ${what}`, async () => {
        const [real, ours] = await both(['create', '--dry-run=server', '-f', '-'], input);
        assert.match(real, /is invalid/);
        assert.equal(ours, real);
      });
    }

    test('the conversion is defaulted alike (strategy None; a service port 443)', async () => {
      const gadgets = crd('gadgets', 'Gadget', {
        conversion: { strategy: 'Webhook', webhook: { clientConfig: service, conversionReviewVersions: ['v1'] } },
      });
      const out = await Promise.all(
        [kube, authority].map(async (c) => {
          const none = JSON.parse(
            (
              await kubectl(c, ['create', '--dry-run=server', '-o', 'json', '-f', '-'], crd('widgets', 'Widget'))
            ).replace(/\[rc=0\]$/, ''),
          );
          const hook = JSON.parse(
            (await kubectl(c, ['create', '--dry-run=server', '-o', 'json', '-f', '-'], gadgets)).replace(
              /\[rc=0\]$/,
              '',
            ),
          );
          return [none.spec.conversion, hook.spec.conversion, none.status?.storedVersions];
        }),
      );
      assert.deepStrictEqual(out[0][0], { strategy: 'None' });
      assert.deepStrictEqual(out[0][1].webhook.clientConfig.service.port, 443);
      assert.deepStrictEqual(out[1], out[0]);
    });

    describe('strategy None, v1alpha1 deprecated', () => {
      before(async () => {
        const input = crd('widgets', 'Widget', {}, (vs) => (vs[0].deprecated = true));
        const [real, ours] = await both(['apply', '--server-side', '-f', '-'], input);
        assert.equal(ours, real);
        await Promise.all([kube, authority].map((c) => waitForCrd(c.admin, `widgets.${GROUP}`)));
      });

      test('writing and reading the deprecated version warns; the object reads the same in both versions but for apiVersion', async () => {
        const widget = JSON.stringify({
          apiVersion: `${GROUP}/v1alpha1`,
          kind: 'Widget',
          metadata: { name: 'w1', namespace: 'default' },
          spec: { size: 'S' },
        });
        const [real, ours] = await both(['create', '-f', '-'], widget);
        // stdout, then stderr with kubectl's warning
        assert.equal(
          real,
          `widget.${GROUP}/w1 created\nWarning: ${GROUP}/v1alpha1 Widget is deprecated; use ${GROUP}/v1 Widget\n[rc=0]`,
        );
        assert.equal(ours, real);
        for (const version of ['v1', 'v1alpha1']) {
          const got = await Promise.all(
            [kube, authority].map(async (c) => {
              const text = await kubectl(c, [
                'get',
                `widgets.${version}.${GROUP}`,
                'w1',
                '-o',
                'jsonpath={.apiVersion} {.spec.size}',
              ]);
              return text;
            }),
          );
          assert.equal(got[1], got[0], version);
          assert.match(got[0], new RegExp(`${GROUP}/${version} S`));
        }
        const lists = await both(['get', `widgets.v1alpha1.${GROUP}`, '-o', 'name']);
        assert.equal(lists[1], lists[0]);
        assert.ok(
          lists[0].startsWith(`widget.${GROUP}/w1\nWarning: `) && lists[0].includes(' is deprecated; use '),
          lists[0],
        );
      });

      test('status.storedVersions: the storage version, and the old one kept when storage moves', async () => {
        const moved = crd('widgets', 'Widget', {}, (vs) => {
          vs[0].storage = true;
          vs[1].storage = false;
        });
        const out = await Promise.all(
          [kube, authority].map(async (c) => {
            await kubectl(c, ['apply', '--server-side', '--force-conflicts', '-f', '-'], moved);
            return kubectl(c, ['get', 'crd', `widgets.${GROUP}`, '-o', 'jsonpath={.status.storedVersions}']);
          }),
        );
        assert.equal(out[0], '["v1","v1alpha1"][rc=0]');
        assert.equal(out[1], out[0]);
      });
    });
  },
);
