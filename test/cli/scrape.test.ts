/**
 * `ctrlmetrics scrape` (a child process) against running managers (the Manager with its secure metrics endpoint
 * and the authentication/authorization filter, on the embedded authority): 200, 401, 403, 500, TLS failures,
 * --cacert, --match, and the --watch table from the controller metrics of this process.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import promClient from 'prom-client';
import { createServer as createTlsServer } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { generateSelfSignedCertificate } from '../../packages/ctrlmetrics/src/certwatcher/index.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { generateCA, issueServingCert } from '../helpers/certs.js';
import { runCli, ProcessGroup, within } from '../helpers/process.js';
import { Manager } from '../../packages/ctrlmetrics/src/manager/index.js';
import { withAuthenticationAndAuthorization } from '../../packages/ctrlmetrics/src/metrics/filters/index.js';
import type { MetricsOptions } from '../../packages/ctrlmetrics/src/metrics/server/types.js';
import type { RestConfig } from '../../packages/ctrlmetrics/src/kube/config.js';
import {
  RECONCILE_TIME_BUCKETS,
  reconcileErrors,
  reconcileTime,
  reconcileTotal,
  workqueueDepth,
} from '../../packages/ctrlmetrics/src/controller/metrics.js';

interface RunningManager {
  port: number;
  /** The health probe server's port. */
  healthPort: number;
  stop(): Promise<void>;
}

/** A manager with the secure metrics endpoint as the scaffolded main.ts configures it, on an ephemeral port. */
async function startManager(restConfig: RestConfig, metrics: MetricsOptions = {}): Promise<RunningManager> {
  const mgr = new Manager({
    restConfig,
    handleSignals: false,
    gracefulShutdownTimeoutMs: 5_000,
    healthProbeBindAddress: '127.0.0.1:0',
    metrics: { bindAddress: '127.0.0.1:0', filterProvider: withAuthenticationAndAuthorization, ...metrics },
  });
  const stop = new AbortController();
  const running = mgr.start(stop.signal);
  await within(Promise.race([mgr.ready(), running]), 30_000, 'manager ready');
  return {
    port: mgr.metricsServer!.port,
    healthPort: mgr.healthProbeServer!.port,
    async stop() {
      stop.abort();
      await within(running, 15_000, 'manager stop');
    },
  };
}

let cluster: TestCluster;
let endpoint: RunningManager;
let noRoleEndpoint: RunningManager;
let certEndpoint: RunningManager;
let tmp: string;
let readerTokenFile: string;
let unboundToken: string;
let caFile: string;
let otherCaFile: string;
const procs = new ProcessGroup();

const scrape = (args: string[], timeoutMs = 45_000) =>
  runCli(['scrape', ...args], { timeoutMs, env: { ...process.env, CTRLMETRICS_LOG_LEVEL: 'warn' } });

before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'ctrlmetrics-scrape-'));
  cluster = await startTestCluster();
  const manager = await cluster.managerConfig();
  readerTokenFile = join(tmp, 'reader.token');
  await writeFile(readerTokenFile, (await cluster.readerToken()) + '\n', { mode: 0o600 });
  unboundToken = await cluster.serviceAccountToken('monitoring', 'unbound');
  // a manager whose service account is not bound to metrics-auth-role: it cannot ask the API, so it answers 500
  const noRole = {
    server: cluster.authority.url,
    ca: cluster.authority.caPem,
    token: await cluster.serviceAccountToken('ctrlmetrics-system', 'no-auth-role'),
  };
  // a serving certificate signed by a CA the client can be given with --cacert
  const ca = await generateCA('scrape-test-ca');
  const pair = await issueServingCert(ca, ['localhost']);
  const certDir = join(tmp, 'certs');
  await (await import('node:fs/promises')).mkdir(certDir);
  await writeFile(join(certDir, 'tls.crt'), pair.certPem);
  await writeFile(join(certDir, 'tls.key'), pair.keyPem);
  caFile = join(tmp, 'ca.crt');
  await writeFile(caFile, ca.certPem);
  otherCaFile = join(tmp, 'other-ca.crt');
  await writeFile(otherCaFile, cluster.authority.caPem);
  [endpoint, noRoleEndpoint, certEndpoint] = await Promise.all([
    startManager(manager),
    startManager(noRole),
    startManager(manager, { certDir }),
  ]);
  reconcileTotal.labels('scrapetest', 'success').inc(5);
});

