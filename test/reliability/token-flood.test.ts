/**
 * A token flood from inside the cluster, against `ctrlmetrics demo` as a user runs it — the example
 * operator with leader election on and its steady reconcile load, on the embedded API — in its own process:
 *
 * - ≥ 300 concurrent keep-alive connections send distinct garbage tokens (random strings and JWTs forged with the
 *   cluster's key id) for FLOOD_SECONDS (≥ 45 s; at least 10 000 tokens);
 * - the lease is never lost (same holder, renewals keep their period, the process keeps running) and no reconcile
 *   fails (controller_runtime_reconcile_errors_total does not move, no "rate limit" in the log);
 * - an authorized scraper opening a new connection every second gets 200 for ≥ 99 % of its scrapes, including
 *   after its cached authentication (1 min) expires in the middle of the flood;
 * - ten valid tokens used for the first time mid-flood each get 200 within 2 tries.
 *
 * Figures (tokens, answers, TokenReviews sent, lease renewal gaps) are printed as diagnostics; docs/reliability.md
 * records a run. `CTRLMETRICS_FLOOD_SECONDS` lengthens the flood.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProcessGroup, sleep, type Proc } from '../helpers/process.js';
import { LogCapture } from '../helpers/log-capture.js';
import { KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';
import { loadRestConfig } from '../../packages/ctrlmetrics/src/kube/config.js';
import { requestToken } from '../../packages/cli/src/cli/demo/apply.js';
import { SCRAPER_SA, SYSTEM_NAMESPACE } from '../../packages/cli/src/cli/demo/rbac.js';

const FLOOD_SECONDS = Math.max(45, Number(process.env.CTRLMETRICS_FLOOD_SECONDS ?? 45));
const CONNECTIONS = 300;
const MIN_TOKENS = 10_000;
/** The filter's default authentication TTL: the scraper's cached decision expires this long after its first review. */
const AUTHN_TTL_MS = 60_000;
const LEASE = `/apis/coordination.k8s.io/v1/namespaces/${SYSTEM_NAMESPACE}/leases/a1b2c3d4.ctrlmetrics.dev`;

const logs = new LogCapture();
const procs = new ProcessGroup();
let stateDir = '';
let demo: Proc;
let port = 0;
let admin: KubeClient;

interface Answer {
  status: number;
  body: string;
  retryAfter?: string;
}

function get(token: string, agent: https.Agent | false, timeoutMs = 20_000): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.get(
      {
        host: '127.0.0.1',
        port,
        path: '/metrics',
        agent,
        headers: { authorization: `Bearer ${token}` },
        rejectUnauthorized: false,
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            retryAfter: res.headers['retry-after'],
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

/** Sums the samples of `name` whose labels match `labels` in an exposition. */
function sum(body: string, name: string, labels: RegExp = /.*/): number {
  let s = 0;
  for (const m of body.matchAll(new RegExp(`^${name}(?:\\{([^}]*)\\})? (\\S+)$`, 'gm')))
    if (labels.test(m[1] ?? '')) s += Number(m[2]);
  return s;
}

const count = (m: Map<string, number>, k: string | number) => m.set(String(k), (m.get(String(k)) ?? 0) + 1);

before(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'ctrlmetrics-flood-'));
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
      '--leader-elect',
      '--load-interval',
      '0.25',
    ],
    { CTRLMETRICS_LOG_LEVEL: 'info' },
  );
  port = Number((await demo.waitForOutput(/metrics: +https:\/\/127\.0\.0\.1:(\d+)\/metrics/, 90_000))[1]);
  admin = new KubeClient(await loadRestConfig({ kubeconfig: join(stateDir, 'kubeconfig') }));
});

