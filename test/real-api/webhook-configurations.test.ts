/**
 * MutatingWebhookConfiguration and ValidatingWebhookConfiguration on a real kube-apiserver and on the authority,
 * through kubectl, side by side: the defaults filled in, the validation errors (fields, messages, order), and the
 * table kubectl prints. test/authority/webhook-configurations.test.ts holds the same answers, recorded, for runs
 * without a real cluster.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestCluster, type ApiCluster, type TestCluster } from '../helpers/cluster.js';
import { run } from '../helpers/process.js';
import { REAL_KUBE_SKIP, runName, startRealKube, type RealKube } from '../helpers/real-kube.js';

const FIXTURES = join(import.meta.dirname, '..', 'authority', 'fixtures', 'webhook-configurations');
/** A fixture, its configuration renamed to carry the run's id. */
const manifest = (f: string) =>
  readFileSync(join(FIXTURES, f), 'utf8').replace(
    /^metadata: \{name: ([a-z0-9-]+)\}$/m,
    (_, name: string) => `metadata: {name: ${runName(name)}}`,
  );

describe(
  'webhook configurations: a real kube-apiserver and the authority answer alike',
  { skip: REAL_KUBE_SKIP },
  () => {
    let kube: RealKube;
    let authority: TestCluster;
    const kubectl = (c: ApiCluster, args: string[], input?: string) =>
      run('kubectl', ['--kubeconfig', c.kubeconfig, ...args], { timeoutMs: 30_000, input }).then((r) => ({
        ...r,
        all: `${r.stdout}${r.stderr}[rc=${r.code}]`,
      }));

    before(async () => {
      [kube, authority] = await Promise.all([startRealKube(), startTestCluster()]);
    });
    after(async () => {
      await Promise.all([kube?.stop(), authority?.stop()]);
    });

    test('invalid configurations: the same 422, cause by cause', async () => {
      for (const f of ['bad-validating.yaml', 'bad-mutating.yaml']) {
        const [real, ours] = await Promise.all(
          [kube, authority].map((c) => kubectl(c, ['create', '-f', '-'], manifest(f))),
        );
        assert.equal(ours.all, real.all, f);
        assert.match(real.all, /is invalid/);
      }
    });

    test("valid configurations: the same defaults, and kubectl's table", async () => {
      for (const [f, resource, name] of [
        ['good-mutating.yaml', 'mutatingwebhookconfigurations', 'good'],
        ['good-validating.yaml', 'validatingwebhookconfigurations', 'good-validating'],
      ] as const) {
        const created = await Promise.all([kube, authority].map((c) => kubectl(c, ['create', '-f', '-'], manifest(f))));
        assert.equal(created[1].all, created[0].all, f);
        const [real, ours] = await Promise.all(
          [kube, authority].map((c) => kubectl(c, ['get', resource, runName(name), '-o', 'jsonpath={.webhooks}'])),
        );
        assert.equal(ours.all, real.all, `${f}: the webhooks after defaulting`);
        // this run's configuration alone: a shared cluster may hold others
        const tables = await Promise.all([kube, authority].map((c) => kubectl(c, ['get', resource, runName(name)])));
        const age = (s: string) => s.replace(/\b\d+s\b/g, '<age>');
        assert.equal(age(tables[1].all), age(tables[0].all), `${resource} table`);
      }
    });
  },
);
