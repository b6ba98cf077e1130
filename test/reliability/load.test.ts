/**
 * Bounded load on loopback, against a manager in its own process (so its memory is measured alone):
 * - 50 concurrent scrapers with valid tokens for CTRLMETRICS_SOAK_SECONDS (default 20; the figure is 60):
 *   zero errors, p50/p99 recorded, RSS of the last window not above the first one's (with GC slack);
 * - a flood of distinct invalid tokens from 100 connections (up to 10 000, for at most 30 s): the TokenReviews the
 *   filter sends are bounded by the rate of its lane for never-seen tokens (counted through the manager's
 *   `rest_client_requests_total`), every answer is 401 or 503 (never 200, never 500: the API is fine), memory
 *   stays bounded, and valid callers are still served during the flood.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { ProcessGroup, ROOT, sleep, type Proc } from '../helpers/process.js';
import { LogCapture } from '../helpers/log-capture.js';
import { KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';
import { Authenticator } from '../../packages/ctrlmetrics/src/metrics/filters/index.js';

const SOAK_SECONDS = Number(process.env.CTRLMETRICS_SOAK_SECONDS ?? 20);
const FLOOD_TOKENS = 10_000;
const FLOOD_MAX_MS = 30_000;
/** The filter's lane for never-seen tokens (DEFAULT_LANES.new in src/metrics/filters/admission.ts): 40 reviews/s, burst 40. */
const NEW_LANE_QPS = 40;
const NEW_LANE_BURST = 40;

const logs = new LogCapture();
const procs = new ProcessGroup();
let cluster: TestCluster;
let manager: Proc;
let port = 0;
const readers: string[] = [];

function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

