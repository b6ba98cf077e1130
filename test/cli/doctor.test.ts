/**
 * `ctrlmetrics doctor` on a scaffolded project applied to the embedded authority with the shipped CRDs (prometheus,
 * network-policy and metrics-tls enabled; the Secret cert-manager would write is created by the test): all checks pass on the
 * healthy setup, and breaking one link at a time fails exactly the check for that link.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { SECOND_NODE_SKIP } from '../helpers/second-node.js';
import { generateCA, issueServingCert } from '../helpers/certs.js';
import { runCli, run } from '../helpers/process.js';
import { startSecureEndpoint, type SecureEndpoint } from '../helpers/secure-endpoint.js';
import promClient from 'prom-client';

const PROJECT = 'doc';
const NS = `${PROJECT}-system`;
const SERVICE = `${PROJECT}-controller-manager-metrics-service`;
const SCRAPER = 'monitoring:prometheus';

let cluster: TestCluster;
let tmp: string;
let goodSecret: Obj;
/** The manager's secure endpoint: its service account's token, the certificate of the Secret cert-manager would write. */
let endpoint: SecureEndpoint;

const kubectl = (args: string[], input?: string) =>
  run('kubectl', ['--kubeconfig', cluster.authority.kubeconfig, ...args], { timeoutMs: 30_000, input });

async function k(args: string[], input?: string): Promise<string> {
  const r = await kubectl(args, input);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

async function doctor(
  extra: string[] = ['--url', `${endpoint.url}/metrics`],
): Promise<{ code: number; lines: string[]; failed: string[]; stderr: string }> {
  const r = await runCli(['doctor', '--namespace', NS, '--as', SCRAPER, ...extra], {
    env: { ...process.env, KUBECONFIG: cluster.authority.kubeconfig, CTRLMETRICS_LOG_LEVEL: 'warn' },
    timeoutMs: 60_000,
  });
  const lines = r.stdout.trim().split('\n');
  return { code: r.code, lines, failed: lines.filter((l) => l.startsWith('✗')), stderr: r.stderr };
}

type Obj = { metadata: Record<string, unknown>; [k: string]: unknown };
const SECRET_PATH = `/api/v1/namespaces/${NS}/secrets`;
const RBAC = '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings';
const MONITORS = `/apis/monitoring.coreos.com/v1/namespaces/${NS}/servicemonitors`;

/** Deletes an object through the admin client and returns a copy that can be created again. */
async function remove(collection: string, name: string): Promise<Obj> {
  const obj = await cluster.admin.get<Obj>(`${collection}/${name}`);
  await cluster.admin.delete(`${collection}/${name}`);
  const {
    resourceVersion: _rv,
    uid: _uid,
    creationTimestamp: _ct,
    generation: _g,
    managedFields: _mf,
    ...metadata
  } = obj.metadata;
  return { ...obj, metadata };
}

/** A serving certificate Secret (as cert-manager writes it) for `dnsName`, replacing the current one. */
async function certSecret(dnsName: string): Promise<Obj> {
  const ca = await generateCA('doctor-test-ca');
  const pair = await issueServingCert(ca, [dnsName, `${dnsName}.cluster.local`]);
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const secret: Obj = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'metrics-server-cert', namespace: NS },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': b64(pair.certPem), 'tls.key': b64(pair.keyPem), 'ca.crt': b64(ca.certPem) },
  };
  await cluster.admin.delete(`${SECRET_PATH}/metrics-server-cert`).catch(() => undefined);
  await cluster.admin.create(SECRET_PATH, secret);
  return secret;
}

async function setServicePort(port: number): Promise<void> {
  const path = `/api/v1/namespaces/${NS}/services/${SERVICE}`;
  const svc = await cluster.admin.get<{ spec: { ports: Array<{ port: number }> } }>(path);
  svc.spec.ports[0].port = port;
  await cluster.admin.replace(path, svc);
}

