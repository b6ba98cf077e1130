/**
 * The generated files agree with each other where kubebuilder v4.15's do not (shared/reference/kubebuilder.md §7):
 * comments name only files and section markers that exist, the Secret the cert patch mounts is the one the
 * Certificate writes and the ServiceMonitor reads, and namespace labels are spelled one way.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { renderProject } from '../../packages/cli/src/scaffold/init.js';
import { buildProgram } from '../../packages/cli/src/cli/index.js';

const files = renderProject({ projectName: 'shop-op', domain: 'example.com', ctrlmetricsVersion: '^0.1.0' });
const config = Object.entries(files).filter(([p]) => p.startsWith('config/') && p.endsWith('.yaml'));
const commentsOf = (text: string): string[] => text.split('\n').filter((l) => /^\s*#/.test(l) || / # /.test(l));

test('every section marker named in a comment is one of the markers the kustomizations use', () => {
  const known = [
    '[METRICS]',
    '[PROMETHEUS]',
    '[METRICS-WITH-CERTS]',
    '[PROMETHEUS-WITH-CERTS]',
    '[CERTMANAGER]',
    '[NETWORK POLICY]',
    '[GRAFANA]',
    '[WEBHOOK]',
    '[SHARDING]',
  ];
  const used = new Set<string>();
  for (const [path, text] of config) {
    for (const line of commentsOf(text)) {
      for (const m of line.matchAll(/\[[A-Z][A-Z -]*\]/g)) {
        assert.ok(known.includes(m[0]), `${path}: unknown marker ${m[0]} in "${line.trim()}"`);
        used.add(m[0]);
      }
    }
  }
  // kubebuilder's prometheus kustomization points at "[METRICS WITH CERTMANAGER]", which exists nowhere
  const def = files['config/default/kustomization.yaml'];
  for (const marker of [
    '[METRICS]',
    '[PROMETHEUS]',
    '[METRICS-WITH-CERTS]',
    '[PROMETHEUS-WITH-CERTS]',
    '[CERTMANAGER]',
    '[NETWORK POLICY]',
    '[GRAFANA]',
  ]) {
    assert.ok(def.includes(`# ${marker}`), `config/default/kustomization.yaml labels a section ${marker}`);
  }
  assert.ok(files['config/prometheus/kustomization.yaml'].includes('# [PROMETHEUS-WITH-CERTS]'));
  assert.ok(used.has('[METRICS-WITH-CERTS]'));
});

/** Files a commented-out entry names that a later command writes (create-webhook.test.ts checks it does). */
const WRITTEN_LATER: Record<string, string> = { 'manager_webhook_patch.yaml': 'ctrlmetrics create webhook' };

test('every .yaml file named in a comment exists (or is written by the command that turns its entry on)', () => {
  for (const [path, text] of config) {
    for (const line of commentsOf(text)) {
      for (const m of line.matchAll(/([\w./-]+\.yaml)\b/g)) {
        const name = m[1];
        if (WRITTEN_LATER[name]) {
          assert.ok(
            text.includes(WRITTEN_LATER[name]),
            `${path}: the comment above ${name} says ${WRITTEN_LATER[name]} turns it on`,
          );
          continue;
        }
        const candidates = name.includes('/')
          ? [name, posix.join(posix.dirname(path), name)]
          : Object.keys(files).filter((f) => posix.basename(f) === name);
        assert.ok(
          candidates.some((c) => c in files),
          `${path}: comment names ${name}, which is not generated ("${line.trim()}")`,
        );
      }
    }
  }
  // the file kubebuilder's monitor.yaml comment names instead of monitor_tls_patch.yaml
  assert.ok(!Object.values(files).some((t) => t.includes('servicemonitor_tls_patch')));
});

test('the cert patch mounts the Secret the Certificate writes, and the ServiceMonitor TLS patch reads the same one', () => {
  const cert = parse(files['config/certmanager/certificate-metrics.yaml']) as { spec: { secretName: string } };
  const certPatch = parse(files['config/default/cert_metrics_manager_patch.yaml']) as Array<{
    path: string;
    value: any;
  }>;
  const volume = certPatch.find((op) => op.path.endsWith('/volumes/-'))!.value;
  const mount = certPatch.find((op) => op.path.endsWith('/volumeMounts/-'))!.value;
  const arg = certPatch.find((op) => op.path.endsWith('/args/-'))!.value as string;
  assert.equal(cert.spec.secretName, 'metrics-server-cert');
  assert.equal(volume.secret.secretName, cert.spec.secretName);
  assert.equal(mount.name, volume.name);
  assert.equal(arg, `--metrics-cert-path=${mount.mountPath}`);
  const tls = (parse(files['config/prometheus/monitor_tls_patch.yaml']) as Array<{ value: any }>)[0].value;
  assert.deepEqual([tls.ca.secret.name, tls.cert.secret.name, tls.keySecret.name], Array(3).fill(cert.spec.secretName));
});

