/**
 * The authority calling admission webhooks over real HTTPS: a scripted webhook endpoint on 127.0.0.1 answers
 * AdmissionReviews, and the authority's clients (its Kubernetes client and kubectl) see what kube-apiserver's
 * clients see: the AdmissionReview it sends, patches applied, denials, warnings, failure policies, timeouts,
 * invalid answers, reinvocation, dry runs, deletes, selectors and service references.
 */
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { run } from '../helpers/process.js';
import { jsonPatch, ScriptedWebhook } from '../helpers/scripted-webhook.js';
import { KubeApiError } from '../../packages/ctrlmetrics/src/kube/client.js';
import type { Logger } from '../../packages/ctrlmetrics/src/util/log.js';

const MWC = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const VWC = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const NS = 'admission';

type Hook = Record<string, unknown>;

/** Debug lines of the authority, kept to check the per-call line. */
function debugLines(): { lines: Array<{ msg: string; fields?: Record<string, unknown> }>; logger: Logger } {
  const lines: Array<{ msg: string; fields?: Record<string, unknown> }> = [];
  const logger = {
    debug: (msg: string, fields?: Record<string, unknown>) => lines.push({ msg, fields }),
    info: () => undefined,
    warn: () => undefined,
    error: () => undefined,
    child: () => logger,
  } as unknown as Logger;
  return { lines, logger };
}

async function rejection(p: Promise<unknown>): Promise<KubeApiError & { body: Record<string, unknown> }> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof KubeApiError, String(err));
    return err as KubeApiError & { body: Record<string, unknown> };
  }
  assert.fail('the request was not refused');
}

