/**
 * `ctrlmetrics prometheus-config` on a scaffolded project (ctrlmetrics init + edit, built with kubectl kustomize):
 * the job follows the ServiceMonitor field by field, and real `promtool check config` accepts it.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { run, runCli } from '../helpers/process.js';

const PROJECT = 'pcfg';
const NS = `${PROJECT}-system`;
const SERVICE = `${PROJECT}-controller-manager-metrics-service`;
const JOB = `serviceMonitor/${NS}/${PROJECT}-controller-manager-metrics-monitor/0`;

let tmp: string;
let proj: string;
let insecureOut: string;
let tlsStatic: { stdout: string; stderr: string };
let tlsDiscovery: string;
const files: Record<string, string> = {};

async function ok(args: string[]): Promise<{ stdout: string; stderr: string }> {
  const r = await runCli(args, { timeoutMs: 60_000 });
  assert.equal(r.code, 0, `ctrlmetrics ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r;
}

type Job = Record<string, unknown> & {
  tls_config?: Record<string, unknown>;
  static_configs?: Array<{ targets: string[]; labels: Record<string, string> }>;
};
function onlyJob(text: string): Job {
  const doc = parseYaml(text) as { scrape_configs: Job[] };
  assert.equal(doc.scrape_configs.length, 1, text);
  return doc.scrape_configs[0];
}

async function promtoolAccepts(config: unknown, name: string): Promise<void> {
  const file = join(tmp, `${name}.yml`);
  await writeFile(file, typeof config === 'string' ? config : toYaml(config));
  const r = await run('promtool', ['check', 'config', file], { timeoutMs: 30_000 });
  assert.equal(r.code, 0, `promtool check config ${name}: ${r.stdout}${r.stderr}`);
}

before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'ctrlmetrics-pcfg-'));
  proj = join(tmp, 'proj');
  for (const f of ['token', 'ca.crt', 'tls.crt', 'tls.key']) {
    files[f] = join(tmp, f);
    await writeFile(files[f], 'placeholder\n'); // promtool only checks that referenced files exist
  }
  await ok(['init', '--project-name', PROJECT, '--dir', proj]);
  await ok(['edit', '--enable', 'prometheus', '--dir', proj]);
  insecureOut = (
    await ok([
      'prometheus-config',
      '--from',
      join(proj, 'config/default'),
      '--target',
      '127.0.0.1:8443',
      '--token-file',
      files.token,
    ])
  ).stdout;
  await ok(['edit', '--enable', 'metrics-tls', '--dir', proj]);
  const from = join(proj, 'config/default');
  [tlsStatic, tlsDiscovery] = await Promise.all([
    ok([
      'prometheus-config',
      '--from',
      from,
      '--target',
      '127.0.0.1:8443',
      '--token-file',
      files.token,
      '--ca-file',
      files['ca.crt'],
    ]),
    ok([
      'prometheus-config',
      '--from',
      from,
      '--token-file',
      files.token,
      '--ca-file',
      files['ca.crt'],
      '--cert-file',
      files['tls.crt'],
      '--key-file',
      files['tls.key'],
    ]).then((r) => r.stdout),
  ]);
});

after(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('ctrlmetrics prometheus-config', () => {
  test("insecure ServiceMonitor → https job with the token file, insecure_skip_verify and the operator's target labels", async () => {
    const job = onlyJob(insecureOut);
    assert.deepEqual(job, {
      job_name: JOB,
      metrics_path: '/metrics',
      scheme: 'https',
      authorization: { type: 'Bearer', credentials_file: files.token },
      tls_config: { insecure_skip_verify: true },
      static_configs: [
        { targets: ['127.0.0.1:8443'], labels: { namespace: NS, service: SERVICE, job: SERVICE, endpoint: 'https' } },
      ],
    });
    await promtoolAccepts(insecureOut, 'insecure');
  });

  test('with the TLS patch: ca_file + server_name, no insecure_skip_verify; the client certificate is left out with a warning', async () => {
    const job = onlyJob(tlsStatic.stdout);
    assert.deepEqual(job.tls_config, { ca_file: files['ca.crt'], server_name: `${SERVICE}.${NS}.svc` });
    assert.match(tlsStatic.stderr, /^warning: .*client certificate.*--cert-file and --key-file/);
    await promtoolAccepts(tlsStatic.stdout, 'tls-static');
  });

  test("without --target: endpoint discovery in the namespace and the operator's relabeling", async () => {
    const job = onlyJob(tlsDiscovery) as Job & {
      relabel_configs: Array<Record<string, unknown>>;
      kubernetes_sd_configs: unknown;
    };
    assert.deepEqual(job.kubernetes_sd_configs, [{ role: 'endpoints', namespaces: { names: [NS] } }]);
    assert.deepEqual(job.tls_config, {
      ca_file: files['ca.crt'],
      cert_file: files['tls.crt'],
      key_file: files['tls.key'],
      server_name: `${SERVICE}.${NS}.svc`,
    });
    const rules = job.relabel_configs;
    const keep = rules.filter((r) => r.action === 'keep').map((r) => [(r.source_labels as string[])[0], r.regex]);
    assert.deepEqual(keep, [
      ['__meta_kubernetes_service_label_app_kubernetes_io_name', `(${PROJECT});true`],
      ['__meta_kubernetes_service_label_control_plane', '(controller-manager);true'],
      ['__meta_kubernetes_endpoint_port_name', 'https'],
    ]);
    const target = (label: string) =>
      rules
        .filter((r) => r.target_label === label)
        .map((r) => (r.source_labels as string[] | undefined)?.join(',') ?? r.replacement);
    assert.deepEqual(target('namespace'), ['__meta_kubernetes_namespace']);
    assert.deepEqual(target('service'), ['__meta_kubernetes_service_name']);
    assert.ok(target('pod').includes('__meta_kubernetes_pod_name'));
    assert.deepEqual(target('job'), ['__meta_kubernetes_service_name']);
    assert.deepEqual(target('endpoint'), ['https']);
    // Debian's Prometheus is built without Kubernetes service discovery, so promtool rejects kubernetes_sd_configs
    // as an unknown field: validate everything else (relabel rules, TLS, authorization) with a static target instead.
    const { kubernetes_sd_configs: _sd, ...rest } = job;
    await promtoolAccepts(
      { scrape_configs: [{ ...rest, static_configs: [{ targets: ['127.0.0.1:8443'] }] }] },
      'tls-discovery',
    );
  });

  test('reads a ServiceMonitor YAML file as well; placeholders, a missing ServiceMonitor and a missing CA are clear errors', async () => {
    const sm = join(tmp, 'monitor.yaml');
    await writeFile(
      sm,
      toYaml({
        apiVersion: 'monitoring.coreos.com/v1',
        kind: 'ServiceMonitor',
        metadata: { name: 'm', namespace: 'ns1' },
        spec: {
          endpoints: [
            {
              port: 'https',
              scheme: 'https',
              path: '/metrics',
              interval: '15s',
              bearerTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
              tlsConfig: { serverName: 'SERVICE_NAME.SERVICE_NAMESPACE.svc', insecureSkipVerify: false },
            },
          ],
          selector: { matchLabels: { app: 'x' } },
        },
      }),
    );
    const svc = join(tmp, 'service.yaml');
    await writeFile(
      svc,
      toYaml({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'ns1' }, spec: {} }),
    );
    const [placeholder, noMonitor, noCa, noTarget] = await Promise.all([
      runCli(['prometheus-config', '--from', sm]),
      runCli(['prometheus-config', '--from', svc]),
      runCli(['prometheus-config', '--from', join(proj, 'config/default'), '--target', '127.0.0.1:8443']),
      runCli(['prometheus-config', '--from', join(proj, 'config/default'), '--target', 'nope']),
    ]);
    assert.equal(placeholder.code, 1);
    assert.match(
      placeholder.stderr,
      /placeholder serverName SERVICE_NAME\.SERVICE_NAMESPACE\.svc: enable the \[PROMETHEUS-WITH-CERTS\] replacements/,
    );
    assert.equal(noMonitor.code, 1);
    assert.match(
      noMonitor.stderr,
      /no ServiceMonitor in the input: enable it with `ctrlmetrics edit --enable prometheus`/,
    );
    assert.equal(noCa.code, 1);
    assert.match(
      noCa.stderr,
      /verifies the server with the CA in Secret metrics-server-cert key ca\.crt: pass --ca-file/,
    );
    assert.equal(noTarget.code, 1);
    assert.match(
      noTarget.stderr,
      /^error: --target must be HOST:PORT.*\nSee 'ctrlmetrics prometheus-config --help' for usage\.\n$/,
    );
    // a file without the placeholder: interval carried over, token path kept from the ServiceMonitor
    await writeFile(
      sm,
      (await import('node:fs')).readFileSync(sm, 'utf8').replace('SERVICE_NAME.SERVICE_NAMESPACE.svc', 's.ns1.svc'),
    );
    const out = await ok(['prometheus-config', '--from', sm]);
    const job = onlyJob(out.stdout);
    assert.equal(job.scrape_interval, '15s');
    assert.deepEqual(job.authorization, {
      type: 'Bearer',
      credentials_file: '/var/run/secrets/kubernetes.io/serviceaccount/token',
    });
    assert.deepEqual(job.tls_config, { server_name: 's.ns1.svc' });
  });
});