test('namespace labels are spelled one way: "metrics: enabled", no "webhook(s): enabled" selector anywhere', () => {
  // the objects themselves (comments may explain kubebuilder's "webhook: enabled" bug)
  const objects = JSON.stringify(config.flatMap(([, text]) => parseAllDocuments(text).map((d) => d.toJSON())));
  assert.doesNotMatch(objects, /"webhooks?":"enabled"/);
  assert.match(objects, /"metrics":"enabled"/);
  assert.doesNotMatch(files['README.md'], /webhooks?[=:] ?enabled/);
  const np = parseAllDocuments(files['config/network-policy/allow-metrics-traffic.yaml'])[0].toJSON();
  assert.deepEqual(np.spec.ingress[0].from, [{ namespaceSelector: { matchLabels: { metrics: 'enabled' } } }]);
  assert.match(files['README.md'], /kubectl label namespace <ns> metrics=enabled/);
});

test('every Grafana panel query is valid PromQL (promtool check rules)', async () => {
  const exprs = Object.entries(files)
    .filter(([p]) => p.startsWith('config/grafana/') && p.endsWith('.json'))
    .flatMap(([, text]) =>
      (JSON.parse(text) as { panels: Array<{ targets: Array<{ expr: string }> }> }).panels.flatMap((p) =>
        p.targets.map((t) => t.expr),
      ),
    );
  assert.ok(exprs.length >= 10, 'dashboards have queries');
  const dir = mkdtempSync(join(tmpdir(), 'ctrlmetrics-promql-'));
  try {
    const rules = join(dir, 'rules.yaml');
    writeFileSync(
      rules,
      stringify({
        groups: [{ name: 'dashboards', rules: exprs.map((expr, i) => ({ record: `dashboard:query_${i}`, expr })) }],
      }),
    );
    const r = await new Promise<{ code: number; out: string }>((res) =>
      execFile('promtool', ['check', 'rules', rules], { timeout: 30_000 }, (err, stdout, stderr) =>
        res({ code: err ? 1 : 0, out: stdout + stderr }),
      ),
    );
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, new RegExp(`SUCCESS: ${exprs.length} rules found`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('every `ctrlmetrics …` command the generated files mention exists, with the flags they use', () => {
  const program = buildProgram();
  const mentions = Object.values(files).flatMap((t) => [...t.matchAll(/ctrlmetrics ([a-z-]+)((?: [^`\n]*)?)/g)]);
  assert.ok(mentions.length >= 5, 'the files point users at the CLI');
  for (const m of mentions) {
    const name = m[1];
    const cmd = program.commands.find((c) => c.name() === name);
    assert.ok(cmd, `command "ctrlmetrics ${name}" exists (${m[0]})`);
    for (const flag of m[2].match(/--[a-z0-9-]+/g) ?? []) {
      assert.ok(
        cmd.options.some((o) => o.long === flag),
        `ctrlmetrics ${name} has ${flag} (${m[0]})`,
      );
    }
  }
});

test("the manager's memory request, limit and V8 heap cap agree, and are the ones docs/performance-notes.md measured", async () => {
  const { readFile } = await import('node:fs/promises');
  const deployment = parseAllDocuments(files['config/manager/manager.yaml'])
    .map((d) => d.toJSON() as Record<string, any>)
    .find((o) => o['kind'] === 'Deployment')!;
  const container = deployment['spec']['template']['spec']['containers'][0] as {
    resources: { limits: { memory: string }; requests: { memory: string } };
    env: Array<{ name: string; value: string }>;
  };
  const mi = (q: string) => {
    const m = /^(\d+)Mi$/.exec(q);
    assert.ok(m, `${q} in Mi`);
    return Number(m[1]);
  };
  const limit = mi(container.resources.limits.memory);
  const request = mi(container.resources.requests.memory);
  const nodeOptions = /^--max-old-space-size=(\d+) --max-semi-space-size=(\d+) --v8-pool-size=1$/.exec(
    container.env.find((e) => e.name === 'NODE_OPTIONS')?.value ?? '',
  );
  assert.ok(nodeOptions, 'NODE_OPTIONS caps the old generation and the semi-spaces');
  const heap = Number(nodeOptions[1]);
  assert.equal(nodeOptions[2], '1', 'the young generation stays at its 1 MiB starting size');
  assert.ok(request <= limit, 'request within the limit');
  // the measured non-heap part of the RSS is ~100 MiB: old space + that must stay under the limit
  assert.ok(
    heap > 0 && heap + 100 < limit,
    `--max-old-space-size=${heap} leaves room for the rest of the RSS under ${limit}Mi`,
  );
  const docs = await readFile(join(import.meta.dirname, '../../docs/performance-notes.md'), 'utf8');
  const section = docs.slice(docs.indexOf("## The generated manager's memory"));
  assert.ok(
    section.includes(`\`limits: memory: ${limit}Mi\``) &&
      section.includes(`\`requests: memory: ${request}Mi\``) &&
      section.includes(`--max-old-space-size=${heap}`) &&
      section.includes('--max-semi-space-size=1 --v8-pool-size=1'),
    'docs/performance-notes.md records the measurement behind these values',
  );
  // the worst measured peak (the table's Node 24 row, scraped every 100 ms) is at most 60% of the limit
  const peakRange = /\| 24\.[\d.]+ \(the image's\) \| [^|]+ \| [\d.]+ \([\d.]+–([\d.]+)\) \|/.exec(section);
  assert.ok(peakRange, 'the Node 24 row of the table');
  assert.ok(Number(peakRange[1]) <= 0.6 * limit, `worst peak ${peakRange[1]} MiB ≤ 60% of ${limit}Mi`);
});
