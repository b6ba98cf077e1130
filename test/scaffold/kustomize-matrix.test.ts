/**
 * For every combination of the five `ctrlmetrics edit` options, `kubectl kustomize config/default` (real kubectl,
 * kustomize v5) builds and renders exactly the expected objects and fields. The expectations are written by hand
 * from what each option is documented to do (docs/guides/project.md, `ctrlmetrics edit`) and the kubebuilder v4.15 facts (shared/reference/kubebuilder.md), not taken from the generator.
 * Each combination is reached twice: by enabling it on a fresh project, and by disabling the rest on a project with
 * everything on; both must render the same objects.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { initProject } from '../../packages/cli/src/scaffold/init.js';
import { editProject, type ScaffoldOption } from '../../packages/cli/src/scaffold/edit.js';
import { SECOND_NODE_SKIP_COMPILER } from '../helpers/second-node.js';

const P = 'demo-op';
const NS = `${P}-system`;
const SVC = `${P}-controller-manager-metrics-service`;
const SA = `${P}-controller-manager`;
const CERT_DIR = '/tmp/k8s-metrics-server/metrics-certs';
const SECRET = 'metrics-server-cert';
const OPTIONS: ScaffoldOption[] = ['prometheus', 'certmanager', 'metrics-tls', 'network-policy', 'grafana'];

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [k: string]: any;
};

let work: string;
let base: string;

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'ctrlmetrics-matrix-'));
  base = join(work, 'base');
  await initProject({ projectName: P, dir: base, ctrlmetricsVersion: '^0.1.0' });
});
after(() => rmSync(work, { recursive: true, force: true }));

function kustomize(dir: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'kubectl',
      ['kustomize', join(dir, 'config/default')],
      { timeout: 30_000, maxBuffer: 16 << 20 },
      (err, stdout, stderr) =>
        err ? reject(new Error(`kubectl kustomize failed: ${stderr || err.message}`)) : resolve(stdout),
    );
  });
}

/** Runs `fn` over `items` with at most `limit` at a time. */
async function pool<T>(items: T[], limit: number, fn: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  const errors: unknown[] = [];
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const item = items[next++];
        try {
          await fn(item);
        } catch (err) {
          errors.push(err);
        }
      }
    }),
  );
  if (errors.length) throw errors[0];
}

function subsets(): ScaffoldOption[][] {
  return Array.from({ length: 32 }, (_, mask) => OPTIONS.filter((_, i) => mask & (1 << i)));
}

/** Hand-written model: metrics-tls needs the ServiceMonitor and the Certificate. */
interface State {
  prometheus: boolean;
  certmanager: boolean;
  tls: boolean;
  netpol: boolean;
  grafana: boolean;
}

function expectedObjects(s: State): string[] {
  const names = [
    `Namespace/${NS}`,
    `ServiceAccount/${NS}/${SA}`,
    `Role/${NS}/${P}-leader-election-role`,
    `RoleBinding/${NS}/${P}-leader-election-rolebinding`,
    `ClusterRole/${P}-manager-role`,
    `ClusterRoleBinding/${P}-manager-rolebinding`,
    `ClusterRole/${P}-metrics-auth-role`,
    `ClusterRoleBinding/${P}-metrics-auth-rolebinding`,
    `ClusterRole/${P}-metrics-reader`,
    `Service/${NS}/${SVC}`,
    `Deployment/${NS}/${P}-controller-manager`,
  ];
  if (s.prometheus) names.push(`ServiceMonitor/${NS}/${P}-controller-manager-metrics-monitor`);
  if (s.certmanager) names.push(`Issuer/${NS}/${P}-selfsigned-issuer`, `Certificate/${NS}/${P}-metrics-certs`);
  if (s.netpol) names.push(`NetworkPolicy/${NS}/${P}-allow-metrics-traffic`);
  if (s.grafana) names.push(`ConfigMap/${NS}/${P}-grafana-dashboards`);
  return names.sort();
}

