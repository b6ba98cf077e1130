/**
 * End to end with the real scraping system: `ctrlmetrics demo` (embedded authority, the project's RBAC,
 * the example operator's manager) serving a certificate from a Secret-like directory; a scraper service account
 * bound with `ctrlmetrics grant`, its token from `ctrlmetrics token`; scrape jobs from `ctrlmetrics
 * prometheus-config` over a scaffolded project's overlays; Debian's `prometheus` on a loopback port with
 * temporary storage, queried through its HTTP API; `promtool` for the configuration and a scrape's body.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { ProcessGroup, eventually, freePort, run, runCli, sleep, type Proc } from '../helpers/process.js';
import {
  SecretVolume,
  fingerprintOf,
  generateCA,
  issueServingCert,
  presentedCertificate,
  type CertKeyPair,
} from '../helpers/certs.js';

const PROJECT = 'ctrlmetrics-demo';
const NAMESPACE = `${PROJECT}-system`;
const SERVICE = `${PROJECT}-controller-manager-metrics-service`;
const SERVER_NAME = `${SERVICE}.${NAMESPACE}.svc`;

const procs = new ProcessGroup();
let tmp = '';
let prom: Proc | undefined;
let demo: Proc | undefined;
let promConfig: { global: unknown; scrape_configs: Array<Record<string, unknown>> };
let configFile = '';
let makeJob: (base: Record<string, unknown>, name: string) => Record<string, unknown>;
let promUrl = '';
let metricsUrl = '';
let metricsPort = 0;
let kubeconfig = '';
let ca: CertKeyPair;
let volume: SecretVolume;
let readerToken = '';
let unboundToken = '';
/** The Prometheus `demo --prometheus` started. */
let demoPromUrl = '';
let stateDir = '';

interface Target {
  labels: Record<string, string>;
  scrapePool: string;
  health: 'up' | 'down' | 'unknown';
  lastError: string;
}

async function promGet<T>(path: string): Promise<T> {
  const res = await fetch(`${promUrl}${path}`, { signal: AbortSignal.timeout(5000) });
  const body = (await res.json()) as { status: string; data: T; error?: string };
  if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.error ?? res.status}`);
  return body.data;
}

async function targets(): Promise<Target[]> {
  return (await promGet<{ activeTargets: Target[] }>('/api/v1/targets')).activeTargets;
}

async function target(job: string): Promise<Target | undefined> {
  return (await targets()).find((t) => t.scrapePool === job);
}

/** Scrapes the demo's manager answered in protobuf so far, from its debug log. */
function protobufScrapes(): number {
  return (demo!.stdout() + demo!.stderr())
    .split('\n')
    .filter((l) => l.includes('Served metrics') && l.includes('protobuf')).length;
}

type Vector = Array<{ metric: Record<string, string>; value: [number, string] }>;

async function query(q: string): Promise<Vector> {
  const r = await promGet<{ resultType: string; result: Vector }>(`/api/v1/query?query=${encodeURIComponent(q)}`);
  return r.result;
}

function kubectl(args: string[]) {
  return run('kubectl', ['--kubeconfig', kubeconfig, ...args], { timeoutMs: 20_000 });
}

async function cli(args: string[]): Promise<string> {
  const r = await runCli(args, { env: { ...process.env, KUBECONFIG: kubeconfig, CTRLMETRICS_LOG_LEVEL: 'warn' } });
  assert.equal(r.code, 0, `ctrlmetrics ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

/** The first scrape job of `ctrlmetrics prometheus-config` output (a `scrape_configs` list, or a whole config). */
function scrapeJob(yamlText: string): Record<string, unknown> {
  const doc = parseYaml(yamlText) as unknown;
  const list = Array.isArray(doc) ? doc : (doc as { scrape_configs?: unknown[] }).scrape_configs;
  assert.ok(Array.isArray(list) && list.length >= 1, `prometheus-config printed no scrape job:\n${yamlText}`);
  return list[0] as Record<string, unknown>;
}

async function newServingPair(): Promise<CertKeyPair> {
  return issueServingCert(ca, [SERVER_NAME, `${SERVICE}.${NAMESPACE}.svc.cluster.local`]);
}

