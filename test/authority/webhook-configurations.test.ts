/**
 * The authority's MutatingWebhookConfiguration and ValidatingWebhookConfiguration, through kubectl, against what a
 * real kube-apiserver v1.25.9 answered to the same manifests (fixtures/webhook-configurations/*.out, recorded from
 * a local control plane; test/real-api/webhook-configurations.test.ts compares the two servers live): the 422s cause by
 * cause, and the webhooks with their defaults.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { run } from '../helpers/process.js';
import { SECOND_NODE_SKIP } from '../helpers/second-node.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'webhook-configurations');
const fixture = (f: string) => readFileSync(join(FIXTURES, f), 'utf8');

describe('webhook configurations on the authority, as kube-apiserver answers', { skip: SECOND_NODE_SKIP }, () => {
  let cluster: TestCluster;
  const kubectl = (args: string[], input?: string) =>
    run('kubectl', ['--kubeconfig', cluster.kubeconfig, ...args], { timeoutMs: 30_000, input });

  before(async () => {
    cluster = await startTestCluster();
  });
  after(() => cluster?.stop());

  test("invalid configurations: every cause, in kube-apiserver's order and words", async () => {
    for (const f of ['bad-validating', 'bad-mutating']) {
      const r = await kubectl(['create', '-f', '-'], fixture(`${f}.yaml`));
      assert.equal(`${r.stdout}${r.stderr}[rc=${r.code}]\n`, fixture(`${f}.out`), f);
    }
  });

  test("valid configurations are stored with kube-apiserver's defaults", async () => {
    for (const [f, resource, name] of [
      ['good-mutating', 'mutatingwebhookconfigurations', 'good'],
      ['good-validating', 'validatingwebhookconfigurations', 'good-validating'],
    ] as const) {
      const created = await kubectl(['create', '-f', '-'], fixture(`${f}.yaml`));
      assert.equal(created.code, 0, created.stderr);
      const got = await kubectl(['get', resource, name, '-o', 'jsonpath={.webhooks}']);
      assert.equal(got.stdout, fixture(`${f}.out`), f);
    }
    const table = await kubectl(['get', 'validatingwebhookconfigurations']);
    assert.match(table.stdout, /^NAME +WEBHOOKS +AGE\ngood-validating +2 +\d+s\n$/);
  });
});
