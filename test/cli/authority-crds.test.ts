/**
 * `ctrlmetrics authority --crds prometheus-operator,cert-manager`: a scaffolded overlay with the ServiceMonitor and
 * cert-manager's Issuer and Certificate enabled applies with kubectl and lists with upstream's columns; without the
 * flag, `--apply` names the flag that serves the kind; an unknown set is a usage error listing the known ones.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProcessGroup, run, runCli, within } from '../helpers/process.js';
import { SECOND_NODE_SKIP } from '../helpers/second-node.js';

let tmp: string;
let env: NodeJS.ProcessEnv;
/** enable prometheus only: the overlay's one custom kind is the ServiceMonitor */
let promOnly: string;
/** prometheus and metrics-tls: a ServiceMonitor, an Issuer and a Certificate */
let withCerts: string;
const procs = new ProcessGroup();

async function scaffold(name: string, enable: string): Promise<string> {
  const dir = join(tmp, name);
  for (const args of [
    ['init', '--project-name', name, '--dir', dir],
    ['edit', '--enable', enable, '--dir', dir],
  ]) {
    const r = await runCli(args);
    assert.equal(r.code, 0, r.stderr);
  }
  return join(dir, 'config/default');
}

before(async () => {
  if (SECOND_NODE_SKIP) return;
  tmp = await mkdtemp(join(tmpdir(), 'ctrlmetrics-crds-'));
  env = { ...process.env, KUBECACHEDIR: join(tmp, 'kcache'), KUBECONFIG: '' };
  promOnly = await scaffold('promonly', 'prometheus');
  withCerts = await scaffold('certs', 'prometheus,metrics-tls');
});

after(async () => {
  await procs.stopAll();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('ctrlmetrics authority --crds', { skip: SECOND_NODE_SKIP }, () => {
  test('without the flag, --apply of an overlay with a ServiceMonitor fails naming --crds prometheus-operator', async () => {
    const r = await runCli(['authority', '--listen', '127.0.0.1:0', '--apply', promOnly], { env, timeoutMs: 60_000 });
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr.trim().split('\n').at(-1),
      'error: cannot apply ServiceMonitor promonly-system/promonly-controller-manager-metrics-monitor: the authority does not serve monitoring.coreos.com/v1 ServiceMonitor: ' +
        'start it with --crds prometheus-operator (the prometheus-operator CRDs ship with ctrlmetrics), or apply the CRD first',
    );
  });

  test('with prometheus-operator only, the cert-manager objects name --crds cert-manager', async () => {
    const r = await runCli(
      ['authority', '--listen', '127.0.0.1:0', '--crds', 'prometheus-operator', '--apply', withCerts],
      { env, timeoutMs: 60_000 },
    );
    assert.equal(r.code, 1);
    assert.match(
      r.stderr.trim().split('\n').at(-1)!,
      /^error: cannot apply (Issuer certs-system\/certs-selfsigned-issuer|Certificate certs-system\/certs-metrics-certs): the authority does not serve cert-manager\.io\/v1 (Issuer|Certificate): start it with --crds cert-manager \(the cert-manager CRDs ship with ctrlmetrics\), or apply the CRD first$/,
    );
  });

  test('an unknown set is a usage error listing the known ones (exit 1 and the help hint, as kubectl)', async () => {
    const r = await runCli(['authority', '--crds', 'prometheus-operator,istio'], { env, timeoutMs: 30_000 });
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      'error: --crds "prometheus-operator,istio": unknown CRD set "istio"; known: prometheus-operator, cert-manager\nSee \'ctrlmetrics authority --help\' for usage.\n',
    );
    const demo = await runCli(
      [
        'demo',
        '--kubeconfig',
        join(tmp, 'none.kubeconfig'),
        '--crds',
        'cert-manager',
        '--state-dir',
        join(tmp, 'demo-state'),
      ],
      { env, timeoutMs: 30_000 },
    );
    assert.equal(demo.code, 1, demo.stderr);
    assert.match(
      demo.stderr,
      /^error: --crds installs CRDs into the embedded API; with --kubeconfig install the Prometheus operator or cert-manager in that cluster\nSee 'ctrlmetrics demo --help' for usage\.\n$/,
    );
  });

  test('with both sets the whole overlay applies, also again with kubectl apply -k, and lists with upstream columns', async () => {
    const kubeconfig = join(tmp, 'kubeconfig');
    const p = procs.startCli('authority', [
      'authority',
      '--listen',
      '127.0.0.1:0',
      '--kubeconfig-out',
      kubeconfig,
      '--crds',
      'prometheus-operator,cert-manager',
      '--apply',
      withCerts,
    ]);
    await p.waitForOutput(/"msg":"authority ready"/, 60_000);
    assert.match(
      p.stdout() + p.stderr(),
      /"msg":"installed CRDs".*"sources":\["prometheus-operator v0\.84\.1 .*","cert-manager v1\.20\.2 .*"\]/,
    );
    const kubectl = async (...args: string[]) => {
      const r = await run('kubectl', ['--kubeconfig', kubeconfig, ...args], { env, timeoutMs: 60_000 });
      assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
      return r.stdout;
    };
    const applied = await kubectl('apply', '-k', withCerts);
    assert.match(
      applied,
      /^servicemonitor\.monitoring\.coreos\.com\/certs-controller-manager-metrics-monitor (unchanged|configured)$/m,
    );
    assert.match(applied, /^certificate\.cert-manager\.io\/certs-metrics-certs (unchanged|configured)$/m);
    assert.match(applied, /^issuer\.cert-manager\.io\/certs-selfsigned-issuer (unchanged|configured)$/m);

    assert.equal(
      (await kubectl('get', 'smon', '-n', 'certs-system', '-o', 'name')).trim(),
      'servicemonitor.monitoring.coreos.com/certs-controller-manager-metrics-monitor',
    );
    const certs = (await kubectl('get', 'certs', '-n', 'certs-system', '-o', 'wide')).trim().split('\n');
    assert.match(certs[0], /^NAME\s+READY\s+SECRET\s+ISSUER\s+STATUS\s+AGE$/);
    assert.match(certs[1], /^certs-metrics-certs\s+metrics-server-cert\s+certs-selfsigned-issuer\s+\d+s$/);
    const issuers = (await kubectl('get', 'issuers', '-n', 'certs-system')).trim().split('\n');
    assert.match(issuers[0], /^NAME\s+READY\s+AGE$/);
    const crds = await kubectl(
      'get',
      'crds',
      '-o',
      'jsonpath={range .items[*]}{.metadata.name} {.spec.scope}{"\\n"}{end}',
    );
    for (const line of [
      'servicemonitors.monitoring.coreos.com Namespaced',
      'issuers.cert-manager.io Namespaced',
      'clusterissuers.cert-manager.io Cluster',
      'certificates.cert-manager.io Namespaced',
    ]) {
      assert.ok(crds.split('\n').includes(line), crds);
    }
    // the monitors command sees the ServiceMonitor through the same API
    const monitors = await runCli(['monitors', '-n', 'certs-system', '--kubeconfig', kubeconfig], {
      env,
      timeoutMs: 30_000,
    });
    assert.equal(monitors.code, 0, monitors.stderr);
    assert.match(monitors.stdout, /^certs-controller-manager-metrics-monitor\s/m);
    assert.equal(await within(procs.stop(p), 15_000, 'authority exit'), 0);
  });
});
