/**
 * `ctrlmetrics generate crd` on a fixture API (test/generate/fixtures/api/v1/widget.ts) using every kind of type and
 * marker: each schema node checked against what controller-gen's rules give for it, written out here by hand; then
 * the errors for what controller-gen or the API server would refuse, each naming file and line.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { crdsOf } from '../../packages/cli/src/generate/index.js';
import { runCli, ROOT } from '../helpers/process.js';
import { SECOND_NODE_SKIP_COMPILER } from '../helpers/second-node.js';

type Any = any;
const FIXTURES = join(import.meta.dirname, 'fixtures');

describe('generate crd', () => {
  let crd: Any;
  let gadget: Any;
  let spec: Any;

  before(async () => {
    const crds = await crdsOf([join(FIXTURES, 'api')], ROOT);
    assert.deepEqual(
      crds.map((c) => c.fileName),
      ['example.com_gadgets.yaml', 'example.com_widgets.yaml'],
      'WidgetList (no metadata) is not a kind',
    );
    gadget = crds[0].crd;
    crd = crds[1].crd;
    spec = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec;
  });

  test('names, scope, version, printer columns and subresources from the CRD markers', () => {
    assert.equal(crd.metadata.name, 'widgets.example.com');
    assert.deepEqual(crd.spec.names, {
      categories: ['all'],
      kind: 'Widget',
      listKind: 'WidgetList',
      plural: 'widgets',
      shortNames: ['wd', 'wdg'],
      singular: 'widget',
    });
    assert.equal(crd.spec.scope, 'Cluster');
    const v = crd.spec.versions[0];
    assert.deepEqual(
      [v.name, v.served, v.storage],
      ['v1', true, true],
      'version from the folder api/v1; the only version stores',
    );
    assert.deepEqual(v.additionalPrinterColumns, [
      { jsonPath: '.spec.size', name: 'Size', type: 'string' },
      { description: 'ready replicas', jsonPath: '.status.ready', name: 'Ready', priority: 1, type: 'integer' },
    ]);
    assert.deepEqual(v.subresources, { status: {} });
  });

  test("the root: the kind's doc, apiVersion and kind with the upstream docs, a bare metadata, spec required", () => {
    const root = crd.spec.versions[0].schema.openAPIV3Schema;
    assert.equal(root.description, 'Widget is a thing with a size.');
    assert.equal(root.type, 'object');
    assert.deepEqual(root.required, ['spec']);
    assert.deepEqual(root.properties.metadata, { type: 'object' });
    assert.equal(root.properties.kind.type, 'string');
    assert.match(
      root.properties.apiVersion.description,
      /^APIVersion defines the versioned schema of this representation of an object\.\nServers should/,
    );
  });

  test("descriptions keep line breaks and drop TODO lines; a field's doc wins over its type's", () => {
    assert.equal(spec.description, 'WidgetSpec is what a widget should be.\n\nIt keeps line breaks.');
    assert.equal(spec.properties.size.description, 'Its size.');
    assert.equal(spec.properties.ports.items.description, 'A port of the widget.');
  });

  test('types: integers by name, quantities, int-or-string, times, nullable, records, raw objects, inline literals', () => {
    const p = spec.properties;
    assert.deepEqual(p.big, { format: 'int64', type: 'integer' });
    assert.deepEqual(p.ratio, { type: 'number' });
    assert.deepEqual(p.labels, { additionalProperties: { type: 'string' }, type: 'object' });
    assert.deepEqual(p.target, {
      anyOf: [{ type: 'integer' }, { type: 'string' }],
      'x-kubernetes-int-or-string': true,
    });
    assert.equal(p.memory['x-kubernetes-int-or-string'], true);
    assert.match('500m', new RegExp(p.memory.pattern));
    assert.match('1Gi', new RegExp(p.memory.pattern));
    assert.doesNotMatch('1 GB', new RegExp(p.memory.pattern));
    assert.deepEqual(p.until, { format: 'date-time', nullable: true, type: 'string' });
    assert.deepEqual(p.template, { type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
    assert.deepEqual(
      p.extra,
      { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      "Schemaless: only the field's markers",
    );
    assert.deepEqual(p.selector, {
      minProperties: 1,
      properties: { app: { type: 'string' }, tier: { type: 'string' } },
      type: 'object',
    });
    assert.deepEqual(p.paused, { type: 'boolean' });
    assert.deepEqual(spec.required, ['name', 'size'], 'optional ? and +optional fields are not required');
  });

  test('validation markers on fields and on types', () => {
    const p = spec.properties;
    assert.deepEqual(p.replicas, {
      default: 1,
      description: 'Replicas of the widget.',
      exclusiveMinimum: true,
      format: 'int32',
      minimum: 0,
      type: 'integer',
    });
    assert.deepEqual(
      p.size,
      { description: 'Its size.', enum: ['S', 'M', 'L'], maxLength: 5, type: 'string' },
      "the union as enum, the type's MaxLength",
    );
    assert.deepEqual(p.name, { minLength: 1, pattern: '^[a-z]+$', type: 'string' });
    assert.deepEqual(p.tags, {
      items: { maxLength: 10, type: 'string' },
      maxItems: 4,
      minItems: 1,
      type: 'array',
      'x-kubernetes-list-type': 'set',
    });
    assert.deepEqual(p.ports.items.properties.port, { format: 'int32', maximum: 65535, minimum: 1, type: 'integer' });
    assert.deepEqual(p.ports['x-kubernetes-list-map-keys'], ['name']);
    assert.deepEqual(p.mode, {
      enum: ['fast', 'slow'],
      type: 'string',
      'x-kubernetes-validations': [{ message: 'mode is immutable', rule: 'self == oldSelf' }],
    });
    assert.deepEqual(p.since, { format: 'date-time', type: 'string' });
  });

  test("a field cannot loosen its type: a conflicting limit keeps both (allOf); the type's enum wins", () => {
    const p = gadget.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties;
    assert.deepEqual(p.alias, {
      allOf: [{ maxLength: 255 }, { maxLength: 10 }],
      description: 'A short name (at most 255 characters).',
      type: 'string',
    });
    assert.deepEqual(p.size, {
      description: "Size names a widget's size.",
      enum: ['S', 'M', 'L'],
      maxLength: 5,
      type: 'string',
    });
  });

  test('Condition lists get the upstream Condition schema', () => {
    const c = crd.spec.versions[0].schema.openAPIV3Schema.properties.status.properties.conditions;
    assert.deepEqual(c.items.required, ['lastTransitionTime', 'message', 'reason', 'status', 'type']);
    assert.deepEqual(c.items.properties.status, { enum: ['True', 'False', 'Unknown'], type: 'string' });
    assert.deepEqual([c['x-kubernetes-list-type'], c['x-kubernetes-list-map-keys']], ['map', ['type']]);
  });
});

describe('generate crd refuses, naming file and line', { skip: SECOND_NODE_SKIP_COMPILER }, () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(ROOT, '.generate-errors-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const HEADER = `// +groupName=example.com\n// +versionName=v1\nimport type { ObjectMeta } from '../packages/ctrlmetrics/src/index.js'; import type { int32 } from '../packages/ctrlmetrics/src/exports/api.js';\n`;
  const kind = (specBody: string, kindMarkers = '') =>
    `${HEADER}\nexport interface ThingSpec {\n${specBody}\n}\n\n${kindMarkers}export interface Thing {\n  apiVersion: string;\n  kind: string;\n  metadata: ObjectMeta;\n  spec: ThingSpec;\n}\n`;
  const cases: Array<[string, string, RegExp]> = [
    ['a plain number', kind('  size: number;'), /^api\.ts:6: field "size" is a number: say which, with int32 or int64/],
    [
      'an unknown marker',
      kind('  // +kubebuilder:validation:Minimun=1\n  size: int32;'),
      /^api\.ts:6: unknown marker "\+kubebuilder:validation:Minimun"$/,
    ],
    [
      'a malformed value',
      kind('  // +kubebuilder:validation:Minimum=one\n  size: int32;'),
      /^api\.ts:6: marker \+kubebuilder:validation:Minimum: value must be a number, got one$/,
    ],
    [
      'Minimum on a string',
      kind('  // +kubebuilder:validation:Minimum=1\n  name: string;'),
      /^api\.ts:6: must apply minimum to a numeric value, found string$/,
    ],
    [
      'a fractional bound on an integer',
      kind('  // +kubebuilder:validation:Maximum=1.5\n  size: int32;'),
      /^api\.ts:6: cannot apply non-integral maximum validation \(1\.5\) to integer value$/,
    ],
    [
      'uniqueItems',
      kind('  // +kubebuilder:validation:UniqueItems=true\n  tags: string[];'),
      /^api\.ts:6: uniqueItems cannot be set to true .* use \/\/ \+listType=set$/,
    ],
    [
      'a union of types',
      kind('  value: string | int32;'),
      /^api\.ts:6: field "value": the union string \| int32 is not a structural schema/,
    ],
    [
      'listMapKey without listType=map',
      kind('  // +listMapKey=name\n  items: { name: string }[];'),
      /^api\.ts:6: must apply listMapKey to an associative-list$/,
    ],
    [
      'a map key that is not required',
      kind('  // +listType=map\n  // +listMapKey=name\n  items: { name?: string }[];'),
      /x-kubernetes-list-map-keys: name must be required or have a default \(the API server would refuse this CRD\)$/,
    ],
    [
      'a CRD marker on a field',
      kind('  // +kubebuilder:subresource:status\n  name: string;'),
      /^api\.ts:6: marker \+kubebuilder:subresource:status belongs on the kind's type, not on a field$/,
    ],
    [
      'a bad XValidation reason',
      kind('  // +kubebuilder:validation:XValidation:rule="self > 0",reason=Bad\n  size: int32;'),
      /^api\.ts:6: invalid reason "Bad"/,
    ],
    [
      'a printcolumn type',
      kind('  name: string;', '// +kubebuilder:printcolumn:name="N",type=text,JSONPath=".spec.name"\n'),
      /^api\.ts:9: printcolumn type must be one of integer, number, string, boolean, date; got "text"$/,
    ],
    [
      'a default of the wrong type',
      kind('  // +kubebuilder:default=seven\n  size: int32;'),
      /^api\.ts:6: the default "seven" breaks the field's own schema: "seven" is not of type integer \(the API server would refuse this CRD\)$/,
    ],
    [
      'a default below the minimum',
      kind('  // +kubebuilder:validation:Minimum=1\n  // +kubebuilder:default=0\n  retentionDays: int32;'),
      /^api\.ts:7: the default 0 breaks the field's own schema: 0 should be greater than or equal to 1 \(the API server would refuse this CRD\)$/,
    ],
    [
      'a syntax error',
      kind('  size: int32\n  name string;'),
      /^api\.ts:7: error TS1131: Property or signature expected\.$/,
    ],
    [
      'a stray marker',
      `${kind('  name: string;')}\n\n\n// +kubebuilder:validation:MaxLength=3\nexport const x = 1;\n`,
      /^api\.ts:18: marker \+kubebuilder:validation:MaxLength=3 is not above a type or field/,
    ],
  ];
  for (const [i, [what, source, error]] of cases.entries()) {
    test(what, async () => {
      const sub = join(dir, `case${i}`);
      await mkdir(sub, { recursive: true });
      await writeFile(
        join(sub, 'api.ts'),
        source.replaceAll("'../packages/ctrlmetrics/src/", "'../../packages/ctrlmetrics/src/"),
      );
      await assert.rejects(crdsOf(['api.ts'], sub), (err: Error) => {
        assert.match(err.message, error);
        return true;
      });
    });
  }

  test('the command prints the error as one line and exits 1', async () => {
    await writeFile(join(dir, 'api.ts'), kind('  size: number;'));
    const r = await runCli(['generate', 'crd', '--paths', 'api.ts', '--output-dir', 'out'], { cwd: dir });
    assert.equal(r.code, 1, r.stdout);
    assert.match(
      r.stderr,
      /^error: api\.ts:6: field "size" is a number: say which, with int32 or int64 \(from ctrlmetrics\) or \/\/ \+kubebuilder:validation:Type=integer \(or =number for a float\)\n$/,
    );
  });

  test('a recursive type, and a kind without a group', async () => {
    const rec = `${HEADER}\nexport interface Node { children: Node[] }\nexport interface Thing {\n  apiVersion: string;\n  kind: string;\n  metadata: ObjectMeta;\n  spec: Node;\n}\n`;
    await writeFile(join(dir, 'api.ts'), rec);
    let r = await runCli(['generate', 'crd', '--paths', 'api.ts'], { cwd: dir });
    assert.match(r.stderr, /api\.ts:5: the type Node contains itself: .* \/\/ \+kubebuilder:validation:Schemaless/);
    await mkdir(join(dir, 'nogroup'), { recursive: true });
    await writeFile(
      join(dir, 'nogroup', 'api.ts'),
      `import type { ObjectMeta } from '../../packages/ctrlmetrics/src/index.js';\nexport interface Thing {\n  apiVersion: string;\n  kind: string;\n  metadata: ObjectMeta;\n}\n`,
    );
    r = await runCli(['generate', 'crd', '--paths', 'nogroup'], { cwd: dir });
    assert.equal(
      r.stderr.trim(),
      'error: nogroup/api.ts:2: the kind Thing has no group: add // +groupName=<group> to api.ts',
    );
  });

  test("a type of one of Kubernetes' own kinds is not a kind of the project; in an API file it gets advice", async () => {
    const deployment = `import type { ObjectMeta } from '../../packages/ctrlmetrics/src/index.js';\nexport interface Deployment {\n  apiVersion: 'apps/v1';\n  kind: 'Deployment';\n  metadata: ObjectMeta;\n}\n`;
    await mkdir(join(dir, 'controllers'), { recursive: true });
    await writeFile(join(dir, 'controllers', 'web.ts'), deployment);
    assert.deepEqual(await crdsOf(['controllers'], dir), []);
    await mkdir(join(dir, 'apiv1'), { recursive: true });
    await writeFile(join(dir, 'apiv1', 'api.ts'), `// +groupName=example.com\n// +versionName=v1\n${deployment}`);
    await assert.rejects(crdsOf(['apiv1'], dir), (err: Error) => {
      assert.equal(
        err.message,
        "apiv1/api.ts:4: Deployment (apps/v1) is one of Kubernetes' own kinds, which get no CRD: type it with kubernetes-types (import type { Deployment } from 'kubernetes-types/<group>/<version>.js') outside the API files",
      );
      return true;
    });
  });
});

test(
  'the memcached example: its CRD, role and webhook configurations are what generate writes (make manifests, then git diff), byte for byte and stable',
  { skip: SECOND_NODE_SKIP_COMPILER },
  async () => {
    const out = await mkdtemp(join(tmpdir(), 'generate-example-'));
    try {
      const example = join(ROOT, 'examples/memcached-operator');
      for (let i = 0; i < 2; i++) {
        const crd = await runCli(['generate', 'crd', '--paths', example, '--output-dir', join(out, 'crd')]);
        assert.equal(crd.code, 0, crd.stderr);
        const rbac = await runCli(['generate', 'rbac', '--paths', example, '--output', join(out, 'role.yaml')]);
        assert.equal(rbac.code, 0, rbac.stderr);
        const webhook = await runCli([
          'generate',
          'webhook',
          '--paths',
          example,
          '--output',
          join(out, 'manifests.yaml'),
        ]);
        assert.equal(webhook.code, 0, webhook.stderr);
      }
      assert.equal(
        await readFile(join(out, 'manifests.yaml'), 'utf8'),
        await readFile(join(example, 'config/webhook/manifests.yaml'), 'utf8'),
        'manifests.yaml: run ctrlmetrics generate webhook',
      );
      const name = 'cache.example.com_memcacheds.yaml';
      assert.equal(
        await readFile(join(out, 'crd', name), 'utf8'),
        await readFile(join(example, 'config/crd/bases', name), 'utf8'),
        `${name}: run ctrlmetrics generate crd`,
      );
      assert.equal(
        await readFile(join(out, 'role.yaml'), 'utf8'),
        await readFile(join(example, 'config/rbac/role.yaml'), 'utf8'),
        'role.yaml: run ctrlmetrics generate rbac',
      );
      const parsed = parseYaml((await readFile(join(out, 'role.yaml'), 'utf8')).replace(/^---\n/, ''));
      assert.equal(parsed.kind, 'ClusterRole');
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  },
);