function get(agent: https.Agent, token: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(
      {
        host: '127.0.0.1',
        port,
        path: '/metrics',
        agent,
        headers: { authorization: `Bearer ${token}` },
        rejectUnauthorized: false,
        timeout: 20_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

/** Sum of the manager's `rest_client_requests_total` for POSTs (TokenReviews and SubjectAccessReviews). */
async function reviewRequests(agent: https.Agent): Promise<number> {
  const r = await get(agent, readers[0]);
  assert.equal(r.status, 200);
  let sum = 0;
  for (const m of r.body.matchAll(/^rest_client_requests_total\{([^}]*)\} (\S+)$/gm))
    if (/method="POST"/.test(m[1])) sum += Number(m[2]);
  return sum;
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

const mb = (b: number) => (b / 1048576).toFixed(1);

describe('bounded load on loopback', { timeout: 60_000 + SOAK_SECONDS * 2000 + FLOOD_MAX_MS * 2 }, () => {
  before(async () => {
    cluster = await startTestCluster();
    const restConfig = await cluster.managerConfig();
    logs.secret(restConfig.token!);
    for (let i = 0; i < 10; i++) readers.push(logs.secret(await cluster.readerToken('monitoring', `scraper-${i}`)));
    manager = procs.start(
      'manager',
      process.execPath,
      ['--conditions=ctrlmetrics-source', '--import', 'tsx', `${ROOT}test/reliability/fixtures/manager-process.ts`],
      {
        env: { ...process.env, CTRLMETRICS_LOG_LEVEL: 'debug', FIXTURE_CONFIG: JSON.stringify({ restConfig }) },
      },
    );
    port = Number((await manager.waitForOutput(/READY (\d+)/, 60_000))[1]);
  });

  after(async () => {
    await procs.stopAll();
    await cluster?.stop();
    logs.restore();
    if (manager) logs.addText(manager.stderr() + manager.stdout());
    assert.deepEqual(logs.leaks().slice(0, 3), [], 'a secret reached a log line');
  });

  test(`50 concurrent scrapers for ${SOAK_SECONDS} s: zero errors, p99 recorded, RSS stable`, async (t) => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 50 });
    const latencies: number[] = [];
    const errors: string[] = [];
    const rss: Array<[number, number]> = [];
    const t0 = Date.now();
    const end = t0 + SOAK_SECONDS * 1000;
    const sampler = setInterval(() => rss.push([Date.now() - t0, rssBytes(manager.pid)]), 500);
    const loop = async (i: number) => {
      while (Date.now() < end) {
        const s = performance.now();
        try {
          const r = await get(agent, readers[i % readers.length]);
          if (r.status !== 200) errors.push(`status ${r.status}`);
          else latencies.push(performance.now() - s);
        } catch (err) {
          errors.push((err as Error).message);
        }
      }
    };
    await Promise.all(Array.from({ length: 50 }, (_, i) => loop(i)));
    clearInterval(sampler);
    agent.destroy();
    latencies.sort((a, b) => a - b);
    const window = Math.min(10_000, (SOAK_SECONDS * 1000) / 4);
    const first = rss.filter(([ms]) => ms <= window).map(([, b]) => b);
    const last = rss.filter(([ms]) => ms >= SOAK_SECONDS * 1000 - window).map(([, b]) => b);
    const firstMax = Math.max(...first);
    const lastMax = Math.max(...last);
    t.diagnostic(
      `${latencies.length} scrapes in ${SOAK_SECONDS} s (${(latencies.length / SOAK_SECONDS).toFixed(0)}/s), errors ${errors.length}, ` +
        `p50 ${quantile(latencies, 0.5).toFixed(1)} ms, p99 ${quantile(latencies, 0.99).toFixed(1)} ms, max ${latencies.at(-1)?.toFixed(1)} ms; ` +
        `RSS max first ${window / 1000} s ${mb(firstMax)} MiB, last ${window / 1000} s ${mb(lastMax)} MiB`,
    );
    assert.deepEqual(errors.slice(0, 5), [], `${errors.length} scrapes failed`);
    assert.ok(latencies.length >= 50, 'the scrapers ran');
    // no growth: GC timing moves RSS by a few MiB either way
    assert.ok(lastMax <= firstMax * 1.15 + 16 * 1048576, `RSS grew from ${mb(firstMax)} to ${mb(lastMax)} MiB`);
  });

  test(`${FLOOD_TOKENS} distinct invalid tokens (30 s at most): TokenReviews bounded by the rate limit, valid callers served`, async (t) => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 150 });
    const before = await reviewRequests(agent);
    const rssBefore = rssBytes(manager.pid);
    const statuses = new Map<number | string, number>();
    const validStatuses = new Map<number | string, number>();
    let next = 0;
    const t0 = Date.now();
    const deadline = t0 + FLOOD_MAX_MS;
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssBytes(manager.pid))), 250);
    const flood = async () => {
      while (next < FLOOD_TOKENS && Date.now() < deadline) {
        next++;
        const token = `invalid.${randomBytes(24).toString('base64url')}`;
        try {
          const r = await get(agent, token);
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        } catch (err) {
          statuses.set((err as Error).message, (statuses.get((err as Error).message) ?? 0) + 1);
        }
      }
    };
    let flooding = true;
    const valid = async () => {
      const va = new https.Agent({ keepAlive: true, maxSockets: 2 });
      while (flooding) {
        try {
          const r = await get(va, readers[1]);
          validStatuses.set(r.status, (validStatuses.get(r.status) ?? 0) + 1);
        } catch (err) {
          validStatuses.set((err as Error).message, (validStatuses.get((err as Error).message) ?? 0) + 1);
        }
        await sleep(100);
      }
      va.destroy();
    };
    const validLoop = valid();
    await Promise.all(Array.from({ length: 100 }, flood));
    const elapsed = (Date.now() - t0) / 1000;
    flooding = false;
    await validLoop;
    clearInterval(sampler);
    const reviews = (await reviewRequests(agent)) - before;
    agent.destroy();
    // 5 % slack for timer granularity between the limiter's clock and ours
    const bound = NEW_LANE_QPS * elapsed * 1.05 + NEW_LANE_BURST + 10;
    t.diagnostic(
      `${next} invalid tokens in ${elapsed.toFixed(1)} s: answers ${JSON.stringify([...statuses])}; ${reviews} review requests to the API ` +
        `(bound ${bound.toFixed(0)}); valid caller ${JSON.stringify([...validStatuses])}; RSS ${mb(rssBefore)} → peak ${mb(rssPeak)} MiB`,
    );
    assert.equal(statuses.get(200) ?? 0, 0, 'an invalid token was served');
    for (const k of statuses.keys()) assert.ok(k === 401 || k === 503, `unexpected answer to an invalid token: ${k}`);
    assert.ok(
      reviews <= bound,
      `${reviews} review requests in ${elapsed.toFixed(1)} s exceed the new-token lane's rate`,
    );
    assert.deepEqual(
      [...validStatuses.keys()],
      [200],
      `valid callers were not all served: ${JSON.stringify([...validStatuses])}`,
    );
    assert.ok(rssPeak - rssBefore < 128 * 1048576, `RSS grew by ${mb(rssPeak - rssBefore)} MiB during the flood`);
    assert.ok(manager.running(), 'the manager is still up');
  });

  test('one invalid token repeated 500 times: one TokenReview (negative cache)', async (t) => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 20 });
    const before = await reviewRequests(agent);
    const token = `repeated.${randomBytes(24).toString('base64url')}`;
    const statuses = new Map<number, number>();
    for (let i = 0; i < 25; i++) {
      const rs = await Promise.all(Array.from({ length: 20 }, () => get(agent, token)));
      for (const r of rs) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    }
    const reviews = (await reviewRequests(agent)) - before;
    agent.destroy();
    t.diagnostic(`500 scrapes with one invalid token: ${JSON.stringify([...statuses])}, ${reviews} review request(s)`);
    assert.deepEqual([...statuses], [[401, 500]]);
    assert.ok(reviews <= 2, `${reviews} TokenReviews for one repeated token`);
  });

  test('the decision caches stay within their size: 2 000 distinct tokens, cache of 500', async () => {
    const admin = new KubeClient({ ...(await cluster.managerConfig()), qps: 2000, burst: 2000 });
    try {
      // lanes as wide as the client, so that neither admission nor the rate limit hides anything
      const auth = new Authenticator(admin, {
        cacheSize: 500,
        admission: { new: { concurrency: 50, queue: 2000, maxWaitMs: 10_000, qps: 2000, burst: 2000 } },
      });
      for (let i = 0; i < 2000; i += 50) {
        const results = await Promise.all(
          // eslint-disable-next-line @typescript-eslint/await-thenable -- it answers a value or a promise of one
          Array.from({ length: 50 }, (_, j) => auth.authenticate(`invalid.${i + j}.${randomBytes(8).toString('hex')}`)),
        );
        assert.ok(results.every((r) => !r.authenticated));
        assert.ok(auth.authnCache.size <= 500, `authentication cache holds ${auth.authnCache.size} entries`);
      }
      assert.equal(auth.authnCache.size, 500);
      assert.equal(auth.authnCache.pending, 0);
    } finally {
      admin.close();
    }
  });
});