after(async () => {
  await procs.stopAll();
  await Promise.all([endpoint?.stop(), noRoleEndpoint?.stop(), certEndpoint?.stop()]);
  await cluster?.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

const url = (e: RunningManager, host = '127.0.0.1') => `https://${host}:${e.port}/metrics`;

describe('ctrlmetrics scrape', () => {
  test('200: prints the exposition, filtered by --match (token from a file)', async () => {
    const r = await scrape([
      url(endpoint),
      '--token-file',
      readerTokenFile,
      '--insecure',
      '--match',
      '^controller_runtime_reconcile_total$',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.ok(lines.length >= 3, r.stdout);
    for (const l of lines)
      assert.match(l, /^(# (HELP|TYPE) controller_runtime_reconcile_total |controller_runtime_reconcile_total\{)/);
    assert.ok(
      lines.includes('controller_runtime_reconcile_total{controller="scrapetest",result="success"} 5'),
      r.stdout,
    );
  });

  test('401 without a token and with an invalid one, 403 naming the grant command, 500 naming the metrics-auth-role', async () => {
    const [none, invalid, denied, broken] = await Promise.all([
      scrape([url(endpoint), '--insecure']),
      scrape([url(endpoint), '--insecure', '--token', 'not-a-valid-token']),
      scrape([url(endpoint), '--insecure', '--token', unboundToken]),
      scrape([url(noRoleEndpoint), '--insecure', '--token-file', readerTokenFile], 90_000),
    ]);
    assert.equal(none.code, 1);
    assert.equal(none.stdout, '');
    assert.match(
      none.stderr,
      /^error: no or invalid token: no token was sent; pass --token TOKEN or --token-file FILE/,
    );
    assert.equal(invalid.code, 1);
    assert.match(invalid.stderr, /^error: no or invalid token: the API server did not accept the token from --token/);
    assert.equal(denied.code, 1);
    assert.match(
      denied.stderr,
      /error: identity system:serviceaccount:monitoring:unbound is not bound to the metrics-reader ClusterRole \(get on \/metrics\): run ctrlmetrics grant --serviceaccount monitoring:unbound\. Just granted\? The manager keeps a denial for the same token for up to 30 s \(as controller-runtime\); a new token is allowed at once\n$/,
    );
    assert.equal(broken.code, 1);
    assert.match(broken.stderr, /retrying in .*\(attempt 2\/4\)/, 'a 500 is retried with backoff');
    assert.match(
      broken.stderr,
      /error: the manager could not ask the API server .*check that its service account is bound to the metrics-auth-role/,
    );
    for (const r of [none, invalid, denied, broken])
      assert.doesNotMatch(r.stderr, /eyJ[A-Za-z0-9_-]{10,}/, 'no token in the output');
  });

  test('TLS: an unverified certificate hints at --cacert/--insecure; the right --cacert verifies, a wrong host name is explained', async () => {
    const [selfSigned, wrongCa, good, wrongName] = await Promise.all([
      scrape([url(endpoint), '--token-file', readerTokenFile]),
      scrape([url(certEndpoint, 'localhost'), '--token-file', readerTokenFile, '--cacert', otherCaFile]),
      scrape([
        url(certEndpoint, 'localhost'),
        '--token-file',
        readerTokenFile,
        '--cacert',
        caFile,
        '--match',
        '^controller_runtime_reconcile_total$',
      ]),
      scrape([url(certEndpoint, '127.0.0.1'), '--token-file', readerTokenFile, '--cacert', caFile]),
    ]);
    assert.equal(selfSigned.code, 1);
    assert.match(
      selfSigned.stderr,
      /^error: TLS: the server's certificate is not signed by a CA this machine trusts .*pass --cacert FILE .* or --insecure/,
    );
    assert.equal(wrongCa.code, 1);
    assert.match(
      wrongCa.stderr,
      new RegExp(`is not signed by the CA in --cacert ${otherCaFile.replace(/[.]/g, '\\.')}`),
    );
    assert.equal(good.code, 0, good.stderr);
    assert.match(good.stdout, /^controller_runtime_reconcile_total\{controller="scrapetest",result="success"\} 5$/m);
    assert.equal(wrongName.code, 1);
    assert.match(wrongName.stderr, /TLS: the server's certificate does not name 127\.0\.0\.1/);
  });

  test('connection refused: bounded retries, then what to check', async () => {
    const r = await scrape(['https://127.0.0.1:1/metrics', '--insecure', '--request-timeout', '2s']);
    assert.equal(r.code, 1);
    assert.equal((r.stderr.match(/retrying in/g) ?? []).length, 3);
    assert.match(r.stderr, /error: cannot connect to 127\.0\.0\.1:1 \(ECONNREFUSED.*is the manager running/);
  });

  test('wrong scheme, port or path: each says which URL to use, without retrying', async () => {
    // a TLS server with no plain-HTTP answer: OpenSSL's error closes the connection
    const tlsPair = await generateSelfSignedCertificate();
    const closer = createTlsServer({ cert: tlsPair.certPem, key: tlsPair.keyPem }, (sock) => sock.end());
    await new Promise<void>((r) => closer.listen(0, '127.0.0.1', r));
    const closingTlsPort = (closer.address() as AddressInfo).port;
    const [plainToTls, healthPort, wrongPath, closing] = await Promise.all([
      scrape([`http://127.0.0.1:${endpoint.port}/metrics`, '--token-file', readerTokenFile]),
      scrape([`http://127.0.0.1:${endpoint.healthPort}/metrics`, '--token-file', readerTokenFile]),
      scrape([`https://127.0.0.1:${endpoint.port}/metricz`, '--token-file', readerTokenFile, '--insecure']),
      // a TLS server that closes plain HTTP without answering
      scrape([`http://127.0.0.1:${closingTlsPort}/metrics`]),
    ]);
    for (const r of [plainToTls, healthPort, wrongPath, closing]) {
      assert.equal(r.code, 1, r.stderr);
      assert.doesNotMatch(r.stderr, /retrying/);
    }
    assert.equal(
      plainToTls.stderr,
      `error: 127.0.0.1:${endpoint.port} serves HTTPS (the metrics endpoint's default, --metrics-secure=true): use https://127.0.0.1:${endpoint.port}/metrics\n`,
    );
    assert.match(
      healthPort.stderr,
      new RegExp(
        `^error: nothing is served at /metrics on 127\\.0\\.0\\.1:${endpoint.healthPort}: is this the metrics port\\? The health probe port .* serves only /healthz and /readyz; metrics are on --metrics-bind-address`,
      ),
    );
    assert.equal(
      wrongPath.stderr,
      `error: the endpoint answered 404 Not Found for /metricz: the metrics path is /metrics (https://127.0.0.1:${endpoint.port}/metrics)\n`,
    );
    assert.match(
      closing.stderr,
      new RegExp(
        `^error: 127\\.0\\.0\\.1:${closingTlsPort} closed the connection without answering .*use https://127\\.0\\.0\\.1:${closingTlsPort}/metrics`,
      ),
    );
    closer.close();
  });

  test('after grant, the token already denied stays denied (cached) and a new token is allowed at once, as the note says', async () => {
    const before = await cluster.serviceAccountToken('monitoring', 'late-grant');
    const denied = await scrape([url(endpoint), '--insecure', '--token', before]);
    assert.equal(denied.code, 1);
    assert.match(denied.stderr, /is not bound to the metrics-reader ClusterRole/);
    const grant = await runCli(
      [
        'grant',
        '--serviceaccount',
        'monitoring:late-grant',
        '--clusterrole',
        'metrics-reader',
        '--kubeconfig',
        cluster.authority.kubeconfig,
      ],
      { timeoutMs: 30_000 },
    );
    assert.equal(grant.code, 0, grant.stderr);
    assert.match(
      grant.stderr,
      /keeps answering 403 to that token for up to 30 s .*a new token is allowed at once: ctrlmetrics token -n monitoring late-grant/,
    );
    const [stillDenied, fresh] = await Promise.all([
      scrape([url(endpoint), '--insecure', '--token', before]),
      cluster
        .serviceAccountToken('monitoring', 'late-grant')
        .then((t) =>
          scrape([url(endpoint), '--insecure', '--token', t, '--match', '^controller_runtime_reconcile_total$']),
        ),
    ]);
    assert.equal(stillDenied.code, 1, 'the cached denial holds');
    assert.equal(fresh.code, 0, fresh.stderr);
  });

  test("500 from a failing collector names the metric and is told apart from the filter's 500", async () => {
    // registered in prom-client's default registry, which the manager serves
    new promClient.Gauge({
      name: 'app_broken_depth',
      help: 'A gauge whose collect() throws.',
      collect() {
        throw new Error('queue backend unreachable');
      },
    });
    try {
      const r = await scrape([url(endpoint), '--insecure', '--token-file', readerTokenFile], 60_000);
      assert.equal(r.code, 1);
      assert.match(
        r.stderr,
        /error: a metrics collector in the manager failed while gathering \(authentication and authorization passed\): collecting prom-client's default registry: metric app_broken_depth: queue backend unreachable; fix or unregister the collector it names/,
      );
      assert.doesNotMatch(r.stderr, /metrics-auth-role|TokenReview/);
    } finally {
      promClient.register.removeSingleMetric('app_broken_depth');
    }
  });

  test('token mistakes say what the file or flag holds and what a token looks like (usage errors: exit 1 and the help hint, as kubectl)', async () => {
    const bearerFile = join(tmp, 'bearer.token');
    await writeFile(bearerFile, `Bearer ${await cluster.readerToken()}\n`, { mode: 0o600 });
    const [kubeconfig, bearer, bearerFlag, spaced] = await Promise.all([
      scrape([url(endpoint), '--insecure', '--token-file', cluster.authority.kubeconfig]),
      scrape([url(endpoint), '--insecure', '--token-file', bearerFile]),
      scrape([url(endpoint), '--insecure', '--token', 'Bearer abc.def.ghi']),
      scrape([url(endpoint), '--insecure', '--token', 'abc def']),
    ]);
    const hint =
      'a token is one line of base64url characters, e.g. the output of ctrlmetrics token -n NAMESPACE SERVICEACCOUNT';
    const see = "See 'ctrlmetrics scrape --help' for usage.\n";
    assert.equal(kubeconfig.code, 1);
    assert.equal(
      kubeconfig.stderr,
      `error: token file ${cluster.authority.kubeconfig} holds a kubeconfig, not a token: ${hint}\n${see}`,
    );
    assert.equal(bearer.code, 1);
    assert.equal(
      bearer.stderr,
      `error: token file ${bearerFile} starts with "Bearer ": give the token alone, without the scheme (${hint})\n${see}`,
    );
    assert.equal(bearerFlag.code, 1);
    assert.match(bearerFlag.stderr, /^error: --token starts with "Bearer ": give the token alone/);
    assert.equal(spaced.code, 1);
    assert.match(spaced.stderr, /^error: --token holds spaces or characters a bearer token cannot have/);
    for (const r of [kubeconfig, bearer, bearerFlag, spaced])
      assert.doesNotMatch(r.stderr, /eyJ[A-Za-z0-9_-]{10,}|Invalid character/);
  });

  test("usage errors exit 1 with kubectl's help hint", async () => {
    const [both, bad] = await Promise.all([
      scrape([url(endpoint), '--insecure', '--cacert', caFile]),
      scrape([url(endpoint), '--count', '0']),
    ]);
    assert.equal(both.code, 1);
    assert.match(
      both.stderr,
      /either --insecure or --cacert, not both\nSee 'ctrlmetrics scrape --help' for usage\.\n$/,
    );
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /--count must be a positive integer.*\nSee 'ctrlmetrics scrape --help' for usage\.\n$/);
  });

  test('--watch, not on a terminal: a line per controller per scrape with reconciles/s, error ratio, p50/p90 from histogram deltas, and depth', async () => {
    // a steady load on controller "watchtest": each reconcile takes 20 ms, one in four fails, the queue holds 7 items
    const observed = 0.02;
    workqueueDepth.labels('watchtest', 'watchtest', '').set(7);
    let n = 0;
    const load = setInterval(() => {
      reconcileTotal.labels('watchtest', n++ % 4 === 0 ? 'error' : 'success').inc();
      if ((n - 1) % 4 === 0) reconcileErrors.labels('watchtest').inc();
      reconcileTime.labels('watchtest').observe(observed);
    }, 10);
    try {
      const p = procs.startCli(
        'watch',
        [
          'scrape',
          url(endpoint),
          '--token-file',
          readerTokenFile,
          '--insecure',
          '--watch',
          '--interval',
          '1s',
          '--count',
          '3',
        ],
        {
          CTRLMETRICS_LOG_LEVEL: 'warn',
        },
      );
      const code = await within(p.exited, 60_000, 'scrape --watch --count 3');
      assert.equal(code, 0, p.stderr());
      // eslint-disable-next-line no-control-regex -- the escape character is what the test looks for
      assert.doesNotMatch(p.stdout(), /\x1b\[/, 'no terminal control sequences in a pipe');
      const lines = p
        .stdout()
        .trim()
        .split('\n')
        .filter((l) => / watchtest /.test(l));
      assert.equal(lines.length, 3, p.stdout());
      const fields = (line: string) =>
        Object.fromEntries(
          line
            .split(' ')
            .slice(2)
            .map((kv) => kv.split('=') as [string, string]),
        );
      assert.match(lines[0], /^\d\d:\d\d:\d\dZ watchtest reconciles\/s=- errors=- p50=- p90=- depth=7 total=\d+$/);
      const last = fields(lines[2]);
      assert.ok(Number(last['reconciles/s']) > 5, `reconciles/s ${last['reconciles/s']}`);
      const ratio = Number(last.errors.replace('%', ''));
      assert.ok(ratio > 15 && ratio < 35, `error ratio ${last.errors} (one in four fails)`);
      assert.equal(last.depth, '7');
      // every observation is 20 ms: both quantiles lie in the bucket that holds 0.02 s
      const upper = RECONCILE_TIME_BUCKETS.find((b) => b >= observed)!;
      const lower = [...RECONCILE_TIME_BUCKETS].reverse().find((b) => b < observed) ?? 0;
      for (const cell of [last.p50, last.p90]) {
        const m = /^([\d.]+)(µs|ms|s)$/.exec(cell);
        assert.ok(m, `latency cell ${cell}`);
        const seconds = Number(m[1]) / (m[2] === 'ms' ? 1000 : m[2] === 'µs' ? 1e6 : 1);
        assert.ok(seconds > lower && seconds <= upper + 1e-9, `${cell} outside (${lower}, ${upper}]`);
      }
    } finally {
      clearInterval(load);
    }
  });

  test('--watch exits cleanly on SIGINT', async () => {
    const p = procs.startCli(
      'watch-sigint',
      ['scrape', url(endpoint), '--token-file', readerTokenFile, '--insecure', '--watch', '--interval', '1s'],
      { CTRLMETRICS_LOG_LEVEL: 'warn' },
    );
    await p.waitForOutput(/\d\dZ /, 30_000);
    process.kill(p.pid, 'SIGINT');
    const code = await within(p.exited, 15_000, 'scrape --watch after SIGINT');
    assert.equal(code, 0, p.stderr());
  });
});