describe('the authority calls admission webhooks', { timeout: 120_000 }, () => {
  let cluster: TestCluster;
  let hook: ScriptedWebhook;
  const log = debugLines();
  const configs: string[] = [];
  const kubectl = (args: string[], input?: string) =>
    run('kubectl', ['--kubeconfig', cluster.kubeconfig, ...args], { timeoutMs: 30_000, input });

  const rules = (resources = ['configmaps'], operations = ['CREATE', 'UPDATE']) => [
    { apiGroups: [''], apiVersions: ['v1'], operations, resources },
  ];
  const webhook = (name: string, path: string, extra: Hook = {}): Hook => ({
    name,
    clientConfig: { url: `${hook.url}${path}`, caBundle: hook.caBundle },
    rules: rules(),
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } },
    ...extra,
  });
  const install = async (kind: 'mutating' | 'validating', name: string, webhooks: Hook[]) => {
    const path = kind === 'mutating' ? MWC : VWC;
    await cluster.admin.create(path, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: kind === 'mutating' ? 'MutatingWebhookConfiguration' : 'ValidatingWebhookConfiguration',
      metadata: { name },
      webhooks,
    });
    configs.push(`${path}/${name}`);
  };
  const configMap = (name: string, extra: Record<string, unknown> = {}) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: NS, ...extra },
    data: { a: '1' },
  });
  const cms = `/api/v1/namespaces/${NS}/configmaps`;

  before(async () => {
    hook = await ScriptedWebhook.start(['127.0.0.1', 'hooks.webhook-system.svc']);
    cluster = await startTestCluster({
      logger: log.logger,
      webhookServices: { 'webhook-system/hooks:443': `127.0.0.1:${hook.port}` },
    });
    await cluster.admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  });
  afterEach(async () => {
    // every test installs its own configurations; none outlives it
    for (const c of configs.splice(0)) await cluster.admin.delete(c);
    hook.calls.length = 0;
    await hook.listen();
  });
  after(async () => {
    await cluster?.stop();
    await hook?.stop();
  });

  test('a mutating webhook gets the AdmissionReview kube-apiserver sends, and its patch is stored', async () => {
    hook.on('/mutate', () => ({
      response: { allowed: true, ...jsonPatch([{ op: 'add', path: '/data/added', value: 'by-webhook' }]) },
    }));
    hook.on('/validate', () => ({ response: { allowed: true } }));
    await install('mutating', 'm', [webhook('m.example.com', '//mutate/')]);
    await install('validating', 'v', [webhook('v.example.com', '/validate')]);
    const created = await cluster.admin.create<Record<string, any>>(cms, configMap('', { generateName: 'gen-' }), {
      query: { fieldManager: 'tester' },
    });
    assert.equal(created.data.added, 'by-webhook');
    const [m] = hook.callsTo('/mutate');
    const [v] = hook.callsTo('/validate');
    assert.ok(m && v);
    // the path joined as Go's path.Join does, the remaining time as ?timeout=
    assert.equal(m.url, '/mutate?timeout=10s');
    assert.equal(m.headers['user-agent'], 'kube-apiserver-admission');
    assert.equal(m.headers['content-type'], 'application/json');
    assert.equal(m.headers.accept, 'application/json, */*');
    const r = m.review.request;
    assert.equal(m.review.apiVersion, 'admission.k8s.io/v1');
    assert.match(r.uid, /^[0-9a-f-]{36}$/);
    assert.notEqual(r.uid, v.review.request.uid, 'a new uid per call');
    assert.deepEqual(r.kind, { group: '', version: 'v1', kind: 'ConfigMap' });
    assert.deepEqual(r.resource, { group: '', version: 'v1', resource: 'configmaps' });
    assert.deepEqual(r.requestKind, r.kind);
    assert.deepEqual(r.requestResource, r.resource);
    assert.equal(r.name, undefined, 'mutating webhooks see no generated name');
    assert.equal(r.namespace, NS);
    assert.equal(r.operation, 'CREATE');
    assert.equal(r.userInfo.username, 'admin');
    assert.deepEqual(r.userInfo.groups, ['system:masters', 'system:authenticated']);
    assert.equal(r.oldObject, null);
    assert.equal(r.dryRun, false);
    assert.deepEqual(r.options, { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1', fieldManager: 'tester' });
    assert.equal(r.object.metadata.uid, undefined, 'mutating admission runs before the server sets uid');
    // validating webhooks see the final object: generated name, uid, the patch applied
    const vr = v.review.request;
    assert.equal(vr.name, created.metadata.name);
    assert.equal(vr.object.metadata.uid, created.metadata.uid);
    assert.equal(vr.object.data.added, 'by-webhook');
    const stored = await cluster.admin.get<Record<string, any>>(`${cms}/${created.metadata.name}`);
    assert.equal(stored.metadata.uid, created.metadata.uid);
    assert.equal(stored.data.added, 'by-webhook');
    // one debug line per call: webhook, code, duration
    const line = log.lines.find((l) => l.msg === 'called admission webhook' && l.fields?.webhook === 'm.example.com');
    assert.equal(line?.fields?.code, 200);
    assert.equal(typeof line?.fields?.durationMs, 'number');
  });

  test('every kind of write goes through admission and is stored as without it: apply (creating and updating), patch, label, replace', async () => {
    hook.on('/seen', () => ({ response: { allowed: true } }));
    await install('validating', 'seen', [webhook('seen.example.com', '/seen')]);
    // the same writes in NS (through the webhook) and in default (which no webhook selects)
    const writes = async (ns: string) => {
      const applied = (v: string) =>
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'writes', namespace: ns },
          data: { v },
        });
      for (const [args, input] of [
        [['apply', '--server-side', '-f', '-'], applied('1')],
        [['apply', '--server-side', '-f', '-'], applied('2')],
        [
          [
            'patch',
            'configmap',
            'writes',
            '-n',
            ns,
            '--type=json',
            '-p',
            '[{"op":"add","path":"/data/w","value":"x"}]',
          ],
        ],
        [['label', 'configmap', 'writes', '-n', ns, 'l=1']],
      ] as Array<[string[], string?]>) {
        const r = await kubectl(args, input);
        assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      }
      const path = `/api/v1/namespaces/${ns}/configmaps/writes`;
      const got = await cluster.admin.get<Record<string, any>>(path);
      const replaced = await cluster.admin.replace<Record<string, any>>(path, {
        ...got,
        data: { ...got.data, v: '3' },
      });
      await cluster.admin.delete(path);
      const {
        uid: _u,
        creationTimestamp: _c,
        resourceVersion: _r,
        namespace: _n,
        managedFields,
        ...meta
      } = replaced.metadata;
      // the entries' order follows their (second-granular) times, which differ between the two runs: compared as a set
      const fields = managedFields
        .map((f: Record<string, unknown>) => ({ ...f, time: undefined }))
        .sort((x: Record<string, unknown>, y: Record<string, unknown>) =>
          `${x.manager}/${x.operation}` < `${y.manager}/${y.operation}` ? -1 : 1,
        );
      return { meta, data: replaced.data, fields };
    };
    const through = await writes(NS);
    const direct = await writes('default');
    assert.deepEqual(through, direct);
    assert.deepEqual(through.data, { v: '3', w: 'x' });
    assert.deepEqual(
      hook.callsTo('/seen').map((c) => c.review.request.operation),
      ['CREATE', 'UPDATE', 'UPDATE', 'UPDATE', 'UPDATE'],
    );
  });

  test('denials: the webhook name and message, its code raised to at least 400, its reason and causes kept', async () => {
    hook.on('/deny-200', () => ({ response: { allowed: false, status: { code: 200, message: 'not today' } } }));
    await install('validating', 'v', [webhook('deny.example.com', '/deny-200')]);
    let e = await rejection(cluster.admin.create(cms, configMap('denied')));
    assert.equal(e.status, 400);
    assert.equal(e.message, 'admission webhook "deny.example.com" denied the request: not today');
    hook.on('/deny-200', () => ({ response: { allowed: false, status: { code: 403, reason: 'Forbidden' } } }));
    e = await rejection(cluster.admin.create(cms, configMap('denied')));
    assert.equal(e.status, 403);
    assert.equal(e.reason, 'Forbidden');
    assert.equal(e.message, 'admission webhook "deny.example.com" denied the request: Forbidden');
    hook.on('/deny-200', () => ({ response: { allowed: false } }));
    e = await rejection(cluster.admin.create(cms, configMap('denied')));
    assert.equal(e.message, 'admission webhook "deny.example.com" denied the request without explanation');
    const causes = [{ reason: 'FieldValueInvalid', message: 'Invalid value: "1": no', field: 'data.a' }];
    hook.on('/deny-200', () => ({
      response: {
        allowed: false,
        status: {
          code: 422,
          reason: 'Invalid',
          message: 'ConfigMap "denied" is invalid: data.a: Invalid value: "1": no',
          details: { name: 'denied', kind: 'ConfigMap', causes },
        },
      },
    }));
    const r = await kubectl(['create', '-f', '-'], JSON.stringify(configMap('denied')));
    assert.equal(r.code, 1);
    assert.equal(r.stderr.trim(), 'The ConfigMap "denied" is invalid: data.a: Invalid value: "1": no');
    await rejection(cluster.admin.get(`${cms}/denied`));
  });

  test('warnings reach the client as Warning headers (kubectl prints them), also with a denial', async () => {
    hook.on('/warn', () => ({
      response: { allowed: true, warnings: ['first warning', 'first warning', 'second warning'] },
    }));
    await install('validating', 'v', [webhook('warn.example.com', '/warn')]);
    const r = await kubectl(['create', '-f', '-'], JSON.stringify(configMap('warned')));
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, 'Warning: first warning\nWarning: second warning\n');
    hook.on('/warn', () => ({ response: { allowed: false, warnings: ['see the docs'], status: { message: 'no' } } }));
    const denied = await kubectl(['create', '-f', '-'], JSON.stringify(configMap('warned-denied')));
    assert.equal(denied.code, 1);
    assert.match(denied.stderr, /^Warning: see the docs\n/);
    assert.match(denied.stderr, /admission webhook "warn.example.com" denied the request: no/);
  });

  test("an unreachable webhook: Fail refuses the write with kube's internal error, Ignore lets it through", async () => {
    await hook.stop();
    await install('validating', 'fail', [webhook('fail.example.com', '/validate', { failurePolicy: 'Fail' })]);
    const e = await rejection(cluster.admin.create(cms, configMap('refused')));
    assert.equal(e.status, 500);
    assert.equal(e.reason, 'InternalError');
    const text = `failed calling webhook "fail.example.com": failed to call webhook: Post "${hook.url}/validate?timeout=10s": dial tcp 127.0.0.1:${hook.port}: connect: connection refused`;
    assert.equal(e.message, `Internal error occurred: ${text}`);
    assert.deepEqual((e.body.details as { causes: unknown[] }).causes, [{ message: text }]);
    await cluster.admin.delete(configs.pop()!);
    await install('validating', 'ignore', [webhook('ignore.example.com', '/validate', { failurePolicy: 'Ignore' })]);
    await cluster.admin.create(cms, configMap('let-through'));
    await hook.listen();
  });

  test('timeoutSeconds: a slow webhook fails with context deadline exceeded', async () => {
    hook.on('/slow', () => ({ response: { allowed: true }, delayMs: 3000 }));
    await install('validating', 'slow', [webhook('slow.example.com', '/slow', { timeoutSeconds: 1 })]);
    const started = Date.now();
    const e = await rejection(cluster.admin.create(cms, configMap('slow')));
    assert.ok(Date.now() - started < 2900, 'answered at the webhook timeout, not when the webhook answered');
    assert.equal(
      e.message,
      `Internal error occurred: failed calling webhook "slow.example.com": failed to call webhook: Post "${hook.url}/slow?timeout=1s": context deadline exceeded`,
    );
  });

  test('invalid answers are call failures (subject to failurePolicy); a patch that does not apply fails even under Ignore', async () => {
    hook.on('/wrong-uid', () => ({ response: { uid: 'other', allowed: true } }));
    hook.on('/not-json', () => ({ raw: { status: 200, body: 'hello' } }));
    hook.on('/http-500', () => ({ raw: { status: 500, body: 'boom' } }));
    hook.on('/bad-patch', () => ({
      response: { allowed: true, ...jsonPatch([{ op: 'replace', path: '/data/missing', value: 'x' }]) },
    }));
    hook.on('/patch-no-type', () => ({ response: { allowed: true, patch: jsonPatch([]).patch } }));
    const cases: Array<[string, 'mutating' | 'validating', string, string]> = [
      [
        '/wrong-uid',
        'validating',
        'Fail',
        'received invalid webhook response: expected response.uid=<uid>, got "other"',
      ],
      ['/not-json', 'validating', 'Fail', "failed to call webhook: couldn't get version/kind; json parse error: "],
      [
        '/http-500',
        'validating',
        'Fail',
        'failed to call webhook: an error on the server ("boom") has prevented the request from succeeding',
      ],
      [
        '/patch-no-type',
        'mutating',
        'Fail',
        'received invalid webhook response: webhook returned response.patch but not response.patchType',
      ],
    ];
    for (const [path, kind, policy, want] of cases) {
      await install(kind, 'bad', [webhook('bad.example.com', path, { failurePolicy: policy })]);
      const e = await rejection(cluster.admin.create(cms, configMap('bad')));
      const uid = hook.callsTo(path).at(-1)!.review.request.uid as string;
      assert.equal(e.status, 500, path);
      assert.ok(
        e.message.startsWith(
          `Internal error occurred: failed calling webhook "bad.example.com": ${want.replace('<uid>', JSON.stringify(uid))}`,
        ),
        `${path}: ${e.message}`,
      );
      await cluster.admin.delete(configs.pop()!);
      await install(kind, 'bad', [webhook('bad.example.com', path, { failurePolicy: 'Ignore' })]);
      await cluster.admin.create(cms, configMap(`ignored${path.replace(/\//g, '-')}`));
      await cluster.admin.delete(configs.pop()!);
    }
    await install('mutating', 'bad', [webhook('bad.example.com', '/bad-patch', { failurePolicy: 'Ignore' })]);
    const e = await rejection(cluster.admin.create(cms, configMap('bad-patch')));
    assert.equal(e.status, 500);
    assert.match(e.message, /^Internal error occurred: .*missing/);
  });

  test('reinvocation: an IfNeeded webhook runs again once after a later webhook changed the object', async () => {
    hook.on('/a', (rv) => ({
      response: {
        allowed: true,
        ...(rv.request.object.metadata.labels?.a
          ? {}
          : jsonPatch([
              { op: 'add', path: '/metadata/labels', value: { ...rv.request.object.metadata.labels, a: 'yes' } },
            ])),
      },
    }));
    hook.on('/b', () => ({
      response: { allowed: true, ...jsonPatch([{ op: 'add', path: '/metadata/labels/b', value: 'yes' }]) },
    }));
    // configurations run in name order: "1-a" before "2-b"
    await install('mutating', '2-b', [webhook('b.example.com', '/b')]);
    await install('mutating', '1-a', [webhook('a.example.com', '/a', { reinvocationPolicy: 'IfNeeded' })]);
    const created = await cluster.admin.create<Record<string, any>>(cms, configMap('reinvoked'));
    assert.deepEqual(created.metadata.labels, { a: 'yes', b: 'yes' });
    assert.equal(hook.callsTo('/a').length, 2, 'a: round 0 and its reinvocation');
    assert.equal(hook.callsTo('/b').length, 1, 'b (Never) runs once, and its own change does not re-invoke it');
    assert.equal(
      hook.callsTo('/a')[1].review.request.object.metadata.labels.b,
      'yes',
      "the second call sees b's change",
    );
  });

  test('the scale subresource: webhooks on deployments/scale get the autoscaling/v1 Scale, and may refuse it', async () => {
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'scaled', namespace: NS },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'scaled' } },
        template: { metadata: { labels: { app: 'scaled' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
      },
    };
    await cluster.admin.create(`/apis/apps/v1/namespaces/${NS}/deployments`, deployment);
    hook.on('/scale', (rv) => ({
      response:
        rv.request.object.spec.replicas > 5
          ? { allowed: false, status: { message: 'at most 5 replicas' } }
          : { allowed: true, warnings: ['scaled'] },
    }));
    const scaleRules = [
      { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['deployments/scale'] },
    ];
    await install('validating', 'scale', [webhook('scale.example.com', '/scale', { rules: scaleRules })]);
    const ok = await kubectl(['scale', 'deployment', 'scaled', '-n', NS, '--replicas=3']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stderr, 'Warning: scaled\n');
    const refused = await kubectl(['scale', 'deployment', 'scaled', '-n', NS, '--replicas=9']);
    assert.equal(refused.code, 1);
    assert.equal(
      refused.stderr.trim(),
      'Error from server: admission webhook "scale.example.com" denied the request: at most 5 replicas',
    );
    const r = hook.callsTo('/scale').at(-1)!.review.request;
    assert.deepEqual(
      [r.kind, r.resource, r.subResource, r.requestKind, r.operation],
      [
        { group: 'autoscaling', version: 'v1', kind: 'Scale' },
        { group: 'apps', version: 'v1', resource: 'deployments' },
        'scale',
        { group: 'autoscaling', version: 'v1', kind: 'Scale' },
        'UPDATE',
      ],
    );
    assert.deepEqual([r.object.spec.replicas, r.oldObject.spec.replicas], [9, 3]);
    const stored = await cluster.admin.get<Record<string, any>>(`/apis/apps/v1/namespaces/${NS}/deployments/scaled`);
    assert.equal(stored.spec.replicas, 3);
  });

  test('dry run: webhooks are told, nothing is stored', async () => {
    hook.on('/dry', () => ({ response: { allowed: true } }));
    await install('validating', 'dry', [webhook('dry.example.com', '/dry', { sideEffects: 'NoneOnDryRun' })]);
    const r = await kubectl(['create', '--dry-run=server', '-f', '-'], JSON.stringify(configMap('dry')));
    assert.equal(r.code, 0, r.stderr);
    const [c] = hook.callsTo('/dry');
    assert.equal(c?.review.request.dryRun, true);
    assert.deepEqual(c?.review.request.options.dryRun, ['All']);
    await rejection(cluster.admin.get(`${cms}/dry`));
  });

  test('updates and deletes: oldObject, a null object on DELETE, and a delete refused', async () => {
    await cluster.admin.create(cms, configMap('kept'));
    hook.on('/guard', (rv) => ({
      response:
        rv.request.operation === 'DELETE' ? { allowed: false, status: { message: 'kept forever' } } : { allowed: true },
    }));
    await install('validating', 'guard', [
      webhook('guard.example.com', '/guard', { rules: rules(['configmaps'], ['UPDATE', 'DELETE']) }),
    ]);
    await cluster.admin.mergePatch(`${cms}/kept`, { data: { a: '2' } });
    const [u] = hook.callsTo('/guard');
    assert.equal(u?.review.request.operation, 'UPDATE');
    assert.equal(u?.review.request.oldObject.data.a, '1');
    assert.equal(u?.review.request.object.data.a, '2');
    assert.equal(u?.review.request.options.kind, 'UpdateOptions');
    const r = await kubectl(['delete', 'configmap', 'kept', '-n', NS]);
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr.trim(),
      'Error from server: admission webhook "guard.example.com" denied the request: kept forever',
    );
    const d = hook.callsTo('/guard').at(-1)!.review.request;
    assert.equal(d.object, null);
    assert.equal(d.oldObject.metadata.name, 'kept');
    assert.equal(d.options.kind, 'DeleteOptions');
    await cluster.admin.get(`${cms}/kept`);
  });

  test('selectors and rules decide who is called; webhook configurations are never sent to webhooks', async () => {
    hook.on('/sel', () => ({ response: { allowed: false, status: { message: 'selected' } } }));
    await install('validating', 'sel', [
      webhook('sel.example.com', '/sel', { objectSelector: { matchLabels: { guarded: 'true' } } }),
    ]);
    await cluster.admin.create(cms, configMap('unlabelled'));
    const e = await rejection(cluster.admin.create(cms, configMap('labelled', { labels: { guarded: 'true' } })));
    assert.match(e.message, /selected$/);
    // another namespace: the namespace selector does not match
    await cluster.admin.create(`/api/v1/namespaces/default/configmaps`, {
      ...configMap('elsewhere', { labels: { guarded: 'true' } }),
      metadata: { name: 'elsewhere', namespace: 'default', labels: { guarded: 'true' } },
    });
    await cluster.admin.delete('/api/v1/namespaces/default/configmaps/elsewhere');
    await cluster.admin.delete(configs.pop()!);
    // a webhook for everything that is down cannot lock its own configuration in
    await hook.stop();
    await install('validating', 'all', [
      webhook('all.example.com', '/sel', {
        rules: [{ apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['*/*'] }],
        namespaceSelector: {},
      }),
    ]);
    await rejection(
      cluster.admin.create('/api/v1/namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'blocked' },
      }),
    );
    await cluster.admin.mergePatch(`${VWC}/all`, { metadata: { labels: { edited: 'yes' } } });
    await cluster.admin.delete(configs.pop()!);
    await hook.listen();
    assert.equal(hook.callsTo('/sel').length, 1);
  });

  test("clientConfig.service: resolved through the authority's service map, the certificate checked for <name>.<namespace>.svc", async () => {
    hook.on('/svc', () => ({ response: { allowed: false, status: { message: 'via the service' } } }));
    await install('validating', 'svc', [
      {
        ...webhook('svc.example.com', '/svc'),
        clientConfig: {
          service: { namespace: 'webhook-system', name: 'hooks', path: '/svc' },
          caBundle: hook.caBundle,
        },
      },
    ]);
    const e = await rejection(cluster.admin.create(cms, configMap('svc')));
    assert.equal(e.message, 'admission webhook "svc.example.com" denied the request: via the service');
    assert.equal(hook.callsTo('/svc')[0]?.headers.host, 'hooks.webhook-system.svc:443');
    await cluster.admin.delete(configs.pop()!);
    await install('validating', 'svc', [
      {
        ...webhook('nosvc.example.com', '/svc'),
        clientConfig: {
          service: { namespace: 'webhook-system', name: 'unknown', path: '/svc' },
          caBundle: hook.caBundle,
        },
      },
    ]);
    const gone = await rejection(cluster.admin.create(cms, configMap('svc')));
    assert.equal(
      gone.message,
      'Internal error occurred: failed calling webhook "nosvc.example.com": failed to call webhook: Post "https://unknown.webhook-system.svc:443/svc?timeout=10s": services "unknown" not found',
    );
  });

  test('a caBundle holding the serving certificate itself (as envtest writes it) is trusted, as Go trusts it', async () => {
    hook.on('/leaf', () => ({ response: { allowed: false, status: { message: 'reached' } } }));
    await install('validating', 'leaf', [
      { ...webhook('leaf.example.com', '/leaf'), clientConfig: { url: `${hook.url}/leaf`, caBundle: hook.leafBundle } },
    ]);
    const e = await rejection(cluster.admin.create(cms, configMap('leaf')));
    assert.equal(e.message, 'admission webhook "leaf.example.com" denied the request: reached');
  });

  test('TLS is verified against caBundle: another CA fails the call', async () => {
    const other = await ScriptedWebhook.start();
    try {
      await install('validating', 'tls', [
        {
          ...webhook('tls.example.com', '/validate'),
          clientConfig: { url: `${hook.url}/validate`, caBundle: other.caBundle },
        },
      ]);
      const e = await rejection(cluster.admin.create(cms, configMap('tls')));
      assert.equal(
        e.message,
        `Internal error occurred: failed calling webhook "tls.example.com": failed to call webhook: Post "${hook.url}/validate?timeout=10s": tls: failed to verify certificate: x509: certificate signed by unknown authority`,
      );
    } finally {
      await other.stop();
    }
  });

  test('connections are kept between calls, as kube-apiserver keeps them; one closed under a call is dialled again', async () => {
    let drops = 1;
    hook.on('/kept', (review) => {
      // the third call (the second on the kept connection) finds it closed without an answer
      if (hook.callsTo('/kept').length === 3 && drops-- > 0) return { drop: true };
      return { response: { allowed: true, warnings: [`seen ${review.request.name}`] } };
    });
    await install('validating', 'kept', [webhook('kept.example.com', '/kept')]);
    const before = hook.connections;
    await cluster.admin.create(cms, configMap('kept-1'));
    await cluster.admin.create(cms, configMap('kept-2'));
    assert.equal(hook.connections - before, 1, 'two calls, one TLS connection');
    // an AdmissionReview is sent again on a new connection: webhooks answer a repeated review alike (kube may call
    // a webhook more than once for one write)
    const created = await cluster.admin.create<Record<string, any>>(cms, configMap('kept-3'));
    assert.equal(created.metadata.name, 'kept-3');
    assert.deepEqual(
      hook.callsTo('/kept').map((c) => c.review.request.name),
      ['kept-1', 'kept-2', 'kept-3', 'kept-3'],
    );
    assert.equal(hook.connections - before, 2);
  });
});