function check(output: string, s: State, label: string): void {
  assert.ok(
    !output.includes('SERVICE_NAME') && !output.includes('SERVICE_NAMESPACE'),
    `${label}: placeholders reached the build`,
  );
  const docs = parseAllDocuments(output)
    .map((d) => d.toJSON() as Obj)
    .filter(Boolean);
  const key = (o: Obj): string => [o.kind, o.metadata.namespace, o.metadata.name].filter(Boolean).join('/');
  assert.deepEqual(docs.map(key).sort(), expectedObjects(s), `${label}: objects`);
  const get = (kind: string, name: string): Obj => docs.find((o) => o.kind === kind && o.metadata.name === name)!;

  const svc = get('Service', SVC);
  assert.deepEqual(
    svc.spec.ports,
    [{ name: 'https', port: 8443, protocol: 'TCP', targetPort: 8443 }],
    `${label}: service ports`,
  );
  assert.deepEqual(svc.spec.selector, { 'control-plane': 'controller-manager', 'app.kubernetes.io/name': P });

  assert.deepEqual(get('ClusterRole', `${P}-metrics-reader`).rules, [
    { nonResourceURLs: ['/metrics'], verbs: ['get'] },
  ]);
  assert.deepEqual(get('ClusterRole', `${P}-metrics-auth-role`).rules, [
    { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
  ]);
  const authBinding = get('ClusterRoleBinding', `${P}-metrics-auth-rolebinding`);
  assert.deepEqual(authBinding.roleRef, {
    apiGroup: 'rbac.authorization.k8s.io',
    kind: 'ClusterRole',
    name: `${P}-metrics-auth-role`,
  });
  assert.deepEqual(authBinding.subjects, [{ kind: 'ServiceAccount', name: SA, namespace: NS }]);

  const deploy = get('Deployment', `${P}-controller-manager`);
  const pod = deploy.spec.template.spec;
  const c = pod.containers[0];
  const args = ['--metrics-bind-address=:8443', '--leader-elect', '--health-probe-bind-address=:8081'];
  if (s.tls) args.push(`--metrics-cert-path=${CERT_DIR}`);
  assert.deepEqual(c.args, args, `${label}: manager args`);
  assert.deepEqual(
    c.volumeMounts,
    s.tls ? [{ mountPath: CERT_DIR, name: 'metrics-certs', readOnly: true }] : [],
    `${label}: mounts`,
  );
  assert.deepEqual(
    pod.volumes,
    s.tls
      ? [
          {
            name: 'metrics-certs',
            secret: {
              secretName: SECRET,
              optional: false,
              items: [
                { key: 'ca.crt', path: 'ca.crt' },
                { key: 'tls.crt', path: 'tls.crt' },
                { key: 'tls.key', path: 'tls.key' },
              ],
            },
          },
        ]
      : [],
    `${label}: volumes`,
  );
  assert.ok(
    c.ports.some((p: any) => p.containerPort === 8443 && p.name === 'https' && p.protocol === 'TCP'),
    `${label}: metrics containerPort`,
  );
  assert.equal(pod.serviceAccountName, SA);
  assert.equal(pod.securityContext.runAsNonRoot, true);
  assert.equal(pod.securityContext.seccompProfile.type, 'RuntimeDefault');
  assert.equal(c.securityContext.readOnlyRootFilesystem, true);
  assert.equal(c.securityContext.allowPrivilegeEscalation, false);
  assert.equal(c.livenessProbe.httpGet.port, 8081);
  assert.equal(c.readinessProbe.httpGet.port, 8081);
  assert.deepEqual(deploy.spec.selector.matchLabels, {
    'control-plane': 'controller-manager',
    'app.kubernetes.io/name': P,
  });

  if (s.prometheus) {
    const sm = get('ServiceMonitor', `${P}-controller-manager-metrics-monitor`);
    const ep = sm.spec.endpoints[0];
    assert.equal(sm.spec.endpoints.length, 1);
    assert.equal(ep.path, '/metrics');
    assert.equal(ep.port, 'https');
    assert.equal(ep.scheme, 'https');
    assert.equal(ep.bearerTokenFile, '/var/run/secrets/kubernetes.io/serviceaccount/token');
    assert.deepEqual(
      ep.tlsConfig,
      s.tls
        ? {
            serverName: `${SVC}.${NS}.svc`,
            insecureSkipVerify: false,
            ca: { secret: { name: SECRET, key: 'ca.crt' } },
            cert: { secret: { name: SECRET, key: 'tls.crt' } },
            keySecret: { name: SECRET, key: 'tls.key' },
          }
        : { insecureSkipVerify: true },
      `${label}: ServiceMonitor tlsConfig`,
    );
    assert.deepEqual(sm.spec.selector.matchLabels, {
      'control-plane': 'controller-manager',
      'app.kubernetes.io/name': P,
    });
  }
  if (s.certmanager) {
    const cert = get('Certificate', `${P}-metrics-certs`);
    assert.deepEqual(cert.spec.dnsNames, [`${SVC}.${NS}.svc`, `${SVC}.${NS}.svc.cluster.local`], `${label}: dnsNames`);
    assert.equal(cert.spec.secretName, SECRET);
    assert.deepEqual(cert.spec.issuerRef, { kind: 'Issuer', name: `${P}-selfsigned-issuer` });
    assert.deepEqual(get('Issuer', `${P}-selfsigned-issuer`).spec, { selfSigned: {} });
  }
  if (s.netpol) {
    const np = get('NetworkPolicy', `${P}-allow-metrics-traffic`);
    assert.deepEqual(np.spec.podSelector, {
      matchLabels: { 'control-plane': 'controller-manager', 'app.kubernetes.io/name': P },
    });
    assert.deepEqual(np.spec.policyTypes, ['Ingress']);
    assert.deepEqual(np.spec.ingress, [
      {
        from: [{ namespaceSelector: { matchLabels: { metrics: 'enabled' } } }],
        ports: [{ port: 8443, protocol: 'TCP' }],
      },
    ]);
  }
  if (s.grafana) {
    const cm = get('ConfigMap', `${P}-grafana-dashboards`);
    assert.equal(cm.metadata.labels?.grafana_dashboard, '1');
    const dashboards = Object.values(cm.data as Record<string, string>).map(
      (j) => JSON.parse(j) as { panels: Array<{ targets: Array<{ expr: string }> }> },
    );
    const exprs = dashboards.flatMap((d) => d.panels.flatMap((p) => p.targets.map((t) => t.expr))).join('\n');
    for (const family of [
      'controller_runtime_reconcile_total',
      'controller_runtime_reconcile_errors_total',
      'controller_runtime_reconcile_time_seconds_bucket',
      'workqueue_depth',
      'workqueue_queue_duration_seconds_bucket',
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
    ]) {
      assert.ok(exprs.includes(family), `${label}: a dashboard panel queries ${family}`);
    }
  }
}

test(
  'all 32 option combinations, enabled on a fresh project, build with kubectl kustomize to the expected objects',
  { skip: SECOND_NODE_SKIP_COMPILER },
  async () => {
    await pool(subsets(), 2, async (set) => {
      const dir = join(work, `on-${set.join('_') || 'none'}`);
      cpSync(base, dir, { recursive: true });
      await editProject(dir, { enable: set });
      const has = (o: ScaffoldOption): boolean => set.includes(o);
      const tls = has('metrics-tls');
      const state: State = {
        prometheus: has('prometheus') || tls,
        certmanager: has('certmanager') || tls,
        tls,
        netpol: has('network-policy'),
        grafana: has('grafana'),
      };
      check(await kustomize(dir), state, `enable [${set.join(',')}]`);
    });
  },
);

test(
  'all 32 combinations reached by disabling the others on a project with everything on',
  { skip: SECOND_NODE_SKIP_COMPILER },
  async () => {
    const full = join(work, 'full');
    cpSync(base, full, { recursive: true });
    await editProject(full, { enable: OPTIONS });
    await pool(subsets(), 2, async (set) => {
      const dir = join(work, `off-${set.join('_') || 'none'}`);
      cpSync(full, dir, { recursive: true });
      await editProject(dir, { disable: OPTIONS.filter((o) => !set.includes(o)) });
      const has = (o: ScaffoldOption): boolean => set.includes(o);
      // disabling prometheus or certmanager takes metrics-tls down with it
      const state: State = {
        prometheus: has('prometheus'),
        certmanager: has('certmanager'),
        tls: has('metrics-tls') && has('prometheus') && has('certmanager'),
        netpol: has('network-policy'),
        grafana: has('grafana'),
      };
      check(await kustomize(dir), state, `disable to [${set.join(',')}]`);
    });
  },
);

test('the webhook NetworkPolicy, once listed, admits the webhook pod port 9443 from all sources (kubebuilder #5906 fixed)', async () => {
  const dir = join(work, 'webhook-np');
  cpSync(base, dir, { recursive: true });
  const kust = join(dir, 'config/network-policy/kustomization.yaml');
  writeFileSync(
    kust,
    readFileSync(kust, 'utf8').replace('#- allow-webhook-traffic.yaml', '- allow-webhook-traffic.yaml'),
  );
  await editProject(dir, { enable: ['network-policy'] });
  const docs = parseAllDocuments(await kustomize(dir)).map((d) => d.toJSON() as Obj);
  const np = docs.find((o) => o.kind === 'NetworkPolicy' && o.metadata.name === `${P}-allow-webhook-traffic`);
  assert.ok(np, 'allow-webhook-traffic rendered');
  assert.equal(np.metadata.namespace, NS);
  assert.deepEqual(np.spec.podSelector, {
    matchLabels: { 'control-plane': 'controller-manager', 'app.kubernetes.io/name': P },
  });
  // no `from`: the API server, which no namespaceSelector matches, must reach the pod port (not the Service's 443)
  assert.deepEqual(np.spec.ingress, [{ ports: [{ port: 9443, protocol: 'TCP' }] }]);
  assert.ok(docs.some((o) => o.kind === 'NetworkPolicy' && o.metadata.name === `${P}-allow-metrics-traffic`));
});
