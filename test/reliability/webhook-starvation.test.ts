/**
 * Admission and reconciles share one event loop; neither may starve the other. A manager in its own process on the
 * embedded authority: leader election on (lease 15 s, renew deadline 10 s, retry 2 s), a controller whose every
 * reconcile keeps the loop busy for 150 ms (a manager busy reconciling), the example's Memcached webhooks; while:
 *
 * - a load process sends admission requests over 300 keep-alive connections for 30 s (bounded in count too);
 * - the test patches a watched ConfigMap every 250 ms and polls the Lease.
 *
 * Every admission request is answered (allowed, its uid echoed) within the caller's 10 s timeout; reconciles keep
 * coming during the load; the Lease keeps its holder and is renewed well inside the renew deadline.
 * Figures are printed as diagnostics.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { generateCA, issueServingCert, type CertKeyPair } from '../helpers/certs.js';
import { ProcessGroup, ROOT, sleep, within, type Proc } from '../helpers/process.js';

const NS = 'starvation';
const LOAD_MS = 30_000;
const CONNECTIONS = 300;
const LEASE = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/starvation-lock`;

const procs = new ProcessGroup();
let cluster: TestCluster;
let dir: string;
let ca: CertKeyPair;
let manager: Proc;
let webhookPort = 0;

before(async () => {
  cluster = await startTestCluster();
  await cluster.admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  dir = await mkdtemp(join(tmpdir(), 'webhook-starvation-'));
  ca = await generateCA('starvation-ca');
  const pair = await issueServingCert(ca, ['127.0.0.1']);
  await writeFile(join(dir, 'tls.crt'), pair.certPem);
  await writeFile(join(dir, 'tls.key'), pair.keyPem);
  manager = procs.start(
    'manager',
    process.execPath,
    ['--conditions=ctrlmetrics-source', '--import', 'tsx', `${ROOT}test/reliability/fixtures/manager-process.ts`],
    {
      env: {
        ...process.env,
        CTRLMETRICS_LOG_LEVEL: 'error',
        FIXTURE_CONFIG: JSON.stringify({
          restConfig: cluster.authority.restConfig,
          leaderElection: {
            id: 'starvation-lock',
            namespace: NS,
            leaseDurationMs: 15_000,
            renewDeadlineMs: 10_000,
            retryPeriodMs: 2_000,
          },
          reconcile: { namespace: NS, labelSelector: 'load=on', busyMs: 150 },
          webhook: { certDir: dir },
        }),
      },
    },
  );
  webhookPort = Number((await manager.waitForOutput(/^WEBHOOK (\d+)$/m, 60_000))[1]);
  await manager.waitForOutput(/^READY \d+$/m, 60_000);
});

after(async () => {
  await procs.stopAll();
  await cluster?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test(
  `${CONNECTIONS} connections of admission requests for ${LOAD_MS / 1000} s: every one answered in time, reconciles go on, the Lease is renewed`,
  { timeout: 180_000 },
  async (t) => {
    const cms = `/api/v1/namespaces/${NS}/configmaps`;
    await cluster.admin.create(cms, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'ticker', namespace: NS, labels: { load: 'on' } },
      data: { n: '0' },
    });
    const holder = (await cluster.admin.get<{ spec: { holderIdentity: string } }>(LEASE)).spec.holderIdentity;

    const reconcilesBefore = (manager.stdout().match(/^RECONCILE /gm) ?? []).length;
    const load = procs.start(
      'admission-load',
      process.execPath,
      ['--conditions=ctrlmetrics-source', '--import', 'tsx', `${ROOT}test/reliability/fixtures/admission-load.ts`],
      {
        env: {
          ...process.env,
          LOAD_CONFIG: JSON.stringify({
            url: `https://127.0.0.1:${webhookPort}/validate-cache-example-com-v1alpha1-memcached`,
            ca: ca.certPem,
            connections: CONNECTIONS,
            durationMs: LOAD_MS,
            maxRequests: 2_000_000,
          }),
        },
      },
    );

    // while the load runs: a change to reconcile every 250 ms, and the Lease polled
    const started = Date.now();
    let patches = 0;
    const renewals: number[] = [];
    const holders = new Set<string>();
    let lastRenew = '';
    while (load.running() && Date.now() - started < LOAD_MS + 60_000) {
      await cluster.admin.mergePatch(`${cms}/ticker`, { data: { n: String(++patches) } });
      const lease = await cluster.admin.get<{ spec: { holderIdentity: string; renewTime: string } }>(LEASE);
      holders.add(lease.spec.holderIdentity);
      if (lease.spec.renewTime !== lastRenew) {
        lastRenew = lease.spec.renewTime;
        renewals.push(Date.parse(lease.spec.renewTime));
      }
      await sleep(250);
    }
    const code = await within(load.exited, 30_000, 'the load process to finish');
    assert.equal(code, 0, load.stderr());
    const result = JSON.parse(load.stdout().trim().split('\n').at(-1)!) as {
      sent: number;
      outcomes: Record<string, number>;
      p50: number;
      p99: number;
      max: number;
    };
    const reconciles = (manager.stdout().match(/^RECONCILE /gm) ?? []).length - reconcilesBefore;
    const gaps = renewals
      .slice(1)
      .map((r, i) => r - renewals[i])
      .sort((a, b) => a - b);
    t.diagnostic(
      `${result.sent} admission requests: ${JSON.stringify(result.outcomes)}; latency p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms, max ${result.max.toFixed(1)} ms; ` +
        `${reconciles} reconciles for ${patches} patches; lease renewals every ${gaps[Math.floor(gaps.length / 2)] ?? NaN} ms (median), ${gaps.at(-1) ?? NaN} ms at most`,
    );

    assert.ok(result.sent >= 1_000, `only ${result.sent} admission requests were sent`);
    assert.deepEqual(
      Object.keys(result.outcomes),
      ['allowed'],
      `every request allowed, its uid echoed: ${JSON.stringify(result.outcomes)}`,
    );
    assert.ok(
      result.max < 10_000,
      `an admission answer took ${result.max.toFixed(0)} ms (the caller's timeout is 10 s)`,
    );
    assert.ok(patches >= 20, `the test made only ${patches} changes`);
    assert.ok(reconciles >= patches * 0.25, `${reconciles} reconciles for ${patches} changes during the load`);
    assert.deepEqual([...holders], [holder], 'the Lease kept its holder');
    assert.ok(renewals.length >= 5, `only ${renewals.length} renewals seen`);
    assert.ok(
      (gaps.at(-1) ?? Infinity) < 8_000,
      `a renewal came ${gaps.at(-1)} ms after the previous one (retry period 2 s, renew deadline 10 s)`,
    );
    assert.ok(manager.running(), `the manager exited: ${manager.stderr().slice(-2000)}`);
  },
);
