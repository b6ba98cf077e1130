/**
 * `/metrics` behind `filters.withAuthenticationAndAuthorization`, over real HTTPS on 127.0.0.1, against the
 * embedded authority (TokenReview, SubjectAccessReview, RBAC): 200 / 401 / 403 / 404 / 500, merged look-ups,
 * exposition formats, gzip, extra handlers behind the filter, `curl -k` with a bearer token, fail-closed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import http2 from 'node:http2';
import { gunzipSync } from 'node:zlib';
import { Counter as PromCounter } from 'prom-client';
import { KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';
import type { RestConfig } from '../../packages/ctrlmetrics/src/kube/config.js';
import { filters } from '../../packages/ctrlmetrics/src/metrics/filters/index.js';
import { Registry } from '../../packages/ctrlmetrics/src/metrics/index.js';
import { createMetricsServer, type MetricsServer } from '../../packages/ctrlmetrics/src/metrics/server/index.js';
import { setLogLevel, setLogSink } from '../../packages/ctrlmetrics/src/util/log.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { bearer, request } from './helpers.js';
import { h2Get } from '../helpers/secure-endpoint.js';
import { FaultProxy } from '../helpers/fault-proxy.js';
import { decodeProtobufWithGo } from '../helpers/client-golang.js';

const logs: string[] = [];
setLogSink((line) => logs.push(line));
setLogLevel('debug');

let cluster: TestCluster;
let managerConfig: RestConfig;
let managerClient: KubeClient;
/** POSTs through the manager's own client: the filter must make none (it has its own client). */
const managerPosts: string[] = [];
/** A pass-through proxy in front of the authority for the server's API configuration: it counts the filter's calls. */
let proxy: FaultProxy;
const apiCalls = () => proxy.count('/apis/');
let server: MetricsServer;
let readerToken: string;
let strangerToken: string;
let adminToken: string;
const secrets: string[] = [];
const cleanups: Array<() => Promise<void> | void> = [];

before(async () => {
  cluster = await startTestCluster();
  cleanups.push(() => cluster.stop());
  managerConfig = await cluster.managerConfig();
  readerToken = await cluster.readerToken();
  strangerToken = await cluster.serviceAccountToken('monitoring', 'stranger');
  adminToken = cluster.authority.adminToken;
  secrets.push(readerToken, strangerToken, adminToken, managerConfig.token!);
  proxy = new FaultProxy(cluster.authority.url, cluster.authority.caPem);
  await proxy.start();
  cleanups.push(() => proxy.stop());
  managerConfig = { ...managerConfig, server: proxy.url, ca: proxy.caPem };
  managerClient = new KubeClient(managerConfig);
  managerClient.observer = (code, method) => {
    if (method === 'POST') managerPosts.push(code);
  };
  cleanups.push(() => managerClient.close());
  server = createMetricsServer(
    {
      bindAddress: '127.0.0.1:0',
      filterProvider: filters.authenticationAndAuthorization({ timeoutMs: 1_500 }),
      extraHandlers: { '/debug/': (req, res) => res.end(`debug ${req.url}`) },
      shutdownTimeoutMs: 2_000,
    },
    { restConfig: managerConfig, kubeClient: managerClient },
  );
  await server.start();
  cleanups.push(() => server.stop());
});

after(async () => {
  for (const c of cleanups.reverse()) await c();
});

const metricsUrl = () => `${server.url}/metrics`;

