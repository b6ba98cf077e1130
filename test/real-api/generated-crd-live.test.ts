/**
 * CRDs written by `ctrlmetrics generate crd` (from test/generate/fixtures/api, and kubebuilder's CronJob tutorial
 * types with maxDescLen 0) load into a real kube-apiserver and into the authority, and an object that breaks each
 * marker's rule is refused by both with the same message: kubectl's output compared side by side.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { crdsOf, toManifestYaml } from '../../packages/cli/src/generate/index.js';
import { startTestCluster, waitForCrd, type ApiCluster, type TestCluster } from '../helpers/cluster.js';
import { ROOT, run } from '../helpers/process.js';
import { REAL_KUBE_SKIP, runGroup, startRealKube, type RealKube } from '../helpers/real-kube.js';

const FIXTURES = join(import.meta.dirname, '..', 'generate', 'fixtures', 'api');
const CRONJOB_API = join(import.meta.dirname, '..', 'generate', 'fixtures', 'kubebuilder-cronjob', 'api');
// the generated CRDs moved into groups of this run's own, so that runs on one cluster do not share them
const WIDGET_GROUP = runGroup('example.com');
const CRONJOB_GROUP = runGroup('batch.tutorial.kubebuilder.io');

/** The generated CRD, served in `group` instead of the one its package names. */
function inGroup(
  crd: { metadata?: { name?: string }; spec: { group: string; names: { plural: string } } },
  group: string,
) {
  return {
    ...crd,
    metadata: { ...crd.metadata, name: `${crd.spec.names.plural}.${group}` },
    spec: { ...crd.spec, group },
  };
}

