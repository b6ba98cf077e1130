/**
 * `ctrlmetrics create webhook` in a project made by `init` and `create api` (no npm install needed): the webhook
 * code with kubebuilder's markers, its test, main.ts, config/webhook and the manifests generated from the markers;
 * kubebuilder's errors; `kubectl kustomize config/default` with the webhooks for every subset of the other `edit`
 * options (cert-manager stays on: the webhooks' certificate comes from it, and turning it off is refused), rendering
 * the names, CA injection and DNS names kubebuilder v4 renders; the project type-checks.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { initProject } from '../../packages/cli/src/scaffold/init.js';
import { run, runCli } from '../helpers/process.js';
import { typeErrorsOfProject } from '../helpers/project-typecheck.js';
import { SECOND_NODE_SKIP_COMPILER } from '../helpers/second-node.js';

let work: string;
let app: string;
const cli = (args: string[], dir = app) => runCli([...args, '--dir', dir], { timeoutMs: 120_000 });
const read = (p: string) => readFileSync(join(app, p), 'utf8');

type Any = any;

before(async () => {
  work = realpathSync(mkdtempSync(join(tmpdir(), 'ctrlmetrics-create-webhook-')));
  app = join(work, 'shop-op');
  await initProject({ projectName: 'shop-op', domain: 'example.com', dir: app, ctrlmetricsVersion: '^0.1.0' });
  const api = await cli(['create', 'api', '--group', 'shop', '--version', 'v1', '--kind', 'Order']);
  assert.equal(api.code, 0, api.stderr);
});
after(() => rmSync(work, { recursive: true, force: true }));

describe('create webhook', { skip: SECOND_NODE_SKIP_COMPILER }, () => {
  test("kubebuilder's errors: no webhook kind chosen, no API", async () => {
    const none = await cli(['create', 'webhook', '--group', 'shop', '--version', 'v1', '--kind', 'Order']);
    assert.equal(
      none.stderr,
      'error: create webhook requires at least one of --defaulting, --programmatic-validation and --conversion to be true\n',
    );
    const noApi = await cli([
      'create',
      'webhook',
      '--group',
      'shop',
      '--version',
      'v1',
      '--kind',
      'Invoice',
      '--defaulting',
    ]);
    assert.equal(noApi.stderr, 'error: create webhook requires a previously created API\n');
  });

  test('defaulting and validation: the code, its test, main.ts, config/ and the configurations from the markers', async () => {
    const r = await cli([
      'create',
      'webhook',
      '--group',
      'shop',
      '--version',
      'v1',
      '--kind',
      'Order',
      '--defaulting',
      '--programmatic-validation',
    ]);
    assert.equal(r.code, 0, r.stderr);
    for (const f of [
      'src/webhooks/v1/order-webhook.ts',
      'test/webhooks/order-webhook.test.ts',
      'config/webhook/service.yaml',
      'config/webhook/kustomization.yaml',
      'config/webhook/kustomizeconfig.yaml',
      'config/default/manager_webhook_patch.yaml',
      'config/certmanager/certificate-webhook.yaml',
    ]) {
      assert.ok(existsSync(join(app, f)), f);
    }
    const code = read('src/webhooks/v1/order-webhook.ts');
    assert.match(
      code,
      /^\/\/ \+kubebuilder:webhook:path=\/mutate-shop-example-com-v1-order,mutating=true,failurePolicy=fail,sideEffects=None,groups=shop\.example\.com,resources=orders,verbs=create;update,versions=v1,name=morder-v1\.kb\.io,admissionReviewVersions=v1$/m,
    );
    assert.match(code, /^\/\/ \+kubebuilder:webhook:path=\/validate-shop-example-com-v1-order,mutating=false,/m);
    assert.match(
      read('src/main.ts'),
      /^ {2}if \(process\.env\.ENABLE_WEBHOOKS !== 'false'\) mgr\.add\(newOrderWebhook\(\)\);$/m,
    );
    const configs = parseAllDocuments(read('config/webhook/manifests.yaml')).map((d) => d.toJS());
    assert.deepEqual(
      configs.map((c) => `${c.kind}/${c.webhooks[0].name}/${c.webhooks[0].clientConfig.service.path}`),
      [
        'MutatingWebhookConfiguration/morder-v1.kb.io//mutate-shop-example-com-v1-order',
        'ValidatingWebhookConfiguration/vorder-v1.kb.io//validate-shop-example-com-v1-order',
      ],
    );
    const entry = parseYaml(read('PROJECT')).resources[0];
    assert.deepEqual(entry.webhooks, { defaulting: true, validation: true, webhookVersion: 'v1' });
    assert.match(read('config/network-policy/kustomization.yaml'), /^- allow-webhook-traffic\.yaml$/m);
    assert.match(read('config/certmanager/kustomization.yaml'), /^- certificate-webhook\.yaml$/m);
    // again: the webhooks exist
    const again = await cli([
      'create',
      'webhook',
      '--group',
      'shop',
      '--version',
      'v1',
      '--kind',
      'Order',
      '--defaulting',
    ]);
    assert.equal(again.stderr, 'error: defaulting webhook already exists for this resource\n');
  });

  test('kustomize renders them as kubebuilder v4 does, for every subset of the other options; cert-manager cannot be turned off', async () => {
    const others = ['prometheus', 'metrics-tls', 'network-policy', 'grafana'];
    for (let mask = 0; mask < 1 << others.length; mask++) {
      const on = others.filter((_, i) => mask & (1 << i));
      if (on.includes('metrics-tls') && !on.includes('prometheus')) continue; // not a subset edit allows (it needs prometheus)
      const off = others.filter((o) => !on.includes(o));
      const args = [
        ...(on.length ? ['--enable', on.join(',')] : []),
        ...(off.length ? ['--disable', off.join(',')] : []),
      ];
      const e = await cli(['edit', ...args]);
      assert.equal(e.code, 0, `edit ${args.join(' ')}: ${e.stderr}`);
      const built = await run('kubectl', ['kustomize', join(app, 'config/default')], { timeoutMs: 60_000 });
      assert.equal(built.code, 0, `${args.join(' ')}: ${built.stderr}`);
      const objs = parseAllDocuments(built.stdout).map((d) => d.toJS());
      const by = (kind: string, name: string) => objs.find((o) => o.kind === kind && o.metadata.name === name);
      for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']) {
        const c = by(
          kind,
          `shop-op-${kind === 'MutatingWebhookConfiguration' ? 'mutating' : 'validating'}-webhook-configuration`,
        );
        assert.equal(
          c?.metadata.annotations['cert-manager.io/inject-ca-from'],
          'shop-op-system/shop-op-serving-cert',
          `${kind} (${args.join(' ')})`,
        );
        assert.deepEqual(c.webhooks[0].clientConfig.service, {
          name: 'shop-op-webhook-service',
          namespace: 'shop-op-system',
          path: c.webhooks[0].clientConfig.service.path,
        });
      }
      assert.deepEqual(by('Certificate', 'shop-op-serving-cert')?.spec.dnsNames, [
        'shop-op-webhook-service.shop-op-system.svc',
        'shop-op-webhook-service.shop-op-system.svc.cluster.local',
      ]);
      assert.equal(by('Certificate', 'shop-op-serving-cert')?.spec.secretName, 'webhook-server-cert');
      const service = by('Service', 'shop-op-webhook-service');
      assert.deepEqual(service?.spec.ports, [{ port: 443, protocol: 'TCP', targetPort: 9443 }]);
      const container = by('Deployment', 'shop-op-controller-manager').spec.template.spec.containers[0];
      assert.ok(container.args.includes('--webhook-cert-path=/tmp/k8s-webhook-server/serving-certs'));
      assert.ok(container.ports.some((p: Any) => p.containerPort === 9443 && p.name === 'webhook-server'));
      assert.ok(
        container.volumeMounts.some(
          (m: Any) => m.name === 'webhook-certs' && m.mountPath === '/tmp/k8s-webhook-server/serving-certs',
        ),
      );
      assert.equal(!!by('NetworkPolicy', 'shop-op-allow-webhook-traffic'), on.includes('network-policy'));
      assert.ok(!built.stdout.includes('SERVICE_NAME'), 'no placeholder left');
    }
    const refused = await cli(['edit', '--disable', 'certmanager']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /certmanager cannot be disabled while the project has webhooks/);
  });

  test("the project type-checks with its webhook (strict, no unused names), against this repository's sources", async () => {
    assert.deepEqual(await typeErrorsOfProject(app), []);
  });
});