describe('authentication and authorization', () => {
  test('200 with the reader token; the body passes promtool', async () => {
    const r = await request(metricsUrl(), { headers: bearer(readerToken) });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8; escaping=underscores');
    const check = spawnSync('promtool', ['check', 'metrics'], { input: r.text, encoding: 'utf8', timeout: 10_000 });
    assert.equal(check.error, undefined, 'promtool runs');
    // exit 0 = clean, 3 = lint remarks only (naming advice); 1 = the exposition could not be parsed
    assert.ok(check.status === 0 || check.status === 3, `promtool: ${check.stdout}${check.stderr}`);
    assert.doesNotMatch(check.stdout + check.stderr, /error while linting/);
    assert.match(r.text, /^# TYPE certwatcher_read_certificate_total counter$/m);
  });

  test('401 Unauthorized without a usable bearer token', async () => {
    const cases: Array<Record<string, string>> = [
      {},
      { Authorization: 'Basic YWRtaW46YWRtaW4=' },
      { Authorization: 'Bearer' },
      { Authorization: 'Bearer ' },
      { Authorization: 'Bearer a b' },
    ];
    for (const headers of cases) {
      const r = await request(metricsUrl(), { headers });
      assert.equal(r.status, 401, JSON.stringify(headers));
      assert.equal(r.text, 'Unauthorized\n');
      assert.equal(r.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(r.headers['www-authenticate'], 'Bearer', 'RFC 6750: the endpoint asks for a bearer token');
    }
  });

  test('401 for a token the API does not authenticate, and the negative answer is cached', async () => {
    const calls = apiCalls();
    const bad = 'not-a-real-token-' + Date.now();
    for (let i = 0; i < 3; i++) {
      const r = await request(metricsUrl(), { headers: bearer(bad) });
      assert.equal(r.status, 401);
      assert.equal(r.text, 'Unauthorized\n');
      assert.equal(
        r.headers['www-authenticate'],
        'Bearer error="invalid_token"',
        'RFC 6750: the token sent was not accepted',
      );
    }
    assert.equal(apiCalls() - calls, 1, 'one TokenReview for three requests with the same bad token');
  });

  test("token TTLs are controller-runtime's: a rejected token (the API sets status.error) is cached 1 min, an accepted one 1 min", async () => {
    let now = 1_000_000;
    const clock = { now: () => now };
    const own = new FaultProxy(cluster.authority.url, cluster.authority.caPem);
    await own.start();
    const ep = createMetricsServer(
      {
        bindAddress: '127.0.0.1:0',
        filterProvider: filters.authenticationAndAuthorization({ cacheClock: clock }),
        shutdownTimeoutMs: 2_000,
      },
      { restConfig: { ...managerConfig, server: own.url, ca: own.caPem } },
    );
    await ep.start();
    try {
      const reviews = () => own.count('/apis/authentication.k8s.io/');
      const bad = 'not-a-real-token-ttl-' + Date.now();
      const get = async (token: string) => (await request(`${ep.url}/metrics`, { headers: bearer(token) })).status;
      assert.equal(await get(bad), 401);
      assert.equal(await get(readerToken), 200);
      assert.equal(reviews(), 2);
      now += 59_999;
      assert.equal(await get(bad), 401);
      assert.equal(await get(readerToken), 200);
      assert.equal(
        reviews(),
        2,
        'both answers still cached just before 1 min (the API answered the bad token with status.error)',
      );
      now += 2;
      assert.equal(await get(bad), 401);
      assert.equal(await get(readerToken), 200);
      assert.equal(reviews(), 4, 'both reviewed again after 1 min');
    } finally {
      await ep.stop();
      await own.stop();
    }
  });

  test('403 for an authenticated service account without the reader role, naming user, verb and path', async () => {
    const r = await request(metricsUrl(), { headers: bearer(strangerToken) });
    assert.equal(r.status, 403);
    assert.equal(
      r.text,
      'Authorization denied for user system:serviceaccount:monitoring:stranger (verb "get" on path "/metrics")\n',
    );
  });

  test('the verb is the lower-cased HTTP method: HEAD needs "head", which the reader role does not grant', async () => {
    const r = await request(metricsUrl(), { method: 'HEAD', headers: bearer(readerToken) });
    assert.equal(r.status, 403);
    const admin = await request(metricsUrl(), { method: 'HEAD', headers: bearer(adminToken) });
    assert.equal(admin.status, 200);
    assert.equal(admin.body.length, 0);
  });

  test('unknown paths answer 404 before any API call', async () => {
    const calls = apiCalls();
    const r = await request(`${server.url}/not-here`, { headers: bearer('never-reviewed-' + Date.now()) });
    assert.equal(r.status, 404);
    assert.equal(apiCalls(), calls);
  });

  test('concurrent scrapes with one new token make one TokenReview and one SubjectAccessReview', async () => {
    const token = await cluster.readerToken('monitoring', 'grafana');
    secrets.push(token);
    const reviews = () => [proxy.count('/tokenreviews'), proxy.count('/subjectaccessreviews')];
    const [tr, sar] = reviews();
    const replies = await Promise.all(
      Array.from({ length: 20 }, () => request(metricsUrl(), { headers: bearer(token) })),
    );
    assert.deepEqual(
      replies.map((r) => r.status),
      Array(20).fill(200),
    );
    assert.deepEqual(reviews(), [tr + 1, sar + 1]);
    await request(metricsUrl(), { headers: bearer(token) });
    assert.deepEqual(reviews(), [tr + 1, sar + 1], 'a later scrape is answered from the caches');
    assert.deepEqual(managerPosts, [], "the filter never reviews through the manager's client");
  });

  test('extra handlers are behind the same filter', async () => {
    assert.equal((await request(`${server.url}/debug/vars`)).status, 401);
    const reader = await request(`${server.url}/debug/vars`, { headers: bearer(readerToken) });
    assert.equal(reader.status, 403);
    assert.match(reader.text, /verb "get" on path "\/debug\/vars"/);
    const admin = await request(`${server.url}/debug/vars?x=1`, { headers: bearer(adminToken) });
    assert.equal(admin.status, 200);
    assert.equal(admin.text, 'debug /debug/vars?x=1');
  });

  test('curl -sk with a bearer token', async () => {
    const curl = (cmd: string) =>
      new Promise<string>((resolve, reject) =>
        execFile(
          'sh',
          ['-c', cmd],
          { env: { ...process.env, TOKEN: readerToken, PORT: String(server.port) }, timeout: 15_000 },
          (err, stdout) => (err ? reject(err) : resolve(stdout)),
        ),
      );
    const body = await curl('curl -sk -H "Authorization: Bearer $TOKEN" https://127.0.0.1:$PORT/metrics');
    assert.match(body, /^# TYPE certwatcher_read_certificate_errors_total counter$/m);
    assert.equal(await curl('curl -sk -o /dev/null -w "%{http_code}" https://127.0.0.1:$PORT/metrics'), '401');
    assert.equal(
      await curl(
        'curl -sk --compressed -o /dev/null -w "%{http_code} %{http_version}" -H "Authorization: Bearer $TOKEN" https://127.0.0.1:$PORT/metrics',
      ),
      '200 1.1',
    );
  });
});

describe('HTTP/2', () => {
  test('the filter guards h2 requests the same way', async () => {
    const s = createMetricsServer(
      { bindAddress: '127.0.0.1:0', enableHTTP2: true, filterProvider: filters.withAuthenticationAndAuthorization },
      { restConfig: managerConfig },
    );
    await s.start();
    const session = http2.connect(s.url, { rejectUnauthorized: false });
    const get = (headers: Record<string, string>) => h2Get(session, '/metrics', headers);
    try {
      assert.equal((await get({})).status, 401);
      assert.equal((await get({ authorization: `Bearer ${strangerToken}` })).status, 403);
      const ok = await get({ authorization: `Bearer ${readerToken}` });
      assert.equal(ok.status, 200);
      assert.match(ok.body, /^# TYPE certwatcher_read_certificate_total counter$/m);
    } finally {
      session.close();
      await s.stop();
    }
  });
});

describe('exposition', () => {
  const widgets = new PromCounter({ name: 'auth_test_widgets_total', help: 'Widgets made in the auth test.' });
  widgets.inc(3);

  test('a prom-client counter appears with no wiring, in text and in OpenMetrics, without being renamed', async () => {
    const text1 = await request(metricsUrl(), { headers: bearer(readerToken) });
    assert.match(text1.text, /^auth_test_widgets_total 3$/m);
    const om = await request(metricsUrl(), {
      headers: {
        ...bearer(readerToken),
        Accept: 'application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5',
      },
    });
    assert.equal(om.status, 200);
    assert.match(String(om.headers['content-type']), /^application\/openmetrics-text; version=1\.0\.0/);
    assert.match(om.text, /^# TYPE auth_test_widgets counter$/m);
    assert.match(om.text, /^auth_test_widgets_total 3$/m);
    assert.ok(om.text.endsWith('# EOF\n'), 'OpenMetrics ends with # EOF');
    // the body depends on Accept (format) and Accept-Encoding (gzip): a cache must key on both
    assert.equal(om.headers['vary'], 'Accept, Accept-Encoding');
    const text2 = await request(metricsUrl(), { headers: bearer(readerToken) });
    assert.match(text2.text, /^# TYPE auth_test_widgets_total counter$/m);
    assert.match(text2.text, /^auth_test_widgets_total 3$/m);
  });

  test("protobuf for Prometheus with native histograms on, gzipped, read back by client_golang's decoder", async () => {
    // Prometheus 2.42's Accept header with --enable-feature=native-histograms (read from its binary)
    const accept =
      'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited,application/openmetrics-text;version=1.0.0;q=0.8,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';
    const pb = await request(metricsUrl(), {
      headers: { ...bearer(readerToken), Accept: accept, 'Accept-Encoding': 'gzip' },
    });
    assert.equal(pb.status, 200);
    assert.equal(
      pb.headers['content-type'],
      'application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited; escaping=underscores',
    );
    assert.equal(pb.headers['content-encoding'], 'gzip');
    const text = await decodeProtobufWithGo(gunzipSync(pb.body));
    assert.match(text, /^# TYPE auth_test_widgets_total counter$/m);
    assert.match(text, /^auth_test_widgets_total 3$/m);
  });

  test('gzip when Accept-Encoding allows it, identity otherwise', async () => {
    const gz = await request(metricsUrl(), { headers: { ...bearer(readerToken), 'Accept-Encoding': 'gzip' } });
    assert.equal(gz.status, 200);
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.equal(gz.body[0], 0x1f);
    assert.equal(gz.body[1], 0x8b);
    assert.match(gz.text, /^auth_test_widgets_total 3$/m);
    const refused = await request(metricsUrl(), {
      headers: { ...bearer(readerToken), 'Accept-Encoding': 'gzip;q=0, identity' },
    });
    assert.equal(refused.headers['content-encoding'], undefined);
    assert.match(refused.text, /^auth_test_widgets_total 3$/m);
  });

  test('a collector that throws gives 500 with the error text and no partial body', async () => {
    const failing = new Registry();
    failing.register({
      familyNames: () => ['broken_metric'],
      collect: () => {
        throw new Error('the broken collector failed');
      },
    });
    const s = createMetricsServer({ bindAddress: '127.0.0.1:0', secureServing: false }, { registry: failing });
    await s.start();
    try {
      const r = await request(`${s.url}/metrics`, { headers: { 'Accept-Encoding': 'gzip' } });
      assert.equal(r.status, 500);
      assert.equal(r.headers['content-encoding'], undefined);
      assert.match(r.text, /^An error has occurred while serving metrics:\n\n.*the broken collector failed/s);
      assert.doesNotMatch(r.text, /# TYPE/);
    } finally {
      await s.stop();
    }
  });
});

describe('the manager lacks the metrics-auth-role', () => {
  test('500 Authentication failed, with the RBAC hint in the log', async () => {
    const token = await cluster.serviceAccountToken('ctrlmetrics-system', 'unprivileged-manager');
    secrets.push(token);
    const s = createMetricsServer(
      { bindAddress: '127.0.0.1:0', filterProvider: filters.authenticationAndAuthorization({ timeoutMs: 1_500 }) },
      { restConfig: { ...managerConfig, token } },
    );
    await s.start();
    try {
      const before = logs.length;
      const r = await request(`${s.url}/metrics`, { headers: bearer(readerToken) });
      assert.equal(r.status, 500);
      assert.equal(r.text, 'Authentication failed\n');
      assert.ok(
        logs.slice(before).some((l) => l.includes('metrics-auth-role')),
        'the log names the missing role',
      );
    } finally {
      await s.stop();
    }
  });
});

describe('the API is down: fail closed', () => {
  test('503 with Retry-After for a token not yet reviewed and for an authorization not yet decided, never 200 without a decision', async () => {
    const fresh = await cluster.serviceAccountToken('monitoring', 'late-comer');
    secrets.push(fresh);
    await cluster.authority.stop();
    const r = await request(metricsUrl(), { headers: bearer(fresh) });
    assert.equal(r.status, 503);
    assert.equal(r.text, 'The Kubernetes API server cannot be reached to review the request: retry in 5 s\n');
    assert.equal(r.headers['retry-after'], '5');
    // admin is authenticated (cached) but was never authorized for this path
    const z = await request(`${server.url}/debug/never-asked`, { headers: bearer(adminToken) });
    assert.equal(z.status, 503);
    assert.equal(z.headers['retry-after'], '5');
  });
});

describe('logs', () => {
  test('never contain a bearer token', () => {
    assert.ok(logs.length > 0);
    const all = logs.join('\n');
    for (const s of secrets) assert.ok(!all.includes(s), 'a token appeared in the logs');
  });
});
