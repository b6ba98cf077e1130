/**
 * The remaining faults:
 * - a collector that throws or hangs: 500 for that scrape within the collect deadline, no partial body, the next
 *   scrape works;
 * - SIGTERM during a scrape: the scrape completes, the manager process exits within its deadline;
 * - revocation: removing a binding takes effect within the allow TTL, restoring it within the deny TTL, deleting
 *   the service account invalidates its tokens within the authentication TTL (short TTLs set through the
 *   filter's options; the defaults are documented in docs/reliability.md).
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Gauge } from 'prom-client';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { startSecureEndpoint, scrape, type SecureEndpoint } from '../helpers/secure-endpoint.js';
import { LogCapture } from '../helpers/log-capture.js';
import { ProcessGroup, ROOT, eventually, sleep, within } from '../helpers/process.js';

const logs = new LogCapture();
const procs = new ProcessGroup();
let cluster: TestCluster;

/** The behaviour of the test collector on its next collection. */
let mode: 'ok' | 'throw' | 'hang' = 'ok';
new Gauge({
  name: 'reliability_test_collector',
  help: 'A collector the test makes throw or hang',
  collect() {
    if (mode === 'throw') throw new Error('collector exploded on purpose');
    if (mode === 'hang') return new Promise<void>(() => undefined);
    this.set(1);
  },
});

before(async () => {
  cluster = await startTestCluster();
});

after(async () => {
  await procs.stopAll();
  await cluster?.stop();
  logs.restore();
  for (const p of procs_seen) logs.addText(p);
  assert.deepEqual(logs.leaks(), [], 'a secret reached a log line');
});
const procs_seen: string[] = [];

describe('collectors that fail', { timeout: 60_000 }, () => {
  let ep: SecureEndpoint;
  before(async () => {
    ep = await startSecureEndpoint({ server: 'https://127.0.0.1:1' }, { metrics: { filterProvider: undefined } });
  });
  after(async () => {
    mode = 'ok';
    await ep?.stop();
  });

  test('a collector that throws: 500 with the error, no partial body; the next scrape works', async () => {
    mode = 'throw';
    const r = await scrape(ep.port);
    assert.equal(r.status, 500);
    assert.match(r.body, /collector exploded on purpose/);
    assert.doesNotMatch(r.body, /# (HELP|TYPE)/, 'a partial exposition was sent');
    mode = 'ok';
    const next = await scrape(ep.port);
    assert.equal(next.status, 200);
    assert.match(next.body, /^reliability_test_collector 1$/m);
  });

  test('a collector that hangs: 500 within the collect deadline (10 s); the next scrape works', async (t) => {
    mode = 'hang';
    const t0 = Date.now();
    const r = await scrape(ep.port, { timeoutMs: 30_000 });
    const ms = Date.now() - t0;
    t.diagnostic(`hanging collector answered with ${r.status} after ${ms} ms`);
    assert.equal(r.status, 500);
    assert.match(r.body, /timed out/);
    assert.ok(ms < 12_000, `took ${ms} ms`);
    mode = 'ok';
    const next = await scrape(ep.port);
    assert.equal(next.status, 200);
    assert.match(next.body, /^reliability_test_collector 1$/m);
  });
});

describe('SIGTERM during a scrape', { timeout: 90_000 }, () => {
  test('the scrape in flight completes with 200; the process exits 0 within the deadline', async (t) => {
    const restConfig = await cluster.managerConfig();
    logs.secret(restConfig.token!);
    const reader = logs.secret(await cluster.readerToken());
    const mgr = procs.start(
      'manager',
      process.execPath,
      ['--conditions=ctrlmetrics-source', '--import', 'tsx', `${ROOT}test/reliability/fixtures/manager-process.ts`],
      {
        env: {
          ...process.env,
          CTRLMETRICS_LOG_LEVEL: 'debug',
          FIXTURE_CONFIG: JSON.stringify({ restConfig, slowCollectorMs: 3000 }),
        },
      },
    );
    try {
      const port = Number((await mgr.waitForOutput(/READY (\d+)/, 60_000))[1]);
      // warm the caches, so the scrape below is in the collector when the signal arrives
      assert.equal((await scrape(port, { token: reader, timeoutMs: 20_000 })).status, 200);
      const t0 = Date.now();
      const inflight = scrape(port, { token: reader, timeoutMs: 20_000 });
      await sleep(1000);
      process.kill(mgr.pid, 'SIGTERM');
      const r = await inflight;
      assert.equal(r.status, 200, `the in-flight scrape got ${r.status}`);
      assert.match(r.body, /^fixture_slow_collector 1$/m, 'the body is complete');
      const code = await within(mgr.exited, 30_000, 'exit after SIGTERM');
      t.diagnostic(
        `scrape completed and process exited ${Date.now() - t0} ms after the scrape started (collector 3000 ms)`,
      );
      assert.equal(code, 0, mgr.stderr().slice(-2000));
      // and nothing listens any more
      await assert.rejects(scrape(port, { token: reader, timeoutMs: 5_000 }));
    } finally {
      await procs.stop(mgr);
      procs_seen.push(mgr.stderr(), mgr.stdout());
    }
  });
});

describe('revocation takes effect within the TTLs', { timeout: 60_000 }, () => {
  const TTL = 2_000;
  let ep: SecureEndpoint;
  before(async () => {
    const restConfig = await cluster.managerConfig();
    ep = await startSecureEndpoint(restConfig, {
      filter: { authnTTLms: TTL, unauthnTTLms: TTL, allowTTLms: TTL, denyTTLms: TTL },
    });
  });
  after(async () => ep?.stop());

  const bindingPath = '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/metrics-reader:monitoring:revoked';

  test('binding deleted → 403 within the allow TTL; restored → 200 within the deny TTL', async (t) => {
    const token = logs.secret(await cluster.readerToken('monitoring', 'revoked'));
    assert.equal((await scrape(ep.port, { token })).status, 200);
    const binding = await cluster.admin.get<Record<string, unknown>>(bindingPath);
    await cluster.admin.delete(bindingPath);
    const t0 = Date.now();
    await eventually(
      async () => (await scrape(ep.port, { token })).status === 403,
      'denied after the binding is deleted',
      TTL + 2_000,
      100,
    );
    const denyAfter = Date.now() - t0;
    const meta = binding.metadata as Record<string, unknown>;
    await cluster.admin.create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      ...binding,
      metadata: { name: meta.name },
    });
    const t1 = Date.now();
    await eventually(
      async () => (await scrape(ep.port, { token })).status === 200,
      'allowed after the binding is back',
      TTL + 2_000,
      100,
    );
    t.diagnostic(`revoked after ${denyAfter} ms, restored after ${Date.now() - t1} ms (TTLs ${TTL} ms)`);
    assert.ok(denyAfter <= TTL + 1_000);
  });

  test('service account deleted → its token gets 401 within the authentication TTL', async (t) => {
    const token = logs.secret(await cluster.readerToken('monitoring', 'deleted-sa'));
    assert.equal((await scrape(ep.port, { token })).status, 200);
    await cluster.admin.delete('/api/v1/namespaces/monitoring/serviceaccounts/deleted-sa');
    const t0 = Date.now();
    await eventually(
      async () => (await scrape(ep.port, { token })).status === 401,
      '401 after the service account is deleted',
      TTL + 2_000,
      100,
    );
    t.diagnostic(`token rejected ${Date.now() - t0} ms after the service account was deleted (TTL ${TTL} ms)`);
  });
});