before(async () => {
  if (SECOND_NODE_SKIP) return;
  tmp = await mkdtemp(join(tmpdir(), 'ctrlmetrics-doctor-'));
  cluster = await startTestCluster({ crds: ['prometheus-operator', 'cert-manager'] });
  const proj = join(tmp, 'proj');
  for (const args of [
    ['init', '--project-name', PROJECT, '--dir', proj],
    ['edit', '--enable', 'prometheus,network-policy,metrics-tls', '--dir', proj],
  ]) {
    const r = await runCli(args);
    assert.equal(r.code, 0, r.stderr);
  }
  // the shipped CRDs serve the overlay's ServiceMonitor, Issuer and Certificate; no cert-manager runs here, so the
  // Secret it would issue is created below
  await k(['apply', '-k', join(proj, 'config/default')]);
  await cluster.serviceAccountToken('monitoring', 'prometheus'); // creates the namespace and the service account
  await cluster.admin.create(RBAC, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'prometheus-metrics' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${PROJECT}-metrics-reader` },
    subjects: [{ kind: 'ServiceAccount', name: 'prometheus', namespace: 'monitoring' }],
  });
  await cluster.admin.mergePatch('/api/v1/namespaces/monitoring', { metadata: { labels: { metrics: 'enabled' } } });
  goodSecret = await certSecret(`${SERVICE}.${NS}.svc`);
  const certDir = join(tmp, 'metrics-certs');
  await mkdir(certDir);
  const data = goodSecret.data as Record<string, string>;
  for (const f of ['tls.crt', 'tls.key'])
    await writeFile(join(certDir, f), Buffer.from(data[f], 'base64'), { mode: 0o600 });
  const managerToken = await cluster.serviceAccountToken(NS, `${PROJECT}-controller-manager`, {
    expirationSeconds: 86_400,
  });
  endpoint = await startSecureEndpoint(
    { server: cluster.authority.url, ca: cluster.authority.caPem, token: managerToken },
    { metrics: { certDir } },
  );
  // no kubelet, Deployment or EndpointSlice controller here: say what they would once the manager pod is up
  await setReady(1);
  await setEndpoints([
    {
      addresses: ['10.244.0.7'],
      conditions: { ready: true },
      targetRef: { kind: 'Pod', name: 'doc-controller-manager-7d9f-abcde', namespace: NS },
    },
  ]);
});

const SLICES = `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`;
/** Writes the Service's EndpointSlice as the EndpointSlice controller would (port named https, target 8443). */
async function setEndpoints(endpoints: unknown[]): Promise<void> {
  await cluster.admin.delete(`${SLICES}/${SERVICE}-x7k2p`).catch(() => undefined);
  await cluster.admin.create(SLICES, {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${SERVICE}-x7k2p`,
      namespace: NS,
      labels: {
        'kubernetes.io/service-name': SERVICE,
        'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
      },
    },
    addressType: 'IPv4',
    ports: [{ name: 'https', port: 8443, protocol: 'TCP' }],
    endpoints,
  });
}

const DEPLOYMENT = `/apis/apps/v1/namespaces/${NS}/deployments/${PROJECT}-controller-manager`;
function setReady(ready: number): Promise<unknown> {
  return cluster.admin.mergePatch(`${DEPLOYMENT}/status`, {
    status: { replicas: 1, readyReplicas: ready, availableReplicas: ready },
  });
}

