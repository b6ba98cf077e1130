/**
 * `ctrlmetrics doctor` on a real cluster: a scaffolded project (prometheus, network-policy and metrics-tls enabled)
 * applied with `kubectl apply -k` to a real kube-apiserver that has the ServiceMonitor and cert-manager CRDs the
 * authority ships (so they are checked against a real apiextensions too), the Secret cert-manager would write, a
 * scraper bound to the metrics-reader role, and the manager's secure endpoint as its service account.
 *
 * The control plane runs no scheduler and no kubelet: the manager's pod stays Pending and the Service gets no
 * endpoints, and doctor must say exactly that; every check that goes through the API (RBAC through
 * SubjectAccessReview, the ServiceMonitor, NetworkPolicy, certificate, the scrape through TokenReview) passes.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CRD_SETS } from '../../packages/envtest/src/crds.js';
import { eventually } from '../controller/helpers/exposition.js';
import { generateCA, issueServingCert } from '../helpers/certs.js';
import { run, runCli } from '../helpers/process.js';
import { installRunCrd, REAL_KUBE_SKIP, runName, startRealKube, type RealKube } from '../helpers/real-kube.js';
import { startSecureEndpoint, type SecureEndpoint } from '../helpers/secure-endpoint.js';

const PROJECT = runName('rdoc');
const NS = `${PROJECT}-system`;
const SERVICE = `${PROJECT}-controller-manager-metrics-service`;
const SCRAPER_NS = `${PROJECT}-monitoring`;
const SCRAPER = `${SCRAPER_NS}:prometheus`;
const SCRAPER_BINDING = `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${PROJECT}-prometheus-metrics`;

describe('ctrlmetrics doctor on a real cluster', { skip: REAL_KUBE_SKIP, timeout: 180_000 }, () => {
  let kube: RealKube;
  let tmp: string;
  let endpoint: SecureEndpoint;

  async function doctor(): Promise<{ code: number; lines: string[]; stderr: string }> {
    const r = await runCli(['doctor', '--namespace', NS, '--as', SCRAPER, '--url', `${endpoint.url}/metrics`], {
      env: { ...process.env, KUBECONFIG: kube.kubeconfig, CTRLMETRICS_LOG_LEVEL: 'warn' },
      timeoutMs: 60_000,
    });
    return { code: r.code, lines: r.stdout.trim().split('\n'), stderr: r.stderr };
  }

  const bindScraper = () =>
    kube.admin.create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: `${PROJECT}-prometheus-metrics` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${PROJECT}-metrics-reader` },
      subjects: [{ kind: 'ServiceAccount', name: 'prometheus', namespace: SCRAPER_NS }],
    });

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'ctrlmetrics-real-doctor-'));
    kube = await startRealKube();
    for (const set of ['prometheus-operator', 'cert-manager']) {
      for (const crd of CRD_SETS[set].crds) await installRunCrd(kube, crd);
    }
    const proj = join(tmp, 'proj');
    for (const args of [
      ['init', '--project-name', PROJECT, '--dir', proj],
      ['edit', '--enable', 'prometheus,network-policy,metrics-tls', '--dir', proj],
    ]) {
      const r = await runCli(args);
      assert.equal(r.code, 0, r.stderr);
    }
    const applied = await run(
      'kubectl',
      ['--kubeconfig', kube.kubeconfig, 'apply', '-k', join(proj, 'config/default')],
      { timeoutMs: 60_000 },
    );
    assert.equal(applied.code, 0, `kubectl apply -k: ${applied.stderr}`);

    await kube.serviceAccountToken(SCRAPER_NS, 'prometheus');
    await bindScraper();
    await kube.admin.mergePatch(`/api/v1/namespaces/${SCRAPER_NS}`, { metadata: { labels: { metrics: 'enabled' } } });

    // the Secret cert-manager would issue for the Service (no cert-manager runs here)
    const ca = await generateCA('real-doctor-ca');
    const pair = await issueServingCert(ca, [`${SERVICE}.${NS}.svc`, `${SERVICE}.${NS}.svc.cluster.local`]);
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    await kube.admin.create(`/api/v1/namespaces/${NS}/secrets`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'metrics-server-cert', namespace: NS },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': b64(pair.certPem), 'tls.key': b64(pair.keyPem), 'ca.crt': b64(ca.certPem) },
    });
    const certDir = join(tmp, 'metrics-certs');
    await mkdir(certDir);
    await writeFile(join(certDir, 'tls.crt'), pair.certPem, { mode: 0o600 });
    await writeFile(join(certDir, 'tls.key'), pair.keyPem, { mode: 0o600 });
    // the manager: its scaffolded service account, bound by the applied manifests to the metrics-auth-role
    const managerToken = await kube.serviceAccountToken(NS, `${PROJECT}-controller-manager`, {
      expirationSeconds: 86_400,
    });
    endpoint = await startSecureEndpoint(
      { server: kube.url, ca: kube.caPem, token: managerToken },
      { metrics: { certDir } },
    );
  });

  after(async () => {
    await endpoint?.stop();
    await kube?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  test('every check through the API passes; the pod that never runs here is named as Pending, and the Service has no endpoints', async () => {
    // the Deployment controller has made the ReplicaSet and its pod by now
    await eventually(
      async () => (await kube.admin.get<{ items: unknown[] }>(`/api/v1/namespaces/${NS}/pods`)).items.length > 0,
      'the manager pod',
    );
    const d = await doctor();
    const expected = [
      new RegExp(
        String.raw`^✗ manager Deployment ${PROJECT}-system\/${PROJECT}-controller-manager: 0 of 1 replicas ready; pods: ${PROJECT}-controller-manager-[a-z0-9]+-[a-z0-9]{5} Pending → fix: kubectl describe pods -n ${PROJECT}-system -l \S*control-plane=controller-manager\S* and kubectl logs -n ${PROJECT}-system deployment\/${PROJECT}-controller-manager$`,
      ),
      new RegExp(
        String.raw`^✓ metrics Service ${PROJECT}-system\/${PROJECT}-controller-manager-metrics-service exists$`,
      ),
      /^✓ metrics Service port https 8443 → 8443$/,
      new RegExp(
        String.raw`^✗ metrics Service ${PROJECT}-system\/${PROJECT}-controller-manager-metrics-service has no endpoints: its selector app\.kubernetes\.io\/name=${PROJECT},control-plane=controller-manager matches no running pod → fix: `,
      ),
      new RegExp(
        String.raw`^✓ manager service account ${PROJECT}-system\/${PROJECT}-controller-manager can create TokenReviews$`,
      ),
      new RegExp(
        String.raw`^✓ manager service account ${PROJECT}-system\/${PROJECT}-controller-manager can create SubjectAccessReviews$`,
      ),
      new RegExp(
        String.raw`^✓ manager service account ${PROJECT}-system\/${PROJECT}-controller-manager can get, create and update Leases in ${PROJECT}-system$`,
      ),
      new RegExp(String.raw`^✓ scraper ${PROJECT}-monitoring:prometheus can get \/metrics$`),
      /^✓ ServiceMonitor CRD is installed$/,
      new RegExp(
        String.raw`^✓ ServiceMonitor ${PROJECT}-system\/${PROJECT}-controller-manager-metrics-monitor exists$`,
      ),
      new RegExp(
        String.raw`^✓ NetworkPolicy ${PROJECT}-allow-metrics-traffic: namespaces with metrics=enabled may scrape: ${PROJECT}-monitoring$`,
      ),
      new RegExp(
        String.raw`^✓ certificate in Secret metrics-server-cert covers ${PROJECT}-controller-manager-metrics-service\.${PROJECT}-system\.svc$`,
      ),
      new RegExp(
        String.raw`^✓ scrape of https:\/\/127\.0\.0\.1:\d+\/metrics as ${PROJECT}-monitoring:prometheus: 200, \d+ metric families \(TLS verified for ${PROJECT}-controller-manager-metrics-service\.${PROJECT}-system\.svc against ca\.crt of Secret metrics-server-cert\)$`,
      ),
    ];
    assert.equal(d.lines.length, expected.length, d.lines.join('\n'));
    expected.forEach((re, i) => assert.match(d.lines[i], re, d.lines.join('\n')));
    assert.equal(d.code, 1);
    assert.equal(d.stderr, `error: 2 of ${expected.length} checks failed\n`);
  });

  test('a scraper without the metrics-reader binding: real RBAC says no; the manager keeps its cached allow', async () => {
    await kube.admin.delete(SCRAPER_BINDING);
    try {
      const d = await doctor();
      const failed = d.lines.filter((l) => l.startsWith('✗') && !/Deployment|endpoints/.test(l));
      assert.equal(failed.length, 1, d.lines.join('\n'));
      assert.match(
        failed[0],
        new RegExp(
          String.raw`^✗ scraper ${PROJECT}-monitoring:prometheus cannot get \/metrics \(scrapes answer 403\) → fix: ctrlmetrics grant --serviceaccount ${PROJECT}-monitoring:prometheus --clusterrole ${PROJECT}-metrics-reader$`,
        ),
      );
      // the manager allowed this user a moment ago and caches an allow for 5 minutes (controller-runtime's
      // delegating authorizer does the same); a 1.25 token carries no credential id, so doctor's new token of the
      // same service account is the same user to that cache (on 1.32 the credential id makes each token new)
      assert.match(
        d.lines.at(-1)!,
        new RegExp(
          String.raw`^✓ scrape of https:\/\/127\.0\.0\.1:\d+\/metrics as ${PROJECT}-monitoring:prometheus: 200, `,
        ),
      );
    } finally {
      await bindScraper();
    }
  });
});