after(async () => {
  admin?.close();
  await procs.stopAll();
  logs.restore();
  if (demo) logs.addText(demo.stderr() + demo.stdout());
  assert.deepEqual(logs.leaks().slice(0, 3), [], 'a secret reached a log line');
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

test(
  `${CONNECTIONS} connections of garbage tokens for ${FLOOD_SECONDS} s: the lease holds, reconciles succeed, known and new valid scrapers are served`,
  { timeout: 120_000 + FLOOD_SECONDS * 2_000 },
  async (t) => {
    const reader = logs.secret((await readFile(join(stateDir, 'reader.token'), 'utf8')).trim());
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- the assertion steers the inference of the call around it
    const kid = JSON.parse(Buffer.from(reader.split('.')[0]!, 'base64url').toString('utf8')).kid as string;
    // ten valid tokens (the scraper's service account), never shown to the endpoint before the flood
    const fresh: string[] = [];
    for (let i = 0; i < 10; i++)
      fresh.push(logs.secret((await requestToken(admin, SYSTEM_NAMESPACE, SCRAPER_SA, 3600)).token));

    const metrics = async () => {
      const r = await get(reader, false);
      assert.equal(r.status, 200, `metrics: ${r.status} ${r.body.slice(0, 200)}`);
      return r.body;
    };
    // the scraper's first review: its authentication stays cached for AUTHN_TTL_MS from here
    const firstReview = Date.now();
    const m0 = await metrics();
    assert.equal(sum(m0, 'leader_election_master_status'), 1, 'the demo leads');
    const holder = (await admin.get<{ spec: { holderIdentity: string } }>(LEASE)).spec.holderIdentity;

    // the authorized scraper: a new connection every second, from now until the flood ends
    const scraped: Array<[number, string]> = [];
    let scraping = true;
    const scraperLoop = (async () => {
      while (scraping) {
        const t0 = Date.now();
        try {
          scraped.push([t0, String((await get(reader, false, 10_000)).status)]);
        } catch (err) {
          scraped.push([t0, (err as Error).message]);
        }
        await sleep(Math.max(0, 1_000 - (Date.now() - t0)));
      }
    })();

    // the lease, polled: its renewals must keep coming at about the retry period
    const renewals: number[] = [];
    const holders = new Set<string>();
    let polling = true;
    const leaseLoop = (async () => {
      let last = '';
      while (polling) {
        try {
          const lease = await admin.get<{ spec: { holderIdentity: string; renewTime: string } }>(LEASE, {
            timeoutMs: 5_000,
          });
          holders.add(lease.spec.holderIdentity);
          if (lease.spec.renewTime !== last) {
            last = lease.spec.renewTime;
            renewals.push(Date.parse(lease.spec.renewTime));
          }
        } catch {
          // the poll itself may be slow under the flood; the renewals it sees are what counts
        }
        await sleep(250);
      }
    })();

    // start the flood so that the scraper's cached authentication expires 10 s before its end
    await sleep(Math.max(0, firstReview + AUTHN_TTL_MS - (FLOOD_SECONDS - 10) * 1000 - Date.now()));
    const before = await metrics();
    const flood = new Map<string, number>();
    let sent = 0;
    const floodStart = Date.now();
    const floodEnd = floodStart + FLOOD_SECONDS * 1000;
    const agent = new https.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
    const garbage = (i: number) =>
      i % 2 === 0
        ? randomBytes(24).toString('base64url')
        : `${Buffer.from(JSON.stringify({ alg: 'ES256', kid })).toString('base64url')}.${randomBytes(96).toString('base64url')}.${randomBytes(64).toString('base64url')}`;
    const worker = async () => {
      while (Date.now() < floodEnd) {
        try {
          count(flood, (await get(garbage(sent++), agent)).status);
        } catch (err) {
          count(flood, (err as Error).message);
        }
      }
    };

    // ten never-seen valid tokens, mid-flood: each must get 200 within two tries
    const freshTries: number[] = [];
    const freshLoop = (async () => {
      await sleep(FLOOD_SECONDS * 400);
      for (const token of fresh) {
        let servedAt = Infinity;
        for (let tries = 1; tries <= 2 && servedAt === Infinity; tries++) {
          // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- the assertion steers the inference of the call around it
          const r = await get(token, false, 10_000).catch(() => ({ status: 0, body: '' }) as Answer);
          if (r.status === 200) servedAt = tries;
          else if (tries < 2) await sleep(Number(r.retryAfter ?? 1) * 1000);
        }
        freshTries.push(servedAt);
      }
    })();

    await Promise.all([...Array.from({ length: CONNECTIONS }, worker), freshLoop]);
    const elapsed = (Date.now() - floodStart) / 1000;
    agent.destroy();
    scraping = false;
    polling = false;
    await Promise.all([scraperLoop, leaseLoop]);
    const after = await metrics();

    const reviews =
      sum(after, 'rest_client_requests_total', /method="POST"/) -
      sum(before, 'rest_client_requests_total', /method="POST"/);
    const reconcileErrors =
      sum(after, 'controller_runtime_reconcile_errors_total') -
      sum(before, 'controller_runtime_reconcile_errors_total');
    const reconciles =
      sum(after, 'controller_runtime_reconcile_total') - sum(before, 'controller_runtime_reconcile_total');
    const gaps = renewals
      .slice(1)
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- the assertion steers the inference of the call around it
      .map((r, i) => r - renewals[i]!)
      .sort((a, b) => a - b);
    const scraper = new Map<string, number>();
    for (const [at, answer] of scraped) if (at >= floodStart && at < floodEnd) count(scraper, answer);
    const afterExpiry = scraped.filter(
      ([at, answer]) => at > firstReview + AUTHN_TTL_MS && at < floodEnd && answer === '200',
    ).length;
    const scrapes = [...scraper.values()].reduce((a, b) => a + b, 0);
    const ok = scraper.get('200') ?? 0;
    t.diagnostic(
      `${sent} garbage tokens from ${CONNECTIONS} connections in ${elapsed.toFixed(1)} s: ${JSON.stringify([...flood])}; ` +
        `${reviews} review requests to the API; scraper during the flood ${JSON.stringify([...scraper])} (cached authentication expired ${((firstReview + AUTHN_TTL_MS - floodStart) / 1000).toFixed(1)} s into the flood, ${afterExpiry} × 200 after that); ` +
        `fresh tokens' tries ${JSON.stringify(freshTries)}; ${reconciles} reconciles, ${reconcileErrors} errors; ` +
        `lease renewals every ${gaps[Math.floor(gaps.length / 2)] ?? NaN} ms (median), ${gaps.at(-1) ?? NaN} ms at most, ${renewals.length} seen`,
    );

    assert.ok(sent >= MIN_TOKENS, `only ${sent} garbage tokens were sent`);
    assert.equal(flood.get('200') ?? 0, 0, 'a garbage token was served');
    for (const k of flood.keys()) assert.ok(k === '401' || k === '503', `unexpected answer to a garbage token: ${k}`);
    assert.ok(
      firstReview + AUTHN_TTL_MS > floodStart + 5_000 && firstReview + AUTHN_TTL_MS < floodEnd - 5_000,
      "the scraper's cached authentication expired mid-flood",
    );
    assert.ok(scrapes >= FLOOD_SECONDS * 0.5, `the scraper made only ${scrapes} scrapes during the flood`);
    assert.ok(
      ok / scrapes >= 0.99,
      `the authorized scraper got 200 for ${ok} of ${scrapes} scrapes: ${JSON.stringify([...scraper])}`,
    );
    assert.ok(afterExpiry >= 5, `only ${afterExpiry} successful scrapes after the cached authentication expired`);
    assert.equal(freshTries.length, 10);
    assert.ok(
      freshTries.every((n) => n <= 2),
      `a fresh token was not served within 2 tries (Infinity): ${JSON.stringify(freshTries)}`,
    );
    assert.deepEqual([...holders], [holder], 'the lease changed hands');
    assert.ok(demo.running(), `the demo exited: ${demo.stderr().slice(-2000)}`);
    assert.equal(sum(after, 'leader_election_master_status'), 1, 'still leading');
    assert.ok(renewals.length >= FLOOD_SECONDS / 4, `only ${renewals.length} lease renewals seen`);
    assert.ok(
      (gaps.at(-1) ?? Infinity) < 10_000,
      `a lease renewal came ${gaps.at(-1)} ms after the previous one (renew deadline 10 s)`,
    );
    assert.equal(reconcileErrors, 0, 'a reconcile failed during the flood');
    assert.ok(reconciles > 0, 'the reconcile load ran');
    assert.doesNotMatch(demo.stdout() + demo.stderr(), /rate limit|leader election lost|Reconciler error/);
  },
);