after(async () => {
  await endpoint?.stop();
  await cluster?.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('ctrlmetrics doctor', { skip: SECOND_NODE_SKIP }, () => {
  test('a healthy setup: every check passes, in the documented order', async () => {
    const d = await doctor();
    assert.equal(d.code, 0, d.lines.join('\n'));
    assert.deepEqual(d.failed, []);
    const expected = [
      /^✓ manager Deployment doc-system\/doc-controller-manager: 1 of 1 replicas ready$/,
      /^✓ metrics Service doc-system\/doc-controller-manager-metrics-service exists$/,
      /^✓ metrics Service port https 8443 → 8443$/,
      /^✓ metrics Service doc-system\/doc-controller-manager-metrics-service endpoints: 1 ready \(10\.244\.0\.7:8443\)$/,
      /^✓ manager service account doc-system\/doc-controller-manager can create TokenReviews$/,
      /^✓ manager service account doc-system\/doc-controller-manager can create SubjectAccessReviews$/,
      /^✓ manager service account doc-system\/doc-controller-manager can get, create and update Leases in doc-system$/,
      /^✓ scraper monitoring:prometheus can get \/metrics$/,
      /^✓ ServiceMonitor CRD is installed$/,
      /^✓ ServiceMonitor doc-system\/doc-controller-manager-metrics-monitor exists$/,
      /^✓ NetworkPolicy doc-allow-metrics-traffic: namespaces with metrics=enabled may scrape: monitoring$/,
      /^✓ certificate in Secret metrics-server-cert covers doc-controller-manager-metrics-service\.doc-system\.svc$/,
      /^✓ scrape of https:\/\/127\.0\.0\.1:\d+\/metrics as monitoring:prometheus: 200, \d+ metric families \(TLS verified for doc-controller-manager-metrics-service\.doc-system\.svc against ca\.crt of Secret metrics-server-cert\)$/,
    ];
    assert.equal(d.lines.length, expected.length, d.lines.join('\n'));
    expected.forEach((re, i) => assert.match(d.lines[i], re));
  });

  // each case breaks one link, checks that exactly its check(s) fail with the fix, and repairs it
  let saved: Obj;
  const cases: Array<{
    name: string;
    breakIt: () => Promise<unknown>;
    fixIt: () => Promise<unknown>;
    failing: RegExp[];
  }> = [
    {
      name: 'the manager service account is not bound to the metrics-auth-role',
      breakIt: async () => (saved = await remove(RBAC, `${PROJECT}-metrics-auth-rolebinding`)),
      fixIt: () => cluster.admin.create(RBAC, saved),
      failing: [
        /^✗ manager service account doc-system\/doc-controller-manager cannot create TokenReviews \(scrapes answer 500\) → fix: bind it to ClusterRole doc-metrics-auth-role/,
        /^✗ manager service account doc-system\/doc-controller-manager cannot create SubjectAccessReviews \(scrapes answer 500\) → fix: bind it to ClusterRole doc-metrics-auth-role/,
        /^✗ scrape of https:\/\/127\.0\.0\.1:\d+\/metrics as monitoring:prometheus failed: the manager could not ask the API server whether to allow the request \(TokenReview\/SubjectAccessReview failed\)/,
      ],
    },
    {
      name: 'the manager service account is not bound to the leader-election Role',
      breakIt: async () =>
        (saved = await remove(
          `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`,
          `${PROJECT}-leader-election-rolebinding`,
        )),
      fixIt: () => cluster.admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, saved),
      failing: [
        /^✗ manager service account doc-system\/doc-controller-manager cannot get, create, update Leases in doc-system \(leader election never acquires: the manager reconciles nothing\) → fix: bind it to Role doc-leader-election-role in doc-system: the RoleBinding doc-leader-election-rolebinding of config\/rbac \(kubectl apply -k config\/default\)$/,
      ],
    },
    {
      name: 'the scraper is not bound to the metrics-reader role',
      breakIt: async () => (saved = await remove(RBAC, 'prometheus-metrics')),
      fixIt: () => cluster.admin.create(RBAC, saved),
      failing: [
        /^✗ scraper monitoring:prometheus cannot get \/metrics \(scrapes answer 403\) → fix: ctrlmetrics grant --serviceaccount monitoring:prometheus --clusterrole doc-metrics-reader$/,
        /^✗ scrape of https:\/\/127\.0\.0\.1:\d+\/metrics as monitoring:prometheus failed: identity system:serviceaccount:monitoring:prometheus is not bound to the metrics-reader ClusterRole/,
      ],
    },
    {
      name: 'the scraper namespace lacks metrics=enabled',
      breakIt: () =>
        cluster.admin.mergePatch('/api/v1/namespaces/monitoring', { metadata: { labels: { metrics: null } } }),
      fixIt: () =>
        cluster.admin.mergePatch('/api/v1/namespaces/monitoring', { metadata: { labels: { metrics: 'enabled' } } }),
      failing: [
        /^✗ NetworkPolicy doc-allow-metrics-traffic: the scraper's namespace monitoring lacks metrics=enabled .*→ fix: ctrlmetrics label-namespace monitoring$/,
      ],
    },
    {
      name: 'the certificate does not name the Service',
      breakIt: () => certSecret('some-other-name.example'),
      fixIt: async () => {
        await cluster.admin.delete(`${SECRET_PATH}/metrics-server-cert`);
        await cluster.admin.create(SECRET_PATH, goodSecret);
      },
      failing: [
        /^✗ certificate in Secret metrics-server-cert does not cover doc-controller-manager-metrics-service\.doc-system\.svc \(DNS names: some-other-name\.example, some-other-name\.example\.cluster\.local\).*→ fix: set the Certificate's dnsNames/,
        // the Secret now holds another CA than the one that signed the certificate the manager serves
        /^✗ scrape of https:\/\/127\.0\.0\.1:\d+\/metrics as monitoring:prometheus failed: TLS: the server's certificate is not signed by the CA in ca\.crt of Secret metrics-server-cert \(UNABLE_TO_VERIFY_LEAF_SIGNATURE\); the manager must serve the certificate issued into Secret metrics-server-cert \(mounted at --metrics-cert-path\) for doc-controller-manager-metrics-service\.doc-system\.svc, as the ServiceMonitor's tlsConfig expects$/,
      ],
    },
    {
      name: 'the manager pod crash-loops: 0 of 1 ready, with the pod and its reason',
      breakIt: async () => {
        await setReady(0);
        const d = await cluster.admin.get<{ spec: { selector: { matchLabels: Record<string, string> } } }>(DEPLOYMENT);
        const pods = `/api/v1/namespaces/${NS}/pods`;
        await cluster.admin.create(pods, {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'doc-controller-manager-7d9f-x2x', namespace: NS, labels: d.spec.selector.matchLabels },
          spec: { containers: [{ name: 'manager', image: 'controller:latest' }] },
        });
        await cluster.admin.mergePatch(`${pods}/doc-controller-manager-7d9f-x2x/status`, {
          status: {
            phase: 'Running',
            containerStatuses: [
              {
                name: 'manager',
                ready: false,
                restartCount: 5,
                image: 'controller:latest',
                imageID: '',
                state: { waiting: { reason: 'CrashLoopBackOff' } },
              },
            ],
          },
        });
      },
      fixIt: async () => {
        await cluster.admin.delete(`/api/v1/namespaces/${NS}/pods/doc-controller-manager-7d9f-x2x`);
        await setReady(1);
      },
      failing: [
        /^✗ manager Deployment doc-system\/doc-controller-manager: 0 of 1 replicas ready; pods: doc-controller-manager-7d9f-x2x CrashLoopBackOff → fix: kubectl describe pods -n doc-system -l \S*control-plane=controller-manager\S* and kubectl logs -n doc-system deployment\/doc-controller-manager$/,
      ],
    },
    {
      name: 'a collector of the manager fails: the scrape says so, not RBAC',
      breakIt: async () =>
        // prom-client's default registry, which the endpoint serves
        new promClient.Gauge({
          name: 'app_broken_depth',
          help: 'A gauge whose collect() throws.',
          collect() {
            throw new Error('queue backend unreachable');
          },
        }),
      fixIt: async () => promClient.register.removeSingleMetric('app_broken_depth'),
      failing: [
        /^✗ scrape of https:\/\/127\.0\.0\.1:\d+\/metrics as monitoring:prometheus failed: a metrics collector in the manager failed while gathering \(authentication and authorization passed\): collecting prom-client's default registry: metric app_broken_depth: queue backend unreachable/,
      ],
    },
    {
      name: 'the Service selects no pod: no endpoints',
      breakIt: () => setEndpoints([]),
      fixIt: () => setEndpoints([{ addresses: ['10.244.0.7'], conditions: { ready: true } }]),
      failing: [
        /^✗ metrics Service doc-system\/doc-controller-manager-metrics-service has no endpoints: its selector app\.kubernetes\.io\/name=doc,control-plane=controller-manager matches no running pod → fix: compare it with the manager pod's labels \(kubectl get pods -n doc-system --show-labels\)/,
      ],
    },
    {
      name: 'the manager pod runs but is not ready: its endpoint is not ready',
      breakIt: () => setEndpoints([{ addresses: ['10.244.0.7'], conditions: { ready: false } }]),
      fixIt: () => setEndpoints([{ addresses: ['10.244.0.7'], conditions: { ready: true } }]),
      failing: [
        /^✗ metrics Service doc-system\/doc-controller-manager-metrics-service: 1 endpoint, none ready \(the manager's readiness probe fails\) → fix: kubectl describe pods -n doc-system -l /,
      ],
    },
    {
      name: 'the manager is scaled to 0',
      breakIt: () => cluster.admin.mergePatch(DEPLOYMENT, { spec: { replicas: 0 } }),
      fixIt: () => cluster.admin.mergePatch(DEPLOYMENT, { spec: { replicas: 1 } }),
      failing: [
        /^✗ manager Deployment doc-system\/doc-controller-manager is scaled to 0: nothing serves \/metrics → fix: kubectl scale -n doc-system deployment\/doc-controller-manager --replicas=1$/,
      ],
    },
    {
      name: 'the ServiceMonitor is missing',
      breakIt: async () => (saved = await remove(MONITORS, `${PROJECT}-controller-manager-metrics-monitor`)),
      fixIt: () => cluster.admin.create(MONITORS, saved),
      failing: [
        /^✗ ServiceMonitor doc-system\/doc-controller-manager-metrics-monitor not found → fix: ctrlmetrics edit --enable prometheus/,
      ],
    },
    {
      name: 'the Service exposes another port',
      breakIt: () => setServicePort(8080),
      fixIt: () => setServicePort(8443),
      failing: [
        /^✗ metrics Service doc-controller-manager-metrics-service does not expose port 8443 \(ports: 8080\) → fix: set the Service's port to 8443/,
      ],
    },
  ];
  for (const c of cases) {
    test(`one broken link: ${c.name}`, async () => {
      await c.breakIt();
      try {
        const d = await doctor();
        assert.equal(d.code, 1);
        assert.equal(d.stderr, `error: ${c.failing.length} of ${d.lines.length} checks failed\n`);
        assert.equal(d.failed.length, c.failing.length, d.lines.join('\n'));
        c.failing.forEach((re, i) => assert.match(d.failed[i], re));
      } finally {
        await c.fixIt();
      }
    });
  }

  test("the Lease is checked where the Deployment's args put it, and not at all without --leader-elect", async () => {
    const d = await cluster.admin.get<{ spec: { template: { spec: { containers: Array<{ args: string[] }> } } } }>(
      DEPLOYMENT,
    );
    const args = d.spec.template.spec.containers[0].args;
    const setArgs = (a: string[]) =>
      cluster.admin.request('PATCH', DEPLOYMENT, {
        body: [{ op: 'replace', path: '/spec/template/spec/containers/0/args', value: a }],
        contentType: 'application/json-patch+json',
      });
    try {
      await setArgs([...args, '--leader-election-namespace', 'elsewhere']);
      const other = await doctor();
      assert.deepEqual(other.failed, [
        '✗ manager service account doc-system/doc-controller-manager cannot get, create, update Leases in elsewhere (leader election never acquires: the manager reconciles nothing) → fix: bind it to Role doc-leader-election-role in elsewhere: the RoleBinding doc-leader-election-rolebinding of config/rbac (kubectl apply -k config/default)',
      ]);
      await setArgs(args.filter((a) => !a.startsWith('--leader-elect')));
      const off = await doctor();
      assert.deepEqual(off.failed, []);
      assert.ok(
        off.lines.includes('- leader election: not checked (the manager runs without --leader-elect)'),
        off.lines.join('\n'),
      );
    } finally {
      await setArgs(args);
    }
  });

  test("kubectl lists the EndpointSlice with kube-apiserver's columns", async () => {
    const out = await k(['get', 'endpointslices', '-n', NS]);
    const [header, row] = out.trim().split('\n');
    assert.match(header, /^NAME\s+ADDRESSTYPE\s+PORTS\s+ENDPOINTS\s+AGE$/);
    assert.match(row, new RegExp(`^${SERVICE}-x7k2p\\s+IPv4\\s+8443\\s+10\\.244\\.0\\.7\\s+\\d+s$`));
  });

  test('from outside the cluster without --url: the scrape is not tried, the line says how to port-forward', async () => {
    const d = await doctor([]);
    assert.equal(d.code, 0, d.lines.join('\n'));
    assert.equal(
      d.lines.at(-1),
      `- scrape: not tried from outside the cluster; to scrape through the Service run kubectl port-forward -n ${NS} service/${SERVICE} 8443 and pass --url https://127.0.0.1:8443/metrics`,
    );
  });

  test('--url that is not an http(s) URL is a usage error (exit 1 and the help hint, as kubectl)', async () => {
    const r = await runCli(['doctor', '--namespace', NS, '--url', '127.0.0.1:8443/metrics'], {
      env: { ...process.env, KUBECONFIG: cluster.authority.kubeconfig },
      timeoutMs: 30_000,
    });
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      'error: --url "127.0.0.1:8443/metrics" is not an http(s) URL: e.g. --url https://127.0.0.1:8443/metrics\nSee \'ctrlmetrics doctor --help\' for usage.\n',
    );
  });

  test('without the ServiceMonitor CRD and without a Deployment: plain failures, dependent checks marked not applicable', async () => {
    await cluster.admin.delete(
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/servicemonitors.monitoring.coreos.com',
    );
    await cluster.admin.delete(`/apis/apps/v1/namespaces/${NS}/deployments/${PROJECT}-controller-manager`);
    const d = await doctor();
    assert.equal(d.code, 1);
    assert.equal(d.failed.length, 2, d.lines.join('\n'));
    assert.match(
      d.failed[0],
      /^✗ manager Deployment doc-system\/doc-controller-manager not found → fix: deploy the project/,
    );
    assert.match(
      d.failed[1],
      /^✗ ServiceMonitor CRD \(servicemonitors\.monitoring\.coreos\.com\) is not installed: no Prometheus operator runs in this cluster → fix: install the Prometheus operator/,
    );
    assert.ok(
      d.lines.includes('- ServiceMonitor doc-system/doc-controller-manager-metrics-monitor: not checked (no CRD)'),
      d.lines.join('\n'),
    );
    assert.ok(d.lines.includes('- metrics certificate: not checked (no Deployment)'), d.lines.join('\n'));
  });
});

describe('ctrlmetrics doctor with the API down', { skip: SECOND_NODE_SKIP }, () => {
  test('one line saying the API is unreachable, at once, instead of a failed line per check', async () => {
    // a kubeconfig pointing at a port where nothing listens
    const kubeconfig = join(tmp, 'down.kubeconfig');
    await writeFile(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: down',
        '  cluster:',
        '    server: https://127.0.0.1:1',
        'users:',
        '- name: u',
        '  user:',
        '    token: abc',
        'contexts:',
        '- name: down',
        '  context: {cluster: down, user: u}',
        'current-context: down',
        '',
      ].join('\n'),
    );
    const r = await runCli(['doctor', '--namespace', NS, '--kubeconfig', kubeconfig], {
      env: { ...process.env, CTRLMETRICS_LOG_LEVEL: 'warn' },
      timeoutMs: 30_000,
    });
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '', 'no per-check report');
    assert.match(
      r.stderr,
      /^error: the Kubernetes API at https:\/\/127\.0\.0\.1:1 is unreachable \(.*ECONNREFUSED.*\): start the API server or fix --kubeconfig \/ --context; nothing else was checked\n$/,
    );
  });
});