describe(
  'a generated CRD: a real kube-apiserver and the authority enforce its markers alike',
  { skip: REAL_KUBE_SKIP, timeout: 180_000 },
  () => {
    let kube: RealKube;
    let authority: TestCluster;
    let crdYaml: string;
    let cronJobCrdYaml: string;
    /** The real server's minor version: some answers changed between 1.25 and 1.32. */
    let realMinor = 0;
    const kubectl = (c: ApiCluster, args: string[], input?: string) =>
      run('kubectl', ['--kubeconfig', c.kubeconfig, ...args], { timeoutMs: 30_000, input }).then(
        (r) => `${r.stdout}${r.stderr}[rc=${r.code}]`,
      );

    before(async () => {
      const crd = (await crdsOf([FIXTURES], ROOT)).find((c) => c.fileName === 'example.com_widgets.yaml');
      crdYaml = toManifestYaml([inGroup(crd!.crd as never, WIDGET_GROUP)]);
      const [cronJob] = await crdsOf([CRONJOB_API], ROOT, { maxDescLen: 0 });
      cronJobCrdYaml = toManifestYaml([inGroup(cronJob.crd as never, CRONJOB_GROUP)]);
      [kube, authority] = await Promise.all([startRealKube(), startTestCluster()]);
      realMinor = Number.parseInt((await kube.admin.get<{ minor: string }>('/version')).minor, 10);
    });
    after(async () => {
      await Promise.all([kube?.stop(), authority?.stop()]);
    });

    test('the CRD is accepted by both', async () => {
      const [real, ours] = await Promise.all(
        [kube, authority].map((c) => kubectl(c, ['apply', '--server-side', '-f', '-'], crdYaml)),
      );
      assert.equal(
        real,
        `customresourcedefinition.apiextensions.k8s.io/widgets.${WIDGET_GROUP} serverside-applied\n[rc=0]`,
      );
      assert.equal(ours, real);
      await Promise.all([kube, authority].map((c) => waitForCrd(c.admin, `widgets.${WIDGET_GROUP}`)));
    });

    const widget = (name: string, spec: Record<string, unknown>) =>
      JSON.stringify({
        apiVersion: `${WIDGET_GROUP}/v1`,
        kind: 'Widget',
        metadata: { name },
        spec: { size: 'S', name: 'abc', ...spec },
      });
    const cases: Array<[string, Record<string, unknown>]> = [
      ['ok', {}],
      ['exclusive-minimum', { replicas: 0 }],
      ['enum', { size: 'XL' }],
      ['pattern', { name: 'ABC' }],
      ['min-length', { name: '' }],
      ['min-items', { tags: [] }],
      ['max-items', { tags: ['a', 'b', 'c', 'd', 'e'] }],
      ['items-max-length', { tags: ['a-very-long-tag'] }],
      ['set-duplicate', { tags: ['a', 'a'] }],
      [
        'map-duplicate',
        {
          ports: [
            { name: 'p', port: 1 },
            { name: 'p', port: 2 },
          ],
        },
      ],
      ['maximum', { ports: [{ name: 'p', port: 70000 }] }],
      ['required', { ports: [{ port: 1 }] }],
      ['enum-marker', { mode: 'medium' }],
      ['min-properties', { selector: {} }],
      ['type', { paused: 'yes' }],
      ['quantity', { memory: '1 GB' }],
    ];
    const ENUM_BLOCKS = 'an enum violation blocks the CEL rules since 1.28 (the <nil> line), not in 1.25';
    const withNilLine = (r: string, field: string) =>
      r.replace(
        new RegExp(`is invalid: (${field.replace('.', '\\.')}: [^\\n]*)\\n`),
        'is invalid: \n* $1\n* <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation\n',
      );
    /**
     * Where Kubernetes 1.32 (which the authority emulates) answers otherwise than a server older than `since` (the
     * minor version that changed it): what 1.32 says, derived from the older server's answer.
     */
    const AS_IN_1_32: Record<string, { why: string; since: number; from: (real: string) => string }> = {
      'items-max-length': {
        why: 'field.TooLong says "may not be more than N bytes" since 1.30 ("may not be longer than N" before)',
        since: 30,
        from: (r) => r.replace(/may not be longer than (\d+)/, 'may not be more than $1 bytes'),
      },
      enum: { why: ENUM_BLOCKS, since: 28, from: (r) => withNilLine(r, 'spec.size') },
      'enum-marker': { why: ENUM_BLOCKS, since: 28, from: (r) => withNilLine(r, 'spec.mode') },
    };
    for (const [name, spec] of cases) {
      test(`${name}: the same answer`, async () => {
        const input = widget(`w-${name}`, spec);
        const [real, ours] = await Promise.all([kube, authority].map((c) => kubectl(c, ['create', '-f', '-'], input)));
        const older = AS_IN_1_32[name] && realMinor < AS_IN_1_32[name].since ? AS_IN_1_32[name] : undefined;
        const expected = older?.from(real) ?? real;
        if (older) assert.notEqual(expected, real, `${name}: the 1.${realMinor} answer changed; check AS_IN_1_32`);
        assert.equal(ours, expected);
        if (name === 'ok') assert.match(real, /created/);
        else assert.match(real, /is invalid/);
      });
    }

    test('XValidation: the immutable mode, on update', async () => {
      const outs: string[] = [];
      for (const c of [kube, authority]) {
        await kubectl(c, ['create', '-f', '-'], widget('w-immutable', { mode: 'fast' }));
        outs.push(
          await kubectl(c, ['patch', 'widget', 'w-immutable', '--type=merge', '-p', '{"spec":{"mode":"slow"}}']),
        );
      }
      assert.equal(outs[1], outs[0]);
      assert.match(outs[0], /mode is immutable/);
    });

    describe("kubebuilder's CronJob: the embedded Job types' markers, and a PodSpec kept whole", () => {
      const cronJob = (name: string, spec: Record<string, unknown>) =>
        JSON.stringify({
          apiVersion: `${CRONJOB_GROUP}/v1`,
          kind: 'CronJob',
          metadata: { name },
          spec: { schedule: '*/1 * * * *', jobTemplate: { spec: { template: { spec: POD_SPEC } } }, ...spec },
        });
      const POD_SPEC = {
        restartPolicy: 'OnFailure',
        containers: [
          { name: 'hello', image: 'busybox', args: ['/bin/sh', '-c', 'date'], resources: { limits: { cpu: '100m' } } },
        ],
      };
      const job = (spec: Record<string, unknown>) => ({
        jobTemplate: { spec: { template: { spec: POD_SPEC }, ...spec } },
      });

      test('the CRD is accepted by both', async () => {
        const [real, ours] = await Promise.all(
          [kube, authority].map((c) => kubectl(c, ['apply', '--server-side', '-f', '-'], cronJobCrdYaml)),
        );
        assert.equal(
          real,
          `customresourcedefinition.apiextensions.k8s.io/cronjobs.${CRONJOB_GROUP} serverside-applied\n[rc=0]`,
        );
        assert.equal(ours, real);
        await Promise.all([kube, authority].map((c) => waitForCrd(c.admin, `cronjobs.${CRONJOB_GROUP}`)));
      });

      const cases: Array<[string, Record<string, unknown>]> = [
        ['ok', {}],
        ['enum', { concurrencyPolicy: 'Sometimes' }],
        ['minimum', { successfulJobsHistoryLimit: -1 }],
        ['required', { jobTemplate: undefined }],
        ['nested-required', job({ podFailurePolicy: { rules: [{ onExitCodes: { operator: 'In', values: [1] } }] } })],
        [
          'set-duplicate',
          job({
            podFailurePolicy: { rules: [{ action: 'FailJob', onExitCodes: { operator: 'In', values: [1, 1] } }] },
          }),
        ],
        ['int32-type', job({ backoffLimit: 'six' })],
      ];
      for (const [name, spec] of cases) {
        test(`${name}: the same answer`, async () => {
          const input = cronJob(`cj-${name}`, spec);
          const [real, ours] = await Promise.all(
            [kube, authority].map((c) => kubectl(c, ['create', '-f', '-'], input)),
          );
          assert.equal(ours, real);
          if (name === 'ok') assert.match(real, /created/);
          else assert.match(real, /is invalid/);
        });
      }

      test('the PodSpec comes back as it was sent from both (preserved, not pruned)', async () => {
        for (const c of [kube, authority]) {
          // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- the assertion steers the inference of the call around it
          const got = (await c.admin.get(`/apis/${CRONJOB_GROUP}/v1/namespaces/default/cronjobs/cj-ok`)) as {
            spec: { jobTemplate: { spec: { template: { spec: unknown } } } };
          };
          assert.deepStrictEqual(got.spec.jobTemplate.spec.template.spec, POD_SPEC);
        }
      });
    });
  },
);
