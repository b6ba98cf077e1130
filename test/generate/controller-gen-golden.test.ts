/**
 * Golden tests against controller-gen itself: kubebuilder's getting-started Memcached API (its Go types and the CRD
 * controller-gen v0.17.0 generated for them, kubernetes-sigs/kubebuilder at a50bcdc) and its CronJob tutorial API
 * (the CRD controller-gen v0.17.1 generated with crd:maxDescLen=0, at 48db38c) written in TypeScript with the same
 * markers (fixtures/kubebuilder-memcached, fixtures/kubebuilder-cronjob), generated, and compared with
 * controller-gen's CRDs after normalising key order; and the role controller-gen wrote for the Memcached
 * controller's RBAC markers (at 18920bf), byte for byte. Every difference that remains is listed with its reason and
 * removed from both sides before comparing — nothing else may differ.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { crdsOf, rolesOf, toManifestYaml, webhookConfigurationsOf } from '../../packages/cli/src/generate/index.js';
import { ROOT } from '../helpers/process.js';

type Any = any;
const FIXTURE = join(import.meta.dirname, 'fixtures', 'kubebuilder-memcached');

type Difference = { what: string; why: string; drop: (crd: Any) => void };

const GENERATOR_STAMP: Difference = {
  what: 'metadata.annotations',
  why: 'controller-gen stamps controller-gen.kubebuilder.io/version; ctrlmetrics stamps ctrlmetrics.io/generated-by',
  drop: (crd) => delete crd.metadata.annotations,
};

/** What differs from controller-gen's Memcached CRD, and why. Each entry removes its part from both CRDs. */
const DIFFERENCES: Difference[] = [
  GENERATOR_STAMP,
  {
    what: 'the descriptions inside status.conditions[] (metav1.Condition and its fields)',
    why: "controller-gen walks metav1.Condition's Go source and copies its upstream doc comments; ctrlmetrics emits Condition's schema (types, required, bounds, patterns, enum) without reproducing that upstream text",
    drop: (crd) => {
      const items = crd.spec.versions[0].schema.openAPIV3Schema.properties.status.properties.conditions.items;
      delete items.description;
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- the assertion steers the inference of the call around it
      for (const p of Object.values(items.properties) as Any[]) delete p.description;
    },
  },
];

test("the Memcached API of kubebuilder's book: generate writes what controller-gen wrote, but for the differences listed", async () => {
  const [ours] = await crdsOf([join(FIXTURE, 'api')], ROOT);
  assert.ok(ours);
  assert.equal(ours.fileName, 'cache.example.com_memcacheds.yaml', 'the file name controller-gen uses');
  const theirs = parseYaml(
    readFileSync(join(FIXTURE, 'cache.example.com_memcacheds.yaml'), 'utf8').replace(/^---\n/, ''),
  );
  const mine = JSON.parse(JSON.stringify(ours.crd));
  for (const d of DIFFERENCES) {
    d.drop(theirs);
    d.drop(mine);
  }
  // key order aside (deepStrictEqual ignores it), the two CRDs are the same
  assert.deepStrictEqual(mine, theirs);
});

/** What differs from controller-gen's CronJob CRD, and why. */
const CRONJOB_DIFFERENCES: Difference[] = [
  GENERATOR_STAMP,
  {
    what: "spec.jobTemplate.spec.template.spec (the Job's PodSpec)",
    why: "controller-gen expands k8s.io/api's PodSpec from its Go source (about 200 KB of schema, cut from the fixture); ctrlmetrics ships no PodSpec type, so the TypeScript types carry it as a RawExtension: type object, x-kubernetes-preserve-unknown-fields, nothing pruned or validated below it",
    drop: (crd) => {
      const spec =
        crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.jobTemplate.properties.spec.properties
          .template.properties.spec;
      for (const k of ['properties', 'required', 'x-kubernetes-preserve-unknown-fields']) delete spec[k];
    },
  },
];

test("the CronJob API of kubebuilder's tutorial, generated with maxDescLen 0: what controller-gen wrote, but for the differences listed", async () => {
  const fixture = join(import.meta.dirname, 'fixtures', 'kubebuilder-cronjob');
  const [ours, ...more] = await crdsOf([join(fixture, 'api')], ROOT, { maxDescLen: 0 });
  assert.ok(ours);
  assert.equal(more.length, 0, 'the embedded batch/v1 types are not kinds');
  assert.equal(ours.fileName, 'batch.tutorial.kubebuilder.io_cronjobs.yaml', 'the file name controller-gen uses');
  const theirs = parseYaml(readFileSync(join(fixture, 'batch.tutorial.kubebuilder.io_cronjobs.yaml'), 'utf8'));
  const mine = JSON.parse(JSON.stringify(ours.crd));
  // before the drops: the PodSpec is kept whole rather than pruned away
  const podSpec = (crd: Any) =>
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.jobTemplate.properties.spec.properties
      .template.properties.spec;
  assert.deepStrictEqual(podSpec(mine), { type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
  for (const d of CRONJOB_DIFFERENCES) {
    d.drop(theirs);
    d.drop(mine);
  }
  assert.deepStrictEqual(mine, theirs);
});

test("the Memcached controller's RBAC markers of kubebuilder's book: generate rbac writes controller-gen's role.yaml byte for byte", async () => {
  const roles = await rolesOf([join(FIXTURE, 'controller')], ROOT);
  assert.equal(toManifestYaml(roles), readFileSync(join(FIXTURE, 'role.yaml'), 'utf8'));
});

test("kubebuilder's testdata/project-v4 webhooks: generate webhook writes controller-gen's config/webhook/manifests.yaml byte for byte", async () => {
  const fixture = join(import.meta.dirname, 'fixtures', 'kubebuilder-project-v4');
  const configs = await webhookConfigurationsOf([join(fixture, 'webhooks')], ROOT);
  assert.equal(toManifestYaml(configs), readFileSync(join(fixture, 'manifests.yaml'), 'utf8'));
});
