/**
 * A kind's second version and its conversion webhook, scaffolded as kubebuilder does (no npm install needed):
 * `create api` for another version marks the first one as the storage version; `create webhook --conversion` writes
 * the converters (the hub and each spoke), their test, the registration in src/main.ts, moves
 * `+kubebuilder:storageversion` to the hub, patches the CRD to call the webhook Service's /convert with
 * cert-manager's CA injected, and `kubectl kustomize config/default` renders it named as kubebuilder v4 names it;
 * kubebuilder's errors; the project type-checks.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { initProject } from '../../packages/cli/src/scaffold/init.js';
import { run, runCli } from '../helpers/process.js';
import { typeErrorsOfProject } from '../helpers/project-typecheck.js';
import { SECOND_NODE_SKIP_COMPILER } from '../helpers/second-node.js';

type Any = any;

let work: string;
let app: string;
const cli = (args: string[]) => runCli([...args, '--dir', app], { timeoutMs: 120_000 });
const read = (p: string) => readFileSync(join(app, p), 'utf8');
const storageMarked = (version: string) =>
  read(`src/api/${version}/frigate-types.ts`).includes('// +kubebuilder:storageversion\nexport interface Frigate {');

before(async () => {
  work = realpathSync(mkdtempSync(join(tmpdir(), 'ctrlmetrics-conversion-')));
  app = join(work, 'fleet-op');
  await initProject({ projectName: 'fleet-op', domain: 'example.com', dir: app, ctrlmetricsVersion: '^0.1.0' });
  const v1 = await cli(['create', 'api', '--group', 'ship', '--version', 'v1', '--kind', 'Frigate']);
  assert.equal(v1.code, 0, v1.stderr);
});
after(() => rmSync(work, { recursive: true, force: true }));

describe('a second version and create webhook --conversion', { skip: SECOND_NODE_SKIP_COMPILER }, () => {
  test('no other version yet: the conversion webhook is refused, naming how to add one', async () => {
    const r = await cli([
      'create',
      'webhook',
      '--group',
      'ship',
      '--version',
      'v1',
      '--kind',
      'Frigate',
      '--conversion',
    ]);
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      'error: a conversion webhook needs another version of Frigate to convert from: create it first (ctrlmetrics create api --group ship --version <version> --kind Frigate --controller=false)\n',
    );
  });

  test('create api for a second version: the first is marked the storage version, and the CRD has both', async () => {
    const r = await cli([
      'create',
      'api',
      '--group',
      'ship',
      '--version',
      'v2',
      '--kind',
      'Frigate',
      '--controller=false',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^note: src\/api\/v1\/frigate-types\.ts: marked \+kubebuilder:storageversion/m);
    assert.ok(storageMarked('v1'));
    assert.ok(!storageMarked('v2'));
    const crd = parseYaml(read('config/crd/bases/ship.example.com_frigates.yaml').replace(/^---\n/, ''));
    assert.deepEqual(
      crd.spec.versions.map((v: Any) => [v.name, v.storage]),
      [
        ['v1', true],
        ['v2', false],
      ],
    );
  });

  test('an unknown spoke is refused as kubebuilder words it', async () => {
    const r = await cli([
      'create',
      'webhook',
      '--group',
      'ship',
      '--version',
      'v2',
      '--kind',
      'Frigate',
      '--conversion',
      '--spoke',
      'v3',
    ]);
    assert.equal(r.stderr, 'error: invalid spoke version "v3"\n');
  });

  test('create webhook --conversion with v2 as the hub: converters, test, main.ts, the storage version moved, the CRD patch', async () => {
    const r = await cli([
      'create',
      'webhook',
      '--group',
      'ship',
      '--version',
      'v2',
      '--kind',
      'Frigate',
      '--conversion',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const code = read('src/webhooks/v2/frigate-conversion.ts');
    assert.match(code, /^ {4}hub: 'v2',$/m);
    assert.match(code, /^ {6}v1: \{$/m);
    assert.match(
      read('src/main.ts'),
      /^ {2}if \(process\.env\.ENABLE_WEBHOOKS !== 'false'\) mgr\.add\(newFrigateConversion\(\)\);$/m,
    );
    assert.match(read('test/webhooks/frigate-conversion.test.ts'), /conversions: \['frigates\.ship\.example\.com'\]/);
    assert.ok(storageMarked('v2') && !storageMarked('v1'), 'the hub is the storage version');
    const crd = parseYaml(read('config/crd/bases/ship.example.com_frigates.yaml').replace(/^---\n/, ''));
    assert.deepEqual(
      crd.spec.versions.map((v: Any) => [v.name, v.storage]),
      [
        ['v1', false],
        ['v2', true],
      ],
      'generated again',
    );
    const entry = parseYaml(read('PROJECT')).resources.find((x: Any) => x.version === 'v2');
    assert.deepEqual(entry.webhooks, { conversion: true, spoke: ['v1'], webhookVersion: 'v1' });
    assert.match(read('config/crd/kustomization.yaml'), /^patches:\n- path: patches\/webhook_in_frigates\.yaml$/m);
    assert.doesNotMatch(
      read('config/webhook/kustomization.yaml'),
      /manifests\.yaml/,
      'no admission webhooks: no manifests.yaml to list',
    );
    const again = await cli([
      'create',
      'webhook',
      '--group',
      'ship',
      '--version',
      'v2',
      '--kind',
      'Frigate',
      '--conversion',
    ]);
    assert.equal(again.stderr, 'error: conversion webhook already exists for this resource\n');
  });

  test('kustomize renders the CRD calling <project>-webhook-service in <project>-system at /convert, with the CA injected', async () => {
    const built = await run('kubectl', ['kustomize', join(app, 'config/default')], { timeoutMs: 60_000 });
    assert.equal(built.code, 0, built.stderr);
    const objs = parseAllDocuments(built.stdout).map((d) => d.toJS());
    const crd = objs.find((o) => o.kind === 'CustomResourceDefinition');
    assert.equal(crd.metadata.name, 'frigates.ship.example.com');
    assert.equal(crd.metadata.annotations['cert-manager.io/inject-ca-from'], 'fleet-op-system/fleet-op-serving-cert');
    assert.deepEqual(crd.spec.conversion, {
      strategy: 'Webhook',
      webhook: {
        clientConfig: { service: { name: 'fleet-op-webhook-service', namespace: 'fleet-op-system', path: '/convert' } },
        conversionReviewVersions: ['v1'],
      },
    });
    assert.ok(objs.some((o) => o.kind === 'Service' && o.metadata.name === 'fleet-op-webhook-service'));
    assert.ok(!built.stdout.includes('SERVICE_NAME'), 'no placeholder left');
  });

  test('adding admission webhooks afterwards lists manifests.yaml again', async () => {
    const r = await cli([
      'create',
      'webhook',
      '--group',
      'ship',
      '--version',
      'v2',
      '--kind',
      'Frigate',
      '--defaulting',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(read('config/webhook/kustomization.yaml'), /^resources:\n- manifests\.yaml$/m);
    const entry = parseYaml(read('PROJECT')).resources.find((x: Any) => x.version === 'v2');
    assert.deepEqual(entry.webhooks, { conversion: true, defaulting: true, spoke: ['v1'], webhookVersion: 'v1' });
    const built = await run('kubectl', ['kustomize', join(app, 'config/default')], { timeoutMs: 60_000 });
    assert.equal(built.code, 0, built.stderr);
  });

  test("the project type-checks with its conversion (strict, no unused names), against this repository's sources", async () => {
    assert.deepEqual(await typeErrorsOfProject(app), []);
  });
});