describe('Prometheus scrapes the secure endpoint', { timeout: 180_000 }, () => {
  let tlsJob: Record<string, unknown>;
  let insecureJob: Record<string, unknown>;

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'ctrlmetrics-e2e-'));
    // the serving certificate, as cert-manager would write it into Secret metrics-server-cert
    ca = await generateCA('e2e-metrics-ca');
    volume = new SecretVolume(join(tmp, 'metrics-certs'));
    await volume.write({
      'ca.crt': ca.certPem,
      ...(await newServingPair().then((p) => ({ 'tls.crt': p.certPem, 'tls.key': p.keyPem }))),
    });
    await writeFile(join(tmp, 'ca.crt'), ca.certPem);

    // the manager: embedded authority + RBAC + example operator, on ephemeral loopback ports
    stateDir = join(tmp, 'state');
    kubeconfig = join(stateDir, 'kubeconfig');
    const demoPromPort = await freePort();
    demo = procs.startCli(
      'demo',
      [
        'demo',
        '--state-dir',
        stateDir,
        '--metrics-bind-address',
        '127.0.0.1:0',
        '--health-probe-bind-address',
        '127.0.0.1:0',
        '--metrics-cert-path',
        volume.dir,
        '--load-interval',
        '0.3',
        '--duration',
        '175',
        // The demo starts its own Prometheus too
        '--prometheus',
        '--prometheus-address',
        `127.0.0.1:${demoPromPort}`,
      ],
      // debug: the log check in `after` covers every level
      { CTRLMETRICS_LOG_LEVEL: 'debug' },
    );
    const m = await demo.waitForOutput(/(https:\/\/127\.0\.0\.1:(\d+))\/metrics/, 60_000);
    demoPromUrl = (
      await demo.waitForOutput(/Prometheus scrapes it every 5s: (http:\/\/127\.0\.0\.1:\d+) /, 60_000)
    )[1]!;
    assert.equal(demoPromUrl, `http://127.0.0.1:${demoPromPort}`);
    metricsUrl = `${m[1]}/metrics`;
    metricsPort = Number(m[2]);

    // the scraper identities: one bound with `ctrlmetrics grant`, one not
    for (const args of [
      ['create', 'namespace', 'monitoring'],
      ['create', 'serviceaccount', 'prometheus', '-n', 'monitoring'],
      ['create', 'serviceaccount', 'unbound', '-n', 'monitoring'],
    ]) {
      const r = await kubectl(args);
      assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    }
    await cli(['grant', '--serviceaccount', 'monitoring:prometheus', '--clusterrole', `${PROJECT}-metrics-reader`]);
    readerToken = (await cli(['token', '--namespace', 'monitoring', 'prometheus', '--duration', '1h'])).trim();
    unboundToken = (await cli(['token', '--namespace', 'monitoring', 'unbound'])).trim();
    assert.match(readerToken, /^[\x21-\x7e]+$/, 'ctrlmetrics token prints only the token');
    await writeFile(join(tmp, 'prometheus.token'), readerToken, { mode: 0o600 });
    await writeFile(join(tmp, 'unbound.token'), unboundToken, { mode: 0o600 });

    // a scaffolded project: prometheus on (insecureSkipVerify), then metrics-tls on (ca_file + serverName)
    const proj = join(tmp, 'proj');
    await cli(['init', '--project-name', PROJECT, '--dir', proj]);
    await cli(['edit', '--enable', 'prometheus', '--dir', proj]);
    const target = `127.0.0.1:${metricsPort}`;
    insecureJob = scrapeJob(
      await cli([
        'prometheus-config',
        '--from',
        join(proj, 'config/default'),
        '--target',
        target,
        '--token-file',
        join(tmp, 'prometheus.token'),
      ]),
    );
    await cli(['edit', '--enable', 'metrics-tls', '--dir', proj]);
    tlsJob = scrapeJob(
      await cli([
        'prometheus-config',
        '--from',
        join(proj, 'config/default'),
        '--target',
        target,
        '--token-file',
        join(tmp, 'prometheus.token'),
        '--ca-file',
        join(tmp, 'ca.crt'),
      ]),
    );

    const job = (makeJob = (
      base: Record<string, unknown>,
      name: string,
      edit: (j: Record<string, unknown>) => void = () => undefined,
    ) => {
      const j = structuredClone(base);
      j.job_name = name;
      j.scrape_interval = '1s';
      j.scrape_timeout = '1s';
      // the operator sets `job` to the Service name for every endpoint, so the jobs are told apart by this label
      const statics = j.static_configs as Array<{ labels?: Record<string, string> }> | undefined;
      assert.ok(
        Array.isArray(statics) && statics.length > 0,
        `prometheus-config job has no static_configs: ${JSON.stringify(j)}`,
      );
      for (const s of statics) s.labels = { ...s.labels, e2e_job: name };
      edit(j);
      return j;
    });
    const config = (promConfig = {
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      scrape_configs: [
        job(insecureJob, 'manager'),
        job(tlsJob, 'manager-tls'),
        job(
          insecureJob,
          'unbound',
          (j) => ((j.authorization as Record<string, unknown>).credentials_file = join(tmp, 'unbound.token')),
        ),
        job(insecureJob, 'anonymous', (j) => delete j.authorization),
        // control: verification is real — the same TLS job with another server name must fail
        job(
          tlsJob,
          'wrong-server-name',
          (j) => ((j.tls_config as Record<string, unknown>).server_name = 'wrong.example.svc'),
        ),
      ],
    });
    configFile = join(tmp, 'prometheus.yml');
    await writeFile(configFile, toYaml(config));
    const check = await run('promtool', ['check', 'config', configFile]);
    assert.equal(check.code, 0, `promtool check config: ${check.stdout}${check.stderr}`);

    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    prom = procs.start('prometheus', '/usr/bin/prometheus', [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${join(tmp, 'tsdb')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      // exemplars from the OpenMetrics scrapes are kept and answered by /api/v1/query_exemplars
      '--enable-feature=exemplar-storage',
      '--log.level=warn',
    ]);
    await eventually(
      async () => (await fetch(`${promUrl}/-/ready`, { signal: AbortSignal.timeout(2000) })).ok,
      'prometheus ready',
      30_000,
      250,
    );
  });

  after(async () => {
    await procs.stopAll();
    // the demo's Prometheus stopped with the demo
    if (demoPromUrl)
      await assert.rejects(
        fetch(`${demoPromUrl}/-/ready`, { signal: AbortSignal.timeout(2000) }),
        "the demo's Prometheus is gone",
      );
    // no token ever reached a log line of the manager or of Prometheus
    for (const p of [demo, prom]) {
      for (const token of [readerToken, unboundToken]) {
        if (p && token) assert.ok(!(p.stdout() + p.stderr()).includes(token), `${p.name} logged a scraper's token`);
      }
    }
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  test('prometheus-config renders the ServiceMonitor as the operator would', () => {
    for (const j of [insecureJob, tlsJob]) {
      assert.equal(j.scheme, 'https');
      assert.equal(j.metrics_path ?? '/metrics', '/metrics');
      assert.deepEqual(j.authorization, { type: 'Bearer', credentials_file: join(tmp, 'prometheus.token') });
    }
    assert.equal((insecureJob.tls_config as Record<string, unknown>).insecure_skip_verify, true);
    const tlsc = tlsJob.tls_config as Record<string, unknown>;
    assert.equal(tlsc.ca_file, join(tmp, 'ca.crt'));
    assert.equal(tlsc.server_name, SERVER_NAME);
    assert.ok(
      tlsc.insecure_skip_verify === undefined || tlsc.insecure_skip_verify === false,
      'no insecure_skip_verify with the TLS patch',
    );
  });

  test('the targets are up, with the labels the operator attaches', async () => {
    for (const job of ['manager', 'manager-tls']) {
      const t = await eventually(
        async () => {
          const t = await target(job);
          return t?.health === 'up' ? t : undefined;
        },
        `target ${job} up`,
        30_000,
        500,
      );
      assert.equal(t.labels.namespace, NAMESPACE);
      assert.equal(t.labels.service, SERVICE);
    }
  });

  test("demo --prometheus: its Prometheus scrapes the demo with prometheus-config's job and answers the reconcile series of both controllers", async () => {
    const config = parseYaml(await readFile(join(stateDir, 'prometheus', 'prometheus.yml'), 'utf8')) as {
      scrape_configs: Array<Record<string, any>>;
    };
    const job = config.scrape_configs[0];
    assert.equal(
      job.job_name,
      'serviceMonitor/ctrlmetrics-demo-system/ctrlmetrics-demo-controller-manager-metrics-monitor/0',
    );
    assert.equal(job.scheme, 'https');
    assert.deepEqual(job.authorization, { type: 'Bearer', credentials_file: join(stateDir, 'reader.token') });
    // a certificate of its own (--metrics-cert-path): the demo has no CA to verify it with, so the ServiceMonitor's default
    assert.deepEqual(job.tls_config, { insecure_skip_verify: true });
    const series = await eventually(
      async () => {
        const res = await fetch(
          `${demoPromUrl}/api/v1/query?query=${encodeURIComponent('controller_runtime_reconcile_total{result="success"}')}`,
          { signal: AbortSignal.timeout(5000) },
        );
        const body = (await res.json()) as { data: { result: Vector } };
        const controllers = new Set(body.data.result.map((r) => r.metric.controller));
        return controllers.has('configmap') && controllers.has('secret') ? body.data.result : undefined;
      },
      "the reconcile series of both controllers in the demo's Prometheus",
      60_000,
      1000,
    );
    for (const s of series)
      assert.equal(s.metric.namespace, 'ctrlmetrics-demo-system', 'the labels the operator would attach');
    // the printed graph links open Prometheus' graph page with the PromQL of the testing guide's demo section
    const links = [...demo!.stdout().matchAll(/^ {4}(http:\/\/\S+\/graph\?g0\.expr=\S+)$/gm)].map((x) => x[1]);
    assert.deepEqual(
      links.map((l) => new URL(l).searchParams.get('g0.expr')),
      [
        'sum by (controller) (rate(controller_runtime_reconcile_total[1m]))',
        'histogram_quantile(0.9, sum by (controller, le) (rate(controller_runtime_reconcile_time_seconds_bucket[1m])))',
      ],
    );
    for (const l of links) assert.equal((await fetch(l, { signal: AbortSignal.timeout(5000) })).status, 200);
  });

  test('reconcile totals per controller rise, the custom counter is there', async () => {
    const q = `controller_runtime_reconcile_total{namespace="${NAMESPACE}",e2e_job="manager",result="success"}`;
    const first = await eventually(
      async () => {
        const v = await query(q);
        const by = new Map(v.map((s) => [s.metric.controller, Number(s.value[1])]));
        return (by.get('configmap') ?? 0) > 0 && (by.get('secret') ?? 0) > 0 ? by : undefined;
      },
      'reconcile totals of both controllers',
      30_000,
      500,
    );
    const later = await eventually(
      async () => {
        const by = new Map((await query(q)).map((s) => [s.metric.controller, Number(s.value[1])]));
        return by.get('configmap')! > first.get('configmap')! && by.get('secret')! > first.get('secret')!
          ? by
          : undefined;
      },
      'rising reconcile totals',
      30_000,
      1000,
    );
    assert.ok(later.get('configmap')! > first.get('configmap')!);
    const goobers = await eventually(
      async () => {
        const v = await query(`goobers_total{namespace="${NAMESPACE}",e2e_job="manager"}`);
        return v.length === 1 && Number(v[0].value[1]) > 0 ? v : undefined;
      },
      'the custom counter goobers_total',
      15_000,
      500,
    );
    assert.equal(goobers.length, 1);
  });

  test('an exemplar the example operator attaches (its reconcile ID) is stored by Prometheus from the OpenMetrics scrape', async () => {
    type Exemplars = Array<{
      seriesLabels: Record<string, string>;
      exemplars: Array<{ labels: Record<string, string>; value: string; timestamp: number }>;
    }>;
    const q = `goobers_total{namespace="${NAMESPACE}",e2e_job="manager"}`;
    const found = await eventually(
      async () => {
        const now = Date.now() / 1000;
        const r = await promGet<Exemplars>(
          `/api/v1/query_exemplars?query=${encodeURIComponent(q)}&start=${now - 600}&end=${now + 60}`,
        );
        const e = r[0]?.exemplars.at(-1);
        return e ? { series: r[0].seriesLabels, e } : undefined;
      },
      'an exemplar of goobers_total',
      30_000,
      500,
    );
    assert.equal(found.series.__name__, 'goobers_total');
    assert.match(
      found.e.labels.reconcile_id ?? '',
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      JSON.stringify(found.e),
    );
    assert.equal(Number(found.e.value), 1);
    assert.ok(Math.abs(found.e.timestamp - Date.now() / 1000) < 600, `exemplar timestamp ${found.e.timestamp}`);
    // the same ID is in the manager's log lines of that reconcile: the exemplar leads to them
    assert.ok(
      (demo!.stdout() + demo!.stderr()).includes(found.e.labels.reconcile_id),
      "the reconcile ID is in the manager's log",
    );
  });

  test('an unbound service account is down with 403, no token with 401, a wrong server name fails verification', async () => {
    const unbound = await eventually(
      async () => {
        const t = await target('unbound');
        return t && t.health === 'down' ? t : undefined;
      },
      'unbound target down',
      20_000,
      500,
    );
    assert.match(unbound.lastError, /403/);
    const anon = await eventually(
      async () => {
        const t = await target('anonymous');
        return t && t.health === 'down' ? t : undefined;
      },
      'anonymous target down',
      20_000,
      500,
    );
    assert.match(anon.lastError, /401/);
    const wrong = await eventually(
      async () => {
        const t = await target('wrong-server-name');
        return t && t.health === 'down' ? t : undefined;
      },
      'wrong-server-name target down',
      20_000,
      500,
    );
    assert.match(wrong.lastError, /x509|certificate/i);
  });

  test('promtool check metrics accepts a scrape body', async () => {
    const body = await run('curl', ['-sS', '--fail', '-k', '-H', `Authorization: Bearer ${readerToken}`, metricsUrl], {
      timeoutMs: 15_000,
    });
    assert.equal(body.code, 0, body.stderr);
    assert.match(body.stdout, /^controller_runtime_reconcile_total\{/m);
    const check = await run('promtool', ['check', 'metrics'], { input: body.stdout, timeoutMs: 15_000 });
    assert.equal(check.code, 0, `promtool check metrics:\n${check.stdout}${check.stderr}`);
    assert.equal((check.stdout + check.stderr).trim(), '');
  });

  test('Prometheus with native histograms on asks for protobuf, gets it, and reads the reconcile latency as a native histogram', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const file = join(tmp, 'prometheus-nh.yml');
    await writeFile(file, toYaml({ global: promConfig.global, scrape_configs: [makeJob(tlsJob, 'manager-protobuf')] }));
    const servedBefore = protobufScrapes();
    const nh = procs.start('prometheus-nh', '/usr/bin/prometheus', [
      `--config.file=${file}`,
      `--storage.tsdb.path=${join(tmp, 'tsdb-nh')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--enable-feature=native-histograms',
      '--log.level=warn',
    ]);
    try {
      const vector = async (q: string): Promise<Vector> => {
        const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(q)}`, {
          signal: AbortSignal.timeout(5000),
        });
        const body = (await res.json()) as { status: string; data: { result: Vector } };
        return body.status === 'success' ? body.data.result : [];
      };
      const totals = await eventually(
        async () => {
          const v = await vector(`controller_runtime_reconcile_total{e2e_job="manager-protobuf",result="success"}`);
          const by = new Map(v.map((x) => [x.metric.controller, Number(x.value[1])]));
          return (by.get('configmap') ?? 0) > 0 && (by.get('secret') ?? 0) > 0 ? by : undefined;
        },
        'reconcile totals over protobuf',
        30_000,
        500,
      );
      assert.ok(totals.get('configmap')! > 0);
      // the reconcile latency as a native histogram: Prometheus stores one series of histogram samples
      // (and, with the feature on, not the classic _bucket series), and quantiles come from its native buckets
      const sel = `controller_runtime_reconcile_time_seconds{e2e_job="manager-protobuf",controller="configmap"}`;
      const stored = await eventually(
        async () => {
          const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(sel)}`, {
            signal: AbortSignal.timeout(5000),
          });
          const body = (await res.json()) as {
            data: { result: Array<{ histogram?: [number, { count: string; buckets?: unknown[] }] }> };
          };
          const h = body.data.result[0]?.histogram;
          return h && Number(h[1].count) > 0 && (h[1].buckets?.length ?? 0) > 0 ? h[1] : undefined;
        },
        'a native histogram sample of the reconcile latency',
        30_000,
        500,
      );
      assert.ok(stored.buckets!.length > 0);
      assert.deepEqual(
        await vector(`controller_runtime_reconcile_time_seconds_bucket{e2e_job="manager-protobuf"}`),
        [],
        'no classic _bucket series next to the native one',
      );
      const p90 = await eventually(
        async () => {
          const v = await vector(`histogram_quantile(0.9, rate(${sel}[1m]))`);
          const x = Number(v[0]?.value[1]);
          return Number.isFinite(x) && x > 0 ? x : undefined;
        },
        'histogram_quantile over the native histogram',
        30_000,
        1000,
      );
      assert.ok(p90 > 0 && p90 < 60, `p90 reconcile latency ${p90} s`);
      // the Prometheus without the feature scraped the same endpoint: it has the classic buckets
      const classic = await query(
        `controller_runtime_reconcile_time_seconds_bucket{e2e_job="manager",controller="configmap"}`,
      );
      assert.equal(classic.length, 41, `controller-runtime's 40 classic buckets and +Inf: ${classic.length}`);
      // the manager served those scrapes as protobuf (its debug log names the format of every scrape it answers)
      assert.ok(protobufScrapes() > servedBefore, 'the manager logged no protobuf scrape');
      assert.equal(
        (nh.stdout() + nh.stderr()).match(/level=error/g),
        null,
        `prometheus errors:\n${nh.stderr().slice(-2000)}`,
      );
    } finally {
      await procs.stop(nh);
    }
  });

  test('certificate rotation by symlink swap while scraping every second: no failed scrape', async () => {
    const tlsUp = await eventually(
      async () => ((await target('manager-tls'))?.health === 'up' ? true : undefined),
      'manager-tls up',
      20_000,
      500,
    );
    assert.ok(tlsUp);
    const start = Date.now();
    let last = '';
    for (let i = 0; i < 4; i++) {
      const pair = await newServingPair();
      await volume.write({ 'ca.crt': ca.certPem, 'tls.crt': pair.certPem, 'tls.key': pair.keyPem });
      last = fingerprintOf(pair.certPem);
      const want = last;
      // the new pair is served to new connections (watch or the 10 s poll)
      await eventually(
        async () => ((await presentedCertificate('127.0.0.1', metricsPort, SERVER_NAME)) === want ? true : undefined),
        `rotation ${i + 1} served`,
        15_000,
        200,
      );
      await sleep(1500);
    }
    await sleep(2500);
    const seconds = Math.ceil((Date.now() - start) / 1000);
    const [scrapes] = await query(`count_over_time(up{e2e_job="manager-tls"}[${seconds}s])`);
    const [worst] = await query(`min_over_time(up{e2e_job="manager-tls"}[${seconds}s])`);
    assert.ok(scrapes && Number(scrapes.value[1]) >= seconds / 2, `scrapes during the rotation: ${scrapes?.value[1]}`);
    assert.equal(worst?.value[1], '1', 'a scrape failed during the rotation');
    const t = await target('manager-tls');
    assert.equal(t?.health, 'up', t?.lastError);
    // Prometheus verifies the served chain itself: a fresh TLS job would fail on an unverified certificate
    const reads = await query(`certwatcher_read_certificate_total{e2e_job="manager-tls"}`);
    assert.ok(reads.length === 1 && Number(reads[0].value[1]) >= 5, `certwatcher reads: ${JSON.stringify(reads)}`);
    assert.equal(await presentedCertificate('127.0.0.1', metricsPort, SERVER_NAME), last);

    // Prometheus keeps its connection alive, so it verified the first certificate only: a job added now (config
    // reload) opens a new connection and must verify the rotated certificate with ca_file + server_name
    promConfig.scrape_configs.push(makeJob(tlsJob, 'manager-tls-after-rotation'));
    await writeFile(configFile, toYaml(promConfig));
    process.kill(prom!.pid, 'SIGHUP');
    const late = await eventually(
      async () => {
        const t = await target('manager-tls-after-rotation');
        return t && t.health !== 'unknown' ? t : undefined;
      },
      'the job added after the rotation is scraped',
      20_000,
      500,
    );
    assert.equal(late.health, 'up', `the rotated certificate did not verify: ${late.lastError}`);
  });
});
